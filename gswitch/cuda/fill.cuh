// gs_fill_fields: the initial value of up to GS_FILL_MAX node fields in one launch, in
// place of a fill per field (each a CuPy launch of 20 to 60 us of host time). Every
// field gets a constant (its bits, `width` bytes) or the node's id; with flag 2 the node
// `source` gets `at_src` instead. The host packs the argument (gswitch/engine/fill.py);
// the kernel takes it by value and needs nothing of the module's parameter block.
#define GS_FILL_MAX 8
struct gs_fill_args {
  unsigned long long ptr[GS_FILL_MAX];     // field address
  unsigned long long bits[GS_FILL_MAX];    // every node's value, in the low `width` bytes
  unsigned long long at_src[GS_FILL_MAX];  // the source's value (flag 2)
  int width[GS_FILL_MAX];                  // bytes per item: 4 or 8
  int flags[GS_FILL_MAX];                  // 1: the node's id; 2: `source` gets at_src
  long long n;                             // nodes
  long long source;                        // the one source (flag 2)
  int k;                                   // fields
};
extern "C" __global__ void gs_fill_fields(const gs_fill_args a) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += stride) {
    for (int f = 0; f < a.k; ++f) {
      unsigned long long v = (a.flags[f] & 1) ? (unsigned long long)i : a.bits[f];
      if ((a.flags[f] & 2) && i == a.source) v = a.at_src[f];
      if (a.width[f] == 4) ((unsigned*)a.ptr[f])[i] = (unsigned)v;
      else ((unsigned long long*)a.ptr[f])[i] = v;
    }
  }
}
