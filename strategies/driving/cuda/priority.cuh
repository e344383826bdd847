// Priority driving: near-far piles / delta-stepping buckets over gs_priority(v).
// Mode word: the mode number in bits 0..3, "nodes may be waiting" in bit 8, the current
// bucket b in bits 9 and up. A push of a node whose bucket is past b sets its bit in
// the far bitmap instead; a refill step moves the next bucket's nodes to the worklist.
#if !GS_HAS_PRIORITY
#error "driving=priority needs an algorithm that declares priority="
#endif
#define GS_PRIO_MAX_BUCKET ((1u << 22) - 1u)
#define GS_PRIO_WAITING 256

__device__ __forceinline__ unsigned gs_prio_bucket(gs_vid v) {
#ifdef GS_PRIO_WIDTH
  const double k = gs_priority(v) * (1.0 / (double)GS_PRIO_WIDTH);  // the algorithm's own
#else
  const double k = gs_priority(v) * (double)gs.driving_inv_width;
#endif
  if (!(k > 0.0)) return 0u;  // and NaN
  return k >= (double)GS_PRIO_MAX_BUCKET ? GS_PRIO_MAX_BUCKET : (unsigned)k;
}

__device__ __forceinline__ unsigned gs_prio_b(int mode) { return ((unsigned)mode) >> 9; }

__device__ __forceinline__ int gs_prio_mode(int id, unsigned waiting, unsigned b) {
  return id | (waiting ? GS_PRIO_WAITING : 0) | (int)(b << 9);
}

__device__ __forceinline__ bool gs_drive_admit(GsStep& st, gs_vid u) {
  if (gs_prio_bucket(u) <= gs_prio_b(st.mode)) return true;
  atomicOr(gs.driving_far + (u >> 5), 1u << (u & 31));
  st.ctl_cur[GS_CTL_DRIVE] = 1u;  // something waits (every writer stores the same)
  return false;
}

// Smallest bucket over the waiting nodes of this thread's words, reduced per warp into
// `word` of the step's slot as its complement (0: none; atomicMax of ~b is a min of b).
__device__ __forceinline__ void gs_prio_report_min(GsStep& st, unsigned lo, int word) {
  lo = __reduce_min_sync(0xffffffffu, lo);
  if ((threadIdx.x & 31) == 0 && lo != 0xffffffffu) atomicMax(st.ctl_cur + word, ~lo);
}

#if GS_PRIO_BUCKETS
// policy=buckets: the smallest waiting bucket, before the refill takes it.
__device__ __forceinline__ void gs_phase_priority_min(GsStep& st) {
  const unsigned words = (unsigned)((gs.n + 31) / 32);
  const unsigned stride = gridDim.x * blockDim.x;
  unsigned lo = 0xffffffffu;
  for (unsigned w = blockIdx.x * blockDim.x + threadIdx.x; w < words; w += stride) {
    unsigned bits = gs_ld(gs.driving_far + w);
    while (bits) {
      const int b = __ffs(bits) - 1;
      bits &= bits - 1u;
      lo = min(lo, gs_prio_bucket((gs_vid)(w * 32u + b)));
    }
  }
  gs_prio_report_min(st, lo, GS_CTL_DRIVE + 1);
}
#endif

// The bucket a refill step takes: b (near-far) or the smallest waiting one (buckets).
__device__ __forceinline__ unsigned gs_prio_refill_bucket(int mode, const unsigned* slot) {
  unsigned b = gs_prio_b(mode);
#if GS_PRIO_BUCKETS
  const unsigned lo = __ldcg(slot + GS_CTL_DRIVE + 1);
  if (lo) b = max(b, ~lo);
#else
  (void)slot;
#endif
  return b;
}

__device__ __forceinline__ void gs_phase_priority_refill(GsStep& st) {
  const unsigned words = (unsigned)((gs.n + 31) / 32);
  const unsigned stride = gridDim.x * blockDim.x;
  const unsigned limit = gs_prio_refill_bucket(st.mode, st.ctl_cur);
  unsigned lo = 0xffffffffu;  // smallest bucket left waiting
  for (unsigned w = blockIdx.x * blockDim.x + threadIdx.x; w < words; w += stride) {
    unsigned bits = gs_ld(gs.driving_far + w);
    if (!bits) continue;
    unsigned keep = 0u;
    while (bits) {
      const int b = __ffs(bits) - 1;
      bits &= bits - 1u;
      const gs_vid v = (gs_vid)(w * 32u + b);
      const unsigned k = gs_prio_bucket(v);
      if (k <= limit) {
        gs_wl_push(st, v);
      } else {
        keep |= 1u << b;
        lo = min(lo, k);
      }
    }
    gs.driving_far[w] = keep;  // refill steps run no operator: nothing else writes it
  }
  gs_prio_report_min(st, lo, GS_CTL_DRIVE);
}

__device__ __forceinline__ int gs_decide(int mode, unsigned count, const unsigned* slot, int* done) {
  const unsigned word = __ldcg(slot + GS_CTL_DRIVE);
  const unsigned b = gs_prio_b(mode);
  *done = 0;
  if (gs_mode_id(mode) == GS_MODE_DATA) {
    const unsigned waiting = ((mode & GS_PRIO_WAITING) != 0) | (word != 0u);
    if (count) return gs_prio_mode(GS_MODE_DATA, waiting, b);
    if (!waiting) {
      *done = 1;
      return mode;
    }
#if GS_PRIO_BUCKETS
    return gs_prio_mode(GS_MODE_REFILL, 1u, b);  // its min phase finds the bucket
#else
    return gs_prio_mode(GS_MODE_REFILL, 1u, b < GS_PRIO_MAX_BUCKET ? b + 1u : b);
#endif
  }
  // after a refill: `word` is the complement of the smallest bucket still waiting
  if (count) return gs_prio_mode(GS_MODE_DATA, word != 0u, gs_prio_refill_bucket(mode, slot));
  if (!word) {
    *done = 1;
    return mode;
  }
  return gs_prio_mode(GS_MODE_REFILL, 1u, ~word);  // that bucket was empty: jump
}
