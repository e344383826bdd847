// One thread per active node, serial edge loop.
#define GS_LB_FIRST_ITEM (blockIdx.x * blockDim.x + threadIdx.x)  // the first item this thread expands
__device__ __forceinline__ void gs_lb_expand(GsStep& st) {
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < st.n_items; i += stride) {
    const gs_vid v = gs_item(st, i);
    const GsSrc s = gs_load_src(v);
    const gs_eid end = gs_row_end(v);
    for (gs_eid e = __ldg(gs.row + v); e < end; ++e) gs_visit(st, v, s, e);
  }
}
