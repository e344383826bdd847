"""One-pass finalize helpers (gswitch.arrayops) on NumPy arrays, and on CuPy arrays
against their NumPy results."""

from __future__ import annotations

import numpy as np
import pytest

import gswitch as gs
from gswitch.arrayops import divide_by_sum, mask_ids, replace_at_least, sorted_unique


def _ints() -> np.ndarray:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 100, size=1000).astype(np.int32)
    a[rng.integers(0, 1000, size=200)] = 2**30
    return a


def test_replace_at_least_numpy_matches_mask_assignment() -> None:
    a = _ints()
    want = a.copy()
    want[want >= 2**30] = -1
    got = replace_at_least(a, 2**30, -1)
    assert got.dtype == np.int32 and np.array_equal(got, want)
    assert not np.shares_memory(got, a) and int(a.max()) == 2**30  # input untouched


def test_sorted_unique_equals_numpy_unique() -> None:
    rng = np.random.default_rng(5)
    for size in (0, 1, 2, 7, 1000):
        ids = rng.integers(-3, 40, size=size).astype(np.int32)
        got = sorted_unique(ids)
        assert got.dtype == ids.dtype and np.array_equal(got, np.unique(ids))


#: sizes around the kernels' block (1,024) and warp (32) boundaries
MASK_SIZES = (0, 1, 31, 32, 33, 1023, 1024, 1025, 4097, 70001, (1 << 20) + 7)


def _masks():
    rng = np.random.default_rng(11)
    for size in MASK_SIZES:
        for p in (0.0, 0.01, 0.5, 1.0):
            yield size, p, rng.random(size) < p


def test_mask_ids_numpy_equals_flatnonzero() -> None:
    for size, p, mask in _masks():
        got = mask_ids(mask)
        assert got.dtype == np.int32, (size, p)
        assert np.array_equal(got, np.flatnonzero(mask)), (size, p)


def test_divide_by_sum_numpy() -> None:
    v = np.array([1.0, 2.0, 5.0], dtype=np.float32)
    got = divide_by_sum(v)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, v / 8.0, rtol=1e-7)
    assert abs(float(got.sum(dtype=np.float64)) - 1.0) < 1e-6
    zero = np.zeros(4, dtype=np.float64)
    assert divide_by_sum(zero).dtype == np.float32 and not divide_by_sum(zero).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_divide_by_sum_with_an_addend_equals_the_sum_taken_apart(dtype) -> None:
    rng = np.random.default_rng(5)
    v = rng.random(1000).astype(dtype)
    r = rng.random(1000) * 1e-3
    want = v.astype(np.float64) + r
    got = divide_by_sum(v, plus=r)
    assert got.dtype == np.float32
    assert np.array_equal(got, (want / want.sum()).astype(np.float32))
    assert np.array_equal(v, v.astype(dtype))  # the input is left as it was
    with pytest.raises(ValueError, match="shape"):
        divide_by_sum(v, plus=r[:5])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_divide_by_sum_float64_sum_of_many_shares(dtype) -> None:
    # a float32 running sum of 2^22 equal shares drifts; the float64 sum does not
    v = np.full(1 << 22, 1.0 / (1 << 22), dtype=dtype)
    got = divide_by_sum(v)
    np.testing.assert_allclose(got, np.float32(1.0 / (1 << 22)), rtol=1e-6)


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
def test_device_forms_match_numpy() -> None:
    import cupy

    a = _ints()
    d = cupy.asarray(a)
    got = replace_at_least(d, 2**30, -1)
    assert isinstance(got, cupy.ndarray) and got.dtype == np.int32
    assert np.array_equal(got.get(), replace_at_least(a, 2**30, -1))
    assert int(d.max()) == 2**30  # input untouched
    for dtype in (np.float32, np.float64):
        for size in (0, 1, 255, 10_000, 3_000_017):  # fewer elements than blocks, many more
            v = np.random.default_rng(size).random(size).astype(dtype)
            dv = divide_by_sum(cupy.asarray(v))
            assert isinstance(dv, cupy.ndarray) and dv.dtype == np.float32 and dv.size == size
            np.testing.assert_allclose(dv.get(), divide_by_sum(v), rtol=2e-7)
            again = divide_by_sum(cupy.asarray(v))  # the same bits from run to run
            assert bool((again == dv).all())
    z = divide_by_sum(cupy.zeros(5, dtype=cupy.float64))
    assert z.dtype == np.float32 and not bool(z.any())
    for dtype in (np.float32, np.float64):  # with an addend: the two-array form, fused
        for size in (1, 10_000, 3_000_017):
            rng = np.random.default_rng(size)
            v, r = rng.random(size).astype(dtype), rng.random(size) * 1e-3
            dv = divide_by_sum(cupy.asarray(v), plus=cupy.asarray(r))
            assert dv.dtype == np.float32
            np.testing.assert_allclose(dv.get(), divide_by_sum(v, plus=r), rtol=2e-7)
            # the same bits as adding first on the device, as finalize did before
            apart = cupy.asarray(v).astype(np.float64)
            apart += cupy.asarray(r)
            assert bool((divide_by_sum(apart) == dv).all())


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
def test_device_mask_ids_match_flatnonzero() -> None:
    import cupy

    for size, p, mask in _masks():
        got = mask_ids(cupy.asarray(mask))
        assert isinstance(got, cupy.ndarray) and got.dtype == np.int32, (size, p)
        assert np.array_equal(got.get(), np.flatnonzero(mask)), (size, p)
    # a view with a stride is read as its values
    mask = np.random.default_rng(2).random(5000) < 0.3
    assert np.array_equal(mask_ids(cupy.asarray(mask)[::2]).get(), np.flatnonzero(mask[::2]))


@pytest.mark.parametrize("source", ["sums", "masks"])
def test_device_kernels_compile(nvcc, source) -> None:
    """The partial-sum, division and mask kernels compile (the GPU runs them on device
    arrays)."""
    from gswitch import arrayops
    from gswitch.testing.nvcc import compile_source

    code = arrayops._SUM_SOURCE if source == "sums" else arrayops.mask_source()
    ok, out = compile_source(code, nvcc=nvcc)
    assert ok, out[-2000:]
