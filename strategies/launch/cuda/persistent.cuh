// Persistent kernel: the iteration loop outlined into one cooperative launch; the same
// phases as the host loop, separated by grid-wide barriers. Every thread reads the same
// counters after the barrier and so takes the same decision. The loop leaves on
// worklist overflow (the host grows the worklist and relaunches) and when the leader
// finds the device clock past the deadline.
__device__ __forceinline__ unsigned long long gs_globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Grid-wide barrier; the launch is cooperative, so every block is resident. Each block's
// first thread adds to the control block's barrier word: block 0 adds 2^31 - (blocks - 1)
// and the others 1, so the word's top bit flips exactly when the last block arrives
// (the counting scheme of the CUDA runtime's own grid barrier), and the word needs no
// reset between barriers. The add releases and the spinning load acquires at GPU scope,
// so every write before the barrier, by any thread of the grid, is seen by every read
// after it (__syncthreads carries them within each block).
__device__ __forceinline__ void gs_grid_sync() {
  __syncthreads();
  // one block (a small graph's grid): __syncthreads orders its global memory already
  if (gridDim.x == 1u) return;
  if (threadIdx.x == 0) {
    unsigned* word = gs.ctl + GS_CTL_BARRIER;
    const unsigned add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1u) : 1u;
    unsigned old, now;
    asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;"
                 : "=r"(old) : "l"(word), "r"(add) : "memory");
    do {
      asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(word) : "memory");
    } while (((old ^ now) & 0x80000000u) == 0u);
  }
  __syncthreads();
}

extern "C" __global__ void __launch_bounds__(GS_BLOCK_SIZE) gs_persistent_kernel() {
  const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
  unsigned* c = gs.ctl;
  int it = (int)gs_ld_ctl(c + GS_CTL_IT);
  int mode = (int)gs_ld_ctl(c + GS_CTL_MODE);
  int pull = (int)gs_ld_ctl(c + GS_CTL_PULL);
  unsigned long long visited = gs_ld_ctl64(GS_CTL_VISITED);
  unsigned long long edges = 0;
  int done = (int)gs_ld_ctl(c + GS_CTL_DONE);
  unsigned overflow = 0u, late = 0u;
  const unsigned long long t0 = leader ? gs_globaltimer() : 0ull;
  unsigned in_size = gs_ld_ctl(c + GS_CTL_SLOT(it - 1) + GS_CTL_SIZE);
#if GS_PREFETCH
  gs_vid pre_next = 0;
  bool have_pre = false;  // not for the first step: the host may have written its queue
#endif
  while (!done && it < gs.max_it) {
    GsStep st = gs_make_step(it, mode, pull, in_size);
#if GS_PREFETCH
    if (have_pre) gs_use_prefetched(st, pre_next);
#endif
    if (leader) {
      gs_clear_slot(c, it + 1);
      gs_trace(it, st.n_items, mode, pull);
      // reported in this step's overflow word, which every thread reads after the step
      if (gs.deadline_ns && gs_globaltimer() - t0 > (unsigned long long)gs.deadline_ns) {
        atomicOr(st.ctl_cur + GS_CTL_OVERFLOW, 2u);
        c[GS_CTL_DEADLINE] = 1u;
      }
    }
    for (int p = 0; p < GS_N_PHASES; ++p) {
      if (gs_phase_enabled(p, st)) {
        gs_run_phase(p, st);
        gs_grid_sync();
      }
    }
    edges += st.edges;
#if GS_PREFETCH
    const gs_vid pre = gs_prefetch_item(it + 1);  // in flight with the decision's load
#endif
    const GsDecision d = gs_decide_step(it, mode, pull, visited);
    visited += d.fedges;
    overflow = d.overflow;
    late = d.late;
    in_size = d.size;
    ++it;
    mode = d.mode;
    pull = d.pull;
    done = d.done;
    if (overflow || late) break;
#if GS_PREFETCH
    pre_next = pre;
    have_pre = true;
#endif
  }
  gs_flush_edges(edges);
  if (leader) {
    c[GS_CTL_IT] = (unsigned)it;
    c[GS_CTL_MODE] = (unsigned)mode;
    c[GS_CTL_PULL] = (unsigned)pull;
    c[GS_CTL_DONE] = (unsigned)done;
    *(unsigned long long*)(c + GS_CTL_VISITED) = visited;
  }
}
