"""Shared host side of the queue worklists that buffer pushes in shared memory."""

from __future__ import annotations

from typing import ClassVar

from gswitch.strategy import IntRange

from ._queue import QueueWorklist

#: Most push slots one block may hold in shared memory (16 KiB of node ids), leaving
#: room for the load balancer's and the pull phases' shared memory.
MAX_BLOCK_SLOTS = 4096


class BufferedQueueWorklist(QueueWorklist):
    """Base of the queue worklists with shared-memory push buffers (not registered).

    ``slots`` (compile time) is the buffer's size per thread; the block's buffer of
    ``slots * block_size`` node ids must fit in :data:`MAX_BLOCK_SLOTS`.
    """

    params: ClassVar[dict] = {**QueueWorklist.params,
                              "slots": IntRange(1, 16, 4, compile_time=True)}
    validated = False

    def defines(self) -> dict[str, str]:
        return {**super().defines(), "GS_WL_SLOTS": str(int(self.options["slots"]))}

    def check(self, algorithm, graph, config, backend):
        if config is None:
            return None
        slots, block = int(self.options["slots"]), int(config["block_size"])
        if slots * block > MAX_BLOCK_SLOTS:
            return (f"worklist.slots * block_size must be at most {MAX_BLOCK_SLOTS} "
                    f"(the block's push buffer in shared memory); got {slots} * {block}: "
                    "lower worklist.slots or block_size")
        return None
