"""A byte-flag frontier worklist for gswitch, registered through the entry-point group."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import Buffer, Phase, WorklistStrategy

__all__ = ["ByteFlagsWorklist"]


class ByteFlagsWorklist(WorklistStrategy):
    """Byte-flag frontier: a push stores 1 in the node's flag byte for the next step
    (a plain store: every writer writes the same value, so no atomic is needed), and a
    finish phase compacts the flags into a queue and clears the finished step's flags.

    The status-array frontier of Merrill, Garland & Grimshaw, "Scalable GPU graph
    traversal" (PPoPP 2012, §3), with bytes instead of bits: eight times the memory of
    a bitmap, but no atomics on push. Wins when many lanes push into the same words of
    a bitmap at once; loses on memory-bound graphs where the n-byte scan per step costs
    more than it saves. Answers membership for pull traversal and never overflows.
    """

    axis = "worklist"
    name = "byte_flags"
    cuda_files = ("byte_flags.cuh",)
    membership = True

    def bounded(self, graph, config, algorithm=None) -> bool:
        return True

    def buffers(self, spec, graph, config):
        n = 0 if graph is None else graph.n_nodes
        return [Buffer("flags", "unsigned char", 2 * n, zero=True),
                Buffer("queue", "gs_vid", 2 * n)]

    def phases(self, spec, config):
        return [Phase("byte_flags_finish", 30, items="nodes")]

    def seed(self, ctx, start, all_nodes: bool) -> None:
        ctx.buffer("worklist", "queue")[: start.size] = start
        ctx.buffer("worklist", "flags")[start] = 1


@hookimpl
def gswitch_strategies():
    return [ByteFlagsWorklist]
