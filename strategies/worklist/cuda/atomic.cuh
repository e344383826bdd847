// One atomicAdd per pushed node.
__device__ __forceinline__ void gs_wl_push(GsStep& st, gs_vid v) {
  const unsigned slot = atomicAdd(st.out_size, 1u);
  gs_wl_store(st, slot, v);
}
