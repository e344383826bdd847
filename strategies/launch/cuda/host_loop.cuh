// Host loop: the host launches the node phase (if any) and the edge phase of every step,
// sizing each grid from the step's item count. The last block to finish the edge phase
// takes the driving decision, so the host reads back one small control block per step.
extern "C" __global__ void __launch_bounds__(GS_BLOCK_SIZE) gs_node_kernel(int it, int mode) {
  GsStep st = gs_make_step(it, mode);
  gs_node_phase(st);
}

extern "C" __global__ void __launch_bounds__(GS_BLOCK_SIZE)
gs_edge_kernel(int it, int mode, float threshold) {
  GsStep st = gs_make_step(it, mode);
  if (blockIdx.x == 0 && threadIdx.x == 0) gs_step_begin(st);
  gs_edge_phase(st);
  gs_flush_edges(st.edges);
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(gs.ctl + GS_CTL_BLOCKS_DONE, 1u) == gridDim.x - 1;
  __syncthreads();
  if (last && threadIdx.x == 0) {
    __threadfence();
    int done = 0;
    const int next = gs_decide(mode, gs_step_count(it, mode), threshold, &done);
    gs.ctl[GS_CTL_NEXT_MODE] = (unsigned)next;
    gs.ctl[GS_CTL_DONE] = (unsigned)done;
    gs.ctl[GS_CTL_EXIT_IT] = (unsigned)(it + 1);
    gs.ctl[GS_CTL_BLOCKS_DONE] = 0u;
  }
}
