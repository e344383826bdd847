"""Test-only strategy plugins for the tuner tests (registered through GSWITCH_TUNER_PLUGINS)."""
