// Spatial hybrid: a bitmap of active partitions of gs.driving_partition_size nodes, two
// halves by step parity (the step's and the next one's). The seed phase clears the next
// half and marks the partitions of the worklist's items (the start set, in step 0); the
// run phase gives each active partition to one block, which applies the edge operator to
// its nodes, then loops (__syncthreads between passes, at most
// gs.driving_local_iterations more) over the nodes an in-partition edge updated, kept in
// a shared-memory queue (a bitmap keeps each node once); a warp takes a node and its
// lanes the node's edges. An update that leaves the partition (or is left after the last
// pass) marks its target's partition in the next half; the step counts the partitions
// it newly marks in GS_CTL_DRIVE, and the run is done after a step that marked none.
//
// The first pass of a partition: every node of it, or (GS_SPATIAL_DIRTY: an order-free
// operator, GS_LOCAL_STAGE > 0; local iteration on, and partitions of a multiple of 32
// nodes) only the nodes marked since the partition last ran, as the CPU engine does.
// The marks are a node bitmap in two halves by step parity, set with the partition's
// mark and read and cleared by the first pass; a node not marked has not changed since
// its edges were last applied, and with min, max or or reductions applying them again
// changes nothing, so the fixed point and the steps are the same, with fewer edges.
//
// Ordered passes (GS_SPATIAL_ORDER: the above, and an algorithm with a priority key):
// after the first pass, a pass takes the queued nodes of priority bucket at most
// `near`, the largest lowest bucket of a queue so far, and holds the others in the
// next queue; the first and the last pass take every node. A relaxation then rarely
// passes on a distance that a later pass improves (delta-stepping inside a partition).
#define GS_SPATIAL_MAX_WORDS 128  // 4096-node partitions
#define GS_SPATIAL_WARPS (GS_BLOCK_SIZE / 32)
#if defined(GS_LOCAL_STAGE) && GS_LOCAL_STAGE > 0  // codegen staged an order-free operator
#define GS_SPATIAL_DIRTY 1
#else
#define GS_SPATIAL_DIRTY 0
#endif
#if GS_SPATIAL_DIRTY && GS_HAS_PRIORITY
#define GS_SPATIAL_ORDER 1
#else
#define GS_SPATIAL_ORDER 0
#endif
// Resident partitions (driving.resident, nodes a thread owns; an order-free staged
// operator with marks): spatial_resident.cuh's gs_phase_spatial_run replaces the one
// below; a step's active partitions are also listed (two halves by step parity,
// gs.driving_list) so that blocks take them in turn.
#if defined(GS_SPATIAL_RESIDENT) && GS_SPATIAL_RESIDENT > 0 && GS_SPATIAL_DIRTY
#define GS_SPATIAL_RESIDENT_ON 1
#else
#define GS_SPATIAL_RESIDENT_ON 0
#endif
// Resident partitions from a shared ring, with no steps (driving.schedule=ring):
// spatial_ring.cuh's seed and run phases replace the ones here.
#if GS_SPATIAL_RESIDENT_ON && defined(GS_SPATIAL_RING) && GS_SPATIAL_RING
#define GS_SPATIAL_RING_ON 1
#else
#define GS_SPATIAL_RING_ON 0
#endif

__device__ __forceinline__ unsigned gs_spatial_parts() {
  return (unsigned)((gs.n + gs.driving_partition_size - 1) / gs.driving_partition_size);
}

__device__ __forceinline__ unsigned* gs_spatial_half(int it) {
  return gs.driving_parts + (size_t)(it & 1) * ((gs_spatial_parts() + 31u) / 32u);
}

#if GS_SPATIAL_DIRTY
__device__ __forceinline__ bool gs_spatial_dirty_on() {
  return (gs.driving_partition_size & 31) == 0 && gs.driving_local_iterations > 0;
}
__device__ __forceinline__ unsigned* gs_spatial_dirty_half(int it) {
  return gs.driving_dirty + (size_t)(it & 1) * (size_t)((gs.n + 31) / 32);
}
// Mark node u changed in the dirty half of step it (read by its partition's first pass).
__device__ __forceinline__ void gs_spatial_dirty_set(int it, gs_vid u) {
  unsigned* w = gs_spatial_dirty_half(it) + ((long long)u >> 5);
  const unsigned bit = 1u << ((unsigned)u & 31u);
  if (!(__ldcg(w) & bit)) atomicOr(w, bit);
}
#else
__device__ __forceinline__ bool gs_spatial_dirty_on() { return false; }
__device__ __forceinline__ void gs_spatial_dirty_set(int, gs_vid) {}
#endif

#if GS_SPATIAL_ORDER
// The priority bucket of node v of the block's partition (its staged value if staged).
__device__ __forceinline__ unsigned gs_spatial_bucket(const gs_vid v, bool staged,
                                                     const GsLocal& L) {
#ifdef GS_PRIO_WIDTH
  const double k = (staged ? gs_priority_local(v, L) : gs_priority(v)) *
                   (1.0 / (double)GS_PRIO_WIDTH);
#else
  const double k = (staged ? gs_priority_local(v, L) : gs_priority(v)) *
                   (double)gs.driving_inv_width;
#endif
  if (!(k > 0.0)) return 0u;  // and NaN
  return k >= 4194303.0 ? 4194303u : (unsigned)k;  // the CPU engine's MAX_BUCKET
}
#endif

// Activate u's partition for the next step; count it if this thread set its bit.
__device__ __forceinline__ void gs_spatial_mark(GsStep& st, unsigned* next, gs_vid u) {
  if (gs_spatial_dirty_on()) gs_spatial_dirty_set(st.it + 1, u);
  const unsigned p = (unsigned)((long long)u / gs.driving_partition_size);
  const unsigned bit = 1u << (p & 31u);
  if (__ldcg(next + (p >> 5)) & bit) return;  // already active: no atomic
  if (!(atomicOr(next + (p >> 5), bit) & bit)) {
#if GS_SPATIAL_RESIDENT_ON
    const unsigned at = atomicAdd(st.ctl_cur + GS_CTL_DRIVE, 1u);
    atomicExch(gs.driving_list + (size_t)((st.it + 1) & 1) * gs_spatial_parts() + at, (int)p);
#else
    atomicAdd(st.ctl_cur + GS_CTL_DRIVE, 1u);
#endif
  }
}

#if !GS_SPATIAL_RING_ON
__device__ __forceinline__ void gs_phase_spatial_seed(GsStep& st) {
  const unsigned stride = gridDim.x * blockDim.x;
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned* next = gs_spatial_half(st.it + 1);
  unsigned* cur = gs_spatial_half(st.it);
  const unsigned words = (gs_spatial_parts() + 31u) / 32u;
  for (unsigned w = tid; w < words; w += stride) next[w] = 0u;  // read in step it - 1
  for (unsigned i = tid; i < st.n_items; i += stride) {
    const gs_vid u = gs_item(st, i);
    const unsigned p = (unsigned)((long long)u / gs.driving_partition_size);
#if GS_SPATIAL_RESIDENT_ON
    // listed for this step: counted in the previous step's slot, which the run reads
    if (!(atomicOr(cur + (p >> 5), 1u << (p & 31u)) & (1u << (p & 31u)))) {
      const unsigned at = atomicAdd(gs.ctl + GS_CTL_SLOT(st.it - 1) + GS_CTL_DRIVE, 1u);
      atomicExch(gs.driving_list + (size_t)(st.it & 1) * gs_spatial_parts() + at, (int)p);
    }
#else
    atomicOr(cur + (p >> 5), 1u << (p & 31u));
#endif
    if (gs_spatial_dirty_on()) gs_spatial_dirty_set(st.it, u);
  }
}
#endif  // !GS_SPATIAL_RING_ON

// Where codegen staged the operator (GS_LOCAL_STAGE: the fields the edge operator
// reduces into e.dst, in shared memory for partitions of at most that many nodes), a
// block loads its partition's values once, runs its passes on them (targets outside the
// partition go to global memory as before), and reduces what improved back into global
// memory with the field's own atomic. It also asks L1 for the partition's row offsets
// and edge ids first, which the passes then read again and again.
#ifndef GS_LOCAL_STAGE  // nothing staged: the same passes, on global memory
#define GS_LOCAL_STAGE 0
struct GsLocal {
  gs_vid lo;
};
__device__ __forceinline__ GsLocal gs_local_arrays() {
  GsLocal L;
  L.lo = 0;
  return L;
}
__device__ __forceinline__ GsSrc gs_load_src_local(const gs_vid v, const GsLocal&) {
  return gs_load_src(v);
}
template <typename GsStepT>
__device__ __forceinline__ bool gs_edge_op_local(GsStepT& st, const gs_vid v, const GsSrc& s,
                                                 const gs_vid u, const gs_eid e,
                                                 const int it, const GsLocal&) {
  return gs_edge_op(st, v, s, u, e, it);
}
__device__ __forceinline__ void gs_local_load(const GsLocal&, unsigned) {}
__device__ __forceinline__ void gs_local_store(const GsLocal&, unsigned) {}
#endif

__device__ __forceinline__ void gs_spatial_warm(gs_vid lo, unsigned len) {
  const gs_eid first = __ldg(gs.row + lo), last = __ldg(gs.row + lo + len);
  const unsigned row_step = 128u / sizeof(gs_eid), col_step = 128u / sizeof(gs_vid);
  for (unsigned i = threadIdx.x * row_step; i <= len; i += blockDim.x * row_step)
    asm volatile("prefetch.global.L1 [%0];" :: "l"(gs.row + lo + i));
  for (gs_eid e = first + (gs_eid)threadIdx.x * col_step; e < last;
       e += (gs_eid)blockDim.x * col_step)
    asm volatile("prefetch.global.L1 [%0];" :: "l"(gs.col + e));
}

// The end of v's row given its source values s (gs_row_end, with the values the pass
// holds: a staged partition's are newer than global memory's).
__device__ __forceinline__ gs_eid gs_spatial_row_end(const gs_vid v, const GsSrc& s) {
#ifdef GS_ROW_GUARD
  if (!gs_row_guard_src(v, s)) return __ldg(gs.row + v);
#else
  (void)s;
#endif
  return gs_row_stop(v);
}

// One edge of a pass: the operator (on the staged values when u is in a staged
// partition), then u queued for the next pass when it is inside and passes remain, or its
// partition marked for the next step. Returns whether it queued u.
__device__ __forceinline__ bool gs_spatial_edge(GsStep& st, const GsLocal& L, bool staged,
                                                const gs_vid v, const GsSrc& s, const gs_vid u,
                                                const gs_eid e, const unsigned len, bool inner,
                                                unsigned* mark, unsigned* count,
                                                unsigned short* out, unsigned* next,
                                                bool track, unsigned& low) {
  st.edges += 1;
  const unsigned k = (unsigned)(u - L.lo);
  const bool here = u >= L.lo && k < len;
  const bool act = staged && here ? gs_edge_op_local(st, v, s, u, e, st.it, L)
                                  : gs_edge_op(st, v, s, u, e, st.it);
  if (!act) return false;
  if (inner && here) {  // inside: the next pass of this block
    const unsigned bit = 1u << (k & 31u);
    if (!(atomicOr(mark + (k >> 5), bit) & bit)) out[atomicAdd(count, 1u)] = (unsigned short)k;
#if GS_SPATIAL_ORDER
    if (track) low = min(low, gs_spatial_bucket(u, staged, L));  // its value after this one
#else
    (void)track;
    (void)low;
#endif
    return true;
  }
  gs_spatial_mark(st, next, u);
  return false;
}

#if GS_SPATIAL_ORDER
// An ordered pass holds node k (partition offset) of bucket b for a later pass.
__device__ __forceinline__ void gs_spatial_hold(unsigned k, unsigned b, unsigned* mark,
                                                unsigned* count, unsigned short* out,
                                                unsigned& low) {
  const unsigned bit = 1u << (k & 31u);
  if (!(atomicOr(mark + (k >> 5), bit) & bit)) out[atomicAdd(count, 1u)] = (unsigned short)k;
  low = min(low, b);
}
#endif

#if !GS_SPATIAL_RESIDENT_ON
__device__ __forceinline__ void gs_phase_spatial_run(GsStep& st) {
  // per pass: the nodes an in-partition edge updated, as a queue of partition offsets
  // (read by the next pass) and a bitmap that keeps each node once in it
  // (two bitmaps and three counters, so that a pass clears the ones the next pass
  // fills while it fills its own: one barrier per pass)
  __shared__ unsigned seen[2][GS_SPATIAL_MAX_WORDS];
  __shared__ unsigned short queue[2][GS_SPATIAL_MAX_WORDS * 32];
  __shared__ unsigned queued[3];
  __shared__ unsigned lowest[3];  // ordered passes: the lowest bucket of each queue
  const long long size = gs.driving_partition_size;
  const unsigned parts = gs_spatial_parts();
  const unsigned* cur = gs_spatial_half(st.it);
  unsigned* next = gs_spatial_half(st.it + 1);
  const int limit = gs.driving_local_iterations;
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const bool dirty = gs_spatial_dirty_on();  // the same for every block
  const bool order = GS_SPATIAL_ORDER && dirty;  // likewise
  GsLocal L = gs_local_arrays();
  // This block's partitions are blockIdx.x + j * gridDim.x. Their bits are read for up
  // to GS_BLOCK_SIZE of them at once, a thread each, and a ballot per warp keeps the
  // active ones, so a step over few active partitions among thousands costs one read
  // of the bitmap, not one dependent read per partition.
  __shared__ unsigned active[GS_SPATIAL_WARPS];
  const unsigned mine = parts > blockIdx.x ? (parts - blockIdx.x + gridDim.x - 1u) / gridDim.x
                                           : 0u;
  for (unsigned j0 = 0; j0 < mine; j0 += GS_BLOCK_SIZE) {  // block-uniform
    const unsigned j = j0 + threadIdx.x;
    const unsigned pj = blockIdx.x + j * gridDim.x;
    const bool on = j < mine && (__ldcg(cur + (pj >> 5)) & (1u << (pj & 31u)));
    const unsigned found = __ballot_sync(0xffffffffu, on);
    if (lane == 0) active[warp] = found;
    __syncthreads();
    for (unsigned aw = 0; aw < GS_SPATIAL_WARPS; ++aw) {
      for (unsigned bits = active[aw]; bits; bits &= bits - 1u) {  // block-uniform
        const unsigned p = blockIdx.x + (j0 + aw * 32u + (unsigned)(__ffs(bits) - 1)) * gridDim.x;
        const gs_vid lo = (gs_vid)((long long)p * size);
        const unsigned len = (unsigned)min(size, gs.n - (long long)lo);
        const unsigned nw = (len + 31u) / 32u;
        // block-uniform; each thread loads (and stores) the offsets it will store (load)
        // next, so a partition's load never races the previous one's store
        const bool staged = GS_LOCAL_STAGE > 0 && len <= GS_LOCAL_STAGE;
        L.lo = lo;
        if (staged) {
          gs_spatial_warm(lo, len);
          gs_local_load(L, len);
        }
        for (unsigned w = threadIdx.x; w < nw; w += GS_BLOCK_SIZE) seen[1][w] = 0u;
        if (threadIdx.x == 0) {
          queued[1] = queued[0] = 0u;
          lowest[1] = lowest[0] = 0xffffffffu;
        }
        __syncthreads();
#if GS_SPATIAL_DIRTY
        if (dirty) {  // the first pass's queue: the nodes marked since the partition ran
          unsigned* marks = gs_spatial_dirty_half(st.it) + (lo >> 5);
          for (unsigned w = threadIdx.x; w < nw; w += GS_BLOCK_SIZE) {
            unsigned bits = __ldcg(marks + w);
            if (!bits) continue;
            __stcg(marks + w, 0u);  // nothing sets this half in this step
            for (unsigned at = atomicAdd(queued, (unsigned)__popc(bits)); bits;
                 bits &= bits - 1u, ++at)
              queue[0][at] = (unsigned short)(w * 32u + (unsigned)(__ffs(bits) - 1));
          }
          __syncthreads();
        }
#endif
        // pass p reads queue p & 1 (counted in queued[p % 3]: q_in) and fills the other,
        // kept once per node by seen[(p + 1) & 1]; it clears seen[p & 1] and
        // queued[(p + 2) % 3] (q_clear), which pass p + 1 fills, and which no thread reads
        // after the barrier ending p - 1. The three counters rotate in registers.
        unsigned q_in = 0u, q_out = 1u, q_clear = 2u;
        unsigned near = 0u;  // ordered passes: the largest bucket a pass takes
        for (int pass = 0;; ++pass) {
          const unsigned short* in = queue[pass & 1];
          unsigned short* out = queue[(pass + 1) & 1];
          unsigned* mark = seen[(pass + 1) & 1];
          unsigned* count = queued + q_out;
          for (unsigned w = threadIdx.x; w < nw; w += GS_BLOCK_SIZE) seen[pass & 1][w] = 0u;
          if (threadIdx.x == 0) {
            queued[q_clear] = 0u;
            lowest[q_clear] = 0xffffffffu;
          }
          const bool inner = pass < limit;
          const bool ordered = order && inner && pass > 0;  // block-uniform
          const bool track = order && inner;  // the lowest bucket of the next queue
          unsigned low = 0xffffffffu;  // this thread's part of it
          (void)ordered;
          const bool whole = pass == 0 && !dirty;  // the first pass over every node
          const unsigned items = whole ? len : queued[q_in];
          int more = 0;
          // A pass of few nodes gives a node to a warp, its lanes over the node's edges. A
          // pass of many (the first pass of a partition holds all its nodes) gives a warp
          // `turn` consecutive ones at a time, up to 32: lane j reads the row bounds of the
          // turn's j-th node up front, and each node's first edge ids are read while the
          // previous node is processed, so the nodes' loads overlap. (The chain of 32-node
          // cliques: BFS is 6 to 15% faster with a warp per node in its one-clique passes,
          // and SSSP's Bellman-Ford passes, many nodes each, about 1.7x faster in turns.)
          const unsigned turn =  // block-uniform
              min(32u, (items + GS_SPATIAL_WARPS - 1u) / GS_SPATIAL_WARPS);
          if (turn == 1u) {
            for (unsigned item = warp; item < items; item += GS_SPATIAL_WARPS) {  // warp-uniform
              const gs_vid v = lo + (gs_vid)(whole ? item : (unsigned)in[item]);
#if GS_SPATIAL_ORDER
              if (ordered) {  // lane 0's reading of its bucket decides for the warp
                const unsigned b = __shfl_sync(0xffffffffu, gs_spatial_bucket(v, staged, L), 0);
                if (b > near) {
                  if (lane == 0) gs_spatial_hold(v - lo, b, mark, count, out, low);
                  more = 1;
                  continue;
                }
              }
#endif
              const GsSrc s = staged ? gs_load_src_local(v, L) : gs_load_src(v);
              const gs_eid end = gs_spatial_row_end(v, s);
              for (gs_eid e = __ldg(gs.row + v) + (gs_eid)lane; e < end; e += 32)
                more |= gs_spatial_edge(st, L, staged, v, s, __ldg(gs.col + e), e, len, inner,
                                        mark, count, out, next, track, low);
            }
          }
          for (unsigned base = warp * turn; turn > 1u && base < items;
               base += GS_SPATIAL_WARPS * turn) {
            const unsigned cnt = min(turn, items - base);  // warp-uniform
            gs_vid vj = lo;
            gs_eid bj = 0, ej = 0;
            if (lane < cnt) {
              vj = lo + (gs_vid)(whole ? base + lane : (unsigned)in[base + lane]);
              bj = __ldg(gs.row + vj);
              ej = gs_spatial_row_end(vj, staged ? gs_load_src_local(vj, L) : gs_load_src(vj));
#if GS_SPATIAL_ORDER
              if (ordered) {  // held for a later pass: an empty row in this one
                const unsigned b = gs_spatial_bucket(vj, staged, L);
                if (b > near) {
                  gs_spatial_hold(vj - lo, b, mark, count, out, low);
                  more = 1;
                  ej = bj;
                }
              }
#endif
            }
            gs_eid b = __shfl_sync(0xffffffffu, bj, 0), end = __shfl_sync(0xffffffffu, ej, 0);
            gs_vid ahead = b + (gs_eid)lane < end ? __ldg(gs.col + b + lane) : lo;
            for (unsigned i = 0; i < cnt; ++i) {  // warp-uniform
              const gs_vid v = __shfl_sync(0xffffffffu, vj, i);
              const gs_eid row = b, stop = end;
              const gs_vid first = ahead;
              if (i + 1 < cnt) {  // the next node's first edge ids, read ahead
                b = __shfl_sync(0xffffffffu, bj, i + 1);
                end = __shfl_sync(0xffffffffu, ej, i + 1);
                ahead = b + (gs_eid)lane < end ? __ldg(gs.col + b + lane) : lo;
              }
              const GsSrc s = staged ? gs_load_src_local(v, L) : gs_load_src(v);
              for (gs_eid e = row + (gs_eid)lane; e < stop; e += 32)
                more |= gs_spatial_edge(st, L, staged, v, s,
                                        e < row + 32 ? first : __ldg(gs.col + e), e, len,
                                        inner, mark, count, out, next, track, low);
            }
          }
#if GS_SPATIAL_ORDER
          if (track) {  // one shared atomic a warp
            low = __reduce_min_sync(0xffffffffu, low);
            if (lane == 0 && low != 0xffffffffu) atomicMin(lowest + q_out, low);
          }
#endif
          if (!__syncthreads_or(more)) break;  // every thread leaves together
          if (order) near = max(near, lowest[q_out]);  // the next pass's bucket
          const unsigned t = q_in;
          q_in = q_out;
          q_out = q_clear;
          q_clear = t;
        }
        if (staged) gs_local_store(L, len);
      }
    }
    __syncthreads();  // every thread has read `active` before the next chunk writes it
  }
}

#endif  // !GS_SPATIAL_RESIDENT_ON: spatial_resident.cuh has the resident form

__device__ __forceinline__ int gs_decide(int mode, unsigned count, const unsigned* slot, int* done) {
  (void)count;
  *done = __ldcg(slot + GS_CTL_DRIVE) == 0u;
  return mode;
}
