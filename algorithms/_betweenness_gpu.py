"""The GPU side of :mod:`gswitch.algorithms.betweenness_batched`: its kernels launched
level by level on the engine's stream, over the graph's resident device arrays.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from gswitch._memory import MemoryRefused, format_bytes

from ._brandes_batch import BATCH, batch_bytes, finish

#: Threads per block of the level kernels.
BLOCK = 256

SOURCE = r"""
typedef unsigned long long gs_u64;
#define GS_LANES 64
#define GS_FULL 0xffffffffu

// The level entry holding edge e of the level's rows: off[i] <= e < off[i + 1]. Threads
// 0 and 1 bound the block's entries first, so each thread searches a short range.
__device__ __forceinline__ int gs_entry_of(const long long* off, int nq, long long e,
                                           long long first, long long last) {
  __shared__ int bound[2];
  if (threadIdx.x < 2) {
    const long long key = threadIdx.x == 0 ? first : last;
    int lo = 0, hi = nq - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) >> 1;
      if (off[mid] <= key) lo = mid; else hi = mid - 1;
    }
    bound[threadIdx.x] = lo;
  }
  __syncthreads();
  int lo = bound[0], hi = bound[1];
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (off[mid] <= e) lo = mid; else hi = mid - 1;
  }
  return lo;
}

// Forward level: entries (q[i], qm[i]) offer their sets along their out-edges.
extern "C" __global__ void gs_bc_forward(
    const int* row, const int* col, const int* q, const gs_u64* qm, const long long* off,
    int nq, long long total, const gs_u64* seen, gs_u64* next, int* count, int* q_next,
    double* sigma) {
  const long long first = (long long)blockIdx.x * blockDim.x;
  const long long e = first + threadIdx.x;
  const long long last = min(first + (long long)blockDim.x, total) - 1;
  const int i = gs_entry_of(off, nq, e < total ? e : last, first, last);
  const int lane = threadIdx.x & 31;
  int v = 0, u = 0;
  gs_u64 fresh = 0ull;
  if (e < total) {
    v = q[i];
    u = col[row[v] + (e - off[i])];
    fresh = qm[i] & ~seen[u];
    if (fresh) {
      const gs_u64 old = atomicOr(next + u, fresh);
      if (old == 0ull) q_next[atomicAdd(count, 1)] = u;  // joins the next level once
    }
  }
  // the warp adds the path counts of each fresh edge, two sources per thread
  unsigned hits = __ballot_sync(GS_FULL, fresh != 0ull);
  while (hits) {
    const int src = __ffs(hits) - 1;
    hits &= hits - 1u;
    const int vv = __shfl_sync(GS_FULL, v, src);
    const int uu = __shfl_sync(GS_FULL, u, src);
    const gs_u64 f = __shfl_sync(GS_FULL, fresh, src);
    const size_t a = (size_t)uu * GS_LANES, b = (size_t)vv * GS_LANES;
    if ((f >> lane) & 1ull) atomicAdd(sigma + a + lane, sigma[b + lane]);
    if ((f >> (lane + 32)) & 1ull) atomicAdd(sigma + a + lane + 32, sigma[b + lane + 32]);
  }
}

// After a forward level: the new entries take their sets, which join seen.
extern "C" __global__ void gs_bc_settle(const int* q, int nq, gs_u64* next, gs_u64* seen,
                                        gs_u64* qm) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nq) return;
  const int u = q[i];
  const gs_u64 m = next[u];
  qm[i] = m;
  seen[u] |= m;
  next[u] = 0ull;
}

// Backward level: entry (q[i], qm[i]) of level t sums (1 + delta[w]) / sigma[w] over its
// out-neighbours w on level t + 1 of the same source (on_next[w]: those sources).
// With edge_sum, each such edge v -> w also gains sigma[v] / sigma[w] * (1 + delta[w])
// summed over the sources (Brandes' edge dependency), at its CSR index.
extern "C" __global__ void gs_bc_backward(
    const int* row, const int* col, const int* q, const gs_u64* qm, const long long* off,
    int nq, long long total, const gs_u64* on_next, const double* sigma, double* delta,
    double* edge_sum) {
  const long long first = (long long)blockIdx.x * blockDim.x;
  const long long e = first + threadIdx.x;
  const long long last = min(first + (long long)blockDim.x, total) - 1;
  const int i = gs_entry_of(off, nq, e < total ? e : last, first, last);
  const int lane = threadIdx.x & 31;
  int v = 0, w = 0;
  long long k = 0;
  gs_u64 both = 0ull;
  if (e < total) {
    v = q[i];
    k = row[v] + (e - off[i]);
    w = col[k];
    both = qm[i] & on_next[w];
  }
  unsigned hits = __ballot_sync(GS_FULL, both != 0ull);
  while (hits) {
    const int src = __ffs(hits) - 1;
    hits &= hits - 1u;
    const int vv = __shfl_sync(GS_FULL, v, src);
    const int ww = __shfl_sync(GS_FULL, w, src);
    const gs_u64 f = __shfl_sync(GS_FULL, both, src);
    const size_t a = (size_t)vv * GS_LANES, b = (size_t)ww * GS_LANES;
    double share = 0.0;
    for (int j = lane; j < GS_LANES; j += 32) {
      if (!((f >> j) & 1ull)) continue;
      const double t = (1.0 + delta[b + j]) / sigma[b + j];
      atomicAdd(delta + a + j, t);
      share += sigma[a + j] * t;
    }
    if (edge_sum != nullptr) {  // block-uniform: every lane of the warp takes it
      for (int d = 16; d > 0; d >>= 1) share += __shfl_down_sync(GS_FULL, share, d);
      const long long kk = __shfl_sync(GS_FULL, k, src);
      if (lane == 0) atomicAdd(edge_sum + kk, share);
    }
  }
}

// After a backward level: each entry's sums times its path counts, for its sources.
extern "C" __global__ void gs_bc_scale(const int* q, const gs_u64* qm, int nq,
                                       const double* sigma, double* delta) {
  const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= (long long)nq * GS_LANES) return;
  const int i = (int)(k / GS_LANES), lane = (int)(k % GS_LANES);
  if (!((qm[i] >> lane) & 1ull)) return;
  const size_t a = (size_t)q[i] * GS_LANES + lane;
  delta[a] *= sigma[a];
}

// Mark (value 1) or clear (value 0) the sets of a level's entries in a dense array.
extern "C" __global__ void gs_bc_mark(const int* q, const gs_u64* qm, int nq, int value,
                                      gs_u64* dense) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < nq) dense[q[i]] = value ? qm[i] : 0ull;
}
"""


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


def run_batches(graph: Any, ids: np.ndarray, endpoints: bool, edges: bool = False, *,
                device_arrays: bool = False, stats: dict[str, Any] | None = None
                ) -> tuple[Any, Any]:
    """Raw betweenness sums over the sources ``ids`` of the simple ``graph``, and with
    ``edges`` the edge dependencies per stored edge (else ``None``): NumPy arrays, or
    CuPy arrays left on the device with ``device_arrays``. ``stats`` (a dict) receives
    the levels (``iterations``), the edges the level kernels scanned
    (``edges_processed``), the batches and the device time between the first and the
    last kernel.
    """
    import cupy as cp

    from gswitch.engine.gpu import GpuEngine

    engine = GpuEngine.instance()
    res = engine.resident(graph)
    n = graph.n_nodes
    k = _kernels()
    _check_room(cp, n, 8 * graph.n_edges if edges else 0)
    levels_run = scanned = 0
    with engine.stream:
        began, ended = cp.cuda.Event(), cp.cuda.Event()
        began.record()
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
            levels_run += len(levels.q)
            scanned += sum(levels.total) + sum(levels.total[:-1])  # forward, backward
        ended.record()
        out = (bc, edge_sum) if device_arrays else (
            bc.get(), None if edge_sum is None else edge_sum.get())
    engine.stream.synchronize()
    if stats is not None:
        seconds = cp.cuda.get_elapsed_time(began, ended) / 1e3
        stats.update(iterations=levels_run, edges_processed=int(scanned),
                     batches=-(-ids.size // BATCH), device_time_s=seconds,
                     kernel_time_s=seconds)
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
