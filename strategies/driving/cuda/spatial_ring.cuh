// Spatial hybrid, resident partitions taken from a shared ring (driving.schedule=ring;
// after spatial_resident.cuh, whose visit it runs). There are no steps: the seed phase
// queues the start set's partitions, and in the run phase every block takes the ring's
// next partition, visits it, and queues the partitions its leaving edges activate, until
// no partition is queued or running. A step barrier waits for the step's slowest
// partition; the ring lets a block take the next one at once.
//
// A partition's state word makes it exact:
//   IDLE -> QUEUED    whoever activates it pushes it onto the ring;
//   QUEUED -> RUNNING the block that takes it, before it takes the partition's node marks
//                     and then reads its values (so an update it misses leaves a mark);
//   RUNNING -> AGAIN  an activation while it runs: the block visits it again when done;
//   RUNNING -> IDLE   done.
// An activation writes the value (the operator's atomic), then the node's mark, then,
// behind a fence, reads the state: either the running block reads both, or it finds
// AGAIN. The ring's counters (ticket, tail, pending: partitions queued or running) have a
// line each; the run is over when pending reaches zero. A slot is written once its last
// reader emptied it, and a reader claims a slot with an exchange.
#if GS_SPATIAL_RING_ON
#define GS_RING_IDLE 0u
#define GS_RING_QUEUED 1u
#define GS_RING_RUNNING 2u
#define GS_RING_AGAIN 3u
#define GS_RING_TICKET 0
#define GS_RING_TAIL 32
#define GS_RING_PENDING 64

__device__ __forceinline__ unsigned gs_ring_acquire(const unsigned* p) {
  unsigned x;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(x) : "l"(p) : "memory");
  return x;
}

// Queue partition p, whose state this thread moved from IDLE to QUEUED.
__device__ __forceinline__ void gs_ring_push(unsigned p) {
  unsigned* ctr = gs.driving_ring_ctr;
  atomicAdd(ctr + GS_RING_PENDING, 1u);  // counted before anyone can take it
  const unsigned t = atomicAdd(ctr + GS_RING_TAIL, 1u);
  unsigned* slot = gs.driving_ring + (unsigned long long)t % (unsigned long long)gs.driving_ring_capacity;
  __threadfence();
  while (atomicCAS(slot, 0u, p + 1u) != 0u) __nanosleep(32);
}

// Partition p has a marked node with a new value: queue it, or have its runner run again.
__device__ __forceinline__ void gs_ring_activate(unsigned p) {
  unsigned* state = gs.driving_state + p;
  __threadfence();  // the value and the mark before the state
  for (;;) {
    const unsigned s = gs_ld_ctl(state);
    if (s == GS_RING_QUEUED || s == GS_RING_AGAIN) return;
    if (s == GS_RING_IDLE) {
      if (atomicCAS(state, GS_RING_IDLE, GS_RING_QUEUED) == GS_RING_IDLE) {
        gs_ring_push(p);
        return;
      }
    } else if (atomicCAS(state, GS_RING_RUNNING, GS_RING_AGAIN) == GS_RING_RUNNING) {
      return;
    }
  }
}

// Node u's value improved: its mark, then its partition.
__device__ __forceinline__ void gs_ring_mark(gs_vid u) {
  __threadfence();  // the value before the mark
  atomicOr(gs_spatial_dirty_half(0) + ((long long)u >> 5), 1u << ((unsigned)u & 31u));
  gs_ring_activate((unsigned)((long long)u / gs.driving_partition_size));
}

// The next partition (thread 0), or -1 once nothing is queued or running.
__device__ __forceinline__ int gs_ring_pop() {
  unsigned* ctr = gs.driving_ring_ctr;
  if (gs_ring_acquire(ctr + GS_RING_PENDING) == 0u) return -1;  // blocks launched late
  const unsigned t = atomicAdd(ctr + GS_RING_TICKET, 1u);
  unsigned* slot = gs.driving_ring + (unsigned long long)t % (unsigned long long)gs.driving_ring_capacity;
  unsigned x = 0u;
  for (unsigned spin = 0;; ++spin) {
    if (gs_ring_acquire(slot) && (x = atomicExch(slot, 0u)) != 0u) break;
    if (gs_ring_acquire(ctr + GS_RING_PENDING) == 0u) return -1;
    if (spin > 4u) __nanosleep(64);
  }
  atomicExch(gs.driving_state + (x - 1u), GS_RING_RUNNING);
  __threadfence();  // the state before the marks
  return (int)(x - 1u);
}

// The visit of p is over (thread 0): 1 to visit it again (activated while it ran), else 0.
__device__ __forceinline__ int gs_ring_done(unsigned p) {
  __threadfence();
  if (atomicCAS(gs.driving_state + p, GS_RING_RUNNING, GS_RING_IDLE) == GS_RING_AGAIN) {
    atomicExch(gs.driving_state + p, GS_RING_RUNNING);
    __threadfence();
    return 1;
  }
  atomicSub(gs.driving_ring_ctr + GS_RING_PENDING, 1u);
  return 0;
}

// Step 0: the start set's nodes marked and their partitions queued.
__device__ __forceinline__ void gs_phase_spatial_seed(GsStep& st) {
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < st.n_items; i += stride)
    gs_ring_mark(gs_item(st, i));
}

__device__ __forceinline__ void gs_phase_spatial_run(GsStep& st) {
  __shared__ unsigned short rs_row[GS_RES_NPT * GS_BLOCK_SIZE + 1];
  __shared__ unsigned short rs_col[GS_RES_EDGES];
  __shared__ unsigned rs_marks[GS_RES_NPT * GS_BLOCK_SIZE / 32];
  __shared__ int rs_take;
  unsigned* marks = gs_spatial_dirty_half(0);
  GsLocal L = gs_local_arrays();
  GsRes R;
  R.row = rs_row;
  R.col = rs_col;
  R.marks = rs_marks;
  for (;;) {
    if (threadIdx.x == 0) rs_take = gs_ring_pop();
    __syncthreads();
    const int p = rs_take;  // block-uniform
    if (p < 0) return;
    gs_res_begin(R, (unsigned)p);
    L.lo = R.lo;
    GsKeep keep[GS_RES_NPT];
    unsigned nb[GS_RES_NPT][2], ab[GS_RES_NPT];
    for (int visit = 0;; ++visit) {
      __threadfence();  // the state (thread 0), or the last visit's stores, first
      gs_res_take_marks(R, marks);
      __syncthreads();  // every mark taken before any value is read
      __threadfence();
      gs_local_load(L, R.len);
      __syncthreads();
      if (visit == 0) {  // later visits relax what changed since this one's values
        gs_res_keep(R, L, keep);
        gs_res_targets(R, nb, ab);
      }
      unsigned left;
      const unsigned sent = gs_res_passes(st, R, L, keep, nb, ab, gs_res_forced(R), left);
      gs_res_leave(st, R, L, sent, [](gs_vid u) { gs_ring_mark(u); });
      gs_local_store(L, R.len);
      __threadfence();  // the pushes and stores before the state leaves RUNNING
      // passes spent: the nodes changed after the last are relaxed in another visit
      const int more = __syncthreads_or(left != 0u);
      if (threadIdx.x == 0) rs_take = more ? 1 : gs_ring_done((unsigned)p);
      __syncthreads();
      const int again = rs_take;
      __syncthreads();  // read before the next pop writes it
      if (!again) break;
    }
  }
}
#endif  // GS_SPATIAL_RING_ON
