// Spatial hybrid, resident partitions (driving.resident > 0; after spatial.cuh, whose
// marks, list and staging it uses).
#if GS_SPATIAL_RESIDENT_ON
// Resident partitions. A block takes the step's listed partitions in turn (entry
// blockIdx.x, then every gridDim.x-th) and loads a partition's rows (16-bit offsets), its
// columns (16-bit partition offsets, GS_RES_EXT for a target outside) and its staged
// values into shared memory once. Thread t owns nodes t + j * blockDim (j <
// GS_RES_NPT, driving.resident) and keeps in registers each one's staged values as last relaxed (GsKeep)
// and its first four edges' targets. A pass relaxes the in-partition edges of each owned
// node whose values changed since (or that was marked since the partition last ran), one
// barrier a pass, until a pass changes nothing (or gs.driving_local_iterations more
// passes have run; what changed after the last is marked for the next step). Then each
// node relaxed in the visit applies its edges that leave the partition once, from its
// final values, and the staged values are reduced back into global memory. With an
// order-free operator that is the fixed point of the queue passes above; a pass reads
// shared memory and registers only. A partition of more edges than GS_RES_EDGES reads its
// rows and columns from global memory instead.
#define GS_RES_NPT GS_SPATIAL_RESIDENT  // nodes a thread owns
#define GS_RES_EDGES 6144
#define GS_RES_EXT 0xFFFFu

// The end of owned node i's row in partition offsets (its first GS_EDGE_FIRST edges where
// the operator names a limit).
__device__ __forceinline__ unsigned gs_res_stop(const unsigned short* rows, unsigned i) {
#ifdef GS_EDGE_FIRST
  return min((unsigned)rows[i + 1], (unsigned)rows[i] + (unsigned)GS_EDGE_FIRST);
#else
  return rows[i + 1];
#endif
}

__device__ __forceinline__ void gs_phase_spatial_run(GsStep& st) {
  __shared__ unsigned short rs_row[GS_RES_NPT * GS_BLOCK_SIZE + 1];
  __shared__ unsigned short rs_col[GS_RES_EDGES];
  const long long size = gs.driving_partition_size;
  const unsigned parts = gs_spatial_parts();
  unsigned* next = gs_spatial_half(st.it + 1);
  const int limit = gs.driving_local_iterations;
  // the list, its count and the marks cross blocks and steps: written and cleared by
  // atomics, read by volatile loads (a weak store or read there was seen to lose a mark
  // across the persistent launch's grid barrier; the host loop never did)
  const unsigned count = gs_ld_ctl(gs.ctl + GS_CTL_SLOT(st.it - 1) + GS_CTL_DRIVE);
  const volatile int* list = gs.driving_list + (size_t)(st.it & 1) * parts;
  __shared__ unsigned rs_marks[GS_RES_NPT * GS_BLOCK_SIZE / 32];
  unsigned* marks = gs_spatial_dirty_half(st.it);
  GsLocal L = gs_local_arrays();
  for (unsigned q = blockIdx.x; q < count; q += gridDim.x) {  // block-uniform
    const gs_vid lo = (gs_vid)((long long)list[q] * size);
    const unsigned len = (unsigned)min(size, gs.n - (long long)lo);
    const gs_eid e0 = __ldg(gs.row + lo);
    const bool fits = __ldg(gs.row + lo + len) - e0 <= (gs_eid)GS_RES_EDGES;  // block-uniform
    L.lo = lo;
    gs_local_load(L, len);
    if (fits) {
      for (unsigned i = threadIdx.x; i <= len; i += GS_BLOCK_SIZE)
        rs_row[i] = (unsigned short)(__ldg(gs.row + lo + i) - e0);
      const gs_eid ne = __ldg(gs.row + lo + len) - e0;
      for (gs_eid e = threadIdx.x; e < ne; e += GS_BLOCK_SIZE) {
        const unsigned k = (unsigned)(__ldg(gs.col + e0 + e) - lo);
        rs_col[e] = k < len ? (unsigned short)k : (unsigned short)GS_RES_EXT;
      }
    }
    // the nodes marked since the partition last ran, taken (read and cleared) a word at
    // a time; nothing sets this half in this step
    unsigned* mine = marks + (lo >> 5);
    for (unsigned w = threadIdx.x; w < (len + 31u) / 32u; w += GS_BLOCK_SIZE)
      rs_marks[w] = gs_ld_ctl(mine + w) ? atomicExch(mine + w, 0u) : 0u;
    __syncthreads();
    unsigned force = 0u;  // owned nodes among them
#pragma unroll
    for (int j = 0; j < GS_RES_NPT; ++j) {
      const unsigned i = threadIdx.x + j * GS_BLOCK_SIZE;
      if (i < len && ((rs_marks[i >> 5] >> (i & 31u)) & 1u)) force |= 1u << j;
    }
    GsKeep keep[GS_RES_NPT];
    unsigned nb[GS_RES_NPT][2];  // the first four edges' targets, 16 bits each
#pragma unroll
    for (int j = 0; j < GS_RES_NPT; ++j) {
      const unsigned i = threadIdx.x + j * GS_BLOCK_SIZE;
      nb[j][0] = nb[j][1] = 0xFFFFFFFFu;
      if (i >= len) continue;
      keep[j] = gs_keep_read(L, i);
      if (!fits) continue;
      const unsigned a = rs_row[i], b = gs_res_stop(rs_row, i);
#pragma unroll
      for (unsigned t = 0; t < 4u; ++t) {
        const unsigned k = a + t < b ? (unsigned)rs_col[a + t] : GS_RES_EXT;
        nb[j][t >> 1] = (nb[j][t >> 1] & ~(0xFFFFu << (16u * (t & 1u)))) | (k << (16u * (t & 1u)));
      }
    }
    unsigned sent = 0u;  // owned nodes relaxed in this visit
    for (int pass = 0;; ++pass) {
      int any = 0;
      GsKeep now[GS_RES_NPT];
#pragma unroll
      for (int j = 0; j < GS_RES_NPT; ++j)
        if (threadIdx.x + j * GS_BLOCK_SIZE < len) now[j] = gs_keep_read(L, threadIdx.x + j * GS_BLOCK_SIZE);
#pragma unroll
      for (int j = 0; j < GS_RES_NPT; ++j) {
        const unsigned i = threadIdx.x + j * GS_BLOCK_SIZE;
        if (i >= len) continue;
        if (!((force >> j) & 1u) && gs_keep_same(now[j], keep[j])) continue;
        force &= ~(1u << j);
        keep[j] = now[j];
        sent |= 1u << j;
        const gs_vid v = lo + (gs_vid)i;
        const GsSrc s = gs_load_src_local(v, L);
#ifdef GS_ROW_GUARD
        if (!gs_row_guard_src(v, s)) continue;
#endif
        if (fits) {
          const unsigned a = rs_row[i], b = gs_res_stop(rs_row, i);
#pragma unroll
          for (unsigned t = 0; t < 4u; ++t) {
            const unsigned k = (nb[j][t >> 1] >> (16u * (t & 1u))) & 0xFFFFu;
            if (k == GS_RES_EXT) continue;
            st.edges += 1;
            any |= gs_edge_op_local(st, v, s, lo + (gs_vid)k, e0 + (gs_eid)(a + t), st.it, L);
          }
          for (unsigned e = a + 4u; e < b; ++e) {
            const unsigned k = rs_col[e];
            if (k == GS_RES_EXT) continue;
            st.edges += 1;
            any |= gs_edge_op_local(st, v, s, lo + (gs_vid)k, e0 + (gs_eid)e, st.it, L);
          }
        } else {
          const gs_eid b = gs_row_stop(v);
          for (gs_eid e = __ldg(gs.row + v); e < b; ++e) {
            const gs_vid u = __ldg(gs.col + e);
            if ((unsigned)(u - lo) >= len) continue;
            st.edges += 1;
            any |= gs_edge_op_local(st, v, s, u, e, st.it, L);
          }
        }
      }
      if (!__syncthreads_or(any)) break;  // every thread leaves together
      if (pass >= limit) {  // passes spent: what changed after the last waits for a step
#pragma unroll
        for (int j = 0; j < GS_RES_NPT; ++j) {
          const unsigned i = threadIdx.x + j * GS_BLOCK_SIZE;
          if (i < len && (((force >> j) & 1u) || !gs_keep_same(gs_keep_read(L, i), keep[j])))
            gs_spatial_mark(st, next, lo + (gs_vid)i);
        }
        break;
      }
    }
    // the edges that leave the partition, once, from each relaxed node's final values
#pragma unroll
    for (int j = 0; j < GS_RES_NPT; ++j) {
      if (!((sent >> j) & 1u)) continue;
      const unsigned i = threadIdx.x + j * GS_BLOCK_SIZE;
      const gs_vid v = lo + (gs_vid)i;
      const GsSrc s = gs_load_src_local(v, L);
#ifdef GS_ROW_GUARD
      if (!gs_row_guard_src(v, s)) continue;
#endif
      const gs_eid a = fits ? e0 + (gs_eid)rs_row[i] : __ldg(gs.row + v);
      const gs_eid b = fits ? e0 + (gs_eid)gs_res_stop(rs_row, i) : gs_row_stop(v);
      for (gs_eid e = a; e < b; ++e) {
        if (fits && rs_col[e - e0] != GS_RES_EXT) continue;
        const gs_vid u = __ldg(gs.col + e);
        if ((unsigned)(u - lo) < len) continue;
        st.edges += 1;
        if (gs_edge_op(st, v, s, u, e, st.it)) gs_spatial_mark(st, next, u);
      }
    }
    gs_local_store(L, len);
    __syncthreads();  // the next partition's loads overwrite the shared arrays
  }
}
#endif  // GS_SPATIAL_RESIDENT_ON
