// Lanes that push at the same time elect a leader that reserves all their slots at once.
__device__ __forceinline__ void gs_wl_push(GsStep& st, gs_vid v) {
  if (gs_wl_claimed(st, v)) return;
  const GsLanes g;
  unsigned base = 0;
  if (g.rank() == 0) base = atomicAdd(st.ctl_cur + GS_CTL_SIZE, g.size());
  base = g.first(base);
  gs_wl_store(st, base + g.rank(), v);
}
