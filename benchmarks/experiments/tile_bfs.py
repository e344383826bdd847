"""Feasibility of partition-resident BFS: a partition's whole sub-graph in shared memory.

Spatial driving (``strategies/driving/spatial.py``) stages a partition's fields in shared
memory but reads its rows and columns from global memory on every local pass, and
takes a warp per queued node. This script runs a stand-alone kernel that instead loads
the partition's rows, its in-partition columns (as 16-bit offsets) and its depths into
shared memory once per visit, then repeats thread-per-node passes over the nodes changed
in the last pass (two flag arrays by parity, ``__syncthreads_or`` ends the loop), and
reduces the improved depths back with ``atomicMin``. Edges leaving the partition go to
global memory, mark the target node's dirty bit and activate its partition for the next
step; steps are separated by a grid barrier in one persistent kernel.

It runs on the ``hilbert`` copy of road and grid graphs, against gswitch's tuned
level-synchronous configuration in the same process, every answer checked against
scipy.

Usage::

    python benchmarks/experiments/tile_bfs.py [--n 2048] [--graphs road,grid]
        [--parts 256,1024,4096] [--blocks 256,512,1024] [--repeats 5] [--json F]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

#: What every version's source opens with: its constants and the grid barrier (the
#: persistent launch's, strategies/launch/cuda/persistent.cuh, on a word of its own).
_PRELUDE = r"""#define INF 0x3fffffff
#define EXT 0xFFFFu

__device__ __forceinline__ void grid_sync(unsigned* word) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1u) : 1u;
    unsigned old, now;
    asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;"
                 : "=r"(old) : "l"(word), "r"(add) : "memory");
    do {
      asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(word) : "memory");
    } while (((old ^ now) & 0x80000000u) == 0u);
  }
  __syncthreads();
}
"""

KERNEL = _PRELUDE + r"""
// flags: a word per partition in two halves by step parity (set when the partition is
// activated for the step); lists: the activated partitions of each step, two halves;
// ctl[s % 3]: how many step s holds.
extern "C" __global__ void tile_bfs(const long long* __restrict__ row,
                                    const int* __restrict__ col, int* depth,
                                    unsigned* dirty, unsigned* flags, int* lists,
                                    unsigned* ctl, const int n, const int P, const int shift,
                                    const int nparts, const int ecap, const int max_steps,
                                    unsigned long long* stats) {
  extern __shared__ int smem[];
  int* dist_s = smem;                                   // P
  int* row_s = dist_s + P;                              // P + 1
  unsigned char* fa = (unsigned char*)(row_s + P + 1);  // P
  unsigned char* fb = fa + P;                           // P
  unsigned char* imp = fb + P;                          // P
  unsigned char* sent = imp + P;                        // P
  unsigned short* col_s = (unsigned short*)(sent + ((P + 1) & ~1));  // ecap
  const unsigned W = (unsigned)(n + 31) / 32u;
  const int tid = threadIdx.x, bd = blockDim.x;
  unsigned long long my_rounds = 0, my_parts = 0, my_edges = 0;
  long long cyc_load = 0, cyc_rounds = 0, cyc_out = 0, cyc_sync = 0;
  int step = 0;
  for (;; ++step) {
    unsigned* fcur = flags + (size_t)(step & 1) * nparts;
    unsigned* fnxt = flags + (size_t)((step + 1) & 1) * nparts;
    const int* lcur = lists + (size_t)(step & 1) * nparts;
    int* lnxt = lists + (size_t)((step + 1) & 1) * nparts;
    unsigned* dcur = dirty + (size_t)(step & 1) * W;
    unsigned* dnxt = dirty + (size_t)((step + 1) & 1) * W;
    unsigned* cnt = ctl + (step + 1) % 3;
    const int mine = (int)__ldcg(ctl + step % 3);
    if (blockIdx.x == 0 && tid == 0) ctl[(step + 2) % 3] = 0u;
    for (int q = blockIdx.x; q < mine; q += gridDim.x) {
      long long c0 = clock64();
      const int p = __ldcg(lcur + q);
      const int lo = p << shift;
      const int len = min(P, n - lo);
      const long long e0 = row[lo];
      const int ne = (int)(row[lo + len] - e0);
      const bool big = ne > ecap;
      for (int i = tid; i < len; i += bd) {
        dist_s[i] = __ldcg(depth + lo + i);
        row_s[i] = (int)(row[lo + i] - e0);
        fa[i] = (__ldcg(dcur + (lo >> 5) + (i >> 5)) >> (i & 31)) & 1u;
        imp[i] = 0;
        fb[i] = 0;
        sent[i] = 0;
      }
      if (tid == 0) {
        row_s[len] = ne;
        fcur[p] = 0u;
      }
      if (!big)
        for (int e = tid; e < ne; e += bd) {
          const unsigned k = (unsigned)(__ldg(col + e0 + e) - lo);
          col_s[e] = k < (unsigned)len ? (unsigned short)k : (unsigned short)EXT;
        }
      __syncthreads();
      for (int w = tid; w < (len + 31) / 32; w += bd) dcur[(lo >> 5) + w] = 0u;
      long long c1 = clock64();
      int r = 0;
      for (;; ++r) {
        unsigned char* fin = (r & 1) ? fb : fa;
        unsigned char* fout = (r & 1) ? fa : fb;
        int any = 0;
        for (int i = tid; i < len; i += bd) {
          if (!fin[i]) continue;
          fin[i] = 0;
          sent[i] = 1;
          const int d = dist_s[i] + 1;
          const int a = row_s[i], b = row_s[i + 1];
          for (int e = a; e < b; e += 4) {
            unsigned k[4];
            int o[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              if (big) {
                k[j] = e + j < b ? (unsigned)(__ldg(col + e0 + e + j) - lo) : EXT;
                if (k[j] >= (unsigned)len) k[j] = EXT;
              } else {
                k[j] = e + j < b ? (unsigned)col_s[e + j] : EXT;
              }
            }
#pragma unroll
            for (int j = 0; j < 4; ++j) o[j] = k[j] != EXT ? dist_s[k[j]] : -1;
#pragma unroll
            for (int j = 0; j < 4; ++j)
              if (d < o[j] && atomicMin(dist_s + k[j], d) > d) {
                fout[k[j]] = 1;
                imp[k[j]] = 1;
                any = 1;
              }
            my_edges += min(4, b - e);
          }
        }
        if (!__syncthreads_or(any)) break;
      }
      long long c2 = clock64();
      // edges that leave the partition: once per visit, from the final local values
      for (int i = tid; i < len; i += bd) {
        if (!sent[i]) continue;
        const int d = dist_s[i] + 1;
        const int stop = row_s[i + 1];
        for (int e = row_s[i]; e < stop; ++e) {
          if (!big && col_s[e] != EXT) continue;
          const int u = __ldg(col + e0 + e);
          if ((unsigned)(u - lo) < (unsigned)len) continue;
          if (d < __ldcg(depth + u) && atomicMin(depth + u, d) > d) {
            atomicOr(dnxt + (u >> 5), 1u << (u & 31));
            const int pu = u >> shift;
            if (!__ldcg(fnxt + pu) && atomicExch(fnxt + pu, 1u) == 0u)
              lnxt[atomicAdd(cnt, 1u)] = pu;
          }
        }
      }
      for (int i = tid; i < len; i += bd)
        if (imp[i]) atomicMin(depth + lo + i, dist_s[i]);
      my_rounds += r + 1;
      my_parts += 1;
      __syncthreads();
      long long c3 = clock64();
      cyc_load += c1 - c0;
      cyc_rounds += c2 - c1;
      cyc_out += c3 - c2;
    }
    long long c4 = clock64();
    grid_sync(ctl + 64);
    cyc_sync += clock64() - c4;
    if (__ldcg(ctl + (step + 1) % 3) == 0u || step + 1 >= max_steps) break;
  }
  if (tid == 0) {
    atomicAdd(stats + 0, my_rounds);
    atomicAdd(stats + 1, my_parts);
    if (blockIdx.x == 0) stats[2] = step + 1;
    atomicAdd(stats + 4, (unsigned long long)cyc_load);
    atomicAdd(stats + 5, (unsigned long long)cyc_rounds);
    atomicAdd(stats + 6, (unsigned long long)cyc_out);
    atomicAdd(stats + 7, (unsigned long long)cyc_sync);
  }
  atomicAdd(stats + 3, my_edges);
}
"""



#: The parts of the v3 kernel the later versions replace: its passes, and how a block
#: picks its partitions (start marker included, end marker not).
_PASSES = ('      int r = 0;\n',
           '      long long c2 = clock64();')
_PICK = ('    const int mine = (int)__ldcg(ctl + step % 3);',
         '      const int lo = p << shift;')


def _between(text: str, marks: tuple[str, str], new: str) -> str:
    """``text`` with the part from ``marks[0]`` up to ``marks[1]`` replaced by ``new``."""
    i = text.index(marks[0])
    j = text.index(marks[1], i)
    return text[:i] + new + text[j:]

# v3: each thread owns nodes tid + j * blockDim (j < NPT, a compile-time count); their
# first four in-partition neighbours, their last relaxed and their loaded depths live in
# registers, and a pass relaxes an owned node whose shared-memory depth fell below the
# last one it relaxed: no flag arrays, no row or column reads for degrees up to four.
KERNEL_V3 = _PRELUDE + r"""
__device__ __forceinline__ bool relax(int* dist_s, unsigned k, int d) {
  return k != EXT && d < dist_s[k] && atomicMin(dist_s + k, d) > d;
}

extern "C" __global__ void tile_bfs(const long long* __restrict__ row,
                                    const int* __restrict__ col, int* depth,
                                    unsigned* dirty, unsigned* flags, int* lists,
                                    unsigned* ctl, const int n, const int P, const int shift,
                                    const int nparts, const int ecap, const int max_steps,
                                    unsigned long long* stats) {
  extern __shared__ int smem[];
  int* dist_s = smem;                                   // P
  int* row_s = dist_s + P;                              // P + 1
  unsigned short* col_s = (unsigned short*)(row_s + P + 1);  // ecap
  const unsigned W = (unsigned)(n + 31) / 32u;
  const int tid = threadIdx.x, bd = blockDim.x;
  unsigned long long my_rounds = 0, my_parts = 0, my_edges = 0;
  long long cyc_load = 0, cyc_rounds = 0, cyc_out = 0, cyc_sync = 0;
  int step = 0;
  for (;; ++step) {
    unsigned* fcur = flags + (size_t)(step & 1) * nparts;
    unsigned* fnxt = flags + (size_t)((step + 1) & 1) * nparts;
    const int* lcur = lists + (size_t)(step & 1) * nparts;
    int* lnxt = lists + (size_t)((step + 1) & 1) * nparts;
    unsigned* dcur = dirty + (size_t)(step & 1) * W;
    unsigned* dnxt = dirty + (size_t)((step + 1) & 1) * W;
    unsigned* cnt = ctl + (step + 1) % 3;
    const int mine = (int)__ldcg(ctl + step % 3);
    if (blockIdx.x == 0 && tid == 0) ctl[(step + 2) % 3] = 0u;
    for (int q = blockIdx.x; q < mine; q += gridDim.x) {
      long long c0 = clock64();
      const int p = __ldcg(lcur + q);
      const int lo = p << shift;
      const int len = min(P, n - lo);
      const long long e0 = row[lo];
      const int ne = (int)(row[lo + len] - e0);
      const bool big = ne > ecap;  // not handled here: the host sizes ecap to fit
      int orig[NPT], last[NPT], deg[NPT];
      unsigned nb0[NPT], nb1[NPT];
#pragma unroll
      for (int j = 0; j < NPT; ++j) {
        const int i = tid + j * bd;
        if (i < len) {
          orig[j] = __ldcg(depth + lo + i);
          dist_s[i] = orig[j];
          row_s[i] = (int)(row[lo + i] - e0);
          const bool on = (__ldcg(dcur + ((lo + i) >> 5)) >> ((lo + i) & 31)) & 1u;
          last[j] = on ? 0x7fffffff : orig[j];
        } else {
          orig[j] = last[j] = INF;
        }
      }
      if (tid == 0) {
        row_s[len] = ne;
        fcur[p] = 0u;
      }
      for (int e = tid; e < ne; e += bd) {
        const unsigned k = (unsigned)(__ldg(col + e0 + e) - lo);
        col_s[e] = k < (unsigned)len ? (unsigned short)k : (unsigned short)EXT;
      }
      __syncthreads();
      for (int w = tid; w < (len + 31) / 32; w += bd) dcur[(lo >> 5) + w] = 0u;
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
      long long c1 = clock64();
      unsigned sent = 0u;
      int r = 0;
      for (;; ++r) {
        int any = 0;
#pragma unroll
        for (int j = 0; j < NPT; ++j) {
          const int i = tid + j * bd;
          if (i >= len) continue;
          const int cur = dist_s[i];
          if (cur >= last[j]) continue;
          last[j] = cur;
          sent |= 1u << j;
          const int d = cur + 1;
          const unsigned k0 = nb0[j] & 0xFFFFu, k1 = nb0[j] >> 16;
          const unsigned k2 = nb1[j] & 0xFFFFu, k3 = nb1[j] >> 16;
          const int o0 = k0 != EXT ? dist_s[k0] : -1, o1 = k1 != EXT ? dist_s[k1] : -1;
          const int o2 = k2 != EXT ? dist_s[k2] : -1, o3 = k3 != EXT ? dist_s[k3] : -1;
          if (d < o0 && atomicMin(dist_s + k0, d) > d) any = 1;
          if (d < o1 && atomicMin(dist_s + k1, d) > d) any = 1;
          if (d < o2 && atomicMin(dist_s + k2, d) > d) any = 1;
          if (d < o3 && atomicMin(dist_s + k3, d) > d) any = 1;
          my_edges += deg[j];
          if (deg[j] > 4) {
            const int a = row_s[i], b = row_s[i + 1];
            for (int e = a + 4; e < b; ++e)
              if (relax(dist_s, col_s[e], d)) any = 1;
          }
        }
        if (!__syncthreads_or(any)) break;
      }
      long long c2 = clock64();
#pragma unroll
      for (int j = 0; j < NPT; ++j) {
        const int i = tid + j * bd;
        if (i >= len) continue;
        const int fin = dist_s[i];
        if (fin < orig[j]) atomicMin(depth + lo + i, fin);
        if (!((sent >> j) & 1u)) continue;
        // edges that leave the partition: once per visit, from the final local value
        const int d = fin + 1;
        const int a = row_s[i];
        for (int e = 0; e < deg[j]; ++e) {
          if (col_s[a + e] != EXT) continue;
          const int u = __ldg(col + e0 + a + e);
          if (d < __ldcg(depth + u) && atomicMin(depth + u, d) > d) {
            atomicOr(dnxt + (u >> 5), 1u << (u & 31));
            const int pu = u >> shift;
            if (!__ldcg(fnxt + pu) && atomicExch(fnxt + pu, 1u) == 0u)
              lnxt[atomicAdd(cnt, 1u)] = pu;
          }
        }
      }
      my_rounds += r + 1;
      my_parts += 1;
      __syncthreads();
      long long c3 = clock64();
      cyc_load += c1 - c0;
      cyc_rounds += c2 - c1;
      cyc_out += c3 - c2;
    }
    long long c4 = clock64();
    grid_sync(ctl + 64);
    cyc_sync += clock64() - c4;
    if (__ldcg(ctl + (step + 1) % 3) == 0u || step + 1 >= max_steps) break;
  }
  if (tid == 0) {
    atomicAdd(stats + 0, my_rounds);
    atomicAdd(stats + 1, my_parts);
    if (blockIdx.x == 0) stats[2] = step + 1;
    atomicAdd(stats + 4, (unsigned long long)cyc_load);
    atomicAdd(stats + 5, (unsigned long long)cyc_rounds);
    atomicAdd(stats + 6, (unsigned long long)cyc_out);
    atomicAdd(stats + 7, (unsigned long long)cyc_sync);
  }
  atomicAdd(stats + 3, my_edges);
}
"""

# v5: v3 with every owned value read before any relaxation (-DRED=1: atomics whose old
# value is not waited for; a pass continues on the read that saw an improvement) and
# -DSTATIC=1: partitions owned by block p % grid (the engine's spatial mapping) instead
# of a list of the step's active partitions
KERNEL_V5 = _between(_between(KERNEL_V3, _PASSES, r"""      int r = 0;
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
#if RED
              atomicMin(dist_s + k[t], d);
              any = 1;
#else
              if (atomicMin(dist_s + k[t], d) > d) any = 1;
#endif
            }
          my_edges += deg[j];
          if (deg[j] > 4) {
            const int i = tid + j * bd;
            const int a = row_s[i], b = row_s[i + 1];
            for (int e = a + 4; e < b; ++e)
              if (relax(dist_s, col_s[e], d)) any = 1;
          }
        }
        if (!__syncthreads_or(any)) break;
      }
"""),
                     _PICK, r"""#if STATIC
    __shared__ int plist[1024];
    __shared__ int n_plist;
    if (tid == 0) n_plist = 0;
    __syncthreads();
    for (int j = tid; blockIdx.x + j * gridDim.x < nparts; j += bd) {
      const int pp = blockIdx.x + j * gridDim.x;
      if (__ldcg(fcur + pp)) plist[atomicAdd(&n_plist, 1)] = pp;
    }
    if (blockIdx.x == 0 && tid == 0) ctl[(step + 2) % 3] = 0u;
    __syncthreads();
    const int mine = n_plist;
    for (int q = 0; q < mine; ++q) {
      long long c0 = clock64();
      const int p = plist[q];
#elif DYN
    const int mine = (int)__ldcg(ctl + step % 3);
    if (blockIdx.x == 0 && tid == 0) {
      ctl[(step + 2) % 3] = 0u;
      ctl[4 + (step + 2) % 3] = 0u;
    }
    __shared__ int q_s;
    for (;;) {
      if (tid == 0) q_s = (int)atomicAdd(ctl + 4 + step % 3, 1u);
      __syncthreads();
      const int q = q_s;
      if (q >= mine) break;
      long long c0 = clock64();
      const int p = __ldcg(lcur + q);
#else
    const int mine = (int)__ldcg(ctl + step % 3);
    if (blockIdx.x == 0 && tid == 0) ctl[(step + 2) % 3] = 0u;
    for (int q = blockIdx.x; q < mine; q += gridDim.x) {
      long long c0 = clock64();
      const int p = __ldcg(lcur + q);
#endif
""")

# v4: v3, and a warp repeats its passes over its own nodes (32 consecutive ids of each
# stride, a compact patch after the hilbert order) until they settle, __syncwarp between;
# a block pass ends when no warp improved another warp's node.
KERNEL_V4 = _between(KERNEL_V3, _PASSES, r"""      int r = 0;
      const unsigned warp_of = (unsigned)tid >> 5, warps = (unsigned)bd >> 5;
      for (;; ++r) {
        int any = 0;  // an improvement to a node of another warp
        for (;;) {  // this warp's passes over its own nodes
          int own = 0;
#pragma unroll
          for (int j = 0; j < NPT; ++j) {
            const int i = tid + j * bd;
            if (i >= len) continue;
            const int cur = dist_s[i];
            if (cur >= last[j]) continue;
            last[j] = cur;
            sent |= 1u << j;
            const int d = cur + 1;
            unsigned k[4] = {nb0[j] & 0xFFFFu, nb0[j] >> 16, nb1[j] & 0xFFFFu, nb1[j] >> 16};
            int o[4];
#pragma unroll
            for (int t = 0; t < 4; ++t) o[t] = k[t] != EXT ? dist_s[k[t]] : -1;
#pragma unroll
            for (int t = 0; t < 4; ++t)
              if (d < o[t] && atomicMin(dist_s + k[t], d) > d) {
                if (((k[t] >> 5) % warps) == warp_of) own = 1; else any = 1;
              }
            my_edges += deg[j];
            if (deg[j] > 4) {
              const int a = row_s[i], b = row_s[i + 1];
              for (int e = a + 4; e < b; ++e) {
                const unsigned kk = col_s[e];
                if (relax(dist_s, kk, d)) {
                  if (((kk >> 5) % warps) == warp_of) own = 1; else any = 1;
                }
              }
            }
          }
          my_inner += 1;
          if (!__any_sync(0xffffffffu, own)) break;
          __syncwarp();
        }
        if (!__syncthreads_or(any)) break;
      }
""").replace(
    '  unsigned long long my_rounds = 0, my_parts = 0, my_edges = 0;\n',
    '  unsigned long long my_rounds = 0, my_parts = 0, my_edges = 0, my_inner = 0;\n').replace(
    '  atomicAdd(stats + 3, my_edges);\n',
    '  atomicAdd(stats + 3, my_edges);\n  if ((tid & 31) == 0) atomicAdd(stats + 8, my_inner);\n')

def run_tile(cp, kern, n_sm, g, src, P, block, repeats, smem_of=None):
    """Median device ms of the tile kernel on ``g`` from ``src``, its depths and stats."""
    n = g.n_nodes
    indptr = np.asarray(g.indptr, dtype=np.int64)
    shift = P.bit_length() - 1
    nparts = -(-n // P)
    los = np.arange(nparts, dtype=np.int64) * P
    his = np.minimum(los + P, n)
    ecap = int((indptr[his] - indptr[los]).max())
    smem = (smem_of or (lambda P, ecap: 4 * P + 4 * (P + 1) + 3 * P + ((P + 1) & ~1)
                        + 2 * ecap))(P, ecap)
    smem = (smem + 15) // 16 * 16
    if smem > 48 * 1024:
        kern.max_dynamic_shared_size_bytes = smem
    per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
        kern.kernel.ptr, block, smem)
    grid = per_sm * n_sm
    row = cp.asarray(indptr)
    col = cp.asarray(np.asarray(g.indices, dtype=np.int32))
    depth = cp.empty(n, dtype=cp.int32)
    w = (n + 31) // 32
    dirty = cp.zeros(2 * w, dtype=cp.uint32)
    flags = cp.zeros(2 * nparts, dtype=cp.uint32)
    lists = cp.zeros(2 * nparts, dtype=cp.int32)
    ctl = cp.zeros(128, dtype=cp.uint32)
    stats = cp.zeros(9, dtype=cp.uint64)
    times = []
    for _ in range(repeats + 1):
        depth.fill(0x3FFFFFFF)
        depth[src] = 0
        dirty.fill(0)
        dirty[src >> 5] = np.uint32(1 << (src & 31))
        flags.fill(0)
        flags[src // P] = 1
        lists[0] = src // P
        ctl.fill(0)
        ctl[0] = 1
        stats.fill(0)
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        kern((grid,), (block,), (row, col, depth, dirty, flags, lists, ctl, np.int32(n),
                                 np.int32(P), np.int32(shift), np.int32(nparts),
                                 np.int32(ecap), np.int32(1 << 30), stats), shared_mem=smem)
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
    out = cp.asnumpy(depth).astype(np.int64)
    out[out >= 0x3FFFFFFF] = -1
    st = cp.asnumpy(stats)
    return float(np.median(times[1:])), out, {
        "rounds": int(st[0]), "partition_visits": int(st[1]), "steps": int(st[2]),
        "edges": int(st[3]), "grid": grid, "smem": smem, "ecap": ecap,
        # mean cycles per block over the run: loading, local passes, leaving edges and
        # stores, grid barrier (waiting for the slowest block included)
        "cycles": [int(c) // grid for c in st[4:8]], "warp_passes": int(st[8])}


def v3_smem(P: int, ecap: int) -> int:
    """Shared bytes of the v3 kernel: depths, rows and 16-bit columns."""
    return 4 * P + 4 * (P + 1) + 2 * ecap


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--graphs", default="road,grid")
    ap.add_argument("--parts", default="256,1024,4096")
    ap.add_argument("--blocks", default="256,512,1024")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--kernels", default="v2,v3",
                    help="v2 (flag arrays), v3 (registers), v4 (warp passes), v5[r][s] "
                    "(reads first; r: atomics not waited for; s: static partition map; d: blocks "
                    "take the step's partitions from a counter)")
    ap.add_argument("--json")
    args = ap.parse_args()

    import cupy as cp

    import gswitch as gs
    from gswitch.generators import grid2d, road
    from gswitch.locality import renumbered

    sys_name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    n_sm = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    print(f"device {sys_name}, {n_sm} multiprocessors", flush=True)
    kern = cp.RawKernel(KERNEL, "tile_bfs", options=("-std=c++17",))
    # as benchmarks/configs/road_resident.json's best-bfs; runs before 2026-11-29's last
    # ones left the direction out, so BFS's default (direction_optimizing) ran: 16 ms
    # device where push takes 11 (h200_s48_grid_road_resident.log)
    best = {"direction": "push", "block_size": 128, "l2_prefetch": True, "launch": "persistent",
            "load_balance": "virtual_warp", "load_balance.size": 4,
            "read_before_atomic": False, "worklist": "warp_aggregated"}
    rows = []
    for kind in args.graphs.split(","):
        g = road(args.n, args.n, seed=1) if kind == "road" else grid2d(args.n, args.n)
        import scipy.sparse.csgraph as csg

        t = time.perf_counter()
        d = csg.shortest_path(g.to_scipy(), unweighted=True, indices=0)
        scipy_ms = (time.perf_counter() - t) * 1e3
        ref = np.where(np.isinf(d), -1, d).astype(np.int64)
        print(f"{kind}: {g.n_nodes:,} nodes, {g.n_edges:,} edges, {ref.max() + 1} levels, "
              f"scipy {scipy_ms:.1f} ms", flush=True)
        walls, devs = [], []
        for _ in range(args.repeats + 1):
            t = time.perf_counter()
            r = gs.run("bfs", g, source=0, backend="gpu", config=best)
            walls.append((time.perf_counter() - t) * 1e3)
            devs.append(r.stats.get("device_time_s", float("nan")) * 1e3)
        assert np.array_equal(np.asarray(r.fields["depth"], dtype=np.int64), ref)
        lvl = {"graph": kind, "what": "level-synchronous best", "call_ms": np.median(walls[1:]),
               "device_ms": float(np.median(devs[1:])), "scipy_ms": scipy_ms}
        print(f"  level-synchronous best: call {lvl['call_ms']:.2f} ms, "
              f"device {lvl['device_ms']:.2f} ms", flush=True)
        rows.append(lvl)
        t = time.perf_counter()
        gr, perm, _ = renumbered(g, "hilbert")
        print(f"  hilbert copy {time.perf_counter() - t:.1f} s", flush=True)
        inv = np.empty_like(perm)
        inv[perm] = np.arange(perm.size)
        src = int(inv[0])
        for P, block, kind_k in ((int(a), int(b), k) for a in args.parts.split(",")
                                 for b in args.blocks.split(",")
                                 for k in args.kernels.split(",")):
            if kind_k[:2] in ("v3", "v4", "v5"):
                if P % block or P // block > 4 or P > 2048:
                    continue
                src_k = {"v3": KERNEL_V3, "v4": KERNEL_V4, "v5": KERNEL_V5}[kind_k[:2]]
                flags_k = ("-DRED=1" if "r" in kind_k[2:] else "-DRED=0",
                           "-DSTATIC=1" if "s" in kind_k[2:] else "-DSTATIC=0",
                           "-DDYN=1" if "d" in kind_k[2:] else "-DDYN=0")
                kern_k = cp.RawKernel(src_k, "tile_bfs",
                                      options=("-std=c++17", f"-DNPT={P // block}", *flags_k))
                smem_of = v3_smem
            else:
                kern_k, smem_of = kern, None
            try:
                ms, out, st = run_tile(cp, kern_k, n_sm, gr, src, P, block, args.repeats,
                                       smem_of)
            except cp.cuda.driver.CUDADriverError as exc:  # registers: too large a block
                print(f"  tile {kind_k} P={P:5d} block={block:5d}: not launched ({exc})")
                continue
            back = np.empty_like(out)
            back[perm] = out
            ok = bool(np.array_equal(back, ref))
            row = {"graph": kind, "what": f"tile {kind_k} P={P} block={block}",
                   "device_ms": ms, "ok": ok, **st}
            rows.append(row)
            print(f"  tile {kind_k} P={P:5d} block={block:5d}: {ms:8.2f} ms device, ok={ok}, "
                  f"steps {st['steps']}, visits {st['partition_visits']}, rounds "
                  f"{st['rounds']}, edges {st['edges'] / 1e6:.1f}M, grid {st['grid']}, "
                  f"smem {st['smem']}, cycles a block: load/passes/out/barrier "
                  f"{st['cycles']}, warp passes {st['warp_passes']}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=float)


if __name__ == "__main__":
    main()
