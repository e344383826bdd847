// Edge-balanced expansion in three phases of a push step:
//  eb_degrees: per tile of GS_BLOCK_SIZE items, each item's exclusive degree prefix within
//              the tile (offs) and the tile's sum (tiles);
//  eb_tiles:   block 0 turns the tile sums into tile offsets and writes the total;
//  expand:     thread t walks edges [t * share, (t + 1) * share) of the frontier's
//              concatenated edge lists, finding its first item by binary search.
// Items past the partition's capacity (a queue holding duplicates) get a thread each.
__device__ __forceinline__ unsigned gs_eb_items(const GsStep& st) {
  const unsigned cap = gs.load_balance_cap;
  return st.n_items < cap ? st.n_items : cap;
}
__device__ __forceinline__ void gs_phase_eb_degrees(GsStep& st) {
  const unsigned n = gs_eb_items(st);
  const unsigned tiles = (n + GS_BLOCK_SIZE - 1) / GS_BLOCK_SIZE;
  for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x) {  // block-uniform: scans sync
    const unsigned i = t * GS_BLOCK_SIZE + threadIdx.x;
    unsigned long long d = 0;
    if (i < n) d = gs_expand_degree(gs_item(st, i));
    unsigned long long sum;
    const unsigned long long ex = gs_block_exclusive_scan(d, &sum);
    if (i < n) gs.load_balance_offs[i] = ex;
    if (threadIdx.x == 0) gs.load_balance_tiles[t] = sum;
  }
}
__device__ __forceinline__ void gs_phase_eb_tiles(GsStep& st) {
  if (blockIdx.x != 0) return;  // one block: the tile sums are n / GS_BLOCK_SIZE values
  const unsigned n = gs_eb_items(st);
  const unsigned tiles = (n + GS_BLOCK_SIZE - 1) / GS_BLOCK_SIZE;
  unsigned long long carry = 0;
  for (unsigned b = 0; b < tiles; b += GS_BLOCK_SIZE) {
    const unsigned t = b + threadIdx.x;
    const unsigned long long x = t < tiles ? gs_ld(gs.load_balance_tiles + t) : 0ull;
    unsigned long long sum;
    // every read of this round happens before the scan's barriers, every write after
    const unsigned long long ex = gs_block_exclusive_scan(x, &sum);
    if (t < tiles) gs.load_balance_tiles[t] = carry + ex;
    carry += sum;
  }
  if (threadIdx.x == 0) gs.load_balance_total[0] = carry;
}
// The first edge of item i in the concatenation (the total for i == n).
__device__ __forceinline__ unsigned long long gs_eb_start(unsigned i, unsigned n,
                                                           unsigned long long total) {
  if (i >= n) return total;
  return gs_ld(gs.load_balance_tiles + i / GS_BLOCK_SIZE) + gs_ld(gs.load_balance_offs + i);
}
__device__ __forceinline__ void gs_lb_expand(GsStep& st) {
  const unsigned n = gs_eb_items(st);
  const unsigned long long threads = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long total = n ? gs_ld(gs.load_balance_total) : 0ull;
  const unsigned long long share = (total + threads - 1) / threads;
  unsigned long long k = tid * share;
  const unsigned long long stop = k + share < total ? k + share : total;
  if (k < stop) {
    // the last item whose first edge is at or before k (start(0) = 0 <= k): empty items
    // share their successor's start, so this is the one that holds edge k
    unsigned lo = 0, hi = n - 1;
    while (lo < hi) {
      const unsigned mid = lo + (hi - lo + 1) / 2;
      if (gs_eb_start(mid, n, total) <= k) lo = mid; else hi = mid - 1;
    }
    unsigned i = lo;
    unsigned long long begin = gs_eb_start(i, n, total);
    unsigned long long next = gs_eb_start(i + 1, n, total);
    gs_vid v = gs_item(st, i);
    GsSrc s = gs_load_src(v);
    gs_eid row = __ldg(gs.row + v);
    for (; k < stop; ++k) {
      if (k >= next) {  // k < total = start(n), so some item i < n holds it
        do {
          ++i;
          begin = next;
          next = gs_eb_start(i + 1, n, total);
        } while (k >= next);
        v = gs_item(st, i);
        s = gs_load_src(v);
        row = __ldg(gs.row + v);
      }
      gs_visit(st, v, s, row + (gs_eid)(k - begin));
    }
  }
  for (unsigned i = n + (unsigned)tid; i < st.n_items; i += (unsigned)threads) {
    const gs_vid v = gs_item(st, i);
    const GsSrc s = gs_load_src(v);
    const gs_eid end = gs_row_end(v);
    for (gs_eid e = __ldg(gs.row + v); e < end; ++e) gs_visit(st, v, s, e);
  }
}
