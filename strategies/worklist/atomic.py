"""One atomic increment per pushed node."""

from __future__ import annotations

from gswitch import hookimpl

from ._queue import QueueWorklist


class AtomicWorklist(QueueWorklist):
    """Per-item atomic worklist: every push reserves its slot with one ``atomicAdd``.

    The baseline of Nasre, Burtscher & Pingali, "Atomic-free irregular computations
    on GPUs" (GPGPU 2013, §III). Simple and contention-free when few nodes are pushed
    per step (high-diameter graphs, small frontiers); loses to aggregated pushes when
    a warp pushes many nodes at once, because the atomics on one counter serialise.
    ``dedup`` queues a node at most once per step.
    """

    name = "atomic"
    cuda_files = ("queue.cuh", "atomic.cuh")


@hookimpl
def gswitch_strategies():
    return [AtomicWorklist]
