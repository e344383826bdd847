"""Whole-array steps, one pass each on either array module: for ``finalize`` functions,
a sorted unique for the engines and the selector, and the ids of a mask's set entries
for the start sets host steps choose.

A ``finalize`` declared ``finalize_on_device`` runs on CuPy arrays under the GPU engine
and on NumPy arrays elsewhere. Written with NumPy ufuncs, a step such as "unreached
becomes -1" takes three passes over the nodes on the device, each a kernel launch the
host waits to issue (tens of microseconds each on a 4M-node result). These helpers do
such a step in one pass: a fused CuPy kernel (compiled once per process) for device
arrays, the NumPy form otherwise. Their results are fresh arrays, never views of their
input, so on the device they are the caller's own and need no further copy.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

__all__ = ["replace_at_least", "divide_by_sum", "sorted_unique", "mask_ids"]


def _is_device(a: Any) -> bool:
    return hasattr(a, "__cuda_array_interface__")


@functools.cache
def _replace_kernel() -> Any:
    import cupy

    return cupy.ElementwiseKernel("T x, T bound, T value", "T y",
                                  "y = x >= bound ? value : x", "gs_replace_at_least")


#: blocks of the partial sums (the scale kernel's every block adds them in this order)
_PARTS = 1024
_SUM_SOURCE = r"""
__device__ double gs_block_sum(double s, double* shared) {
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) shared[warp] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0.0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) t += shared[w];
        shared[32] = t;
    }
    __syncthreads();
    return shared[32];
}
#define GS_SUM_KERNELS(T, NAME)                                                        \
extern "C" __global__ void gs_partial_sums_##NAME(const T* x, const double* plus,      \
                                                 long long n, double* part) {          \
    __shared__ double shared[33];                                                      \
    double s = 0.0;                                                                    \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;         \
         i += (long long)gridDim.x * blockDim.x)                                       \
        s += plus ? (double)x[i] + plus[i] : (double)x[i];                             \
    s = gs_block_sum(s, shared);                                                       \
    if (threadIdx.x == 0) part[blockIdx.x] = s;                                        \
}                                                                                      \
extern "C" __global__ void gs_divide_##NAME(const T* x, const double* plus, long long n, \
                                           const double* part, int parts, float* y) {  \
    __shared__ double shared[33];                                                      \
    double s = 0.0;                                                                    \
    for (int k = threadIdx.x; k < parts; k += blockDim.x) s += part[k];                \
    const double t = gs_block_sum(s, shared);                                          \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;         \
         i += (long long)gridDim.x * blockDim.x) {                                     \
        const double v = plus ? (double)x[i] + plus[i] : (double)x[i];                 \
        y[i] = (float)(t > 0.0 ? v / t : v);                                           \
    }                                                                                  \
}
GS_SUM_KERNELS(float, f32)
GS_SUM_KERNELS(double, f64)
"""


@functools.cache
def _sum_kernels(name: str, device: int) -> tuple[Any, Any]:
    """The partial-sum and division kernels for ``name`` (``f32`` or ``f64``) on
    ``device`` (the current one), looked up once.
    """
    mod = _sum_module()
    return mod.get_function("gs_partial_sums_" + name), mod.get_function("gs_divide_" + name)


@functools.cache
def _sum_module() -> Any:
    import cupy

    return cupy.RawModule(code=_SUM_SOURCE)


#: items (threads) per block of the mask kernels
_MASK_BLOCK = 1024
#: the mask kernels; :func:`mask_source` puts ``cuda/common.cuh`` (its block scan) first
_MASK_KERNELS = r"""
// counts[b]: the set entries among block b's items.
extern "C" __global__ void gs_mask_counts(const bool* mask, long long n, int* counts) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int total;
    gs_block_exclusive_scan<int>(i < n && mask[i] ? 1 : 0, &total);
    if (threadIdx.x == 0) counts[blockIdx.x] = total;
}
// offsets[b]: the set entries before block b; total[0]: all of them (one block).
extern "C" __global__ void gs_mask_offsets(const int* counts, int blocks, int* offsets,
                                           int* total) {
    const int per = (blocks + blockDim.x - 1) / blockDim.x;
    const int first = threadIdx.x * per;
    const int last = min(first + per, blocks);
    int s = 0;
    for (int b = first; b < last; ++b) s += counts[b];
    int all;
    int run = gs_block_exclusive_scan<int>(s, &all);
    for (int b = first; b < last; ++b) {
        offsets[b] = run;
        run += counts[b];
    }
    if (threadIdx.x == 0) total[0] = all;
}
// ids[offsets[b] + k] = the k-th set item of block b, in ascending order.
extern "C" __global__ void gs_mask_write(const bool* mask, long long n, const int* offsets,
                                         int* ids) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int set = i < n && mask[i] ? 1 : 0;
    int total;
    const int at = gs_block_exclusive_scan<int>(set, &total);
    if (set) ids[offsets[blockIdx.x] + at] = (int)i;
}
"""


def mask_source() -> str:
    """The CUDA source of :func:`mask_ids`' kernels: the engine's common definitions
    (``cuda/common.cuh``, for its block scan), then the kernels.
    """
    from importlib import resources

    return resources.files("gswitch").joinpath("cuda", "common.cuh").read_text() + \
        _MASK_KERNELS


@functools.cache
def _mask_module() -> Any:
    import cupy

    return cupy.RawModule(code=mask_source())


@functools.cache
def _mask_kernels(device: int) -> tuple[Any, Any, Any]:
    """The block-count, offset and write kernels of :func:`mask_ids` on ``device`` (the
    current one), looked up once.
    """
    mod = _mask_module()
    return tuple(mod.get_function(f"gs_mask_{k}") for k in ("counts", "offsets", "write"))


def mask_ids(mask: Any) -> Any:
    """The positions of ``mask``'s true entries, ascending, as int32, on either array
    module.

    On the device it takes three launches and one wait for the count, where
    ``cupy.flatnonzero`` followed by a cast to int32 takes seven: block counts, their
    offsets (one block), and the ids written in order.

    Parameters
    ----------
    mask : numpy.ndarray or cupy.ndarray of bool
        One-dimensional, of fewer than 2**31 entries.

    Returns
    -------
    ndarray of int32
        A fresh array of ``mask``'s module.

    Examples
    --------
    >>> import numpy as np
    >>> mask_ids(np.array([False, True, True, False, True])).tolist()
    [1, 2, 4]
    """
    if not _is_device(mask):
        return np.flatnonzero(mask).astype(np.int32)
    import cupy

    m = cupy.ascontiguousarray(mask, dtype=np.bool_).ravel()
    n = int(m.size)
    if n >= 2**31:
        raise ValueError(f"a mask of {n} entries has ids past int32")
    blocks = -(-n // _MASK_BLOCK)
    if blocks == 0:
        return cupy.zeros(0, dtype=np.int32)
    counts_kernel, offsets_kernel, write_kernel = _mask_kernels(cupy.cuda.Device().id)
    scratch = cupy.empty(2 * blocks + 1, dtype=np.int32)
    counts, offsets, total = scratch[:blocks], scratch[blocks:2 * blocks], scratch[2 * blocks:]
    size = np.int64(n)
    counts_kernel((blocks,), (_MASK_BLOCK,), (m, size, counts))
    offsets_kernel((1,), (_MASK_BLOCK,), (counts, np.int32(blocks), offsets, total))
    ids = cupy.empty(int(total.get()[0]), dtype=np.int32)  # the one wait
    if ids.size:
        write_kernel((blocks,), (_MASK_BLOCK,), (m, size, offsets, ids))
    return ids


def sorted_unique(ids: Any) -> Any:
    """The distinct values of ``ids``, ascending: a sort and a comparison with the
    neighbour, on either array module.

    NumPy's ``np.unique`` hashes, costing tens of microseconds even on small arrays and
    20 ms on 30,000 ids, and its first call in a process imports ``numpy.ma``.

    Examples
    --------
    >>> import numpy as np
    >>> sorted_unique(np.array([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    """
    xp = _module(ids)
    a = xp.sort(ids)
    if a.size < 2:
        return a
    keep = xp.empty(a.size, dtype=bool)
    keep[0] = True
    xp.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def _module(a: Any) -> Any:
    if _is_device(a):
        import cupy

        return cupy
    return np


def replace_at_least(a: Any, bound: int, value: int) -> Any:
    """A copy of integer array ``a`` with every element ``>= bound`` set to ``value``.

    Parameters
    ----------
    a : numpy.ndarray or cupy.ndarray
        Integer values.
    bound, value : int
        Elements at or above ``bound`` become ``value`` (both representable in
        ``a.dtype``).

    Returns
    -------
    ndarray
        A fresh array of ``a``'s type, dtype and module.

    Examples
    --------
    >>> import numpy as np
    >>> replace_at_least(np.array([0, 3, 9], dtype=np.int32), 5, -1).tolist()
    [0, 3, -1]
    """
    if _is_device(a):
        t = a.dtype.type
        return _replace_kernel()(a, t(bound), t(value))
    return np.where(a >= bound, a.dtype.type(value), a)


def divide_by_sum(values: Any, plus: Any = None) -> Any:
    """``values`` (plus ``plus``, where given) divided by their sum, as float32;
    unchanged (as float32) where the sum is not positive.

    The sum is taken in float64 whatever ``values``' dtype, and so is each quotient
    before it is rounded to float32: ``plus`` is added to ``values`` in float64, as
    ``values.astype(float64) + plus`` would, without that array. On the device it takes
    two launches and no wait: 1,024 blocks write partial sums in a fixed order, then
    every block of the division adds them up in a fixed order before dividing its
    elements, so the result is the same from run to run.

    Parameters
    ----------
    values : numpy.ndarray or cupy.ndarray
        Floating-point values (float32 or float64).
    plus : numpy.ndarray or cupy.ndarray, optional
        Values of the same shape and array module added to ``values`` first.

    Returns
    -------
    ndarray of float32
        A fresh array of ``values``' module.

    Examples
    --------
    >>> import numpy as np
    >>> divide_by_sum(np.array([1.0, 3.0])).tolist()
    [0.25, 0.75]
    >>> divide_by_sum(np.array([1.0, 2.0]), plus=np.array([0.0, 1.0])).tolist()
    [0.25, 0.75]
    """
    if plus is not None and np.shape(plus) != np.shape(values):
        raise ValueError(f"plus has shape {np.shape(plus)}; values have {np.shape(values)}")
    if type(values) is not np.ndarray and _is_device(values):
        return _divide_on_device(values, plus)
    if plus is not None:
        values = values.astype(np.float64)
        values += plus
    total = float(np.add.reduce(values, axis=None, dtype=np.float64))
    if not total > 0:
        return values.astype(np.float32)
    # each value converted to float64 inside the division: no float64 copy first
    return np.true_divide(values, total, dtype=np.float64).astype(np.float32)


def _divide_on_device(values: Any, plus: Any) -> Any:
    import cupy

    if values.dtype not in (np.float32, np.float64):
        values = values.astype(np.float64)
    x = cupy.ascontiguousarray(values).ravel()
    name = "f32" if x.dtype == np.float32 else "f64"
    r = np.uint64(0)  # no addend: a null pointer
    if plus is not None:
        r = cupy.ascontiguousarray(plus, dtype=np.float64).ravel()
    partial_sums, divide = _sum_kernels(name, cupy.cuda.Device().id)
    n = np.int64(x.size)
    part = cupy.empty(_PARTS, dtype=np.float64)
    out = cupy.empty(values.shape, dtype=np.float32)
    block = 256
    # every one of the blocks runs (those past the end write a zero): the division adds
    # all of them
    partial_sums((_PARTS,), (block,), (x, r, n, part))
    grid = max(1, min(-(-x.size // block), 4096))
    divide((grid,), (block,), (x, r, n, part, np.int32(_PARTS), out))
    return out
