// Thread / warp / block per node by degree (TWC), plus deferred outliers: a node of at
// least outlier_threshold edges goes to a side queue that the whole grid expands in
// the next phase. Each block classifies one tile of items per round in shared memory.
#define GS_TWC_WARPS (GS_BLOCK_SIZE / 32)
#define GS_LB_FIRST_ITEM (blockIdx.x * blockDim.x + threadIdx.x)  // the first item this thread expands
__device__ __forceinline__ void gs_lb_expand(GsStep& st) {
  __shared__ gs_vid block_nodes[GS_BLOCK_SIZE];
  __shared__ gs_vid warp_nodes[GS_TWC_WARPS][32];
  __shared__ unsigned block_count;
  __shared__ unsigned warp_count[GS_TWC_WARPS];
  const unsigned warp = threadIdx.x >> 5;
  const unsigned lane = threadIdx.x & 31;
  const unsigned warp_thr = (unsigned)gs.load_balance_warp_threshold;
  const unsigned block_thr = (unsigned)gs.load_balance_block_threshold;
  const unsigned outlier_thr = (unsigned)gs.load_balance_outlier_threshold;
  unsigned* side_count = gs.load_balance_side_count + (st.it & 1);
  for (unsigned base = blockIdx.x * blockDim.x; base < st.n_items; base += gridDim.x * blockDim.x) {
    if (threadIdx.x == 0) block_count = 0;
    if (lane == 0) warp_count[warp] = 0;
    __syncthreads();
    const unsigned i = base + threadIdx.x;
    gs_vid v = 0;
    unsigned deg = 0;
    if (i < st.n_items) {
      v = gs_item(st, i);
      deg = gs_expand_degree(v);
      if (outlier_thr && deg >= outlier_thr) {
        gs.load_balance_side[atomicAdd(side_count, 1u)] = v;
        deg = 0;
      } else if (deg >= block_thr) {
        block_nodes[atomicAdd(&block_count, 1u)] = v;
        deg = 0;
      } else if (deg >= warp_thr) {
        warp_nodes[warp][atomicAdd(&warp_count[warp], 1u)] = v;
        deg = 0;
      }
    }
    __syncthreads();
    for (unsigned k = 0; k < block_count; ++k) {
      const gs_vid b = block_nodes[k];
      const GsSrc s = gs_load_src(b);
      const gs_eid end = gs_row_end(b);
      for (gs_eid e = __ldg(gs.row + b) + threadIdx.x; e < end; e += GS_BLOCK_SIZE)
        gs_visit(st, b, s, e);
    }
    __syncwarp();
    const unsigned wc = warp_count[warp];
    for (unsigned k = 0; k < wc; ++k) {
      const gs_vid w = warp_nodes[warp][k];
      const GsSrc s = gs_load_src(w);
      const gs_eid end = gs_row_end(w);
      for (gs_eid e = __ldg(gs.row + w) + lane; e < end; e += 32) gs_visit(st, w, s, e);
    }
    if (deg) {
      const GsSrc s = gs_load_src(v);
      const gs_eid end = gs_row_end(v);
      for (gs_eid e = __ldg(gs.row + v); e < end; ++e) gs_visit(st, v, s, e);
    }
    __syncthreads();
  }
}

// The whole grid expands the deferred outliers of this step, then resets the other
// step's side counter (the next step uses it; nobody reads it during this one). The last
// block to read this step's counter zeroes it too: a step without operators (a priority
// refill) runs no expansion, so the next step of the same parity may be two steps on,
// and it must not find this step's outliers. Word 2 counts the blocks that have read.
__device__ __forceinline__ void gs_phase_outliers(GsStep& st) {
  unsigned* counts = gs.load_balance_side_count;
  const unsigned count = gs_ld_ctl(counts + (st.it & 1));
  __syncthreads();  // every thread of the block has read it
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(counts + 2, 1u) == gridDim.x - 1u) {  // every block has
      counts[st.it & 1] = 0u;
      counts[2] = 0u;
    }
  }
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned k = 0; k < count; ++k) {
    const gs_vid v = gs_ld(gs.load_balance_side + k);
    const GsSrc s = gs_load_src(v);
    const gs_eid end = gs_row_end(v);
    for (gs_eid e = __ldg(gs.row + v) + tid; e < end; e += stride) gs_visit(st, v, s, e);
  }
  if (tid == 0) gs.load_balance_side_count[(st.it + 1) & 1] = 0u;
}
