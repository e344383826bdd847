// One block per active node: the block's threads stride over the node's edges together.
// No shared state, no barrier: each thread walks its own edges of the same node.
#define GS_LB_FIRST_ITEM (blockIdx.x)  // the first item this thread expands
__device__ __forceinline__ void gs_lb_expand(GsStep& st) {
  for (unsigned i = blockIdx.x; i < st.n_items; i += gridDim.x) {
    const gs_vid v = gs_item(st, i);
    const GsSrc s = gs_load_src(v);
    const gs_eid end = gs_row_end(v);
    for (gs_eid e = __ldg(gs.row + v) + (gs_eid)threadIdx.x; e < end; e += (gs_eid)blockDim.x)
      gs_visit(st, v, s, e);
  }
}
