// gswitch kernel skeleton. Codegen pastes this after the generated parameter block and
// operators; each /*@slot NAME@*/ line is replaced by the fragment of the strategy
// chosen on that axis, and the phases marker by the generated phase table. Everything here
// is shared by every launch mode: a launch strategy only decides who runs the phases.

struct GsStep {
  int it;
  int mode;
  int pull;
  unsigned in_size;          // pushes step it - 1 reported (the worklist may cap it)
  unsigned n_items;
  unsigned* ctl_cur;         // counters step `it` writes (slot GS_CTL_SLOT(it))
  unsigned long long edges;  // edges visited by this thread (flushed once per kernel)
  unsigned acts;             // topology activations by this thread (flushed per phase)
  unsigned fedges;           // out-edges of the nodes it activated (flushed per phase)
  unsigned pre_i;            // item index loaded ahead (gs_prefetch_item), or ~0u
  gs_vid pre_v;              // that item
#if GS_CONVERGE
  double total;              // this thread's n.total() sum (flushed per phase)
#endif
#if GS_N_SUMS
  double sums[GS_N_SUMS];    // its n.total(x, into=...) sums (flushed per phase)
#endif
#if GS_UNROLL
  gs_vid uq[GS_UNROLL];      // kernel unrolling: nodes this thread activated, queued
  unsigned uq_n;             // for this step (gs_unroll_drain)
#endif
};

// The counters step `it` wrote: size, activations, overflow, frontier edges.
__device__ __forceinline__ uint4 gs_slot(int it) {
  return __ldcg((const uint4*)(gs.ctl + GS_CTL_SLOT(it)));
}

// A step's state with its counters zeroed and no items yet; fragments that run a kernel
// of their own over step `it` (a worklist's compaction) start from it too.
__device__ __forceinline__ GsStep gs_blank_step(int it, int mode, int pull, unsigned in_size) {
  GsStep st;
  st.it = it;
  st.mode = mode;
  st.pull = pull;
  st.in_size = in_size;
  st.ctl_cur = gs.ctl + GS_CTL_SLOT(it);
  st.edges = 0;
  st.acts = 0;
  st.fedges = 0;
  st.pre_i = ~0u;
  st.pre_v = 0;
#if GS_CONVERGE
  st.total = 0.0;
#endif
#if GS_N_SUMS
  for (int k = 0; k < GS_N_SUMS; ++k) st.sums[k] = 0.0;
#endif
#if GS_UNROLL
  st.uq_n = 0;
#endif
  st.n_items = 0;
  return st;
}

/*@slot worklist@*/

// A worklist that buffers pushes (in shared memory or per thread) defines GS_WL_BUFFERED
// and both hooks: gs_wl_begin before and gs_wl_flush after every phase, called by every
// thread of every block from block-uniform code (they may hold __syncthreads), so the
// buffered pushes land before the phase's barrier. The others get these no-ops.
#ifndef GS_WL_BUFFERED
__device__ __forceinline__ void gs_wl_begin(GsStep& st) { (void)st; }
__device__ __forceinline__ void gs_wl_flush(GsStep& st) { (void)st; }
#endif

__device__ __forceinline__ GsStep gs_make_step(int it, int mode, int pull, unsigned in_size) {
  GsStep st = gs_blank_step(it, mode, pull, in_size);
  st.n_items = gs_mode_worklist(mode) ? gs_wl_size(st) : (unsigned)gs.n;
  return st;
}

__device__ __forceinline__ gs_vid gs_item(const GsStep& st, unsigned i) {
  if (!gs_mode_worklist(st.mode)) return (gs_vid)i;
  return i == st.pre_i ? st.pre_v : gs_wl_item(st, i);
}

__device__ __forceinline__ unsigned gs_out_degree(gs_vid v) {
  return (unsigned)(__ldg(gs.row + v + 1) - __ldg(gs.row + v));
}

// The end of the out-edges node v expands: its row's end, or its first GS_EDGE_FIRST
// edges when the edge operator names a limit (edge_op(first=...)). Every load balancer
// walks [row[v], gs_row_end(v)) and bins nodes by gs_expand_degree(v). Where the edge
// operator opens with guards on the source alone (GS_ROW_GUARD), a node they refuse
// has an empty row: each of its edges would return at the guard.
// gs_row_stop: the same without the guards (a caller that holds the source's values
// elsewhere, as spatial staging does, asks gs_row_guard_src itself).
__device__ __forceinline__ gs_eid gs_row_stop(gs_vid v) {
#ifdef GS_EDGE_FIRST
  const gs_eid b = __ldg(gs.row + v), e = __ldg(gs.row + v + 1);
  return e - b > (gs_eid)GS_EDGE_FIRST ? b + (gs_eid)GS_EDGE_FIRST : e;
#else
  return __ldg(gs.row + v + 1);
#endif
}
__device__ __forceinline__ gs_eid gs_row_end(gs_vid v) {
#ifdef GS_ROW_GUARD
  if (!gs_row_guard(v)) return __ldg(gs.row + v);
#endif
  return gs_row_stop(v);
}
__device__ __forceinline__ unsigned gs_expand_degree(gs_vid v) {
  return (unsigned)(gs_row_end(v) - __ldg(gs.row + v));
}

#if GS_DRIVE_ADMIT
__device__ __forceinline__ bool gs_drive_admit(GsStep& st, gs_vid u);
#endif

// An activated node: counted when the step's mode only counts, pushed otherwise. Direction decisions
// also need the out-edges of what was activated. Both counts stay in registers until the
// phase ends (gs_flush_counts): one atomic per warp and phase on the shared control
// line instead of one per activation, which serialised pull steps of millions of nodes.
__device__ __forceinline__ void gs_activate(GsStep& st, gs_vid u) {
#if GS_COUNT_FRONTIER_EDGES
  st.fedges += gs_out_degree(u);
#endif
  if (!gs_mode_pushes(st.mode)) {
#if GS_UNROLL
    if (st.uq_n < GS_UNROLL) {  // processed later in this step by this thread
      st.uq[st.uq_n++] = u;
      return;
    }
#endif
    st.acts += 1;
  } else {
#if GS_DRIVE_ADMIT
    if (!gs_drive_admit(st, u)) return;  // kept back by the driving strategy
#endif
#if GS_UNROLL
    if (st.uq_n < GS_UNROLL) {  // processed later in this step by this thread
      st.uq[st.uq_n++] = u;
      return;
    }
#endif
    gs_wl_push(st, u);
#if GS_L2_PREFETCH
    gs_prefetch_l2(gs.row + u);  // the next step reads u's row: from L2, not DRAM
    // and the neighbouring line on the side a wave over consecutive ids reaches next
    if ((u & 31) == 0 && u + 32 < gs.n) gs_prefetch_l2(gs.row + u + 32);
    if ((u & 31) == 31 && u >= 32) gs_prefetch_l2(gs.row + u - 32);
    gs_prefetch_node(u);
#endif
  }
}

#if GS_CONVERGE || GS_N_SUMS
// A step's sum: a warp sum, a block sum in shared memory, one atomic per block into
// `target` (a power iteration adds a term per node every step; one atomic per warp on
// one address would serialise tens of thousands of them). Every thread of the block
// calls it.
__device__ __forceinline__ void gs_block_sum_into(double x, double* target) {
  __shared__ double block_total;
  for (int off = 16; off > 0; off >>= 1) x += __shfl_down_sync(0xffffffffu, x, off);
  if (threadIdx.x == 0) block_total = 0.0;
  __syncthreads();
  if ((threadIdx.x & 31) == 0 && x != 0.0) atomicAdd(&block_total, x);
  __syncthreads();
  if (threadIdx.x == 0 && block_total != 0.0) atomicAdd(target, block_total);
}
#endif
#if GS_CONVERGE
__device__ __forceinline__ void gs_total(GsStep& st, double x) { st.total += x; }
__device__ __forceinline__ void gs_flush_total(GsStep& st) {
  gs_block_sum_into(st.total, (double*)(st.ctl_cur + GS_CTL_TOTAL));
  st.total = 0.0;
}
#endif
#if GS_N_SUMS
__device__ __forceinline__ void gs_step_total(GsStep& st, int k, double x) { st.sums[k] += x; }
__device__ __forceinline__ void gs_flush_sums(GsStep& st) {
#pragma unroll
  for (int k = 0; k < GS_N_SUMS; ++k) {
    gs_block_sum_into(st.sums[k], (double*)(gs.ctl + GS_CTL_SUM(st.it, k)));
    st.sums[k] = 0.0;
  }
}
#endif
// Zero the counters step `it` will write (the decision of step it - 1 does it).
__device__ __forceinline__ void gs_clear_slot(unsigned* c, int it) {
  unsigned* next = c + GS_CTL_SLOT(it);
  next[GS_CTL_SIZE] = 0u;
  next[GS_CTL_ACT] = 0u;
  next[GS_CTL_OVERFLOW] = 0u;
  next[GS_CTL_FEDGES] = 0u;
  *(double*)(next + GS_CTL_TOTAL) = 0.0;
  next[GS_CTL_DRIVE] = 0u;
  next[GS_CTL_DRIVE + 1] = 0u;
#if GS_N_SUMS
  for (int k = 0; k < GS_N_SUMS; ++k) *(double*)(c + GS_CTL_SUM(it, k)) = 0.0;
#endif
}

// After every phase, by every thread of the grid (the phase table calls it).
__device__ __forceinline__ void gs_flush_counts(GsStep& st) {
#if GS_CONVERGE
  gs_flush_total(st);
#endif
#if GS_N_SUMS
  gs_flush_sums(st);
#endif
  const unsigned acts = __reduce_add_sync(0xffffffffu, st.acts);
#if GS_COUNT_FRONTIER_EDGES
  const unsigned fedges = __reduce_add_sync(0xffffffffu, st.fedges);
#else
  const unsigned fedges = 0u;
#endif
  if ((threadIdx.x & 31) == 0) {
    if (acts) atomicAdd(st.ctl_cur + GS_CTL_ACT, acts);
    if (fedges) atomicAdd(st.ctl_cur + GS_CTL_FEDGES, fedges);
  }
  st.acts = 0;
  st.fedges = 0;
}

// Push: apply the edge operator along out-edge e of v (source fields s loaded once).
__device__ __forceinline__ void gs_visit(GsStep& st, gs_vid v, const GsSrc& s, gs_eid e) {
  const gs_vid u = __ldg(gs.col + e);
  st.edges += 1;
#if GS_L2_PREFETCH
  if ((e & 31) == 0 && e + 32 < gs.m) gs_prefetch_l2(gs.col + e + 32);  // edges steps ahead
  if ((e & 31) == 31 && e >= 32) gs_prefetch_l2(gs.col + e - 32);
#endif
#if GS_ATOMIC_FREE
  const bool act = !gs_mode_pushes(st.mode) ? gs_edge_op_plain(st, v, s, u, e, st.it)
                                               : gs_edge_op(st, v, s, u, e, st.it);
#else
  const bool act = gs_edge_op(st, v, s, u, e, st.it);
#endif
  if (act) gs_activate(st, u);
}

/*@slot load_balance@*/

// Loading ahead: when the worklist can read an item without knowing the step's size
// (GS_WL_PREFETCH: gs_wl_prefetch(st, i) returns item i of step st.it, or anything when
// i is past the storage) and the load balancer names the first item each thread takes
// (GS_LB_FIRST_ITEM), that item is loaded while the step's size is still on its way.
// gs_item then answers it from the register: one dependent round trip less per step.
#if defined(GS_WL_PREFETCH) && defined(GS_LB_FIRST_ITEM)
#define GS_PREFETCH 1
__device__ __forceinline__ gs_vid gs_prefetch_item(int it) {
  GsStep p;
  p.it = it;
  return gs_wl_prefetch(p, GS_LB_FIRST_ITEM);
}
__device__ __forceinline__ void gs_use_prefetched(GsStep& st, gs_vid v) {
  if (gs_mode_worklist(st.mode)) {
    st.pre_i = GS_LB_FIRST_ITEM;
    st.pre_v = v;
  }
}
#else
#define GS_PREFETCH 0
#endif

// Step state as the control block holds it (host loop and CUDA-graph kernels); false
// once the run is done. The header, the size word of all three slots and (GS_PREFETCH)
// the first item of either parity are loaded together, since which slot and queue the
// step uses is known only once the header is in: one round trip to L2 instead of four
// dependent ones at the start of every kernel.
__device__ __forceinline__ bool gs_step_from_ctl(GsStep& st) {
  const uint4 h = __ldcg((const uint4*)(gs.ctl + GS_CTL_IT));
  const unsigned s0 = __ldcg(gs.ctl + GS_CTL_SLOT(0) + GS_CTL_SIZE);
  const unsigned s1 = __ldcg(gs.ctl + GS_CTL_SLOT(1) + GS_CTL_SIZE);
  const unsigned s2 = __ldcg(gs.ctl + GS_CTL_SLOT(2) + GS_CTL_SIZE);
#if GS_PREFETCH
  const gs_vid p0 = gs_prefetch_item(0), p1 = gs_prefetch_item(1);
#endif
  if (h.w) return false;
  const int it = (int)h.x;
  const int prev = GS_CTL_SLOT(it - 1);
  st = gs_make_step(it, (int)h.y, (int)h.z, prev == 0 ? s0 : prev == 8 ? s1 : s2);
#if GS_PREFETCH
  gs_use_prefetched(st, (it & 1) ? p1 : p0);
#endif
  return true;
}

/*@slot direction@*/

/*@slot driving@*/

__device__ __forceinline__ void gs_phase_node(GsStep& st) {
#if GS_HAS_NODE_OP
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < st.n_items; i += stride)
    gs_node_op(st, gs_item(st, i), st.it);
#endif
}

#if GS_UNROLL
// Kernel unrolling (a driving strategy's GS_UNROLL = k): after its share of a phase a
// thread processes the nodes it queued, and what those activate while the queue has
// room; what is left is counted for the next sweep, or pushed where the step's mode
// pushes. The lanes of a warp form groups of GS_UNROLL_LANES: a group takes the node
// its first lane with a queue queued last (so a wave runs ahead along a path) and walks
// its edges with all its lanes, at most k nodes per group. Every lane of the warp calls
// it (the phase table drains after every phase, so activations in a phase of a
// strategy's own, a load balancer's outliers, are not lost).
#ifndef GS_UNROLL_LANES
#define GS_UNROLL_LANES 1
#endif
__device__ __forceinline__ void gs_unroll_drain(GsStep& st) {
  const unsigned lane = threadIdx.x & 31u, first = lane & ~(GS_UNROLL_LANES - 1u);
  const unsigned group = (GS_UNROLL_LANES >= 32 ? 0xffffffffu
                                                : (1u << GS_UNROLL_LANES) - 1u) << first;
  unsigned budget = GS_UNROLL;  // the group's: the same in each of its lanes
  __syncwarp();
  for (;;) {  // warp-uniform
    const unsigned queued = __ballot_sync(0xffffffffu, st.uq_n > 0u);
    if (!queued) break;
    const unsigned mine = queued & group;
    const unsigned owner = mine ? (unsigned)__ffs(mine) - 1u : lane;
    const gs_vid top = st.uq_n ? st.uq[st.uq_n - 1u] : 0;
    const gs_vid v = __shfl_sync(0xffffffffu, top, owner);
    if (mine) {  // group-uniform
      if (lane == owner) --st.uq_n;
      if (budget == 0u) {
        if (lane == owner) {
          if (gs_mode_pushes(st.mode))
            gs_wl_push(st, v);
          else
            st.acts += 1;
        }
      } else {
        --budget;
        const GsSrc s = gs_load_src(v);
        const gs_eid end = gs_row_end(v);
        for (gs_eid e = __ldg(gs.row + v) + (gs_eid)(lane - first); e < end;
             e += GS_UNROLL_LANES)
          gs_visit(st, v, s, e);
      }
    }
    __syncwarp();
  }
}
#endif

__device__ __forceinline__ void gs_phase_expand(GsStep& st) { gs_lb_expand(st); }

// A mode that keeps its items (StepMode.keeps): the step's items are pushed again, so
// the next step has the same ones (topology-driven over a fixed set).
__device__ __forceinline__ void gs_phase_keep(GsStep& st) {
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < st.n_items; i += stride)
    gs_wl_push(st, gs_item(st, i));
}

// The decision after step `it`: next mode, direction and whether the run is done, from
// the step's counters. Pure: every thread of a persistent grid computes the same one.
struct GsDecision {
  int mode;
  int pull;
  int done;
  unsigned size;
  unsigned overflow;
  unsigned late;  // the persistent loop's leader found the deadline passed
  unsigned fedges;
};

__device__ __forceinline__ GsDecision gs_decide_step(int it, int mode, int pull,
                                                     unsigned long long visited) {
  const uint4 c = gs_slot(it);
  GsDecision d;
  d.size = c.x;
  d.overflow = c.z & 1u;
  d.late = c.z >> 1;
  d.fedges = c.w;
  int done = 0;
  d.mode = gs_decide(mode, gs_mode_pushes(mode) ? c.x : c.y,
                     gs.ctl + GS_CTL_SLOT(it), &done);
  d.done = done;
  const unsigned long long m = (unsigned long long)gs.m;
  const unsigned long long seen = visited + c.w;
  d.pull = gs_dir_decide(pull, c.x, (unsigned long long)c.w, seen < m ? m - seen : 0ull);
#if GS_CONVERGE
  // the algorithm's own stopping rule replaces "a step activated nothing"
  const double total = __ldcg((const double*)(gs.ctl + GS_CTL_SLOT(it) + GS_CTL_TOTAL));
  d.done = !(total >= GS_CONVERGE_BELOW);
#endif
  // the step limit ends the run too; 2 tells the host it was the limit, not convergence
  if (it + 1 >= gs.max_it && !d.done) d.done = 2;
  return d;
}

__device__ __forceinline__ void gs_trace(int it, unsigned n_items, int mode, int pull) {
  if (it < gs.trace_cap) {  // one interleaved array: one read-back after the run
    gs.trace[2 * it] = (int)n_items;
    gs.trace[2 * it + 1] = gs_mode_id(mode) | (pull << 4);
  }
}

__device__ __forceinline__ void gs_flush_edges(unsigned long long edges) {
  for (int off = 16; off > 0; off >>= 1) edges += __shfl_down_sync(0xffffffffu, edges, off);
  if ((threadIdx.x & 31) == 0 && edges)
    atomicAdd((unsigned long long*)(gs.ctl + GS_CTL_EDGES), edges);
}

__device__ __forceinline__ unsigned long long gs_ld_ctl64(int word) {
  return *(const volatile unsigned long long*)(gs.ctl + word);
}

// A launch strategy that polls (LaunchStrategy.polls_control) gets the control block
// written into page-locked host memory by the thread that took the step's decision: every
// word but the step number, a system-wide fence, then the step number, which the host
// waits to see instead of copying the block back and waiting for the stream.
__device__ __forceinline__ void gs_mirror_control(const unsigned* c) {
  volatile unsigned* h = gs.ctl_mirror;
  unsigned words[GS_CTL_WORDS];
#pragma unroll
  for (int w = 0; w < GS_CTL_WORDS; ++w) words[w] = __ldcg(c + w);
#pragma unroll
  for (int w = 0; w < GS_CTL_WORDS; ++w)
    if (w != GS_CTL_IT) h[w] = words[w];
  __threadfence_system();
  h[GS_CTL_IT] = words[GS_CTL_IT];
}

/*@phases@*/

// One phase of the step the control block names, over the whole grid (host loop and
// CUDA-graph replay). The last block of a step's last phase takes the decision and
// advances the control block, so the host reads back one small block per step.
// After the run is done, or past the iteration limit, a launch is a no-op.
extern "C" __global__ void __launch_bounds__(GS_BLOCK_SIZE) gs_phase_kernel(int phase, int last) {
  GsStep st;
  if (!gs_step_from_ctl(st) || st.it >= gs.max_it) return;
  if (gs_phase_enabled(phase, st)) gs_run_phase(phase, st);
  gs_flush_edges(st.edges);
  if (!last) return;
  __shared__ bool is_last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0)
    is_last = atomicAdd(gs.ctl + GS_CTL_BLOCKS_DONE, 1u) == gridDim.x - 1;
  __syncthreads();
  if (is_last && threadIdx.x == 0) {
    __threadfence();
    unsigned* c = gs.ctl;
    const unsigned long long visited = gs_ld_ctl64(GS_CTL_VISITED);
    const GsDecision d = gs_decide_step(st.it, st.mode, st.pull, visited);
    gs_trace(st.it, st.n_items, st.mode, st.pull);
    *(unsigned long long*)(c + GS_CTL_VISITED) = visited + d.fedges;
    gs_clear_slot(c, st.it + 1);
    c[GS_CTL_MODE] = (unsigned)d.mode;
    c[GS_CTL_PULL] = (unsigned)d.pull;
    c[GS_CTL_DONE] = (unsigned)d.done;
    c[GS_CTL_BLOCKS_DONE] = 0u;
    // no fence: the next reader is the next kernel or the host after a synchronize
    c[GS_CTL_IT] = (unsigned)(st.it + 1);
    if (gs.ctl_mirror) gs_mirror_control(c);
  }
}

/*@slot launch@*/
