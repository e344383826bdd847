// Dynamic chunk fetching. counters[0]: next unclaimed item of this step; counters[1]:
// warps done with it. The loops are warp-uniform (the chunk start is broadcast), so the
// full-mask ballot and shuffles see every lane.
__device__ __forceinline__ void gs_lb_expand(GsStep& st) {
  const unsigned lane = threadIdx.x & 31;
  const unsigned chunk = (unsigned)gs.load_balance_chunk;
  unsigned* next = gs.load_balance_counters;
  unsigned* finished = gs.load_balance_counters + 1;
  for (;;) {
    unsigned first = 0;
    if (lane == 0) first = atomicAdd(next, chunk);
    first = __shfl_sync(0xffffffffu, first, 0);
    if (first >= st.n_items) break;
    const unsigned last = min(first + chunk, st.n_items);
    for (unsigned b = first; b < last; b += 32) {
      const unsigned i = b + lane;
      gs_vid v = 0;
      unsigned deg = 0;
      if (i < last) {
        v = gs_item(st, i);
        deg = gs_expand_degree(v);
      }
      // nodes of a warp's width or more: the whole warp walks each in turn
      unsigned big = __ballot_sync(0xffffffffu, deg >= 32u);
      while (big) {
        const int src = __ffs(big) - 1;
        big &= big - 1u;
        const gs_vid u = __shfl_sync(0xffffffffu, v, src);
        const GsSrc s = gs_load_src(u);
        const gs_eid end = gs_row_end(u);
        for (gs_eid e = __ldg(gs.row + u) + (gs_eid)lane; e < end; e += 32) gs_visit(st, u, s, e);
      }
      if (deg && deg < 32u) {
        const GsSrc s = gs_load_src(v);
        const gs_eid end = gs_row_end(v);
        for (gs_eid e = __ldg(gs.row + v); e < end; ++e) gs_visit(st, v, s, e);
      }
    }
  }
  // Every warp's last fetch is fenced before it reports done, so the warp that sees the
  // others all done knows nobody reads `next` again this step and resets both counters
  // for the next one (which starts after the phase's barrier).
  if (lane == 0) {
    __threadfence();
    const unsigned warps = (gridDim.x * blockDim.x) >> 5;
    if (atomicAdd(finished, 1u) == warps - 1u) {
      atomicExch(next, 0u);
      atomicExch(finished, 0u);
    }
  }
}
