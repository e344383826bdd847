// Lanes that push at the same time elect a leader that reserves all their slots at once.
__device__ __forceinline__ void gs_wl_push(GsStep& st, gs_vid v) {
  if (gs_wl_claimed(st, v)) return;
  cg::coalesced_group g = cg::coalesced_threads();
  unsigned base = 0;
  if (g.thread_rank() == 0) base = atomicAdd(st.ctl_cur + GS_CTL_SIZE, (unsigned)g.size());
  base = g.shfl(base, 0);
  gs_wl_store(st, base + g.thread_rank(), v);
}
