// Persistent kernel: the iteration loop outlined into one cooperative launch. Every
// thread reads the same counters after the barrier and so takes the same decision; the
// loop leaves early on worklist overflow so the host can grow it and relaunch.
extern "C" __global__ void __launch_bounds__(GS_BLOCK_SIZE)
gs_persistent_kernel(int it0, int mode0, int max_it, float threshold) {
  cg::grid_group grid = cg::this_grid();
  const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
  unsigned long long edges = 0;
  int mode = mode0;
  int it = it0;
  int done = 0;
  unsigned overflow = 0u;
  unsigned in_size = gs_ld_ctl(gs.ctl + GS_CTL_SLOT(it - 1) + GS_CTL_SIZE);
  while (it < max_it) {
    GsStep st = gs_make_step_sized(it, mode, in_size);
    if (leader) gs_step_begin(st);
#if GS_HAS_NODE_OP
    gs_node_phase(st);
    grid.sync();
#endif
    gs_edge_phase(st);
    edges += st.edges;
    grid.sync();
    // one read gives the decision's count, the next step's size and the overflow flag
    const uint4 c = gs_slot(it);
    const int next = gs_decide(mode, mode == GS_MODE_TOPOLOGY ? c.y : c.x, threshold, &done);
    overflow = c.z;
    in_size = c.x;
    ++it;
    mode = next;
    if (done || overflow) break;
  }
  if (leader) {
    gs.ctl[GS_CTL_NEXT_MODE] = (unsigned)mode;
    gs.ctl[GS_CTL_DONE] = (unsigned)(done && !overflow);
    gs.ctl[GS_CTL_EXIT_IT] = (unsigned)it;
  }
  gs_flush_edges(edges);
}
