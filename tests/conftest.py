import os

import pytest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Keep every cache and tuning store of a test inside its tmp_path."""
    monkeypatch.setenv("GSWITCH_CACHE_DIR", str(tmp_path / "gswitch-cache"))
    monkeypatch.setenv("CUPY_CACHE_DIR", os.environ.get("CUPY_CACHE_DIR", str(tmp_path / "cupy")))


@pytest.fixture
def super_steps(monkeypatch):
    """Run every CPU relaxation through the super-step loop (not its shortest-path
    closure), so the strategies under test do their steps.
    """
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
