// Asynchronous driving: one step runs the whole traversal from a shared FIFO ring, with no
// barrier between hops. The seed phase puts the step's items into the ring and sets the
// counters; in the run phase a group of GS_ASYNC_LANES lanes takes a ticket (the next
// slot), waits until a node is written there or the run is over, applies the edge operator
// along the node's out-edges with its lanes, and writes what the edges activated into
// slots it reserves at the tail, with release stores behind the operator's atomics. The
// counter word GS_ASYNC_COUNT holds the tail (high half) and the pending nodes (low half: written
// and not yet finished); a group adds its pushes to both with one atomic before it writes
// them and takes its node off when it is done, so pending reaches zero only when nothing is
// queued or in hand, and the group that brings it there raises GS_ASYNC_OVER, which ends every
// wait. A push past the ring's capacity goes to the worklist instead, for another step; a
// group that saw the ring full pushes there directly, so the tail stays far from wrapping.
#ifndef GS_ASYNC_LANES
#define GS_ASYNC_LANES 1
#endif

// The counters, each on a line of its own: ticket, tail | pending, over.
#define GS_ASYNC_TICKET 0
#define GS_ASYNC_COUNT 32
#define GS_ASYNC_OVER 64

__device__ __forceinline__ unsigned gs_async_ld_acquire(const unsigned* p) {
  unsigned x;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(x) : "l"(p) : "memory");
  return x;
}

__device__ __forceinline__ unsigned long long gs_async_ld_relaxed(const unsigned long long* p) {
  unsigned long long x;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(x) : "l"(p) : "memory");
  return x;
}

__device__ __forceinline__ void gs_async_st_release(unsigned* p, unsigned x) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(x) : "memory");
}

// The ring takes the step's items (the start set in step 0); those past its capacity go
// to the worklist for the next step.
__device__ __forceinline__ void gs_phase_async_seed(GsStep& st) {
  const unsigned stride = gridDim.x * blockDim.x;
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned cap = (unsigned)gs.driving_capacity;
  const unsigned kept = min(st.n_items, cap);
  if (tid == 0) {
    gs.driving_ctr[GS_ASYNC_TICKET] = 0ull;
    gs.driving_ctr[GS_ASYNC_COUNT] = ((unsigned long long)kept << 32) | kept;
    gs.driving_ctr[GS_ASYNC_OVER] = 0ull;
  }
  for (unsigned i = tid; i < st.n_items; i += stride) {
    const gs_vid v = gs_item(st, i);
    if (i < cap)
      gs.driving_ring[i] = (unsigned)v + 1u;  // 0 marks an empty slot
    else
      gs_wl_push(st, v);
  }
}

__device__ __forceinline__ void gs_phase_async_run(GsStep& st) {
  unsigned long long* ctr = gs.driving_ctr;
  unsigned* ring = gs.driving_ring;
  const unsigned long long cap = (unsigned long long)gs.driving_capacity;
  const unsigned lane = threadIdx.x & 31u;
  const unsigned first = lane & ~(GS_ASYNC_LANES - 1u), sub = lane - first;
  const unsigned group = (GS_ASYNC_LANES >= 32 ? 0xffffffffu
                                               : (1u << GS_ASYNC_LANES) - 1u) << first;
  const unsigned below = (1u << lane) - 1u;
  for (;;) {  // group-uniform
    unsigned x = 0u;
    if (sub == 0u) {
      const unsigned long long slot = atomicAdd(ctr + GS_ASYNC_TICKET, 1ull);
      for (unsigned spin = 0;; ++spin) {
        if (slot < cap) {
          x = gs_async_ld_acquire(ring + slot);
          if (x) break;
        }
        if (gs_async_ld_relaxed(ctr + GS_ASYNC_OVER)) break;
        if (spin > 4u) __nanosleep(64);
      }
      if (x) ring[slot] = 0u;  // read: empty again for the next step
    }
    x = __shfl_sync(group, x, first);
    if (!x) return;  // the run is over
    const gs_vid v = (gs_vid)(x - 1u);
    const GsSrc s = gs_load_src(v);
    const gs_eid end = gs_row_end(v);
    unsigned spilled = 0u;  // pushes counted as pending that went to the worklist
    bool full = false;      // group-uniform: the ring had no room left
    bool held = true;       // group-uniform: the node still counts as pending
    for (gs_eid base = __ldg(gs.row + v); base < end; base += GS_ASYNC_LANES) {
      const gs_eid e = base + (gs_eid)sub;
      gs_vid u = 0;
      bool act = false;
      if (e < end) {
        u = __ldg(gs.col + e);
        st.edges += 1;
        act = gs_edge_op(st, v, s, u, e, st.it);
      }
      const unsigned acts = __ballot_sync(group, act);
      if (!acts) continue;
      if (full) {
        if (act) gs_wl_push(st, u);
        continue;
      }
      unsigned long long old = 0ull;
      const unsigned k = (unsigned)__popc(acts);
      // the node's last pushes also take the node off pending (one atomic, not two):
      // nothing it does after them can push again
      const bool last = base + (gs_eid)GS_ASYNC_LANES >= end;
      held = held && !last;
      if (sub == 0u)
        old = atomicAdd(ctr + GS_ASYNC_COUNT,
                        ((unsigned long long)k << 32) | (last ? k - 1u : k));
      old = __shfl_sync(group, old, first);
      const unsigned long long tail = old >> 32;
      full = tail + k >= cap;
      if (act) {
        const unsigned long long t = tail + (unsigned long long)__popc(acts & below);
        if (t < cap) {
          gs_async_st_release(ring + t, (unsigned)u + 1u);
        } else {
          gs_wl_push(st, u);
          ++spilled;
        }
      }
    }
    for (unsigned off = GS_ASYNC_LANES / 2u; off > 0u; off >>= 1)
      spilled += __shfl_xor_sync(group, spilled, off);
    if (sub == 0u && (held || spilled)) {  // done: it and the spilled pushes leave pending
      const unsigned gone = spilled + (held ? 1u : 0u);
      const unsigned long long before =
          atomicAdd(ctr + GS_ASYNC_COUNT, 0ull - (unsigned long long)gone);
      if ((unsigned)(before & 0xffffffffull) == gone) atomicExch(ctr + GS_ASYNC_OVER, 1ull);
    }
  }
}

// One step does it all; another runs only for pushes the ring could not hold.
__device__ __forceinline__ int gs_decide(int mode, unsigned count, const unsigned* slot, int* done) {
  (void)mode;
  (void)slot;
  *done = count == 0u;
  return GS_MODE_ASYNC;
}
