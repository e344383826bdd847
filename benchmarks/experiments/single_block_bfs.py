"""How fast can one block run a narrow-frontier BFS? A raw CuPy probe on the road grid.

A level-synchronous BFS whose every level is one block's work: the frontier queues live
in shared memory (no global queue, no grid barrier, no counter read back through L2), and
a level ends at ``__syncthreads``. Only the row offsets, the column ids and the depth
array are global. It is compared in the same process with gswitch's tuned persistent
configuration (``best-bfs``) and checked against scipy's levels.

Usage::

    python benchmarks/experiments/single_block_bfs.py [--grid 2048] [--repeats 5]
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import json
import time

import numpy as np
from _common import require_gpu

SRC = r"""
#define UNSEEN (-1)
extern "C" __global__ void __launch_bounds__(THREADS)
bfs_block(const int* __restrict__ row, const int* __restrict__ col, int* depth,
          int source, int qcap, int* info) {
  extern __shared__ int sm[];
  int* q0 = sm;
  int* q1 = sm + qcap;
  __shared__ int cnt[2];
  __shared__ int over;
  const unsigned lane = threadIdx.x & 31u;
  if (threadIdx.x == 0) {
    q0[0] = source; cnt[0] = 1; cnt[1] = 0; over = 0; depth[source] = 0;
  }
  __syncthreads();
  int level = 0, par = 0;
  long long edges = 0;
  while (true) {
    const int size = cnt[par];
    if (size == 0 || over) break;
    const int* cur = par ? q1 : q0;
    int* nxt = par ? q0 : q1;
    int* ncnt = &cnt[par ^ 1];
    for (int i0 = 0; i0 < size; i0 += THREADS) {
      const int i = i0 + (int)threadIdx.x;
      int b = 0, e = 0;
      if (i < size) {
        const int v = cur[i];
        b = __ldg(row + v);
        e = __ldg(row + v + 1);
      }
      edges += e - b;
      // edges of the warp's nodes in rounds: every lane takes its k-th edge
      int deg = e - b;
      int maxdeg = deg;
      for (int o = 16; o > 0; o >>= 1)
        maxdeg = max(maxdeg, __shfl_xor_sync(0xffffffffu, maxdeg, o));
      for (int k = 0; k < maxdeg; ++k) {
        bool push = false;
        int u = 0;
        if (k < deg) {
          u = __ldg(col + b + k);
          if (depth[u] == UNSEEN)
            push = atomicCAS(depth + u, UNSEEN, level + 1) == UNSEEN;
        }
        const unsigned m = __ballot_sync(0xffffffffu, push);
        if (m) {
          int base = 0;
          const int leader = __ffs(m) - 1;
          if ((int)lane == leader) base = atomicAdd(ncnt, __popc(m));
          base = __shfl_sync(0xffffffffu, base, leader);
          if (push) {
            const int slot = base + __popc(m & ((1u << lane) - 1u));
            if (slot < qcap) nxt[slot] = u; else over = 1;
          }
        }
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) cnt[par] = 0;
    par ^= 1;
    ++level;
    __syncthreads();
  }
  for (int o = 16; o > 0; o >>= 1) edges += __shfl_down_sync(0xffffffffu, edges, o);
  if (lane == 0) atomicAdd((unsigned long long*)(info + 2), (unsigned long long)edges);
  if (threadIdx.x == 0) { info[0] = level; info[1] = over; }
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", type=int, default=2048)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", default="1024,512")
    ap.add_argument("--qcap", type=int, default=16384)
    args = ap.parse_args()
    require_gpu("single_block_bfs.py")
    import cupy as cp
    from scipy.sparse.csgraph import shortest_path

    import gswitch as gs
    from gswitch.generators import road

    g = road(args.grid, args.grid, seed=1)
    print(f"{g.name}: {g.n_nodes:,} nodes, {g.n_edges:,} edges", flush=True)
    t = time.perf_counter()
    a = g.to_scipy()
    ref = shortest_path(a, unweighted=True, indices=0)
    scipy_s = time.perf_counter() - t
    ref = np.where(np.isinf(ref), -1, ref).astype(np.int64)
    print(f"scipy shortest_path (unweighted) {scipy_s * 1e3:.1f} ms, "
          f"{int(ref.max()) + 1} levels", flush=True)
    out = {"graph": g.name, "scipy_ms": scipy_s * 1e3, "rows": []}

    cfg_path = pathlib.Path(__file__).resolve().parents[1] / "configs" / "road_hilbert.json"
    best = json.loads(cfg_path.read_text())["best-bfs"]
    for _ in range(2):
        r = gs.run("bfs", g, source=0, backend="gpu", config=best)
    ts, dev = [], []
    for _ in range(args.repeats):
        t = time.perf_counter()
        r = gs.run("bfs", g, source=0, backend="gpu", config=best)
        ts.append(time.perf_counter() - t)
        dev.append(r.stats["device_time_s"])
    d = np.asarray(r.fields["depth"]).astype(np.int64)
    d = np.where(d >= 2**31 - 1, -1, d)
    assert np.array_equal(d, ref), "gswitch best-bfs disagrees with scipy"
    row = {"config": "gswitch best-bfs", "call_ms": float(np.median(ts)) * 1e3,
           "device_ms": float(np.median(dev)) * 1e3, "steps": r.stats["iterations"]}
    out["rows"].append(row)
    print(row, flush=True)

    rowp = cp.asarray(g.indptr.astype(np.int32))
    colp = cp.asarray(g.indices.astype(np.int32))
    depth = cp.empty(g.n_nodes, dtype=cp.int32)
    info = cp.zeros(4, dtype=cp.int32)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for threads in map(int, args.threads.split(",")):
        k = cp.RawKernel(SRC.replace("THREADS", str(threads)), "bfs_block")
        smem = 2 * 4 * args.qcap
        k.max_dynamic_shared_size_bytes = smem
        ts = []
        for rep in range(args.repeats + 1):
            depth.fill(-1)
            info.fill(0)
            start.record()
            k((1,), (threads,), (rowp, colp, depth, np.int32(0), np.int32(args.qcap), info),
              shared_mem=smem)
            stop.record()
            stop.synchronize()
            if rep:
                ts.append(cp.cuda.get_elapsed_time(start, stop))
        levels, over = int(info[0]), int(info[1])
        assert not over, "queue overflow: raise --qcap"
        assert np.array_equal(cp.asnumpy(depth).astype(np.int64), ref), "single block wrong"
        row = {"config": f"single block, {threads} threads", "device_ms": float(np.median(ts)),
               "levels": levels, "us_per_level": float(np.median(ts)) * 1e3 / levels}
        out["rows"].append(row)
        print(row, flush=True)
    import os
    dest = pathlib.Path(os.environ.get("OUT", "benchmarks/results")) / "single_block_bfs.json"
    dest.write_text(json.dumps(out, indent=1))
    print("wrote", dest)


if __name__ == "__main__":
    main()
