"""Strategies of the launch axis."""
