"""Block-aggregated pushes: one atomic per block and phase."""

from __future__ import annotations

from gswitch import hookimpl

from ._buffered import BufferedQueueWorklist


class BlockAggregatedWorklist(BufferedQueueWorklist):
    """Block-aggregated worklist: pushes collect in per-thread slots in shared memory;
    at the end of the phase a block scan of the slot counts gives every thread its
    offset and a single ``atomicAdd`` per block reserves the block's room (a thread
    whose ``slots`` fill first writes them out with one atomic of its own).

    Cooperative conversion at block level from Pai & Pingali, "A compiler for
    throughput optimization of graph algorithms on GPUs" (IrGL, OOPSLA 2016, §4.2), and
    the scan-based queue writes of Merrill, Garland & Grimshaw (PPoPP 2012, §4). Wins
    when whole blocks push at once (low-diameter, power-law steps with big frontiers):
    one atomic replaces a warp's or a thread's. Costs a block scan (three barriers) at
    the end of every phase, even one that pushes nothing. ``dedup`` queues a node at
    most once per step.
    """

    name = "block_aggregated"
    cuda_files = ("queue.cuh", "slots.cuh", "block_aggregated.cuh")


@hookimpl
def gswitch_strategies():
    return [BlockAggregatedWorklist]
