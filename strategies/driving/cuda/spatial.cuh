// Spatial hybrid: a bitmap of active partitions of gs.driving_partition_size nodes, two
// halves by step parity (the step's and the next one's). The seed phase clears the next
// half and marks the partitions of the worklist's items (the start set, in step 0); the
// run phase gives each active partition to one block, which applies the edge operator to
// all its nodes, then loops (__syncthreads between passes, at most
// gs.driving_local_iterations more) over the nodes an in-partition edge updated, kept in
// a shared-memory queue (a bitmap keeps each node once); a warp takes a node and its
// lanes the node's edges. An update that leaves the partition (or is left after the last
// pass) marks its target's partition in the next half; the step counts the partitions
// it newly marks in GS_CTL_DRIVE, and the run is done after a step that marked none.
#define GS_SPATIAL_MAX_WORDS 128  // 4096-node partitions

__device__ __forceinline__ unsigned gs_spatial_parts() {
  return (unsigned)((gs.n + gs.driving_partition_size - 1) / gs.driving_partition_size);
}

__device__ __forceinline__ unsigned* gs_spatial_half(int it) {
  return gs.driving_parts + (size_t)(it & 1) * ((gs_spatial_parts() + 31u) / 32u);
}

// Activate u's partition for the next step; count it if this thread set its bit.
__device__ __forceinline__ void gs_spatial_mark(GsStep& st, unsigned* next, gs_vid u) {
  const unsigned p = (unsigned)((long long)u / gs.driving_partition_size);
  const unsigned bit = 1u << (p & 31u);
  if (__ldcg(next + (p >> 5)) & bit) return;  // already active: no atomic
  if (!(atomicOr(next + (p >> 5), bit) & bit)) atomicAdd(st.ctl_cur + GS_CTL_DRIVE, 1u);
}

__device__ __forceinline__ void gs_phase_spatial_seed(GsStep& st) {
  const unsigned stride = gridDim.x * blockDim.x;
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned* next = gs_spatial_half(st.it + 1);
  unsigned* cur = gs_spatial_half(st.it);
  const unsigned words = (gs_spatial_parts() + 31u) / 32u;
  for (unsigned w = tid; w < words; w += stride) next[w] = 0u;  // read in step it - 1
  for (unsigned i = tid; i < st.n_items; i += stride) {
    const unsigned p = (unsigned)((long long)gs_item(st, i) / gs.driving_partition_size);
    atomicOr(cur + (p >> 5), 1u << (p & 31u));
  }
}

__device__ __forceinline__ void gs_phase_spatial_run(GsStep& st) {
  // per pass: the nodes an in-partition edge updated, as a queue of partition offsets
  // (read by the next pass) and a bitmap that keeps each node once in it
  __shared__ unsigned seen[GS_SPATIAL_MAX_WORDS];
  __shared__ unsigned short queue[2][GS_SPATIAL_MAX_WORDS * 32];
  __shared__ unsigned queued[2];
  const long long size = gs.driving_partition_size;
  const unsigned parts = gs_spatial_parts();
  const unsigned* cur = gs_spatial_half(st.it);
  unsigned* next = gs_spatial_half(st.it + 1);
  const int limit = gs.driving_local_iterations;
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned warps = blockDim.x >> 5;
  for (unsigned p = blockIdx.x; p < parts; p += gridDim.x) {  // block-uniform
    if (!(__ldcg(cur + (p >> 5)) & (1u << (p & 31u)))) continue;
    const gs_vid lo = (gs_vid)((long long)p * size);
    const unsigned len = (unsigned)min(size, gs.n - (long long)lo);
    const unsigned nw = (len + 31u) / 32u;
    for (int pass = 0;; ++pass) {
      const unsigned short* in = queue[pass & 1];
      unsigned short* out = queue[(pass + 1) & 1];
      for (unsigned w = threadIdx.x; w < nw; w += blockDim.x) seen[w] = 0u;
      if (threadIdx.x == 0) queued[(pass + 1) & 1] = 0u;
      __syncthreads();
      const bool inner = pass < limit;
      const unsigned items = pass == 0 ? len : queued[pass & 1];
      int more = 0;
      // a warp per node, its lanes over the node's edges: a pass's few updated nodes
      // spread over the block's warps, and a node's edges are read together
      for (unsigned item = warp; item < items; item += warps) {  // warp-uniform
        const gs_vid v = lo + (gs_vid)(pass == 0 ? item : (unsigned)in[item]);
        const GsSrc s = gs_load_src(v);
        const gs_eid end = gs_row_end(v);
        for (gs_eid e = __ldg(gs.row + v) + (gs_eid)lane; e < end; e += 32) {
          const gs_vid u = __ldg(gs.col + e);
          st.edges += 1;
          if (!gs_edge_op(st, v, s, u, e, st.it)) continue;
          const unsigned k = (unsigned)(u - lo);
          if (inner && u >= lo && k < len) {  // inside: the next pass of this block
            const unsigned bit = 1u << (k & 31u);
            if (!(atomicOr(seen + (k >> 5), bit) & bit))
              out[atomicAdd(&queued[(pass + 1) & 1], 1u)] = (unsigned short)k;
            more = 1;
          } else {
            gs_spatial_mark(st, next, u);
          }
        }
      }
      if (!__syncthreads_or(more)) break;  // every thread leaves together
    }
  }
}

__device__ __forceinline__ int gs_decide(int mode, unsigned count, const unsigned* slot, int* done) {
  (void)count;
  *done = __ldcg(slot + GS_CTL_DRIVE) == 0u;
  return mode;
}
