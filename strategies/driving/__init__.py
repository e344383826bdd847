"""Strategies of the driving axis."""
