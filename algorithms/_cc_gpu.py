"""The GPU side of Afforest's host steps (:class:`gswitch.algorithms.cc.Afforest`): each
a kernel or two on the current stream, with no wait for the device.

Written with CuPy array operations, ``find_largest`` would copy the 1,024 sampled roots
to the host and count them there (a wait), then build the next start set in two more
launches; ``flatten`` would jump pointers in three gathers and check for a fixpoint with
a reduction read back on the host (another wait). Here one block finds the most frequent
sampled root on the device and a second kernel marks the start set from it; ``flatten``
walks each node to its root in one pass.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

#: Threads per block of the whole-array kernels.
BLOCK = 256
#: Most samples ``gs_cc_largest`` counts (its one block's threads).
SAMPLES = 1024

SOURCE = r"""
typedef unsigned long long gs_u64;

// The most frequent value of comp[picks[0..k)] (k <= 1024, one block of 1024 threads),
// the smallest such value where several are as frequent, written to largest[0].
extern "C" __global__ void gs_cc_largest(const int* comp, const long long* picks, int k,
                                         int* largest) {
  __shared__ int root[1024];
  __shared__ gs_u64 best;
  const int t = threadIdx.x;
  if (t == 0) best = 0ull;
  if (t < k) root[t] = comp[picks[t]];
  __syncthreads();
  if (t < k) {
    const int r = root[t];
    unsigned int count = 0;
    for (int j = 0; j < k; ++j) count += root[j] == r;
    // more often first, then the smaller root: both in one key
    atomicMax(&best, ((gs_u64)count << 32) | (gs_u64)(0xffffffffu - (unsigned int)r));
  }
  __syncthreads();
  if (t == 0) largest[0] = (int)(0xffffffffu - (unsigned int)(best & 0xffffffffull));
}

// start[i]: node i lies outside the component rooted at largest[0], or is that root.
extern "C" __global__ void gs_cc_outside(const int* comp, long long n, const int* largest,
                                         bool* start) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int l = largest[0];
  start[i] = comp[i] != l || i == (long long)l;
}

// out[i]: the root of node i in the forest comp (comp[r] == r at a root), by walking up;
// at most n steps, so a cycle without a root ends the walk instead of the kernel hanging.
extern "C" __global__ void gs_cc_roots(const int* comp, long long n, int* out) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = comp[i];
  for (long long step = 0; step < n; ++step) {
    const int up = comp[x];
    if (up == x) break;
    x = up;
  }
  out[i] = x;
}
"""


@functools.cache
def _module() -> Any:
    import cupy

    return cupy.RawModule(code=SOURCE, options=("-std=c++17",))


@functools.cache
def _functions(device: int) -> dict[str, Any]:
    mod = _module()
    return {name: mod.get_function(f"gs_cc_{name}") for name in ("largest", "outside", "roots")}


def _kernels() -> dict[str, Any]:
    """The kernels on the current device, looked up once per device."""
    import cupy

    return _functions(cupy.cuda.Device().id)


def _grid(n: int) -> tuple[int]:
    return (max(1, -(-n // BLOCK)),)


def outside_largest(comp: Any, picks: Any) -> Any:
    """Afforest's next start set on the device: a bool mask of the nodes outside the
    component whose root is the most frequent among ``comp[picks]``, and that root.

    Parameters
    ----------
    comp : cupy.ndarray of int32
        Each node's parent.
    picks : cupy.ndarray of int64
        At most :data:`SAMPLES` node ids to sample.

    Returns
    -------
    cupy.ndarray of bool
    """
    import cupy

    if picks.size > SAMPLES:
        raise ValueError(f"at most {SAMPLES} samples; got {picks.size}")
    k = _kernels()
    n = int(comp.size)
    picks = cupy.asarray(picks, dtype=np.int64)
    largest = cupy.empty(1, dtype=np.int32)
    k["largest"]((1,), (SAMPLES,), (comp, picks, np.int32(picks.size), largest))
    start = cupy.empty(n, dtype=np.bool_)
    k["outside"](_grid(n), (BLOCK,), (comp, np.int64(n), largest, start))
    return start


def roots(comp: Any) -> Any:
    """Each node's root in the forest ``comp`` (int32 parents, ``comp[r] == r`` at a
    root), in one pass on the device: a fresh array.
    """
    import cupy

    n = int(comp.size)
    out = cupy.empty(n, dtype=np.int32)
    if n:
        _kernels()["roots"](_grid(n), (BLOCK,), (comp, np.int64(n), out))
    return out
