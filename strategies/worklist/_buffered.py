"""Shared host side of the queue worklists that buffer pushes in shared memory."""

from __future__ import annotations

from typing import ClassVar

from gswitch.strategy import IntRange

from ._queue import QueueWorklist


class BufferedQueueWorklist(QueueWorklist):
    """Base of the queue worklists with shared-memory push buffers (not registered).

    ``slots`` (compile time) is the buffer's size per thread: ``slots * block_size``
    node ids of shared memory a block, which the runner adds to the other strategies'
    (:meth:`~gswitch.strategy.Strategy.shared_bytes`).
    """

    params: ClassVar[dict] = {**QueueWorklist.params,
                              "slots": IntRange(1, 16, 4, compile_time=True)}

    def defines(self) -> dict[str, str]:
        return {**super().defines(), "GS_WL_SLOTS": str(int(self.options["slots"]))}

    def shared_bytes(self, spec, config):
        b = int(config["block_size"])
        return 4 * int(self.options["slots"]) * b + 4 * b + 4  # slots, counts, block base
