"""Strategies of the load_balance axis."""
