// gswitch common device definitions: types, control-block layout, typed atomics.
// Included (as text) at the top of every composed module. It includes no header: the
// cooperative-groups header alone took 1.1 s of the compiler's 1.9 s on a BFS module
// (nvcc 13, sm_90), so lane groups and the grid barrier are written out here.

typedef int gs_vid;   // node id
typedef int gs_eid;   // edge offset (graphs of 2^31 edges or more are refused on the GPU)

// Step modes are the driving strategy's (codegen defines GS_MODE_<NAME> and the
// predicates gs_mode_worklist / gs_mode_pushes / gs_mode_operators from its StepModes).
// A mode word's low 4 bits are the mode's number, bits 8 and up the strategy's state.
#define gs_mode_id(mode) ((mode) & 15)
// p.bucket: the priority bucket a mode word carries; a driving that keeps buckets defines
// GS_BUCKET(mode) among its defines, every other driving processes bucket 0.
#ifndef GS_BUCKET
#define GS_BUCKET(mode) 0
#endif

// Control block. Three rotating slots of 8 words: step `it` writes the counters of
// slot GS_CTL_SLOT(it) (its pushes are the size of step it + 1), then the step state.
#define GS_CTL_SLOT(it) ((((it) % 3 + 3) % 3) * 8)
#define GS_CTL_SIZE 0         // items pushed for the next step
#define GS_CTL_ACT 1          // activations (topology steps count instead of pushing)
#define GS_CTL_OVERFLOW 2     // a push found the worklist full (the host grows it)
#define GS_CTL_FEDGES 3       // out-edges of the activated nodes (direction decisions)
#define GS_CTL_TOTAL 4        // double (words 4..5): the step's n.total() sum (GS_CONVERGE)
#define GS_CTL_DRIVE 6        // words 6..7: the driving strategy's own counters
// One 16-byte header (words 24..27) that a phase kernel reads with a single load.
#define GS_CTL_IT 24          // the next step to run
#define GS_CTL_MODE 25        // its mode
#define GS_CTL_PULL 26        // whether it pulls
#define GS_CTL_DONE 27        // the run converged
#define GS_CTL_BLOCKS_DONE 28 // host loop: blocks finished with the last phase
#define GS_CTL_DEADLINE 29    // the persistent loop passed the deadline
#define GS_CTL_EDGES 30       // 64-bit: edges visited (words 30..31)
#define GS_CTL_VISITED 32     // 64-bit: out-edges of all nodes activated so far (32..33)
#define GS_CTL_WORDS 36
// The algorithm's StepTotals (GS_N_SUMS of them, at most 4): three rotating slots of four
// doubles after the words above, step `it` adding into slot GS_CTL_SUM(it, k).
#define GS_CTL_SUMS 36
#define GS_CTL_SUM(it, k) (GS_CTL_SUMS + (((it) % 3 + 3) % 3) * 8 + 2 * (k))
// StepTotal k as step `it - 1` left it (zero in a run's first step: slot -1 starts zeroed);
// a macro, since the operators that read it come before the skeleton. Through L1
// (gs_ld_l1, defined below): the slot does not change during step `it`, and every node
// of the step reads it
// The persistent kernel's grid barrier (gs_grid_sync): one word that every block adds to,
// on a 256-byte line of its own (the step totals' atomics share the line before it)
#define GS_CTL_BARRIER 64
#define gs_last_sum(it, k) gs_ld_l1((const double*)(gs.ctl + GS_CTL_SUM((it) - 1, (k))))

// Mutable data (fields, worklists, counters) is read through L2 only, so a persistent
// kernel never sees a stale L1 line written by another SM before a grid barrier.
template <typename T> __device__ __forceinline__ T gs_ld(const T* p) { return __ldcg(p); }
// Through L1, for a pull sweep's source values that nothing writes during the sweep
// (gs_load_src_pull): a hub's value read by every warp of an SM is then one L2 request
// per SM, not one per warp on a single L2 slice. Lines cached before a grid barrier are
// not read stale after it: the barrier's acquire at GPU scope (gs_grid_sync) orders
// every later load of the block after the writes before the barrier, and a kernel
// boundary starts with an empty L1.
template <typename T> __device__ __forceinline__ T gs_ld_l1(const T* p) { return __ldca(p); }
__device__ __forceinline__ unsigned gs_ld_ctl(const unsigned* p) {
  return *(const volatile unsigned*)p;
}

// The lanes of a warp that run this code together (what __activemask() names, as
// cooperative groups' coalesced_threads()): their count, this lane's rank among them and
// a value broadcast from the lowest of them.
struct GsLanes {
  unsigned mask;
  __device__ __forceinline__ GsLanes() : mask(__activemask()) {}
  __device__ __forceinline__ unsigned size() const { return __popc(mask); }
  __device__ __forceinline__ unsigned rank() const {
    return __popc(mask & ((1u << (threadIdx.x & 31)) - 1u));
  }
  __device__ __forceinline__ unsigned first(unsigned v) const {
    return __shfl_sync(mask, v, __ffs(mask) - 1);
  }
};

// ---- min / max: integers natively; floats by one integer atomic on their bits
// (non-negative floats order as signed integers, negative ones in reverse as unsigned),
// after a read that returns at once where the stored value is already at least as good
// (no write, no contention). A NaN is never stored, nor is a stored NaN replaced: the
// read compares false. (A compare-and-swap loop did the same with a retry per
// concurrent writer.)
__device__ __forceinline__ int gs_atomic_min(int* p, int v) { return atomicMin(p, v); }
__device__ __forceinline__ unsigned gs_atomic_min(unsigned* p, unsigned v) { return atomicMin(p, v); }
__device__ __forceinline__ long long gs_atomic_min(long long* p, long long v) { return atomicMin(p, v); }
__device__ __forceinline__ int gs_atomic_max(int* p, int v) { return atomicMax(p, v); }
__device__ __forceinline__ unsigned gs_atomic_max(unsigned* p, unsigned v) { return atomicMax(p, v); }
__device__ __forceinline__ long long gs_atomic_max(long long* p, long long v) { return atomicMax(p, v); }
typedef unsigned long long gs_u64;
__device__ __forceinline__ gs_u64 gs_atomic_min(gs_u64* p, gs_u64 v) { return atomicMin(p, v); }
__device__ __forceinline__ gs_u64 gs_atomic_max(gs_u64* p, gs_u64 v) { return atomicMax(p, v); }

// The atomic part, on any address (global or shared); callers read first.
__device__ __forceinline__ float gs_bits_min(float* p, float v) {
  return signbit(v) ? __uint_as_float(atomicMax((unsigned*)p, __float_as_uint(v)))
                    : __int_as_float(atomicMin((int*)p, __float_as_int(v)));
}
__device__ __forceinline__ float gs_bits_max(float* p, float v) {
  return signbit(v) ? __uint_as_float(atomicMin((unsigned*)p, __float_as_uint(v)))
                    : __int_as_float(atomicMax((int*)p, __float_as_int(v)));
}
__device__ __forceinline__ double gs_bits_min(double* p, double v) {
  return signbit(v) ? __longlong_as_double((long long)atomicMax(
                          (gs_u64*)p, (gs_u64)__double_as_longlong(v)))
                    : __longlong_as_double(atomicMin((long long*)p, __double_as_longlong(v)));
}
__device__ __forceinline__ double gs_bits_max(double* p, double v) {
  return signbit(v) ? __longlong_as_double((long long)atomicMin(
                          (gs_u64*)p, (gs_u64)__double_as_longlong(v)))
                    : __longlong_as_double(atomicMax((long long*)p, __double_as_longlong(v)));
}
__device__ __forceinline__ float gs_atomic_min(float* p, float v) {
  const float old = gs_ld(p);
  return v < old ? gs_bits_min(p, v) : old;
}
__device__ __forceinline__ float gs_atomic_max(float* p, float v) {
  const float old = gs_ld(p);
  return v > old ? gs_bits_max(p, v) : old;
}
__device__ __forceinline__ double gs_atomic_min(double* p, double v) {
  const double old = gs_ld(p);
  return v < old ? gs_bits_min(p, v) : old;
}
__device__ __forceinline__ double gs_atomic_max(double* p, double v) {
  const double old = gs_ld(p);
  return v > old ? gs_bits_max(p, v) : old;
}

// ---- add / or / exchange
__device__ __forceinline__ int gs_atomic_add(int* p, int v) { return atomicAdd(p, v); }
__device__ __forceinline__ unsigned gs_atomic_add(unsigned* p, unsigned v) { return atomicAdd(p, v); }
__device__ __forceinline__ float gs_atomic_add(float* p, float v) { return atomicAdd(p, v); }
__device__ __forceinline__ double gs_atomic_add(double* p, double v) { return atomicAdd(p, v); }
__device__ __forceinline__ long long gs_atomic_add(long long* p, long long v) {
  return (long long)atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
__device__ __forceinline__ gs_u64 gs_atomic_add(gs_u64* p, gs_u64 v) { return atomicAdd(p, v); }
__device__ __forceinline__ int gs_atomic_or(int* p, int v) { return atomicOr(p, v); }
__device__ __forceinline__ gs_u64 gs_atomic_or(gs_u64* p, gs_u64 v) { return atomicOr(p, v); }
__device__ __forceinline__ unsigned gs_atomic_or(unsigned* p, unsigned v) { return atomicOr(p, v); }
__device__ __forceinline__ long long gs_atomic_or(long long* p, long long v) {
  return (long long)atomicOr((unsigned long long*)p, (unsigned long long)v);
}
__device__ __forceinline__ int gs_atomic_exch(int* p, int v) { return atomicExch(p, v); }
__device__ __forceinline__ unsigned gs_atomic_exch(unsigned* p, unsigned v) { return atomicExch(p, v); }
__device__ __forceinline__ float gs_atomic_exch(float* p, float v) { return atomicExch(p, v); }
__device__ __forceinline__ gs_u64 gs_atomic_exch(gs_u64* p, gs_u64 v) { return atomicExch(p, v); }
__device__ __forceinline__ long long gs_atomic_exch(long long* p, long long v) {
  return (long long)atomicExch((unsigned long long*)p, (unsigned long long)v);
}
__device__ __forceinline__ double gs_atomic_exch(double* p, double v) {
  return __longlong_as_double((long long)atomicExch((unsigned long long*)p,
                                                    (unsigned long long)__double_as_longlong(v)));
}

// Exclusive prefix sum of x over the block; *total gets the block's sum. Every thread
// of the block calls it from block-uniform code (it holds three barriers; the last one
// lets a caller scan again at once). For strategies' finish and partition phases.
template <typename T>
__device__ __forceinline__ T gs_block_exclusive_scan(T x, T* total) {
  __shared__ T warp_base[33];  // 32 warp offsets, then the block's sum
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned warps = (blockDim.x + 31) >> 5;
  T incl = x;
  for (int off = 1; off < 32; off <<= 1) {
    const T y = __shfl_up_sync(0xffffffffu, incl, off);
    if (lane >= (unsigned)off) incl += y;
  }
  if (lane == 31) warp_base[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    const T w = lane < warps ? warp_base[lane] : (T)0;
    T wi = w;
    for (int off = 1; off < 32; off <<= 1) {
      const T y = __shfl_up_sync(0xffffffffu, wi, off);
      if (lane >= (unsigned)off) wi += y;
    }
    warp_base[lane] = wi - w;
    if (lane == 31) warp_base[32] = wi;
  }
  __syncthreads();
  const T out = warp_base[warp] + incl - x;
  *total = warp_base[32];
  __syncthreads();
  return out;
}

template <typename T> __device__ __forceinline__ T gs_min(T a, T b) { return b < a ? b : a; }
template <typename T> __device__ __forceinline__ T gs_max(T a, T b) { return a < b ? b : a; }

// Identities of the pull combiners.
template <typename T> __device__ __forceinline__ T gs_type_zero() { return (T)0; }
template <typename T> __device__ __forceinline__ T gs_type_max();
template <typename T> __device__ __forceinline__ T gs_type_lowest();
template <> __device__ __forceinline__ int gs_type_max<int>() { return 0x7fffffff; }
template <> __device__ __forceinline__ int gs_type_lowest<int>() { return (int)0x80000000; }
template <> __device__ __forceinline__ unsigned gs_type_max<unsigned>() { return 0xffffffffu; }
template <> __device__ __forceinline__ unsigned gs_type_lowest<unsigned>() { return 0u; }
template <> __device__ __forceinline__ long long gs_type_max<long long>() { return 0x7fffffffffffffffLL; }
template <> __device__ __forceinline__ long long gs_type_lowest<long long>() { return (long long)0x8000000000000000ULL; }
template <> __device__ __forceinline__ gs_u64 gs_type_max<gs_u64>() { return ~0ULL; }
template <> __device__ __forceinline__ gs_u64 gs_type_lowest<gs_u64>() { return 0ULL; }
template <> __device__ __forceinline__ float gs_type_max<float>() { return __int_as_float(0x7f800000); }
template <> __device__ __forceinline__ float gs_type_lowest<float>() { return -__int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double gs_type_max<double>() { return __longlong_as_double(0x7ff0000000000000LL); }
template <> __device__ __forceinline__ double gs_type_lowest<double>() { return -__longlong_as_double(0x7ff0000000000000LL); }
