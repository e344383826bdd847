// Bitmap frontier: a push sets the node's bit in the next step's bitmap (duplicates
// vanish). The finish phase turns the bitmap into a queue for the phases that enumerate
// items, and clears the bitmap of the step that just ended; the current bitmap answers
// membership for pull traversal.
#define GS_BM_WORDS ((unsigned)((gs.n + 31) >> 5))
__device__ __forceinline__ unsigned* gs_bm(int parity) {
  return gs.worklist_bits + (parity ? GS_BM_WORDS : 0u);
}
__device__ __forceinline__ unsigned gs_wl_size(const GsStep& st) { return st.in_size; }
__device__ __forceinline__ gs_vid gs_wl_item(const GsStep& st, unsigned i) {
  return gs_ld(gs.worklist_queue + ((st.it & 1) ? (unsigned)gs.n : 0u) + i);
}
#define GS_WL_PREFETCH 1
__device__ __forceinline__ gs_vid gs_wl_prefetch(const GsStep& st, unsigned i) {
  return i < (unsigned)gs.n ? gs_wl_item(st, i) : 0;
}
__device__ __forceinline__ bool gs_wl_contains(const GsStep& st, gs_vid v) {
  return (gs_ld(gs_bm(st.it & 1) + (v >> 5)) >> (v & 31)) & 1u;
}
__device__ __forceinline__ void gs_wl_push(GsStep& st, gs_vid v) {
  unsigned* w = gs_bm((st.it + 1) & 1) + (v >> 5);
  const unsigned bit = 1u << (v & 31);
  if (!(gs_ld(w) & bit)) atomicOr(w, bit);
}
__device__ __forceinline__ void gs_phase_bitmap_finish(GsStep& st) {
  const unsigned words = GS_BM_WORDS;
  unsigned* next = gs_bm((st.it + 1) & 1);
  unsigned* cur = gs_bm(st.it & 1);
  gs_vid* out = gs.worklist_queue + (((st.it + 1) & 1) ? (unsigned)gs.n : 0u);
  const unsigned stride = gridDim.x * blockDim.x;
  const unsigned lane = threadIdx.x & 31;
  // whole warps walk the words together so each can reserve its slots with one atomic
  const unsigned start = blockIdx.x * blockDim.x + (threadIdx.x & ~31u);
  for (unsigned base = start; base < words; base += stride) {
    const unsigned w = base + lane;
    unsigned bits = 0;
    if (w < words) {
      bits = gs_ld(next + w);
      cur[w] = 0u;
    }
    const unsigned cnt = __popc(bits);
    unsigned incl = cnt;
    for (int off = 1; off < 32; off <<= 1) {
      const unsigned y = __shfl_up_sync(0xffffffffu, incl, off);
      if (lane >= (unsigned)off) incl += y;
    }
    const unsigned total = __shfl_sync(0xffffffffu, incl, 31);
    unsigned pos = 0;
    if (lane == 31 && total) pos = atomicAdd(st.ctl_cur + GS_CTL_SIZE, total);
    pos = __shfl_sync(0xffffffffu, pos, 31) + incl - cnt;
    while (bits) {
      const int b = __ffs(bits) - 1;
      bits &= bits - 1;
      out[pos++] = (gs_vid)((w << 5) + b);
    }
  }
}
