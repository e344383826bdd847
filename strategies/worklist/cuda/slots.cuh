// Per-thread push slots in shared memory (slot k of thread t at gs_wl_slots[k][t], so a
// warp's stores to one slot row hit 32 banks). A thread that fills its slots reserves
// room for all of them with one atomic and writes them out; gs_wl_flush (chunked.cuh,
// block_aggregated.cuh) lands what is left at the end of the phase. Each thread touches
// only its own column: pushes need no barrier.
#define GS_WL_BUFFERED 1
__shared__ gs_vid gs_wl_slots[GS_WL_SLOTS][GS_BLOCK_SIZE];
__shared__ unsigned gs_wl_nslots[GS_BLOCK_SIZE];
__device__ __forceinline__ void gs_wl_write_own(GsStep& st, unsigned base, unsigned n) {
  for (unsigned k = 0; k < n; ++k) gs_wl_store(st, base + k, gs_wl_slots[k][threadIdx.x]);
}
__device__ __forceinline__ void gs_wl_push(GsStep& st, gs_vid v) {
  if (gs_wl_claimed(st, v)) return;
  unsigned n = gs_wl_nslots[threadIdx.x];
  gs_wl_slots[n][threadIdx.x] = v;
  if (++n == GS_WL_SLOTS) {
    gs_wl_write_own(st, atomicAdd(st.ctl_cur + GS_CTL_SIZE, n), n);
    n = 0;
  }
  gs_wl_nslots[threadIdx.x] = n;
}
__device__ __forceinline__ void gs_wl_begin(GsStep& st) {
  (void)st;
  gs_wl_nslots[threadIdx.x] = 0u;  // shared memory starts undefined in every kernel
}
