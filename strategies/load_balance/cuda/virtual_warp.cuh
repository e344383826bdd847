// GS_VW_SIZE consecutive lanes share one active node and stride over its edges.
#ifndef GS_VW_SIZE
#error "virtual_warp needs GS_VW_SIZE"
#endif
#define GS_LB_FIRST_ITEM ((blockIdx.x * blockDim.x + threadIdx.x) / GS_VW_SIZE)  // the first item this thread expands
__device__ __forceinline__ void gs_lb_expand(GsStep& st) {
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned lane = tid % GS_VW_SIZE;
  const unsigned groups = (gridDim.x * blockDim.x) / GS_VW_SIZE;
  for (unsigned i = tid / GS_VW_SIZE; i < st.n_items; i += groups) {
    const gs_vid v = gs_item(st, i);
    const GsSrc s = gs_load_src(v);
    const gs_eid end = gs_row_end(v);
    for (gs_eid e = __ldg(gs.row + v) + lane; e < end; e += GS_VW_SIZE) gs_visit(st, v, s, e);
  }
}
