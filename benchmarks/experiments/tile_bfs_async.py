"""Partition-resident BFS without steps: blocks take partitions from a shared ring.

``tile_bfs.py``'s best version (v5r) spends about two thirds of its time at the grid
barrier between steps, waiting for the step's slowest partition. This version has no
steps. A block takes the next ticket of a FIFO ring of partition ids, loads the
partition (rows, 16-bit in-partition columns, depths) into shared memory, runs v5r's
passes until they settle, writes the improved depths back and applies the edges that
leave the partition once, from final depths. An improved target outside marks its node
and queues its partition.

A partition's state word makes this exact without steps:

- ``IDLE`` -> ``QUEUED``: the marker pushes the partition onto the ring;
- ``QUEUED`` -> ``RUNNING``: the block that takes it, before it takes the partition's
  node marks and then reads its depths (so an update it misses leaves a mark behind);
- ``RUNNING`` -> ``AGAIN``: a marker while the partition runs; when the block is done it
  finds ``AGAIN`` and runs the partition again, rows and columns still in shared memory;
- ``RUNNING`` -> ``IDLE``: done.

An update writes the depth, then the node's mark, then (behind a fence) the state: so
either the running block reads both, or it finds ``AGAIN``. The count of partitions
queued or running ends the run when it reaches zero.

Usage (one GPU)::

    python benchmarks/experiments/tile_bfs_async.py [--n 2048] [--graphs road,grid]
        [--parts 512,1024] [--blocks 256,512,1024] [--repeats 5] [--json F]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

KERNEL = r"""#define INF 0x3fffffff
#define EXT 0xFFFFu
#define IDLE 0u
#define QUEUED 1u
#define RUNNING 2u
#define AGAIN 3u
// ctr words, a line each: ticket, tail, pending, over
#define C_TICKET 0
#define C_TAIL 32
#define C_PENDING 64
#define C_OVER 96

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned x;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(x) : "l"(p) : "memory");
  return x;
}

// Queue partition q (its state was IDLE): counted pending first, then written to its
// slot once the slot is empty (a slot is reused only after its reader took it).
__device__ __forceinline__ void push(unsigned* ring, unsigned long long* ctr,
                                     unsigned long long cap, int q) {
  atomicAdd(ctr + C_PENDING, 1ull);
  const unsigned long long t = atomicAdd(ctr + C_TAIL, 1ull);
  unsigned* slot = ring + t % cap;
  __threadfence();
  while (atomicCAS(slot, 0u, (unsigned)q + 1u) != 0u) __nanosleep(32);
}

// Partition q has a marked node with a new depth: queue it, or have its runner run again.
__device__ __forceinline__ void activate(unsigned* state, unsigned* ring,
                                         unsigned long long* ctr, unsigned long long cap,
                                         int q) {
  __threadfence();  // the depth and the mark before the state
  for (;;) {
    const unsigned s = atomicAdd(state + q, 0u);
    if (s == QUEUED || s == AGAIN) return;
    if (s == IDLE) {
      if (atomicCAS(state + q, IDLE, QUEUED) == IDLE) {
        push(ring, ctr, cap, q);
        return;
      }
    } else if (atomicCAS(state + q, RUNNING, AGAIN) == RUNNING) {
      return;
    }
  }
}

extern "C" __global__ void tile_bfs_async(const long long* __restrict__ row,
                                          const int* __restrict__ col, int* depth,
                                          unsigned* marks, unsigned* state, unsigned* ring,
                                          unsigned long long* ctr, const int n, const int P,
                                          const int shift, const unsigned long long cap,
                                          unsigned long long* stats) {
  extern __shared__ int smem[];
  int* dist_s = smem;                                   // P
  int* row_s = dist_s + P;                              // P + 1
  unsigned short* col_s = (unsigned short*)(row_s + P + 1);  // edges of a partition
  __shared__ int take;
  __shared__ unsigned mark_s[NPT * 1024 / 32];
  const int tid = threadIdx.x, bd = blockDim.x;
  unsigned long long my_rounds = 0, my_parts = 0, my_edges = 0, my_pops = 0;
  long long cyc_load = 0, cyc_rounds = 0, cyc_out = 0, cyc_wait = 0;
  for (;;) {
    long long c0 = clock64();
    if (tid == 0) {
      const unsigned long long t = atomicAdd(ctr + C_TICKET, 1ull);
      unsigned* slot = ring + t % cap;
      unsigned x = 0u;
      for (unsigned spin = 0;; ++spin) {
        x = ld_acquire(slot);
        if (x) break;
        if (ld_acquire((const unsigned*)(ctr + C_OVER))) break;
        if (spin > 4u) __nanosleep(64);
      }
      if (x) {
        atomicExch(slot, 0u);
        atomicExch(state + (x - 1u), RUNNING);
        __threadfence();
      }
      take = (int)x - 1;
    }
    __syncthreads();
    const int p = take;
    if (p < 0) break;
    long long c1 = clock64();
    cyc_wait += c1 - c0;
    my_pops += 1;
    const int lo = p << shift;
    const int len = min(P, n - lo);
    const long long e0 = row[lo];
    const int ne = (int)(row[lo + len] - e0);
    for (int i = tid; i <= len; i += bd) row_s[i] = (int)(row[lo + i] - e0);
    for (int e = tid; e < ne; e += bd) {
      const unsigned k = (unsigned)(__ldg(col + e0 + e) - lo);
      col_s[e] = k < (unsigned)len ? (unsigned short)k : (unsigned short)EXT;
    }
    __syncthreads();
    int deg[NPT];
    unsigned nb0[NPT], nb1[NPT];
#pragma unroll
    for (int j = 0; j < NPT; ++j) {
      const int i = tid + j * bd;
      nb0[j] = nb1[j] = 0xFFFFFFFFu;
      deg[j] = 0;
      if (i < len) {
        const int a = row_s[i];
        deg[j] = row_s[i + 1] - a;
        unsigned c[4];
#pragma unroll
        for (int t = 0; t < 4; ++t) c[t] = deg[j] > t ? col_s[a + t] : EXT;
        nb0[j] = c[0] | (c[1] << 16);
        nb1[j] = c[2] | (c[3] << 16);
      }
    }
    int orig[NPT], last[NPT];  // last: the depth a node's edges were last applied from
#pragma unroll
    for (int j = 0; j < NPT; ++j) last[j] = INF;
    for (int visit = 0;; ++visit) {  // again while a marker found the partition running
      // the marks first, then the depths: an update between them leaves its mark
      __threadfence();  // after the state (tid 0) and this block's last visit
      for (int w = tid; w < (len + 31) / 32; w += bd) {
        unsigned* mw = marks + (lo >> 5) + w;
        mark_s[w] = ld_acquire(mw) ? atomicExch(mw, 0u) : 0u;
      }
      // every mark taken before any depth is read: a thread reading a depth before
      // another thread took its node's mark could miss the update the mark stands for
      __syncthreads();
      __threadfence();
#pragma unroll
      for (int j = 0; j < NPT; ++j) {
        const int i = tid + j * bd;
        orig[j] = INF;
        if (i >= len) continue;
        orig[j] = __ldcg(depth + lo + i);
        dist_s[i] = orig[j];
        // relaxed in the first pass: a node marked, or (a visit again) lowered since
        // this block last relaxed it
        if ((mark_s[i >> 5] >> (i & 31)) & 1u)
          last[j] = 0x7fffffff;
        else if (visit == 0)
          last[j] = orig[j];
        else if (orig[j] < last[j])
          last[j] = 0x7fffffff;
      }
      __syncthreads();
      long long c2 = clock64();
      cyc_load += c2 - c1;
      unsigned sent = 0u;
      int r = 0;
      for (;; ++r) {
        int any = 0;
        int cur[NPT];
#pragma unroll
        for (int j = 0; j < NPT; ++j) cur[j] = tid + j * bd < len ? dist_s[tid + j * bd] : INF;
#pragma unroll
        for (int j = 0; j < NPT; ++j) {
          if (cur[j] >= last[j]) continue;
          last[j] = cur[j];
          sent |= 1u << j;
          const int d = cur[j] + 1;
          unsigned k[4] = {nb0[j] & 0xFFFFu, nb0[j] >> 16, nb1[j] & 0xFFFFu, nb1[j] >> 16};
          int o[4];
#pragma unroll
          for (int t = 0; t < 4; ++t) o[t] = k[t] != EXT ? dist_s[k[t]] : -1;
#pragma unroll
          for (int t = 0; t < 4; ++t)
            if (d < o[t]) {
              atomicMin(dist_s + k[t], d);
              any = 1;
            }
          my_edges += deg[j];
          if (deg[j] > 4) {
            const int i = tid + j * bd;
            const int a = row_s[i], b = row_s[i + 1];
            for (int e = a + 4; e < b; ++e) {
              const unsigned kk = col_s[e];
              if (kk != EXT && d < dist_s[kk]) {
                atomicMin(dist_s + kk, d);
                any = 1;
              }
            }
          }
        }
        if (!__syncthreads_or(any)) break;
      }
      long long c3 = clock64();
      cyc_rounds += c3 - c2;
#pragma unroll
      for (int j = 0; j < NPT; ++j) {
        const int i = tid + j * bd;
        if (i >= len) continue;
        const int fin = dist_s[i];
        if (fin < orig[j]) atomicMin(depth + lo + i, fin);
        if (!((sent >> j) & 1u)) continue;
        const int d = fin + 1;
        const int a = row_s[i];
        for (int e = 0; e < deg[j]; ++e) {
          if (col_s[a + e] != EXT) continue;
          const int u = __ldg(col + e0 + a + e);
          if (d < __ldcg(depth + u) && atomicMin(depth + u, d) > d) {
            __threadfence();
            atomicOr(marks + (u >> 5), 1u << (u & 31));
            activate(state, ring, ctr, cap, u >> shift);
          }
        }
      }
      my_rounds += r + 1;
      my_parts += 1;
      __threadfence();  // this visit's pushes and stores before its state leaves RUNNING
      __syncthreads();
      if (tid == 0) {
        __threadfence();
        const unsigned s = atomicCAS(state + p, RUNNING, IDLE);
        if (s == AGAIN) {
          atomicExch(state + p, RUNNING);
          __threadfence();
          take = 1;
        } else {
          take = 0;
          if (atomicAdd(ctr + C_PENDING, 0ull - 1ull) == 1ull) atomicExch(ctr + C_OVER, 1ull);
        }
      }
      __syncthreads();
      long long c4 = clock64();
      cyc_out += c4 - c3;
      c1 = c4;
      const int again = take;
      __syncthreads();  // take is written again by the next ticket
      if (!again) break;
    }
  }
  if (tid == 0) {
    atomicAdd(stats + 0, my_rounds);
    atomicAdd(stats + 1, my_parts);
    atomicAdd(stats + 2, my_pops);
    atomicAdd(stats + 4, (unsigned long long)cyc_load);
    atomicAdd(stats + 5, (unsigned long long)cyc_rounds);
    atomicAdd(stats + 6, (unsigned long long)cyc_out);
    atomicAdd(stats + 7, (unsigned long long)cyc_wait);
  }
  atomicAdd(stats + 3, my_edges);
}
"""


def run_async(cp, kern, n_sm, g, src, P, block, repeats, ref):
    """Median device ms of the ring kernel on ``g`` from ``src``, its depths, stats and
    how many runs' depths differ from ``ref`` (the reference in ``g``'s ids)."""
    n = g.n_nodes
    indptr = np.asarray(g.indptr, dtype=np.int64)
    shift = P.bit_length() - 1
    nparts = -(-n // P)
    los = np.arange(nparts, dtype=np.int64) * P
    his = np.minimum(los + P, n)
    ecap = int((indptr[his] - indptr[los]).max())
    smem = (4 * P + 4 * (P + 1) + 2 * ecap + 15) // 16 * 16
    if smem > 48 * 1024:
        kern.max_dynamic_shared_size_bytes = smem
    per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
        kern.kernel.ptr, block, smem)
    grid = per_sm * n_sm
    cap = 2 * nparts + 4 * grid + 64
    row = cp.asarray(indptr)
    col = cp.asarray(np.asarray(g.indices, dtype=np.int32))
    depth = cp.empty(n, dtype=cp.int32)
    marks = cp.zeros((n + 31) // 32, dtype=cp.uint32)
    state = cp.zeros(nparts, dtype=cp.uint32)
    ring = cp.zeros(cap, dtype=cp.uint32)
    ctr = cp.zeros(128, dtype=cp.uint64)
    stats = cp.zeros(8, dtype=cp.uint64)
    times = []
    want = cp.asarray(np.where(ref < 0, 0x3FFFFFFF, ref).astype(np.int32))
    wrong = 0
    for _ in range(repeats + 1):
        depth.fill(0x3FFFFFFF)
        depth[src] = 0
        marks.fill(0)
        marks[src >> 5] = np.uint32(1 << (src & 31))
        state.fill(0)
        state[src // P] = 1
        ring.fill(0)
        ring[0] = src // P + 1
        ctr.fill(0)
        ctr[32] = 1  # tail
        ctr[64] = 1  # pending
        stats.fill(0)
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        kern((grid,), (block,), (row, col, depth, marks, state, ring, ctr, np.int32(n),
                                 np.int32(P), np.int32(shift), np.uint64(cap), stats),
             shared_mem=smem)
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
        wrong += int(not bool(cp.array_equal(depth, want)))
    out = cp.asnumpy(depth).astype(np.int64)
    out[out >= 0x3FFFFFFF] = -1
    st = cp.asnumpy(stats)
    left = int(cp.asnumpy(ring).astype(bool).sum())
    return float(np.median(times[1:])), out, {
        "passes": int(st[0]), "visits": int(st[1]), "pops": int(st[2]),
        "edges": int(st[3]), "grid": grid, "smem": smem, "ecap": ecap,
        "ring_left": left, "wrong_runs": wrong, "times": [round(t, 3) for t in times[1:]],
        # mean cycles per block: loading, passes, leaving edges, waiting for a partition
        "cycles": [int(c) // grid for c in st[4:8]]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--graphs", default="road,grid")
    ap.add_argument("--parts", default="512,1024")
    ap.add_argument("--blocks", default="256,512,1024")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()

    import cupy as cp
    import scipy.sparse.csgraph as csg

    from gswitch.generators import grid2d, road
    from gswitch.locality import renumbered

    props = cp.cuda.runtime.getDeviceProperties(0)
    n_sm = props["multiProcessorCount"]
    print(f"device {props['name'].decode()}, {n_sm} multiprocessors", flush=True)
    rows = []
    for kind in args.graphs.split(","):
        g = road(args.n, args.n, seed=1) if kind == "road" else grid2d(args.n, args.n)
        t = time.perf_counter()
        d = csg.shortest_path(g.to_scipy(), unweighted=True, indices=0)
        scipy_ms = (time.perf_counter() - t) * 1e3
        ref = np.where(np.isinf(d), -1, d).astype(np.int64)
        print(f"{kind}: {g.n_nodes:,} nodes, {g.n_edges:,} edges, {ref.max() + 1} levels, "
              f"scipy {scipy_ms:.1f} ms", flush=True)
        gr, perm, _ = renumbered(g, "hilbert")
        inv = np.empty_like(perm)
        inv[perm] = np.arange(perm.size)
        src = int(inv[0])
        for P in (int(x) for x in args.parts.split(",")):
            for block in (int(x) for x in args.blocks.split(",")):
                if P % block or P // block > 4:
                    continue
                kern = cp.RawKernel(KERNEL, "tile_bfs_async",
                                    options=("-std=c++17", f"-DNPT={P // block}"))
                ms, out, st = run_async(cp, kern, n_sm, gr, src, P, block, args.repeats,
                                        ref[perm])
                back = np.empty_like(out)
                back[perm] = out
                ok = bool(np.array_equal(back, ref))
                rows.append({"graph": kind, "P": P, "block": block, "device_ms": ms,
                             "ok": ok, "scipy_ms": scipy_ms, **st})
                print(f"  ring P={P:5d} block={block:5d}: {ms:8.2f} ms device, ok={ok}, "
                      f"wrong runs {st['wrong_runs']}/{args.repeats + 1}, pops {st['pops']}, "
                      f"visits {st['visits']}, passes {st['passes']}, "
                      f"edges {st['edges'] / 1e6:.1f}M, grid {st['grid']}, ring left "
                      f"{st['ring_left']}, cycles a block: load/passes/out/wait "
                      f"{st['cycles']}, runs {st['times']}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=float)


if __name__ == "__main__":
    main()
