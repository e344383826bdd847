// Hierarchical queue: each warp has a queue of 32 * GS_WL_SLOTS ids in shared memory.
// Lanes that push together reserve their places with one shared atomic (warp-aggregated);
// places past the end spill to the global queue, again with one atomic per group of
// lanes. At the end of the phase a block scan over the warp queues' lengths gives each
// warp its offset, one atomic per block reserves the room, and each warp copies its
// queue out.
#define GS_WL_BUFFERED 1
#define GS_WL_WARPS (GS_BLOCK_SIZE / 32)
#define GS_WL_WARP_CAP (32 * GS_WL_SLOTS)
__shared__ gs_vid gs_wl_wq[GS_WL_WARPS][GS_WL_WARP_CAP];
__shared__ unsigned gs_wl_wlen[GS_WL_WARPS];  // places asked for (may pass the capacity)
__device__ __forceinline__ void gs_wl_push(GsStep& st, gs_vid v) {
  if (gs_wl_claimed(st, v)) return;
  const unsigned warp = threadIdx.x >> 5;
  const GsLanes g;
  unsigned base = 0;
  if (g.rank() == 0) base = atomicAdd(&gs_wl_wlen[warp], g.size());
  base = g.first(base);
  const unsigned place = base + g.rank();
  if (place < GS_WL_WARP_CAP) {
    gs_wl_wq[warp][place] = v;
    return;
  }
  const GsLanes spill;  // the lanes that found it full
  unsigned gbase = 0;
  if (spill.rank() == 0) gbase = atomicAdd(st.ctl_cur + GS_CTL_SIZE, spill.size());
  gbase = spill.first(gbase);
  gs_wl_store(st, gbase + spill.rank(), v);
}
__device__ __forceinline__ void gs_wl_begin(GsStep& st) {
  (void)st;
  if ((threadIdx.x & 31) == 0) gs_wl_wlen[threadIdx.x >> 5] = 0u;
  __syncwarp();  // the warp's lanes push only after its length is zero
}
__device__ __forceinline__ void gs_wl_flush(GsStep& st) {
  __shared__ unsigned block_base;
  const unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  __syncthreads();  // every push of the block is in its warp's queue
  const unsigned asked = gs_wl_wlen[warp];
  const unsigned len = asked < GS_WL_WARP_CAP ? asked : GS_WL_WARP_CAP;
  unsigned total;
  const unsigned off = gs_block_exclusive_scan(lane == 0 ? len : 0u, &total);
  const unsigned warp_off = __shfl_sync(0xffffffffu, off, 0);
  if (threadIdx.x == 0 && total) block_base = atomicAdd(st.ctl_cur + GS_CTL_SIZE, total);
  __syncthreads();
  for (unsigned k = lane; k < len; k += 32)
    gs_wl_store(st, block_base + warp_off + k, gs_wl_wq[warp][k]);
  __syncwarp();
}
