// Byte-flag frontier (third-party plugin gswitch-byteflags): flags[parity * n + v] says
// whether v is active in the steps of that parity; the finish phase compacts the next
// step's flags into its queue (one atomic per warp) and clears the finished step's.
__device__ __forceinline__ unsigned char* gs_bf_flags(int parity) {
  return gs.worklist_flags + (parity ? (unsigned)gs.n : 0u);
}
__device__ __forceinline__ unsigned gs_wl_size(const GsStep& st) { return st.in_size; }
__device__ __forceinline__ gs_vid gs_wl_item(const GsStep& st, unsigned i) {
  return gs_ld(gs.worklist_queue + ((st.it & 1) ? (unsigned)gs.n : 0u) + i);
}
__device__ __forceinline__ bool gs_wl_contains(const GsStep& st, gs_vid v) {
  return gs_ld(gs_bf_flags(st.it & 1) + v) != 0;
}
__device__ __forceinline__ void gs_wl_push(GsStep& st, gs_vid v) {
  gs_bf_flags((st.it + 1) & 1)[v] = 1;
}
__device__ __forceinline__ void gs_phase_byte_flags_finish(GsStep& st) {
  unsigned char* next = gs_bf_flags((st.it + 1) & 1);
  unsigned char* cur = gs_bf_flags(st.it & 1);
  gs_vid* out = gs.worklist_queue + (((st.it + 1) & 1) ? (unsigned)gs.n : 0u);
  const unsigned stride = gridDim.x * blockDim.x;
  const unsigned lane = threadIdx.x & 31;
  const unsigned start = blockIdx.x * blockDim.x + (threadIdx.x & ~31u);
  for (unsigned base = start; base < (unsigned)gs.n; base += stride) {
    const unsigned v = base + lane;
    bool on = false;
    if (v < (unsigned)gs.n) {
      on = gs_ld(next + v) != 0;
      cur[v] = 0;
    }
    const unsigned ballot = __ballot_sync(0xffffffffu, on);
    unsigned pos = 0;
    if (lane == 0 && ballot) pos = atomicAdd(st.ctl_cur + GS_CTL_SIZE, __popc(ballot));
    pos = __shfl_sync(0xffffffffu, pos, 0);
    if (on) out[pos + __popc(ballot & ((1u << lane) - 1u))] = (gs_vid)v;
  }
}
