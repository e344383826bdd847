// Virtual warps of a width chosen per step: the largest power of two w <= 2^max_log2
// with n_items * w <= the grid's threads (at least 1). Every thread computes the same w
// from the same step state, and w divides 32, so no group straddles a warp.
__device__ __forceinline__ unsigned gs_dvw_width(const GsStep& st) {
  const unsigned long long threads = (unsigned long long)gridDim.x * blockDim.x;
  const int max_log2 = gs.load_balance_max_log2;
  int k = 0;
  while (k < max_log2 && (unsigned long long)st.n_items << (k + 1) <= threads) ++k;
  return 1u << k;
}
__device__ __forceinline__ void gs_lb_expand(GsStep& st) {
  const unsigned w = gs_dvw_width(st);
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned lane = tid & (w - 1u);
  const unsigned groups = (gridDim.x * blockDim.x) / w;
  for (unsigned i = tid / w; i < st.n_items; i += groups) {
    const gs_vid v = gs_item(st, i);
    const GsSrc s = gs_load_src(v);
    const gs_eid end = gs_row_end(v);
    for (gs_eid e = __ldg(gs.row + v) + (gs_eid)lane; e < end; e += (gs_eid)w)
      gs_visit(st, v, s, e);
  }
}
