// gswitch kernel skeleton. Codegen pastes this after the generated state and operators;
// each /*@slot NAME@*/ line is replaced by the fragment of the strategy chosen on that
// axis. Everything here is shared by both launch modes.

struct GsStep {
  int it;
  int mode;
  const gs_vid* in;
  unsigned n_items;
  gs_vid* out;
  unsigned out_cap;
  unsigned* out_size;
  unsigned* act;
  unsigned* overflow;
  unsigned long long edges;  // edges visited by this thread (flushed once per kernel)
};

// The counters step `it` wrote: size, activations, overflow (one 16-byte L2 read).
__device__ __forceinline__ uint4 gs_slot(int it) {
  return __ldcg((const uint4*)(gs.ctl + GS_CTL_SLOT(it)));
}

// Step descriptor when the input worklist size is already known (persistent loop).
__device__ __forceinline__ GsStep gs_make_step_sized(int it, int mode, unsigned in_size) {
  GsStep st;
  st.it = it;
  st.mode = mode;
  unsigned* ctl = gs.ctl;
  const int in_par = it & 1;
  const int out_par = (it + 1) & 1;
  unsigned in_cap = (unsigned)(in_par ? gs.wl_cap1 : gs.wl_cap0);
  st.in = in_par ? gs.wl1 : gs.wl0;
  st.n_items = mode == GS_MODE_DATA ? (in_size < in_cap ? in_size : in_cap) : (unsigned)gs.n;
  st.out = out_par ? gs.wl1 : gs.wl0;
  st.out_cap = (unsigned)(out_par ? gs.wl_cap1 : gs.wl_cap0);
  st.out_size = ctl + GS_CTL_SLOT(it) + GS_CTL_SIZE;
  st.act = ctl + GS_CTL_SLOT(it) + GS_CTL_ACT;
  st.overflow = ctl + GS_CTL_SLOT(it) + GS_CTL_OVERFLOW;
  st.edges = 0;
  return st;
}

__device__ __forceinline__ GsStep gs_make_step(int it, int mode) {
  return gs_make_step_sized(it, mode, gs_ld_ctl(gs.ctl + GS_CTL_SLOT(it - 1) + GS_CTL_SIZE));
}

__device__ __forceinline__ gs_vid gs_active_node(const GsStep& st, unsigned i) {
  return st.mode == GS_MODE_DATA ? gs_ld(st.in + i) : (gs_vid)i;
}

// A reserved slot past the capacity spills the node to a flag array: nothing is lost;
// the host grows the worklist and compacts the spill after the step.
__device__ __forceinline__ void gs_wl_store(GsStep& st, unsigned slot, gs_vid v) {
  if (slot < st.out_cap) {
    st.out[slot] = v;
  } else {
    gs.spill[v] = 1;
    *(volatile unsigned*)st.overflow = 1u;
  }
}

/*@slot worklist@*/

// Topology steps only count activations (one atomic per group of lanes that activated).
__device__ __forceinline__ void gs_count_activation(GsStep& st) {
  cg::coalesced_group g = cg::coalesced_threads();
  if (g.thread_rank() == 0) atomicAdd(st.act, g.size());
}

__device__ __forceinline__ void gs_visit(GsStep& st, gs_vid v, gs_eid e) {
  const gs_vid u = __ldg(gs.col + e);
  st.edges += 1;
#if GS_ATOMIC_FREE
  const bool act = st.mode == GS_MODE_TOPOLOGY ? gs_edge_op_plain(v, u, e, st.it)
                                               : gs_edge_op(v, u, e, st.it);
#else
  const bool act = gs_edge_op(v, u, e, st.it);
#endif
  if (act) {
    if (st.mode == GS_MODE_TOPOLOGY) gs_count_activation(st);
    else gs_wl_push(st, u);
  }
}

/*@slot load_balance@*/

/*@slot driving@*/

__device__ __forceinline__ void gs_node_phase(GsStep& st) {
#if GS_HAS_NODE_OP
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < st.n_items; i += stride)
    gs_node_op(gs_active_node(st, i), st.it);
#endif
}

__device__ __forceinline__ void gs_edge_phase(GsStep& st) { gs_lb_expand(st); }

// Called by one thread at the start of step `it`: clears the slot step it + 1 writes
// (nobody reads it during step it) and records the trace.
__device__ __forceinline__ void gs_step_begin(const GsStep& st) {
  unsigned* s = gs.ctl + GS_CTL_SLOT(st.it + 1);
  s[GS_CTL_SIZE] = 0u;
  s[GS_CTL_ACT] = 0u;
  s[GS_CTL_OVERFLOW] = 0u;
  if (st.it < gs.trace_cap) {
    gs.trace_active[st.it] = (int)st.n_items;
    gs.trace_mode[st.it] = st.mode;
  }
}

// Count that decides the next step: activations in topology mode, pushes otherwise.
__device__ __forceinline__ unsigned gs_step_count(int it, int mode) {
  const unsigned* s = gs.ctl + GS_CTL_SLOT(it);
  return gs_ld_ctl(s + (mode == GS_MODE_TOPOLOGY ? GS_CTL_ACT : GS_CTL_SIZE));
}

__device__ __forceinline__ void gs_flush_edges(unsigned long long edges) {
  for (int off = 16; off > 0; off >>= 1) edges += __shfl_down_sync(0xffffffffu, edges, off);
  if ((threadIdx.x & 31) == 0 && edges)
    atomicAdd((unsigned long long*)(gs.ctl + GS_CTL_EDGES), edges);
}

// Appends the nodes spilled during step `it` to its output worklist (after the host
// grew it) and clears their flags.
extern "C" __global__ void gs_compact_spill(int it) {
  GsStep st = gs_make_step(it, GS_MODE_DATA);
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned v = blockIdx.x * blockDim.x + threadIdx.x; v < (unsigned)gs.n; v += stride) {
    if (gs.spill[v]) {
      gs.spill[v] = 0;
      gs_wl_push(st, (gs_vid)v);
    }
  }
}

/*@slot launch@*/
