// One atomicAdd per pushed node.
__device__ __forceinline__ void gs_wl_push(GsStep& st, gs_vid v) {
  if (gs_wl_claimed(st, v)) return;
  const unsigned slot = atomicAdd(st.ctl_cur + GS_CTL_SIZE, 1u);
  gs_wl_store(st, slot, v);
}
