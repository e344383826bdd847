"""Frontier as a bitmap, turned into a queue once per step."""

from __future__ import annotations

import numpy as np

from gswitch import hookimpl
from gswitch.strategy import Buffer, Phase, WorklistStrategy

#: Start sets within at most this many words set them by one small copy each.
_FEW_WORDS = 16


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
        # the engine zeroed the bits (zero=True): set the start nodes' bits
        n = ctx.n_nodes
        engine = ctx.engine
        ctx.copy(ctx.buffer("worklist", "queue"), start, int(start.size))
        n_words = (n + 31) // 32
        bits = ctx.buffer("worklist", "bits")
        if all_nodes:
            engine.runtime.memsetAsync(bits.data.ptr, 0xFF, 4 * (n_words - (n % 32 > 0)),
                                       engine.stream.ptr)
            if n % 32:
                engine.put_values("worklist:tail", bits, [n_words - 1],
                                  np.array([(1 << (n % 32)) - 1], dtype=np.uint32))
            return
        if ctx.start_host is not None:
            host = ctx.start_host.astype(np.int64)
            at, first = np.unique(host >> 5, return_index=True)
            if at.size <= _FEW_WORDS:  # a word each; the start ids are sorted
                words = np.bitwise_or.reduceat(
                    np.uint32(1) << (host & 31).astype(np.uint32), first)
                engine.put_values("worklist:bits", bits, at.tolist(), words)
                return
            words = np.zeros(n_words, dtype=np.uint32)
            np.bitwise_or.at(words, host >> 5, np.uint32(1) << (host & 31).astype(np.uint32))
            engine.upload("worklist:bits", bits, words)
            return
        # start ids chosen on the device (a stage's): set the bits there
        cp = engine.cp
        ids = start.astype(cp.int64)
        # distinct ids set distinct bits of a word, so their sum is their or
        set_bits = cp.bincount(ids >> 5, weights=(cp.int64(1) << (ids & 31)).astype(
            cp.float64), minlength=n_words)
        bits[:n_words] = set_bits.astype(cp.uint32)


@hookimpl
def gswitch_strategies():
    return [BitmapWorklist]
