// Temporal hybrid: topology while more than threshold * n nodes are active, data below;
// leaving topology goes through one transition sweep that rebuilds the worklist.
__device__ __forceinline__ int gs_decide(int mode, unsigned count, const unsigned* slot, int* done) {
  (void)slot;
  *done = count == 0u;
  const float limit = gs.driving_threshold * (float)gs.n;
  if (mode == GS_MODE_TOPOLOGY) return (float)count < limit ? GS_MODE_TRANSITION : GS_MODE_TOPOLOGY;
  return (float)count > limit ? GS_MODE_TOPOLOGY : GS_MODE_DATA;
}
