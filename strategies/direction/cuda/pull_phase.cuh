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

__device__ __forceinline__ void gs_phase_pull(GsStep& st) {
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned glane = threadIdx.x % GS_PULL_GROUP;
  const unsigned groups = (gridDim.x * blockDim.x) / GS_PULL_GROUP;
  const unsigned wl = threadIdx.x & 31;
  const unsigned gmask = GS_PULL_GROUP == 32 ? 0xffffffffu
      : (((1u << GS_PULL_GROUP) - 1u) << (wl - wl % GS_PULL_GROUP));
  const bool data = st.mode == GS_MODE_DATA;
  const bool first_hit = GS_PULL_FIRST_HIT && data;
  for (unsigned u0 = tid / GS_PULL_GROUP; u0 < (unsigned)gs.n; u0 += groups) {
    const gs_vid u = (gs_vid)u0;
    if (first_hit && !gs_pull_candidate(u)) continue;
    gs_pull_t acc = GS_PULL_IDENTITY;
    bool any = false;
    const gs_eid beg = __ldg(gs.rrow + u), end = __ldg(gs.rrow + u + 1);
    for (gs_eid e0 = beg; e0 < end; e0 += GS_PULL_GROUP) {
      const gs_eid e = e0 + glane;
      bool hit = false;
      if (e < end) {
        const gs_vid v = __ldg(gs.rcol + e);
        st.edges += 1;
        if (!data || gs_frontier_has(st, v)) {
          const GsSrc s = gs_load_src(v);
          acc = gs_pull_combine(acc, gs_pull_value(v, s, u, gs_rweight(e), st.it));
          hit = true;
        }
      }
      any |= hit;
      if (first_hit) {
        if (GS_PULL_GROUP == 1 ? hit : __any_sync(gmask, hit)) break;
      }
    }
#if GS_PULL_GROUP > 1
    for (int off = GS_PULL_GROUP / 2; off > 0; off >>= 1) {
      acc = gs_pull_combine(acc, __shfl_xor_sync(gmask, acc, off));
      any |= __shfl_xor_sync(gmask, (int)any, off) != 0;
    }
#endif
    if (glane == 0 && any && gs_pull_apply(u, acc, st.it)) gs_activate(st, u);
  }
}
#endif
