// Subset: the start set every step (the core's keep phase pushes the items again);
// done after a step that activated nothing.
__device__ __forceinline__ int gs_decide(int mode, unsigned count, const unsigned* slot, int* done) {
  (void)mode;
  (void)slot;
  *done = count == 0u;
  return GS_MODE_SUBSET;
}
