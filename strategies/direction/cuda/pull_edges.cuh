// Edge-balanced pull (direction option gather=edges), for steps that sweep every node
// and only count activations (the phases are listed for those modes alone). Merge-path
// decomposition of Merrill & Garland ("Merge-based parallel sparse matrix-vector
// multiplication", SC 2016): the row ends of the reverse CSR and its in-edges form one
// merged list of n + m items, cut into tiles of GS_PULL_TILE items; a block takes a
// tile, stages the values its in-edges offer and its row ends in shared memory
// (coalesced reads of rcol, every gather of a thread in flight at once), and each
// thread walks GS_PULL_IPT consecutive items of the merged list: every thread does the
// same work whatever the degrees, so a power-law hub is spread over as many threads as
// it has edges, and a tile of empty rows costs no more than a tile of edges.
//
// A row that crosses thread boundaries is combined across the warp with a segmented
// scan; one that crosses warps or tiles is applied in parts, each with the operator's
// atomic apply: exact for the commutative, associative reductions pull supports (add,
// min, max, or). A row applied in parts may count its activation once per part; sweep
// steps only count activations (and stop at zero), so that changes no decision that
// matters. The value an edge offers must not read its destination (the staging does
// not know it); the Python side lists these phases only for such operators.
//
// Tile starts (the row coordinate of every tile boundary) depend only on the graph and
// the tile size: gs_phase_pull_split searches them once, and word 0 of the buffer
// records for which tile size they hold.
#if GS_PULL && GS_PULL_EDGES

#ifndef GS_PULL_IPT
#define GS_PULL_IPT 5
#endif

// Items per thread: the option, shrunk where a tile's values and row ends would not fit
// in 40 KB of static shared memory or 96 bytes a thread (full occupancy).
constexpr int gs_pull_item_bytes = (int)(sizeof(gs_pull_t) + sizeof(gs_eid));
constexpr int gs_pull_smem_budget = 96 * GS_BLOCK_SIZE < 40960 ? 96 * GS_BLOCK_SIZE : 40960;
constexpr int gs_pull_ipt_fit = gs_pull_smem_budget / (GS_BLOCK_SIZE * gs_pull_item_bytes);
constexpr int gs_pull_ipt = GS_PULL_IPT < gs_pull_ipt_fit ? GS_PULL_IPT
                            : (gs_pull_ipt_fit > 0 ? gs_pull_ipt_fit : 1);
constexpr int gs_pull_tile = GS_BLOCK_SIZE * gs_pull_ipt;
#define GS_PULL_TILE gs_pull_tile

// The row coordinate of diagonal d of the merge path (row ends rrow[1..n] against edge
// indices 0..m-1, a row end first on ties): how many rows end before item d.
__device__ __forceinline__ gs_vid gs_pull_path_row(long long d) {
  long long lo = d - (long long)gs.m, hi = d < (long long)gs.n ? d : (long long)gs.n;
  if (lo < 0) lo = 0;
  while (lo < hi) {
    const long long mid = (lo + hi) >> 1;
    if ((long long)__ldg(gs.rrow + mid + 1) <= d - mid - 1) lo = mid + 1;
    else hi = mid;
  }
  return (gs_vid)lo;
}

__device__ __forceinline__ unsigned gs_pull_n_tiles() {
  return (unsigned)((gs.n + gs.m + gs_pull_tile - 1) / gs_pull_tile);
}

// Once per graph and tile size: tiles[1 + k] = row coordinate of tile k's first item.
__device__ __forceinline__ void gs_phase_pull_split(GsStep& st) {
  (void)st;
  int* tiles = gs.direction_tiles;
  if (gs_ld(tiles) == gs_pull_tile) return;  // done in an earlier step or run
  const unsigned n_tiles = gs_pull_n_tiles();
  const long long total = gs.n + gs.m;
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k <= n_tiles; k += stride) {
    const long long d = (long long)k * gs_pull_tile;
    tiles[1 + k] = gs_pull_path_row(d < total ? d : total);
  }
}

// A partial result of a row: its value and whether any in-edge offered one.
struct GsPullPart {
  gs_pull_t val;
  int any;
};

__device__ __forceinline__ void gs_pull_emit(GsStep& st, gs_vid u, const gs_pull_t acc) {
  if (gs_pull_apply(u, acc, st.it)) gs_activate(st, u);
}

__device__ __forceinline__ void gs_phase_pull_edges(GsStep& st) {
  __shared__ gs_pull_t s_val[gs_pull_tile];
  __shared__ gs_eid s_end[gs_pull_tile + 1];
  const int* tiles = gs.direction_tiles;
  if (blockIdx.x == 0 && threadIdx.x == 0) gs.direction_tiles[0] = gs_pull_tile;  // split done
  const unsigned n_tiles = gs_pull_n_tiles();
  const long long total = gs.n + gs.m;
  const unsigned lane = threadIdx.x & 31;
  for (unsigned k = blockIdx.x; k < n_tiles; k += gridDim.x) {
    const long long d0 = (long long)k * gs_pull_tile;
    const long long d1 = d0 + gs_pull_tile < total ? d0 + gs_pull_tile : total;
    const gs_vid r0 = gs_ld(tiles + 1 + k), r1 = gs_ld(tiles + 2 + k);
    const gs_eid e0 = (gs_eid)(d0 - r0), e1 = (gs_eid)(d1 - r1);
    const int n_rows = r1 - r0, n_edges = e1 - e0;
    if (threadIdx.x == 0) st.edges += (unsigned long long)n_edges;
    __syncthreads();  // the last tile's walk is done with the shared arrays
    // stage: the value of every in-edge of the tile, all loads of a thread issued first
    {
      gs_vid vs[gs_pull_ipt];
#pragma unroll
      for (int j = 0; j < gs_pull_ipt; ++j) {
        const int i = threadIdx.x + j * GS_BLOCK_SIZE;
        vs[j] = i < n_edges ? __ldg(gs.rcol + e0 + i) : 0;
      }
      GsSrc ss[gs_pull_ipt];
#pragma unroll
      for (int j = 0; j < gs_pull_ipt; ++j)
        if (threadIdx.x + j * GS_BLOCK_SIZE < n_edges) ss[j] = gs_load_src_pull(vs[j]);
#pragma unroll
      for (int j = 0; j < gs_pull_ipt; ++j) {
        const int i = threadIdx.x + j * GS_BLOCK_SIZE;
        if (i < n_edges)  // the destination is not read (see above): 0 stands for it
          s_val[i] = gs_pull_value(vs[j], ss[j], 0, gs_rweight(e0 + i), st.it);
      }
    }
    for (int i = threadIdx.x; i < n_rows; i += GS_BLOCK_SIZE) s_end[i] = __ldg(gs.rrow + r0 + 1 + i);
    if (threadIdx.x == 0) s_end[n_rows] = 0x7fffffff;  // row r1 does not end in the tile
    __syncthreads();
    // this thread's items: the merge path from diagonal t * ipt, searched in shared memory
    const int items = n_rows + n_edges;
    const int td = (int)threadIdx.x * gs_pull_ipt < items ? (int)threadIdx.x * gs_pull_ipt : items;
    int lo = td - n_edges > 0 ? td - n_edges : 0, hi = td < n_rows ? td : n_rows;
    while (lo < hi) {
      const int mid = (lo + hi) >> 1;
      if (s_end[mid] <= e0 + td - mid - 1) lo = mid + 1;
      else hi = mid;
    }
    int row = lo, edge = td - lo;
    const int n_mine = items - td < gs_pull_ipt ? items - td : gs_pull_ipt;
    const gs_vid first = r0 + row;  // the row in progress where this thread starts
    GsPullPart head = {GS_PULL_IDENTITY, 0}, part = {GS_PULL_IDENTITY, 0};
    bool has_head = false;  // this thread ends the row it started in
#pragma unroll 1
    for (int j = 0; j < n_mine; ++j) {
      if (s_end[row] <= e0 + edge) {  // row end
        if (!has_head) {
          has_head = true;
          head = part;  // combined with the earlier lanes' share below
        } else if (part.any) {
          gs_pull_emit(st, r0 + row, part.val);
        }
        ++row;
        part.val = GS_PULL_IDENTITY;
        part.any = 0;
      } else {
        part.val = gs_pull_combine(part.val, s_val[edge]);
        part.any = 1;
        ++edge;
      }
    }
    // The tail (row r0 + row, part) continues in the next lane. Segmented inclusive scan
    // of tails over the warp: a lane that ended its first row starts a new segment.
    gs_pull_t sv = part.val;
    int sa = part.any, closed = has_head || lane == 0;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const gs_pull_t uv = __shfl_up_sync(0xffffffffu, sv, off);
      const int ua = __shfl_up_sync(0xffffffffu, sa, off);
      const int uc = __shfl_up_sync(0xffffffffu, closed, off);
      if (lane >= (unsigned)off && !closed) {
        sv = gs_pull_combine(uv, sv);
        sa |= ua;
        closed |= uc;
      }
    }
    // what the lanes before this one hold of the row it started in
    gs_pull_t cv = __shfl_up_sync(0xffffffffu, sv, 1);
    int ca = __shfl_up_sync(0xffffffffu, sa, 1);
    if (lane == 0) {
      cv = GS_PULL_IDENTITY;
      ca = 0;
    }
    if (has_head && (ca || head.any)) gs_pull_emit(st, first, gs_pull_combine(cv, head.val));
    // the warp's last tail: the rest of its row lies in other warps or tiles
    if (lane == 31 && sa) gs_pull_emit(st, r0 + row, sv);
  }
}
#endif
