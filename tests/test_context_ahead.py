"""The CUDA context made on a host thread while CuPy imports (``gswitch.context_ahead``):
when the thread starts, what it asks of the driver, and that it never breaks a process
without one. The GPU side (a first call on a made context) is in
``test_gpu_first_call.py``."""

import json
import subprocess
import sys

import pytest

from gswitch import context_ahead


class FakeDriver:
    """The driver's three entry points, recording calls; ``fail`` names the one that
    returns an error."""

    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[str] = []
        self.fail = fail

    def _status(self, name: str) -> int:
        self.calls.append(name)
        return 100 if name == self.fail else 0

    def cuInit(self, flags):  # noqa: N802 - the driver's names
        assert flags == 0
        return self._status("cuInit")

    def cuDeviceGet(self, dev, ordinal):  # noqa: N802
        assert ordinal == 0
        return self._status("cuDeviceGet")

    def cuDevicePrimaryCtxRetain(self, ctx, dev):  # noqa: N802
        return self._status("cuDevicePrimaryCtxRetain")


@pytest.fixture
def fresh(monkeypatch):
    """The module as in a process that never started its thread."""
    monkeypatch.setattr(context_ahead, "_thread", None)
    monkeypatch.setattr(context_ahead, "outcome", {})
    monkeypatch.delenv("GSWITCH_CONTEXT_AHEAD", raising=False)
    return context_ahead


@pytest.mark.parametrize("fail, calls", [
    (None, ["cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain"]),
    ("cuInit", ["cuInit"]),
    ("cuDeviceGet", ["cuInit", "cuDeviceGet"]),
    ("cuDevicePrimaryCtxRetain", ["cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain"]),
])
def test_the_thread_stops_at_the_first_failing_step(fresh, monkeypatch, fail, calls):
    drv = FakeDriver(fail)
    monkeypatch.setattr(fresh, "_driver", lambda: drv)
    fresh._make()
    assert drv.calls == calls
    want = dict(zip(["init", "device", "context"],
                    [100 if c == fail else 0 for c in calls], strict=False))
    assert fresh.outcome == want


def test_no_driver_library_is_recorded_and_nothing_raised(fresh, monkeypatch):
    monkeypatch.setattr(fresh, "_driver", lambda: None)
    fresh._make()
    assert fresh.outcome == {"driver": -1}


def test_start_runs_the_thread_once(fresh, monkeypatch):
    drv = FakeDriver()
    monkeypatch.setattr(fresh, "_driver", lambda: drv)
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    assert fresh.start() is True
    fresh.wait()
    assert fresh.start() is False  # one thread per process
    fresh.wait()
    assert drv.calls == ["cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain"]


def test_start_leaves_the_context_to_cupy_once_it_is_imported(fresh, monkeypatch):
    """The caller may have chosen another device through CuPy."""
    drv = FakeDriver()
    monkeypatch.setattr(fresh, "_driver", lambda: drv)
    monkeypatch.setitem(sys.modules, "cupy", object())
    assert fresh.start() is False
    fresh.wait()
    assert drv.calls == []


def test_the_environment_turns_it_off(fresh, monkeypatch):
    drv = FakeDriver()
    monkeypatch.setattr(fresh, "_driver", lambda: drv)
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    monkeypatch.setenv("GSWITCH_CONTEXT_AHEAD", "0")
    assert fresh.start() is False
    assert drv.calls == []


PROBE = r"""
import json
import gswitch as gs
from gswitch import context_ahead
avail = gs.gpu_available()
context_ahead.wait()
print(json.dumps({"available": avail, "outcome": context_ahead.outcome,
                  "started": context_ahead._thread is not None}))
"""


def test_a_fresh_process_asks_once_and_agrees_with_the_driver():
    """The first ``gpu_available()`` starts the thread; where the driver made a context,
    CuPy sees a device, and where none loads, the answer is still given."""
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         check=True, timeout=300)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["started"] is True
    if got["outcome"].get("context") == 0:
        assert got["available"] is True
    if got["outcome"].get("driver") == -1 or got["outcome"].get("init", 0) != 0:
        assert got["available"] is False
