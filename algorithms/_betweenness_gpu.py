"""The GPU side of :mod:`gswitch.algorithms.betweenness_batched`: its kernels launched
level by level on the engine's stream, over the graph's resident device arrays.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from gswitch._memory import MemoryRefused, format_bytes

from .betweenness_batched import BATCH, SOURCE, batch_bytes, finish

#: Threads per block of the level kernels.
BLOCK = 256


@functools.cache
def _kernels() -> dict[str, Any]:
    import cupy

    mod = cupy.RawModule(code=SOURCE, options=("-std=c++17",))
    return {name: mod.get_function(f"gs_bc_{name}")
            for name in ("forward", "settle", "backward", "scale", "mark")}


def _grid(items: int) -> tuple[int]:
    return (max(1, -(-items // BLOCK)),)


def _check_room(cp: Any, n: int, extra: int) -> None:
    need = batch_bytes(n) + extra
    pool = cp.get_default_memory_pool()
    free = int(cp.cuda.runtime.memGetInfo()[0]) + int(pool.free_bytes())
    if need > 0.9 * free:
        raise MemoryRefused(
            f"batched betweenness on {n:,} nodes needs about {format_bytes(need)} of device "
            f"memory for one batch of {BATCH} sources, but {format_bytes(free)} are free; "
            "free device memory (gswitch.release) or run gs.run('betweenness', ...), which "
            "takes one source at a time")


class _Levels:
    """One batch's levels: each level's entries, their sets and the degree prefix sums
    of their rows (the edge kernels' work list).
    """

    def __init__(self) -> None:
        self.q: list[Any] = []
        self.qm: list[Any] = []
        self.off: list[Any] = []
        self.total: list[int] = []


def run_batches(graph: Any, ids: np.ndarray, endpoints: bool, edges: bool = False
                ) -> tuple[np.ndarray, np.ndarray | None]:
    """Raw betweenness sums over the sources ``ids`` of the simple ``graph``, and with
    ``edges`` the edge dependencies per stored edge (else ``None``).
    """
    import cupy as cp

    from gswitch.engine.gpu import GpuEngine

    engine = GpuEngine.instance()
    res = engine.resident(graph)
    n = graph.n_nodes
    k = _kernels()
    _check_room(cp, n, 8 * graph.n_edges if edges else 0)
    with engine.stream:
        sigma = cp.empty((n, BATCH), dtype=cp.float64)
        delta = cp.empty((n, BATCH), dtype=cp.float64)
        seen = cp.empty(n, dtype=cp.uint64)
        spare = cp.zeros(n, dtype=cp.uint64)  # next (forward) and on_next (backward)
        q_buf = cp.empty(max(n, 1), dtype=cp.int32)
        count = cp.zeros(1, dtype=cp.int32)
        bc = cp.zeros(n, dtype=cp.float64)
        edge_sum = cp.zeros(graph.n_edges, dtype=cp.float64) if edges else None
        for b in range(0, ids.size, BATCH):
            batch = cp.asarray(ids[b:b + BATCH], dtype=cp.int32)
            levels = _forward(k, res, batch, sigma, seen, spare, q_buf, count)
            _backward(k, res, levels, sigma, delta, spare, edge_sum)
            bc += finish(delta, seen, batch, endpoints, cp)
        out = bc.get(), None if edge_sum is None else edge_sum.get()
    engine.stream.synchronize()
    return out


def _prefix(res: Any, q: Any) -> tuple[Any, int]:
    """Degree prefix sums of the rows ``q`` (``off[i]``: the edges before entry ``i``)."""
    import cupy as cp

    deg = (res.row[q + 1] - res.row[q]).astype(cp.int64)
    off = cp.empty(q.size + 1, dtype=cp.int64)
    off[0] = 0
    cp.cumsum(deg, out=off[1:])
    return off, int(off[-1])


def _forward(k: dict, res: Any, batch: Any, sigma: Any, seen: Any, nxt: Any, q_buf: Any,
             count: Any) -> _Levels:
    import cupy as cp

    lanes = cp.arange(batch.size, dtype=cp.uint64)
    own = cp.left_shift(cp.uint64(1), lanes)
    sigma.fill(0.0)
    sigma[batch, lanes.astype(cp.int64)] = 1.0
    seen.fill(0)
    seen[batch] = own
    lv = _Levels()
    q, qm = batch, own
    while True:
        off, total = _prefix(res, q)
        lv.q.append(q)
        lv.qm.append(qm)
        lv.off.append(off)
        lv.total.append(total)
        if total == 0:
            return lv
        count.fill(0)
        k["forward"](_grid(total), (BLOCK,),
                     (res.row, res.col, q, qm, off, np.int32(q.size), np.int64(total),
                      seen, nxt, count, q_buf, sigma))
        found = int(count.get()[0])
        if found == 0:
            return lv
        q = q_buf[:found].copy()
        qm = cp.empty(found, dtype=cp.uint64)
        k["settle"](_grid(found), (BLOCK,), (q, np.int32(found), nxt, seen, qm))


def _backward(k: dict, res: Any, lv: _Levels, sigma: Any, delta: Any, on_next: Any,
              edge_sum: Any) -> None:
    delta.fill(0.0)
    for t in range(len(lv.q) - 2, -1, -1):
        q, qm, nq = lv.q[t], lv.qm[t], np.int32(lv.q[t].size)
        q1, qm1, nq1 = lv.q[t + 1], lv.qm[t + 1], np.int32(lv.q[t + 1].size)
        k["mark"](_grid(int(nq1)), (BLOCK,), (q1, qm1, nq1, np.int32(1), on_next))
        k["backward"](_grid(lv.total[t]), (BLOCK,),
                      (res.row, res.col, q, qm, lv.off[t], nq, np.int64(lv.total[t]),
                       on_next, sigma, delta,
                       np.uint64(0) if edge_sum is None else edge_sum))  # 0: NULL
        k["mark"](_grid(int(nq1)), (BLOCK,), (q1, qm1, nq1, np.int32(0), on_next))
        k["scale"](_grid(int(nq) * BATCH), (BLOCK,), (q, qm, nq, sigma, delta))
