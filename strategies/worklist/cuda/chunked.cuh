// Chunked pushes: at the end of the phase each thread reserves room for what its slots
// still hold with one atomic of its own.
__device__ __forceinline__ void gs_wl_flush(GsStep& st) {
  const unsigned n = gs_wl_nslots[threadIdx.x];
  if (n) gs_wl_write_own(st, atomicAdd(st.ctl_cur + GS_CTL_SIZE, n), n);
  gs_wl_nslots[threadIdx.x] = 0u;
}
