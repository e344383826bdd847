// Atomic-free worklist: a push sets the node's flag (every writer writes 1, so the race
// is benign and duplicates vanish). Three phases at the end of every step turn the flags
// into the next step's queue without an atomic on a shared counter:
//  ps_count: per tile of GS_BLOCK_SIZE nodes, its flagged nodes (__syncthreads_count);
//  ps_scan:  block 0 turns the tile counts into tile offsets and adds the total to the
//            step's size counter;
//  ps_write: per tile, a block scan of the flags places each flagged node at its
//            tile's offset plus its rank, in id order, and clears its flag.
#define GS_PS_TILES ((unsigned)((gs.n + GS_BLOCK_SIZE - 1) / GS_BLOCK_SIZE))
__device__ __forceinline__ gs_vid* gs_ps_queue(int parity) {
  return gs.worklist_queue + (parity ? (unsigned)gs.n : 0u);
}
__device__ __forceinline__ unsigned gs_wl_size(const GsStep& st) { return st.in_size; }
__device__ __forceinline__ gs_vid gs_wl_item(const GsStep& st, unsigned i) {
  return gs_ld(gs_ps_queue(st.it & 1) + i);
}
#define GS_WL_PREFETCH 1
__device__ __forceinline__ gs_vid gs_wl_prefetch(const GsStep& st, unsigned i) {
  return i < (unsigned)gs.n ? gs_wl_item(st, i) : 0;
}
__device__ __forceinline__ void gs_wl_push(GsStep& st, gs_vid v) {
  (void)st;
  unsigned char* f = gs.worklist_flags + v;
  if (!gs_ld(f)) *f = 1;
}
__device__ __forceinline__ bool gs_ps_flagged(unsigned v) {
  return v < (unsigned)gs.n && gs_ld(gs.worklist_flags + v);
}
__device__ __forceinline__ void gs_phase_ps_count(GsStep& st) {
  (void)st;
  const unsigned tiles = GS_PS_TILES;
  for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x) {  // block-uniform
    const int c = __syncthreads_count(gs_ps_flagged(t * GS_BLOCK_SIZE + threadIdx.x));
    if (threadIdx.x == 0) gs.worklist_tiles[t] = (unsigned)c;
  }
}
__device__ __forceinline__ void gs_phase_ps_scan(GsStep& st) {
  if (blockIdx.x != 0) return;  // one block: n / GS_BLOCK_SIZE counts
  const unsigned tiles = GS_PS_TILES;
  unsigned carry = 0;
  for (unsigned b = 0; b < tiles; b += GS_BLOCK_SIZE) {
    const unsigned t = b + threadIdx.x;
    const unsigned x = t < tiles ? gs_ld(gs.worklist_tiles + t) : 0u;
    unsigned sum;
    // every read of this round happens before the scan's barriers, every write after
    const unsigned ex = gs_block_exclusive_scan(x, &sum);
    if (t < tiles) gs.worklist_tiles[t] = carry + ex;
    carry += sum;
  }
  if (threadIdx.x == 0 && carry) atomicAdd(st.ctl_cur + GS_CTL_SIZE, carry);
}
__device__ __forceinline__ void gs_phase_ps_write(GsStep& st) {
  gs_vid* out = gs_ps_queue((st.it + 1) & 1);
  const unsigned tiles = GS_PS_TILES;
  for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x) {  // block-uniform
    const unsigned v = t * GS_BLOCK_SIZE + threadIdx.x;
    const bool flagged = gs_ps_flagged(v);
    unsigned sum;
    const unsigned rank = gs_block_exclusive_scan(flagged ? 1u : 0u, &sum);
    if (flagged) {
      out[gs_ld(gs.worklist_tiles + t) + rank] = (gs_vid)v;
      gs.worklist_flags[v] = 0;
    }
  }
}
