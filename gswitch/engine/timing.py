"""Per-phase timing of a run, for ``gswitch profile``.

An engine given a :class:`PhaseTimer` reports where a run spent its time: the CPU engine
laps ``time.perf_counter`` at its phase boundaries, the GPU engine labels the CUDA events
it already records around every launch. Without a timer the engines do nothing more than
test a local for ``None`` per phase (the GPU engine: per launch), so normal runs pay
nothing measurable.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PhaseTimer", "PhaseTime", "StageWork", "CPU_PHASES", "EVERY_PHASE"]

#: The phases of a CPU engine run, in the order a step runs them (the names the engine
#: laps with; :mod:`gswitch.profile` estimates each one's bytes from its name).
CPU_PHASES = ("setup", "node operator", "edge expansion", "edge operator",
              "worklist compaction", "convergence and mode decision", "driving refill",
              "closure")
#: What :attr:`PhaseTime.phase` holds for a kernel launch that runs every phase of its
#: steps (the launch strategy's own kernel, a recorded CUDA-graph replay).
EVERY_PHASE = "every phase"


@dataclass
class PhaseTime:
    """Time and launches (calls) of one phase of one stage."""

    stage: str
    name: str
    time_s: float = 0.0
    calls: int = 0
    #: ``"host"`` (timed on the host) or ``"kernel"`` (a device launch, timed by events)
    kind: str = "host"
    #: the GPU phase (:class:`~gswitch.strategy.Phase`) a kernel ran, :data:`EVERY_PHASE`,
    #: or ``None`` (a helper kernel, a host phase)
    phase: Any = None
    #: bytes the engine counted itself (the CPU's edge lists), else ``None``
    nbytes: int | None = None


@dataclass
class StageWork:
    """What one stage (or the whole of an unstaged run) did: its spec and step counts."""

    spec: Any
    steps: int = 0
    items: int = 0  # active items summed over the steps
    edges: int = 0  # edges processed
    activated: int = 0  # items of every step after the first (what the steps pushed)
    runs: int = 0
    closure: bool = False


@dataclass
class PhaseTimer:
    """Collects per-phase times (and each stage's work) of one or more engine runs.

    ``stage`` names the stage the next times belong to (``""`` for an unstaged
    algorithm); :func:`gswitch.staging.run_stages` sets it.
    """

    stage: str = ""
    phases: dict[tuple[str, str], PhaseTime] = field(default_factory=dict)
    work: dict[str, StageWork] = field(default_factory=dict)
    _mark: float = 0.0

    def start(self) -> None:
        """Begin lapping: the next :meth:`lap` measures from now."""
        self._mark = time.perf_counter()

    def lap(self, name: str, call: bool = True, nbytes: int | None = None) -> None:
        """Charge the time since the last mark to phase ``name`` (one call, unless
        ``call`` is false) with the ``nbytes`` it moved if the engine counted them, and
        mark now.
        """
        now = time.perf_counter()
        self.add(name, now - self._mark, 1 if call else 0)
        if nbytes is not None:
            entry = self.phases[(self.stage, name)]
            entry.nbytes = (entry.nbytes or 0) + nbytes
        self._mark = now

    def add(self, name: str, seconds: float, calls: int = 1, kind: str = "host",
            phase: Any = None) -> None:
        """Add ``seconds`` and ``calls`` to phase ``name`` of the current stage."""
        key = (self.stage, name)
        entry = self.phases.get(key)
        if entry is None:
            entry = self.phases[key] = PhaseTime(self.stage, name, kind=kind, phase=phase)
        entry.time_s += seconds
        entry.calls += calls

    def note_run(self, spec: Any, stats: dict[str, Any], closure: bool = False) -> None:
        """Record the work of one engine run of ``spec`` (from its stats) for the stage."""
        work = self.work.get(self.stage)
        if work is None:
            work = self.work[self.stage] = StageWork(spec)
        active = [int(a) for a in stats.get("active", [])]
        work.steps += int(stats.get("iterations", 0))
        work.items += sum(active)
        work.activated += sum(active[1:])
        work.edges += int(stats.get("edges_processed", 0))
        work.runs += 1
        work.closure = work.closure or closure
