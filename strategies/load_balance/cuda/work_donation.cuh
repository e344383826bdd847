// Work donation within a block. Each round, the block takes a tile of GS_BLOCK_SIZE items;
// a thread whose node has more than `chunk` edges keeps its first chunk and donates the
// others (the last ones first) to the box while it has room. After a barrier every
// thread walks what it kept, then takes boxed chunks (one shared atomic each) until none
// are left; a barrier ends the round before the box is reset. The round loop is
// block-uniform, so every thread reaches every barrier.
#define GS_WD_BOX GS_BLOCK_SIZE
#define GS_LB_FIRST_ITEM (blockIdx.x * blockDim.x + threadIdx.x)  // the first item this thread expands
__device__ __forceinline__ void gs_lb_expand(GsStep& st) {
  __shared__ gs_vid box_node[GS_WD_BOX];
  __shared__ gs_eid box_begin[GS_WD_BOX];
  __shared__ unsigned box_count, box_taken;
  const gs_eid chunk = (gs_eid)gs.load_balance_chunk;
  for (unsigned base = blockIdx.x * blockDim.x; base < st.n_items;
       base += gridDim.x * blockDim.x) {
    if (threadIdx.x == 0) {
      box_count = 0u;
      box_taken = 0u;
    }
    __syncthreads();
    const unsigned i = base + threadIdx.x;
    gs_vid v = 0;
    gs_eid b = 0, end = 0, own_end = 0;
    if (i < st.n_items) {
      v = gs_item(st, i);
      b = __ldg(gs.row + v);
      end = gs_row_end(v);
      own_end = end;
      if (end - b > chunk) {
        // chunks 1..pieces follow the kept chunk 0; donate the last `fit` of them
        const unsigned pieces = (unsigned)((end - b - 1) / chunk);
        const unsigned slot = atomicAdd(&box_count, pieces);
        const unsigned room = slot < GS_WD_BOX ? GS_WD_BOX - slot : 0u;
        const unsigned fit = pieces < room ? pieces : room;
        for (unsigned k = 0; k < fit; ++k) {
          box_node[slot + k] = v;
          box_begin[slot + k] = b + (gs_eid)(pieces - k) * chunk;
        }
        const gs_eid kept = b + (gs_eid)(pieces - fit + 1) * chunk;
        own_end = kept < end ? kept : end;
      }
    }
    __syncthreads();  // every donation is in the box
    if (b < own_end) {
      const GsSrc s = gs_load_src(v);
      for (gs_eid e = b; e < own_end; ++e) gs_visit(st, v, s, e);
    }
    const unsigned boxed = box_count < GS_WD_BOX ? box_count : GS_WD_BOX;
    for (;;) {
      const unsigned k = atomicAdd(&box_taken, 1u);
      if (k >= boxed) break;
      const gs_vid u = box_node[k];
      const gs_eid cb = box_begin[k];
      const gs_eid row_end = gs_row_end(u);
      const gs_eid ce = row_end - cb > chunk ? cb + chunk : row_end;
      const GsSrc s = gs_load_src(u);
      for (gs_eid e = cb; e < ce; ++e) gs_visit(st, u, s, e);
    }
    __syncthreads();  // nobody reads the box any more: the next round may reset it
  }
}
