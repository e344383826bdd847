"""Frontier as a bitmap, turned into a queue once per step."""

from __future__ import annotations

import numpy as np

from gswitch import hookimpl
from gswitch.strategy import Buffer, Phase, WorklistStrategy


class BitmapWorklist(WorklistStrategy):
    """Bitmap frontier: a push sets the node's bit (duplicates vanish for free); a
    finish phase turns the bitmap into a queue, one warp-aggregated atomic per 32 words.

    The status-array frontier of Beamer, Asanović & Patterson, "Direction-optimizing
    breadth-first search" (SC 2012) and Gunrock's bitmap frontiers (Wang et al., PPoPP
    2016). The bitmap answers "is v active?" in one L2-resident read, which pull
    traversal needs; it never overflows, so a CUDA-graph launch can replay it. Costs a
    scan of n/32 words per step, so it loses on high-diameter graphs with thousands of
    tiny steps.
    """

    name = "bitmap"
    cuda_files = ("bitmap.cuh",)
    membership = True

    def bounded(self, graph, config, algorithm=None) -> bool:
        return True

    def buffers(self, spec, graph, config):
        n = 0 if graph is None else graph.n_nodes
        words = (n + 31) // 32
        return [Buffer("bits", "unsigned", 2 * words, zero=True),
                Buffer("queue", "gs_vid", 2 * n)]

    def phases(self, spec, config):
        return [Phase("bitmap_finish", 30, items="words")]

    def seed(self, ctx, start, all_nodes: bool) -> None:
        n = ctx.n_nodes
        ctx.copy(ctx.buffer("worklist", "queue"), start, int(start.size))
        words = np.zeros((n + 31) // 32, dtype=np.uint32)
        if all_nodes:
            words[:] = 0xFFFFFFFF
            if n % 32:
                words[-1] = (1 << (n % 32)) - 1
        elif ctx.start_host is not None:
            host = ctx.start_host.astype(np.int64)
            np.bitwise_or.at(words, host >> 5, np.uint32(1) << (host & 31).astype(np.uint32))
        else:  # start ids chosen on the device (a stage's): set the bits there
            cp = ctx.engine.cp
            ids = start.astype(cp.int64)
            # distinct ids set distinct bits of a word, so their sum is their or
            bits = cp.bincount(ids >> 5, weights=(cp.int64(1) << (ids & 31)).astype(
                cp.float64), minlength=words.size)
            ctx.buffer("worklist", "bits")[: words.size] = bits.astype(cp.uint32)
            return
        ctx.engine.upload("worklist:bits", ctx.buffer("worklist", "bits"), words)


@hookimpl
def gswitch_strategies():
    return [BitmapWorklist]
