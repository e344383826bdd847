// Push only.
__device__ __forceinline__ int gs_dir_decide(int pull, unsigned n_front,
                                             unsigned long long front_edges,
                                             unsigned long long unvisited_edges) {
  (void)pull; (void)n_front; (void)front_edges; (void)unvisited_edges;
  return 0;
}
