// Block-aggregated pushes: at the end of the phase a block scan of the threads' slot
// counts gives each thread its offset, and one atomic per block reserves the room.
__device__ __forceinline__ void gs_wl_flush(GsStep& st) {
  __shared__ unsigned block_base;
  const unsigned n = gs_wl_nslots[threadIdx.x];
  unsigned total;
  const unsigned off = gs_block_exclusive_scan(n, &total);
  // the previous flush's readers of block_base are past the scan's first barrier
  if (threadIdx.x == 0 && total) block_base = atomicAdd(st.ctl_cur + GS_CTL_SIZE, total);
  __syncthreads();
  if (n) gs_wl_write_own(st, block_base + off, n);
  gs_wl_nslots[threadIdx.x] = 0u;
}
