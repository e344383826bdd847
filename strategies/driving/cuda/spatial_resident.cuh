// Spatial hybrid, resident partitions (driving.resident > 0; after spatial.cuh, whose
// marks, list and staging it uses).
#if GS_SPATIAL_RESIDENT_ON
// Resident partitions. A block loads a partition's rows (16-bit offsets), its columns
// (16-bit partition offsets, GS_RES_EXT for a target outside) and its staged values into
// shared memory once a visit. Thread t owns nodes t + j * blockDim (j < GS_RES_NPT,
// driving.resident) and keeps in registers each one's staged values as last relaxed
// (GsKeep) and its first four edges' targets. A pass relaxes the in-partition edges of
// each owned node whose values changed since (or that was marked since the partition
// last ran), one barrier a pass, until a pass changes nothing (or
// gs.driving_local_iterations more passes have run). Then each node relaxed in the
// visit applies its edges that leave the partition once, from its final values, and the
// staged values are reduced back into global memory. With an order-free operator that
// is the fixed point of the queue passes of spatial.cuh; a pass reads shared memory and
// registers only. A partition of more edges than GS_RES_EDGES reads its rows and columns
// from global memory instead.
//
// Which partition a block takes next: the step's list (below), or, with
// driving.schedule=ring, a shared ring with no steps (spatial_ring.cuh).
#define GS_RES_NPT GS_SPATIAL_RESIDENT  // nodes a thread owns
#define GS_RES_EDGES 6144
#define GS_RES_EXT 0xFFFFu

// A visit's partition and its rows and columns in shared memory.
struct GsRes {
  unsigned short* row;  // GS_RES_NPT * GS_BLOCK_SIZE + 1 row offsets
  unsigned short* col;  // GS_RES_EDGES column offsets
  unsigned* marks;      // a word per 32 nodes: marked since the partition last ran
  gs_vid lo;
  unsigned len;
  gs_eid e0;
  bool fits;  // block-uniform: rows and columns in shared memory
};

// The end of owned node i's row in partition offsets (its first GS_EDGE_FIRST edges where
// the operator names a limit).
__device__ __forceinline__ unsigned gs_res_stop(const unsigned short* rows, unsigned i) {
#ifdef GS_EDGE_FIRST
  return min((unsigned)rows[i + 1], (unsigned)rows[i] + (unsigned)GS_EDGE_FIRST);
#else
  return rows[i + 1];
#endif
}

// Partition p's bounds, and its rows and columns into shared memory where they fit (the
// caller's barrier publishes them).
__device__ __forceinline__ void gs_res_begin(GsRes& R, unsigned p) {
  R.lo = (gs_vid)((long long)p * gs.driving_partition_size);
  R.len = (unsigned)min(gs.driving_partition_size, gs.n - (long long)R.lo);
  R.e0 = __ldg(gs.row + R.lo);
  const gs_eid ne = __ldg(gs.row + R.lo + R.len) - R.e0;
  R.fits = ne <= (gs_eid)GS_RES_EDGES;
  if (!R.fits) return;
  for (unsigned i = threadIdx.x; i <= R.len; i += GS_BLOCK_SIZE)
    R.row[i] = (unsigned short)(__ldg(gs.row + R.lo + i) - R.e0);
  for (gs_eid e = threadIdx.x; e < ne; e += GS_BLOCK_SIZE) {
    const unsigned k = (unsigned)(__ldg(gs.col + R.e0 + e) - R.lo);
    R.col[e] = k < R.len ? (unsigned short)k : (unsigned short)GS_RES_EXT;
  }
}

// The partition's node marks (a word per 32 nodes of `words`), taken: read and cleared.
__device__ __forceinline__ void gs_res_take_marks(GsRes& R, unsigned* words) {
  unsigned* mine = words + (R.lo >> 5);
  for (unsigned w = threadIdx.x; w < (R.len + 31u) / 32u; w += GS_BLOCK_SIZE)
    R.marks[w] = gs_ld_ctl(mine + w) ? atomicExch(mine + w, 0u) : 0u;
}

// The owned nodes among the marked ones (after a barrier behind gs_res_take_marks).
__device__ __forceinline__ unsigned gs_res_forced(const GsRes& R) {
  unsigned force = 0u;
#pragma unroll
  for (int j = 0; j < GS_RES_NPT; ++j) {
    const unsigned i = threadIdx.x + j * GS_BLOCK_SIZE;
    if (i < R.len && ((R.marks[i >> 5] >> (i & 31u)) & 1u)) force |= 1u << j;
  }
  return force;
}

// The owned nodes' first four in-partition targets, 16 bits each (GS_RES_EXT: none), and
// their rows' bounds in partition offsets (the start, and the end << 16).
__device__ __forceinline__ void gs_res_targets(const GsRes& R, unsigned (&nb)[GS_RES_NPT][2],
                                               unsigned (&ab)[GS_RES_NPT]) {
#pragma unroll
  for (int j = 0; j < GS_RES_NPT; ++j) {
    const unsigned i = threadIdx.x + j * GS_BLOCK_SIZE;
    nb[j][0] = nb[j][1] = 0xFFFFFFFFu;
    ab[j] = 0u;
    if (i >= R.len || !R.fits) continue;
    const unsigned a = R.row[i], b = gs_res_stop(R.row, i);
    ab[j] = a | (b << 16);
#pragma unroll
    for (unsigned t = 0; t < 4u; ++t) {
      const unsigned k = a + t < b ? (unsigned)R.col[a + t] : GS_RES_EXT;
      nb[j][t >> 1] = (nb[j][t >> 1] & ~(0xFFFFu << (16u * (t & 1u)))) | (k << (16u * (t & 1u)));
    }
  }
}

// The owned nodes' staged values as they are now.
__device__ __forceinline__ void gs_res_keep(const GsRes& R, const GsLocal& L,
                                            GsKeep (&keep)[GS_RES_NPT]) {
#pragma unroll
  for (int j = 0; j < GS_RES_NPT; ++j)
    if (threadIdx.x + j * GS_BLOCK_SIZE < R.len)
      keep[j] = gs_keep_read(L, threadIdx.x + j * GS_BLOCK_SIZE);
}

// The passes of a visit, until one changes nothing or the passes are spent. `force`: owned
// nodes to relax in the first pass whatever their values. Returns the owned nodes relaxed;
// `left` gets those that changed after the last pass when the passes were spent.
__device__ __forceinline__ unsigned gs_res_passes(GsStep& st, const GsRes& R, const GsLocal& L,
                                                  GsKeep (&keep)[GS_RES_NPT],
                                                  const unsigned (&nb)[GS_RES_NPT][2],
                                                  const unsigned (&ab)[GS_RES_NPT],
                                                  unsigned force, unsigned& left) {
  const int limit = gs.driving_local_iterations;
  unsigned sent = 0u;
  left = 0u;
  for (int pass = 0;; ++pass) {
    int any = 0;
    GsKeep now[GS_RES_NPT];
    gs_res_keep(R, L, now);
#pragma unroll
    for (int j = 0; j < GS_RES_NPT; ++j) {
      const unsigned i = threadIdx.x + j * GS_BLOCK_SIZE;
      if (i >= R.len) continue;
      if (!((force >> j) & 1u) && gs_keep_same(now[j], keep[j])) continue;
      force &= ~(1u << j);
      keep[j] = now[j];
      sent |= 1u << j;
      const gs_vid v = R.lo + (gs_vid)i;
      const GsSrc s = gs_load_src_local(v, L);
#ifdef GS_ROW_GUARD
      if (!gs_row_guard_src(v, s)) continue;
#endif
      if (R.fits) {
        // the four targets' values read together, then the operator on each
        const unsigned a = ab[j] & 0xFFFFu, b = ab[j] >> 16;
        GsKeep pre[4];
#pragma unroll
        for (unsigned t = 0; t < 4u; ++t) {
          const unsigned k = (nb[j][t >> 1] >> (16u * (t & 1u))) & 0xFFFFu;
          if (k != GS_RES_EXT) pre[t] = gs_keep_read(L, k);
        }
#pragma unroll
        for (unsigned t = 0; t < 4u; ++t) {
          const unsigned k = (nb[j][t >> 1] >> (16u * (t & 1u))) & 0xFFFFu;
          if (k == GS_RES_EXT) continue;
          st.edges += 1;
          any |= gs_edge_op_pre(st, v, s, R.lo + (gs_vid)k, R.e0 + (gs_eid)(a + t), st.it, L,
                                pre[t]);
        }
        for (unsigned e = a + 4u; e < b; ++e) {
          const unsigned k = R.col[e];
          if (k == GS_RES_EXT) continue;
          st.edges += 1;
          any |= gs_edge_op_local(st, v, s, R.lo + (gs_vid)k, R.e0 + (gs_eid)e, st.it, L);
        }
      } else {
        const gs_eid b = gs_row_stop(v);
        for (gs_eid e = __ldg(gs.row + v); e < b; ++e) {
          const gs_vid u = __ldg(gs.col + e);
          if ((unsigned)(u - R.lo) >= R.len) continue;
          st.edges += 1;
          any |= gs_edge_op_local(st, v, s, u, e, st.it, L);
        }
      }
    }
    if (!__syncthreads_or(any)) return sent;  // every thread leaves together
    if (pass >= limit) {  // passes spent: what changed after the last is left over
#pragma unroll
      for (int j = 0; j < GS_RES_NPT; ++j) {
        const unsigned i = threadIdx.x + j * GS_BLOCK_SIZE;
        if (i < R.len && (((force >> j) & 1u) || !gs_keep_same(gs_keep_read(L, i), keep[j])))
          left |= 1u << j;
      }
      return sent;
    }
  }
}

// The edges that leave the partition, once, from each relaxed node's final values;
// `activate(u)` for each target the operator activated.
template <typename Activate>
__device__ __forceinline__ void gs_res_leave(GsStep& st, const GsRes& R, const GsLocal& L,
                                             unsigned sent, Activate activate) {
#pragma unroll
  for (int j = 0; j < GS_RES_NPT; ++j) {
    if (!((sent >> j) & 1u)) continue;
    const unsigned i = threadIdx.x + j * GS_BLOCK_SIZE;
    const gs_vid v = R.lo + (gs_vid)i;
    const GsSrc s = gs_load_src_local(v, L);
#ifdef GS_ROW_GUARD
    if (!gs_row_guard_src(v, s)) continue;
#endif
    const gs_eid a = R.fits ? R.e0 + (gs_eid)R.row[i] : __ldg(gs.row + v);
    const gs_eid b = R.fits ? R.e0 + (gs_eid)gs_res_stop(R.row, i) : gs_row_stop(v);
    for (gs_eid e = a; e < b; ++e) {
      if (R.fits && R.col[e - R.e0] != GS_RES_EXT) continue;
      const gs_vid u = __ldg(gs.col + e);
      if ((unsigned)(u - R.lo) < R.len) continue;
      st.edges += 1;
      if (gs_edge_op(st, v, s, u, e, st.it)) activate(u);
    }
  }
}

#if !GS_SPATIAL_RING_ON
// Steps: a block takes the step's listed partitions in turn (entry blockIdx.x, then every
// gridDim.x-th); what changes after the passes are spent waits for the next step.
__device__ __forceinline__ void gs_phase_spatial_run(GsStep& st) {
  __shared__ unsigned short rs_row[GS_RES_NPT * GS_BLOCK_SIZE + 1];
  __shared__ unsigned short rs_col[GS_RES_EDGES];
  __shared__ unsigned rs_marks[GS_RES_NPT * GS_BLOCK_SIZE / 32];
  const unsigned parts = gs_spatial_parts();
  unsigned* next = gs_spatial_half(st.it + 1);
  // the list, its count and the marks cross blocks and steps: written and cleared by
  // atomics, read by volatile loads (a weak store or read there was seen to lose a mark
  // across the persistent launch's grid barrier; the host loop never did)
  const unsigned count = gs_ld_ctl(gs.ctl + GS_CTL_SLOT(st.it - 1) + GS_CTL_DRIVE);
  const volatile int* list = gs.driving_list + (size_t)(st.it & 1) * parts;
  GsLocal L = gs_local_arrays();
  GsRes R;
  R.row = rs_row;
  R.col = rs_col;
  R.marks = rs_marks;
  for (unsigned q = blockIdx.x; q < count; q += gridDim.x) {  // block-uniform
    gs_res_begin(R, (unsigned)list[q]);
    L.lo = R.lo;
    gs_local_load(L, R.len);
    // nothing sets this step's half of the marks in this step
    gs_res_take_marks(R, gs_spatial_dirty_half(st.it));
    __syncthreads();
    GsKeep keep[GS_RES_NPT];
    unsigned nb[GS_RES_NPT][2], ab[GS_RES_NPT];
    gs_res_keep(R, L, keep);
    gs_res_targets(R, nb, ab);
    unsigned left;
    const unsigned sent = gs_res_passes(st, R, L, keep, nb, ab, gs_res_forced(R), left);
#pragma unroll
    for (int j = 0; j < GS_RES_NPT; ++j)
      if ((left >> j) & 1u) gs_spatial_mark(st, next, R.lo + (gs_vid)(threadIdx.x + j * GS_BLOCK_SIZE));
    gs_res_leave(st, R, L, sent, [&](gs_vid u) { gs_spatial_mark(st, next, u); });
    gs_local_store(L, R.len);
    __syncthreads();  // the next partition's loads overwrite the shared arrays
  }
}
#endif  // !GS_SPATIAL_RING_ON
#endif  // GS_SPATIAL_RESIDENT_ON
