// Data-driven: always pop the worklist; done when a step pushed nothing.
__device__ __forceinline__ int gs_decide(int mode, unsigned count, int* done) {
  (void)mode;
  *done = count == 0u;
  return GS_MODE_DATA;
}
