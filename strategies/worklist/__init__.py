"""Strategies of the worklist axis."""
