"""Warp queues in shared memory that spill to the global queue."""

from __future__ import annotations

from gswitch import hookimpl

from ._buffered import BufferedQueueWorklist


class HierarchicalWorklist(BufferedQueueWorklist):
    """Hierarchical worklist: pushes go to a per-warp queue in shared memory (one shared
    atomic per group of lanes pushing together); when a warp's queue is full, further
    pushes spill straight to the global queue. At the end of the phase the warp queues
    are copied out behind one global atomic per block, at offsets from a block scan.

    The hierarchical queue of Luo, Wong & Hwu, "An effective GPU implementation of
    breadth-first search" (DAC 2010, §4) and the hierarchical worklists of Nasre,
    Burtscher & Pingali (GPGPU 2013). Wins when many lanes push per phase and shared
    atomics are much cheaper than global ones (large frontiers on power-law graphs);
    ``slots`` sizes each warp's queue (``32 * slots`` ids), and a small queue spills
    often. ``dedup`` queues a node at most once per step.
    """

    name = "hierarchical"
    cuda_files = ("queue.cuh", "hierarchical.cuh")

    def shared_bytes(self, spec, config):
        b = int(config["block_size"])
        # the warps' queues, their lengths, the block base
        return 4 * int(self.options["slots"]) * b + 4 * (b // 32) + 4


@hookimpl
def gswitch_strategies():
    return [HierarchicalWorklist]
