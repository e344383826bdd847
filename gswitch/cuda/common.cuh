// gswitch common device definitions: types, control-block layout, typed atomics.
// Included (as text) at the top of every composed module.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

typedef int gs_vid;   // node id
typedef int gs_eid;   // edge offset (graphs of 2^31 edges or more are refused on the GPU)

#define GS_MODE_DATA 0        // pop the worklist, push activations
#define GS_MODE_TOPOLOGY 1    // every node, activations only counted
#define GS_MODE_TRANSITION 2  // every node, activations pushed (leaving topology mode)

// Control block: three rotating slots of 4 words (step it writes slot it % 3), then globals.
#define GS_CTL_SLOT(it) ((((it) % 3 + 3) % 3) * 4)
#define GS_CTL_SIZE 0
#define GS_CTL_ACT 1
#define GS_CTL_OVERFLOW 2
#define GS_CTL_BLOCKS_DONE 12
#define GS_CTL_NEXT_MODE 13
#define GS_CTL_DONE 14
#define GS_CTL_EXIT_IT 15
#define GS_CTL_EDGES 16       // 64-bit counter in words 16..17
#define GS_CTL_WORDS 20

// Mutable data (fields, worklists, counters) is read through L2 only, so a persistent
// kernel never sees a stale L1 line written by another SM before a grid barrier.
template <typename T> __device__ __forceinline__ T gs_ld(const T* p) { return __ldcg(p); }
__device__ __forceinline__ unsigned gs_ld_ctl(const unsigned* p) {
  return *(const volatile unsigned*)p;
}

// ---- min / max: integers natively, floats by a compare-and-swap loop that stops as
// soon as the stored value is already at least as good (no write, no contention).
__device__ __forceinline__ int gs_atomic_min(int* p, int v) { return atomicMin(p, v); }
__device__ __forceinline__ unsigned gs_atomic_min(unsigned* p, unsigned v) { return atomicMin(p, v); }
__device__ __forceinline__ long long gs_atomic_min(long long* p, long long v) { return atomicMin(p, v); }
__device__ __forceinline__ int gs_atomic_max(int* p, int v) { return atomicMax(p, v); }
__device__ __forceinline__ unsigned gs_atomic_max(unsigned* p, unsigned v) { return atomicMax(p, v); }
__device__ __forceinline__ long long gs_atomic_max(long long* p, long long v) { return atomicMax(p, v); }

__device__ __forceinline__ float gs_atomic_min(float* p, float v) {
  int old = __float_as_int(gs_ld(p));
  while (v < __int_as_float(old)) {
    int prev = atomicCAS((int*)p, old, __float_as_int(v));
    if (prev == old) break;
    old = prev;
  }
  return __int_as_float(old);
}
__device__ __forceinline__ float gs_atomic_max(float* p, float v) {
  int old = __float_as_int(gs_ld(p));
  while (v > __int_as_float(old)) {
    int prev = atomicCAS((int*)p, old, __float_as_int(v));
    if (prev == old) break;
    old = prev;
  }
  return __int_as_float(old);
}
__device__ __forceinline__ double gs_atomic_min(double* p, double v) {
  unsigned long long old = __double_as_longlong(gs_ld(p));
  while (v < __longlong_as_double(old)) {
    unsigned long long prev = atomicCAS((unsigned long long*)p, old,
                                        (unsigned long long)__double_as_longlong(v));
    if (prev == old) break;
    old = prev;
  }
  return __longlong_as_double(old);
}
__device__ __forceinline__ double gs_atomic_max(double* p, double v) {
  unsigned long long old = __double_as_longlong(gs_ld(p));
  while (v > __longlong_as_double(old)) {
    unsigned long long prev = atomicCAS((unsigned long long*)p, old,
                                        (unsigned long long)__double_as_longlong(v));
    if (prev == old) break;
    old = prev;
  }
  return __longlong_as_double(old);
}

// ---- add / or / exchange
__device__ __forceinline__ int gs_atomic_add(int* p, int v) { return atomicAdd(p, v); }
__device__ __forceinline__ unsigned gs_atomic_add(unsigned* p, unsigned v) { return atomicAdd(p, v); }
__device__ __forceinline__ float gs_atomic_add(float* p, float v) { return atomicAdd(p, v); }
__device__ __forceinline__ double gs_atomic_add(double* p, double v) { return atomicAdd(p, v); }
__device__ __forceinline__ long long gs_atomic_add(long long* p, long long v) {
  return (long long)atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
__device__ __forceinline__ int gs_atomic_or(int* p, int v) { return atomicOr(p, v); }
__device__ __forceinline__ unsigned gs_atomic_or(unsigned* p, unsigned v) { return atomicOr(p, v); }
__device__ __forceinline__ long long gs_atomic_or(long long* p, long long v) {
  return (long long)atomicOr((unsigned long long*)p, (unsigned long long)v);
}
__device__ __forceinline__ int gs_atomic_exch(int* p, int v) { return atomicExch(p, v); }
__device__ __forceinline__ unsigned gs_atomic_exch(unsigned* p, unsigned v) { return atomicExch(p, v); }
__device__ __forceinline__ float gs_atomic_exch(float* p, float v) { return atomicExch(p, v); }
__device__ __forceinline__ long long gs_atomic_exch(long long* p, long long v) {
  return (long long)atomicExch((unsigned long long*)p, (unsigned long long)v);
}
__device__ __forceinline__ double gs_atomic_exch(double* p, double v) {
  return __longlong_as_double((long long)atomicExch((unsigned long long*)p,
                                                    (unsigned long long)__double_as_longlong(v)));
}

template <typename T> __device__ __forceinline__ T gs_min(T a, T b) { return b < a ? b : a; }
template <typename T> __device__ __forceinline__ T gs_max(T a, T b) { return a < b ? b : a; }
