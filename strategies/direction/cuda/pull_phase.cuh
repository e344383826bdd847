// Pull phase: every candidate node u walks its in-edges (reverse CSR) with
// GS_PULL_GROUP lanes, combines the values offered by in-neighbours that are active
// this step, and applies the combined value to itself once. With GS_PULL_FIRST_HIT
// (the algorithm declares first_hit_final and steps are data-driven) only nodes whose
// target still holds its initial value are candidates, and a group stops at the first
// active in-neighbour: bottom-up BFS.
#ifndef GS_PULL_GROUP
#define GS_PULL_GROUP 1
#endif
#if GS_PULL
#if GS_WL_MEMBERSHIP
__device__ __forceinline__ bool gs_frontier_has(const GsStep& st, gs_vid v) {
  return gs_wl_contains(st, v);
}
#else
// The worklist cannot answer membership: mark its items in a bitmap of our own first.
__device__ __forceinline__ bool gs_frontier_has(const GsStep& st, gs_vid v) {
  (void)st;
  return (gs_ld(gs.direction_front + (v >> 5)) >> (v & 31)) & 1u;
}
__device__ __forceinline__ void gs_mark_items(GsStep& st, bool set) {
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < st.n_items; i += stride) {
    const gs_vid v = gs_item(st, i);
    if (set) atomicOr(gs.direction_front + (v >> 5), 1u << (v & 31));
    else gs.direction_front[v >> 5] = 0u;
  }
}
__device__ __forceinline__ void gs_phase_pull_mark(GsStep& st) { gs_mark_items(st, true); }
__device__ __forceinline__ void gs_phase_pull_unmark(GsStep& st) { gs_mark_items(st, false); }
#endif

// In-degree from which a node is pulled by its whole block instead of one group: a
// group would need more than 32 rounds. One power-law hub otherwise holds a single warp
// for thousands of dependent gathers while the rest of the grid idles.
#define GS_PULL_HEAVY (32 * GS_PULL_GROUP > GS_BLOCK_SIZE ? 32 * GS_PULL_GROUP : GS_BLOCK_SIZE)
#define GS_PULL_HEAVY_SLOTS 64
#define GS_PULL_UNROLL 4

// Combine what the in-edges beg + lane, beg + lane + step, ... < end offer to u. Gathers
// are issued GS_PULL_UNROLL at a time (all loads before any use), so a thread keeps that
// many misses in flight instead of one.
__device__ __forceinline__ void gs_pull_gather(GsStep& st, gs_vid u, gs_eid beg, gs_eid end,
                                               unsigned lane, unsigned step, bool data,
                                               gs_pull_t& acc, bool& any) {
  // unsigned offsets: no overflow past the last edge for any graph the GPU accepts
  for (unsigned e0 = (unsigned)beg + lane; e0 < (unsigned)end; e0 += GS_PULL_UNROLL * step) {
    gs_vid vs[GS_PULL_UNROLL];
    bool on[GS_PULL_UNROLL];
#pragma unroll
    for (int j = 0; j < GS_PULL_UNROLL; ++j) {
      const unsigned e = e0 + j * step;
      on[j] = e < (unsigned)end;
      vs[j] = on[j] ? __ldg(gs.rcol + e) : 0;
    }
#pragma unroll
    for (int j = 0; j < GS_PULL_UNROLL; ++j) {
      if (on[j]) st.edges += 1;
      on[j] = on[j] && (!data || gs_frontier_has(st, vs[j]));
    }
    GsSrc ss[GS_PULL_UNROLL];
#pragma unroll
    for (int j = 0; j < GS_PULL_UNROLL; ++j)
      if (on[j]) ss[j] = gs_load_src(vs[j]);
#pragma unroll
    for (int j = 0; j < GS_PULL_UNROLL; ++j) {
      if (on[j]) {
        acc = gs_pull_combine(acc, gs_pull_value(vs[j], ss[j], u,
                                                 gs_rweight((gs_eid)(e0 + j * step)), st.it));
        any = true;
      }
    }
  }
}

// First-hit form: stop at the first active in-neighbour (any lane of the group).
__device__ __forceinline__ bool gs_pull_probe(GsStep& st, gs_vid u, gs_eid e, gs_eid end,
                                              gs_pull_t& acc) {
  if (e >= end) return false;
  const gs_vid v = __ldg(gs.rcol + e);
  st.edges += 1;
  if (!gs_frontier_has(st, v)) return false;
  const GsSrc s = gs_load_src(v);
  acc = gs_pull_combine(acc, gs_pull_value(v, s, u, gs_rweight(e), st.it));
  return true;
}

__device__ __forceinline__ void gs_phase_pull(GsStep& st) {
  __shared__ gs_vid heavy[GS_PULL_HEAVY_SLOTS];
  __shared__ unsigned heavy_count;
  __shared__ gs_pull_t part[GS_BLOCK_SIZE / 32];
  __shared__ int part_any[GS_BLOCK_SIZE / 32];
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned glane = threadIdx.x % GS_PULL_GROUP;
  const unsigned groups = (gridDim.x * blockDim.x) / GS_PULL_GROUP;
  const unsigned wl = threadIdx.x & 31;
  const unsigned gmask = GS_PULL_GROUP == 32 ? 0xffffffffu
      : (((1u << GS_PULL_GROUP) - 1u) << (wl - wl % GS_PULL_GROUP));
  const bool data = gs_mode_worklist(st.mode);
  const bool first_hit = GS_PULL_FIRST_HIT && data;
  if (threadIdx.x == 0) heavy_count = 0u;
  __syncthreads();
  for (unsigned u0 = tid / GS_PULL_GROUP; u0 < (unsigned)gs.n; u0 += groups) {
    const gs_vid u = (gs_vid)u0;
    if (first_hit && !gs_pull_candidate(u)) continue;
    const gs_eid beg = __ldg(gs.rrow + u), end = __ldg(gs.rrow + u + 1);
    if (end - beg > GS_PULL_HEAVY) {  // hand it to the block if a slot is free
      unsigned slot = 0u;
      if (glane == 0) slot = atomicAdd(&heavy_count, 1u);
      if (GS_PULL_GROUP > 1) slot = __shfl_sync(gmask, slot, wl - glane);
      if (slot < GS_PULL_HEAVY_SLOTS) {
        if (glane == 0) heavy[slot] = u;
        continue;
      }
    }
    gs_pull_t acc = GS_PULL_IDENTITY;
    bool any = false;
    if (first_hit) {
      for (gs_eid e0 = beg; e0 < end; e0 += GS_PULL_GROUP) {
        const bool hit = gs_pull_probe(st, u, e0 + (gs_eid)glane, end, acc);
        any |= hit;
        if (GS_PULL_GROUP == 1 ? hit : __any_sync(gmask, hit)) break;
      }
    } else {
      gs_pull_gather(st, u, beg, end, glane, GS_PULL_GROUP, data, acc, any);
    }
#if GS_PULL_GROUP > 1
    for (int off = GS_PULL_GROUP / 2; off > 0; off >>= 1) {
      acc = gs_pull_combine(acc, __shfl_xor_sync(gmask, acc, off));
      any |= __shfl_xor_sync(gmask, (int)any, off) != 0;
    }
#endif
    if (glane == 0 && any && gs_pull_apply(u, acc, st.it)) gs_activate(st, u);
  }
  // The block's heavy nodes, one at a time with every thread, combined in shared memory.
  __syncthreads();
  const unsigned n_heavy = heavy_count < GS_PULL_HEAVY_SLOTS ? heavy_count : GS_PULL_HEAVY_SLOTS;
  for (unsigned k = 0; k < n_heavy; ++k) {
    const gs_vid u = heavy[k];
    const gs_eid beg = __ldg(gs.rrow + u), end = __ldg(gs.rrow + u + 1);
    gs_pull_t acc = GS_PULL_IDENTITY;
    bool any = false;
    if (first_hit) {
      for (gs_eid e0 = beg; e0 < end; e0 += GS_BLOCK_SIZE) {
        const bool hit = gs_pull_probe(st, u, e0 + (gs_eid)threadIdx.x, end, acc);
        any |= hit;
        if (__syncthreads_or(hit)) break;
      }
    } else {
      gs_pull_gather(st, u, beg, end, threadIdx.x, GS_BLOCK_SIZE, data, acc, any);
    }
    for (int off = 16; off > 0; off >>= 1) {
      acc = gs_pull_combine(acc, __shfl_xor_sync(0xffffffffu, acc, off));
      any |= __shfl_xor_sync(0xffffffffu, (int)any, off) != 0;
    }
    if (wl == 0) {
      part[threadIdx.x >> 5] = acc;
      part_any[threadIdx.x >> 5] = (int)any;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (unsigned w = 1; w < GS_BLOCK_SIZE / 32; ++w) {
        acc = gs_pull_combine(acc, part[w]);
        any |= part_any[w] != 0;
      }
      if (any && gs_pull_apply(u, acc, st.it)) gs_activate(st, u);
    }
    __syncthreads();
  }
}
#endif
