"""Per-thread chunks of pushes: one reservation per full chunk."""

from __future__ import annotations

from gswitch import hookimpl

from ._buffered import BufferedQueueWorklist


class ChunkedWorklist(BufferedQueueWorklist):
    """Chunked worklist: each thread collects its pushes in ``slots`` private slots
    (shared memory) and reserves room for all of them with one ``atomicAdd`` when they
    are full and at the end of the phase.

    The per-thread chunking of Nasre, Burtscher & Pingali, "Atomic-free irregular
    computations on GPUs" (GPGPU 2013) and the Serial cooperative conversion of IrGL
    (Pai & Pingali, OOPSLA 2016, §4.2). Wins when single threads push several nodes in
    a phase (thread-per-node expansion of medium-degree nodes) and pushes are spread
    over lanes unevenly; no barrier is needed. With one push per thread it is the
    per-item atomic worklist plus a shared-memory round trip. ``dedup`` queues a node
    at most once per step.
    """

    name = "chunked"
    cuda_files = ("queue.cuh", "slots.cuh", "chunked.cuh")


@hookimpl
def gswitch_strategies():
    return [ChunkedWorklist]
