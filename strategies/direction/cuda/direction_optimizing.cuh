// Beamer's switch: pull once the frontier's out-edges exceed the unvisited edges / alpha;
// push again once the frontier shrinks below n / beta.
__device__ __forceinline__ int gs_dir_decide(int pull, unsigned n_front,
                                             unsigned long long front_edges,
                                             unsigned long long unvisited_edges) {
  if (!pull)
    return (double)front_edges * (double)gs.direction_alpha > (double)unvisited_edges ? 1 : 0;
  return (double)n_front * (double)gs.direction_beta < (double)gs.n ? 0 : 1;
}
