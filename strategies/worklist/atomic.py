"""One atomic increment per pushed node."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import WorklistStrategy


class AtomicWorklist(WorklistStrategy):
    """Per-item atomic worklist: every push reserves its slot with one ``atomicAdd``.

    The baseline of Nasre, Burtscher & Pingali, "Atomic-free irregular computations
    on GPUs" (GPGPU 2013, §III). Simple and contention-free when few nodes are pushed
    per step (high-diameter graphs, small frontiers); loses to aggregated pushes when
    a warp pushes many nodes at once, because the atomics on one counter serialise.
    """

    name = "atomic"
    cuda_files = ("atomic.cuh",)


@hookimpl
def gswitch_strategies():
    return [AtomicWorklist]
