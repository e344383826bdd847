"""Strategies of the direction axis."""
