"""Optuna tuner (search over strategy combinations per graph); see the tuning issue."""
