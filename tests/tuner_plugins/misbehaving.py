"""Driving strategies that crash the worker, hang, corrupt the answer or crawl on the CPU
engine.

Each refuses every direction but the default one, so the study meets each misbehaviour
once (plus the retry of a crash or hang) instead of once per direction.
"""

from __future__ import annotations

import os
import sys
import time

from gswitch.strategies.driving._modes import DATA

from gswitch import hookimpl
from gswitch.config import DEFAULTS
from gswitch.strategy import DrivingStrategy


class _OnlyDefaultDirection(DrivingStrategy):
    backends = ("cpu",)
    modes = (DATA,)

    def check(self, algorithm, graph, config, backend):
        if config is not None and config["direction"] != DEFAULTS["direction"]:
            return "test strategy: only with the default direction"
        return None


class CrashingDriving(_OnlyDefaultDirection):
    """Kills its process at the first step (a segfault stand-in). Test-only, 2024."""

    name = "test_crash"

    def initial_mode(self, n_active, n_nodes):
        os._exit(7)


class HangingDriving(_OnlyDefaultDirection):
    """Never finishes its first step (a hang stand-in). Test-only, 2024."""

    name = "test_hang"

    def initial_mode(self, n_active, n_nodes):
        time.sleep(3600)
        return "data"


class WrongDriving(_OnlyDefaultDirection):
    """Fast but wrong: adds one to every positive integer of the first field after each
    step. Test-only, 2024.
    """

    name = "test_wrong"

    def next_mode(self, mode, n_next, n_nodes):
        fields = sys._getframe(1).f_locals.get("fields") or {}
        for arr in fields.values():
            if arr.dtype.kind in "iu":
                arr[arr > 0] += 1
            break
        return "data"


class SlowDriving(_OnlyDefaultDirection):
    """Correct but sleeps 100 ms after every step, so the engine deadline stops it.
    Test-only, 2024.
    """

    name = "test_slow"

    def next_mode(self, mode, n_next, n_nodes):
        time.sleep(0.1)
        return "data"


@hookimpl
def gswitch_strategies():
    return [CrashingDriving, HangingDriving, WrongDriving, SlowDriving]
