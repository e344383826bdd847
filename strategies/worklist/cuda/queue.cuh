// Queue worklist storage shared by the queue strategies: two queues used in turn
// (step it pops queue it & 1 and pushes into the other), a spill flag per node for
// pushes past the capacity (the host grows the queue and compacts the spill), and with
// GS_WL_DEDUP a per-node stamp so a node is queued at most once per step.
__device__ __forceinline__ gs_vid* gs_wl_queue(int parity) {
  return parity ? gs.worklist_q1 : gs.worklist_q0;
}
__device__ __forceinline__ unsigned gs_wl_cap(int parity) {
  return (unsigned)(parity ? gs.worklist_cap1 : gs.worklist_cap0);
}
__device__ __forceinline__ unsigned gs_wl_size(const GsStep& st) {
  const unsigned cap = gs_wl_cap(st.it & 1);
  return st.in_size < cap ? st.in_size : cap;
}
__device__ __forceinline__ gs_vid gs_wl_item(const GsStep& st, unsigned i) {
  return gs_ld(gs_wl_queue(st.it & 1) + i);
}
#define GS_WL_PREFETCH 1
__device__ __forceinline__ gs_vid gs_wl_prefetch(const GsStep& st, unsigned i) {
  return i < gs_wl_cap(st.it & 1) ? gs_wl_item(st, i) : 0;
}
// Whether v is already queued for the next step (and claim it if not).
__device__ __forceinline__ bool gs_wl_claimed(const GsStep& st, gs_vid v) {
#if GS_WL_DEDUP
  const int stamp = st.it + 1;
  if (gs_ld(gs.worklist_stamp + v) == stamp) return true;
  return atomicExch(gs.worklist_stamp + v, stamp) == stamp;
#else
  (void)st; (void)v;
  return false;
#endif
}
__device__ __forceinline__ void gs_wl_store(GsStep& st, unsigned slot, gs_vid v) {
  const int par = (st.it + 1) & 1;
  if (slot < gs_wl_cap(par)) {
    gs_wl_queue(par)[slot] = v;
  } else {
    gs.worklist_spill[v] = 1;
    atomicOr(st.ctl_cur + GS_CTL_OVERFLOW, 1u);
  }
}
// After the host grew the output queue of step `it`: append the spilled nodes.
extern "C" __global__ void gs_wl_compact_spill(int it) {
  // mode and pull unused: the compaction stores, it does not activate
  GsStep st = gs_blank_step(it, 0, 0, 0);
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned v = blockIdx.x * blockDim.x + threadIdx.x; v < (unsigned)gs.n; v += stride) {
    if (gs.worklist_spill[v]) {
      gs.worklist_spill[v] = 0;
      const unsigned slot = atomicAdd(st.ctl_cur + GS_CTL_SIZE, 1u);
      gs_wl_store(st, slot, (gs_vid)v);
    }
  }
}
