"""Afforest's host steps on the device (``gswitch.algorithms._cc_gpu``): the kernels
compile with nvcc, and on a GPU they give what the NumPy form of each step gives on
forests of many shapes (ties among the sampled roots, long chains, fewer nodes than
samples)."""

import numpy as np
import pytest
from gswitch.algorithms import _cc_gpu

import gswitch as gs

GPU = [pytest.mark.gpu,
       pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")]


@pytest.mark.compile
def test_kernels_compile(nvcc):
    from gswitch.testing.nvcc import compile_source

    ok, out = compile_source(_cc_gpu.SOURCE, nvcc=nvcc)
    assert ok, out[-3000:]


def _forest(n: int, seed: int, depth: int) -> np.ndarray:
    """Parents with ``comp[v] <= v``: roots where a draw says so, chains of up to
    ``depth`` hops elsewhere."""
    rng = np.random.default_rng(seed)
    comp = np.arange(n, dtype=np.int32)
    for v in range(1, n):
        if rng.random() < 0.8:
            comp[v] = rng.integers(max(0, v - depth), v)
    return comp


def _numpy_roots(comp: np.ndarray) -> np.ndarray:
    while True:
        up = comp[comp]
        if np.array_equal(up, comp):
            return comp
        comp = up


def _numpy_outside(comp: np.ndarray, picks: np.ndarray) -> np.ndarray:
    roots, counts = np.unique(comp[picks], return_counts=True)
    largest = int(roots[int(np.argmax(counts))])
    start = comp != largest
    start[largest] = True
    return start


FORESTS = [(1, 0, 1), (5, 1, 2), (700, 2, 3), (5000, 3, 50), (40000, 4, 4000)]


@GPU[0]
@GPU[1]
@pytest.mark.parametrize("n,seed,depth", FORESTS)
def test_roots_match_pointer_jumping(n, seed, depth):
    import cupy

    comp = _forest(n, seed, depth)
    got = _cc_gpu.roots(cupy.asarray(comp))
    assert got.dtype == np.int32
    assert np.array_equal(got.get(), _numpy_roots(comp))


@GPU[0]
@GPU[1]
def test_roots_of_a_long_chain_and_of_nothing():
    import cupy

    chain = np.maximum(np.arange(100000, dtype=np.int32) - 1, 0)  # 0 <- 1 <- 2 <- ...
    assert not _cc_gpu.roots(cupy.asarray(chain)).get().any()
    assert _cc_gpu.roots(cupy.zeros(0, dtype=np.int32)).size == 0


@GPU[0]
@GPU[1]
@pytest.mark.parametrize("n,seed,depth", FORESTS)
def test_outside_largest_matches_numpy(n, seed, depth):
    import cupy

    comp = _numpy_roots(_forest(n, seed, depth))  # stars, as after Afforest's sample
    picks = np.random.default_rng(seed).integers(0, n, size=min(n, 1024))
    got = _cc_gpu.outside_largest(cupy.asarray(comp), cupy.asarray(picks))
    assert np.array_equal(got.get(), _numpy_outside(comp, picks))


@GPU[0]
@GPU[1]
def test_outside_largest_breaks_ties_towards_the_smaller_root():
    import cupy

    # two roots sampled 512 times each: the smaller one (3) is the largest component
    comp = np.array([0, 0, 2, 3, 3, 5, 5], dtype=np.int32)
    picks = np.array([5] * 512 + [3] * 512)
    got = _cc_gpu.outside_largest(cupy.asarray(comp), cupy.asarray(picks)).get()
    assert got.tolist() == [True, True, True, True, False, True, True]
    assert np.array_equal(got, _numpy_outside(comp, picks))


@GPU[0]
@GPU[1]
def test_outside_largest_refuses_too_many_samples():
    import cupy

    with pytest.raises(ValueError, match="at most 1024 samples; got 1025"):
        _cc_gpu.outside_largest(cupy.zeros(4, dtype=np.int32), cupy.zeros(1025, dtype=np.int64))
