"""Large arrays to the device through threads and page-locked slots
(:mod:`gswitch.engine.upload`), the threaded least weight and the sliced byte comparison
of graphs: the plans and host parts on any machine, the copies on the GPU against the
host arrays."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import gswitch as gs
from gswitch import graph as graph_module
from gswitch.engine.upload import upload_ranges


def needs_gpu(test):
    """A GPU-suite test: marked ``gpu``, skipped with the reason without a device."""
    test = pytest.mark.skipif(not gs.gpu_available(),
                              reason="needs CuPy and an NVIDIA GPU")(test)
    return pytest.mark.gpu(test)


@pytest.mark.parametrize("nbytes", [0, 1, 7, 8, 9, 64, 1000, 4097])
@pytest.mark.parametrize("chunk", [1, 8, 100])
@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_upload_ranges_cover_every_byte_once(nbytes, chunk, threads):
    plan = upload_ranges(nbytes, chunk, threads)
    assert len(plan) <= threads
    covered = np.zeros(nbytes, dtype=np.int64)
    for ranges in plan:
        assert ranges, "a thread with no work is not started"
        for lo, hi in ranges:
            assert 0 <= lo < hi <= nbytes and hi - lo <= chunk
            covered[lo:hi] += 1
        starts = [lo for lo, _hi in ranges]
        assert starts == sorted(starts)
    assert (covered == 1).all()


@pytest.mark.parametrize("size", [5, 1000, 40_001])
def test_threaded_least_weight_matches_numpy(monkeypatch, size):
    monkeypatch.setattr(graph_module, "_THREADED_MIN_VALUES", 4)
    monkeypatch.setattr(graph_module.os, "cpu_count", lambda: 16)
    rng = np.random.default_rng(size)
    w = rng.uniform(-3, 5, size).astype(np.float32)
    assert graph_module._least(w) == float(np.min(w))
    w[size // 2] = np.nan  # NaN anywhere makes the least NaN, as np.min does
    assert np.isnan(graph_module._least(w))
    w[size // 2] = -np.inf
    assert graph_module._least(w) == -np.inf


def test_graphs_differing_only_in_a_late_slice_are_not_equal():
    n, m = 5000, (1 << 20) * 3 + 17  # beyond the comparison's slices
    indptr = np.linspace(0, m, n + 1).astype(np.int64)
    indices = (np.arange(m, dtype=np.int64) % n).astype(np.int32)

    def graph(weights):
        return gs.Graph(indptr, indices, weights, validate=False)

    w = np.ones(m, dtype=np.float32)
    w2 = w.copy()
    w2[-1] = np.float32(1.0000001)
    a, b, c = graph(w), graph(w2), graph(w.copy())
    assert a == c and a.fingerprint == c.fingerprint
    assert b != a and b.fingerprint != a.fingerprint
    z, p = graph(np.full(m, -0.0, dtype=np.float32)), graph(np.zeros(m, dtype=np.float32))
    assert (z == p) == (z.fingerprint == p.fingerprint)


class _FakeRuntime:
    """The four runtime calls of an upload, done at once on host memory: a transfer is
    a ``memmove``, and a chunk may be told to fail."""

    def __init__(self, fail_at=None):
        self.fail_at, self.devices, self.copies = fail_at, set(), []

    def setDevice(self, device):  # noqa: N802 - CUDA's spelling
        self.devices.add(device)

    def eventSynchronize(self, ptr):  # noqa: N802
        pass

    def eventRecord(self, ptr, stream):  # noqa: N802
        pass

    def memcpyAsync(self, dst, src, nbytes, kind, stream):  # noqa: N802
        import ctypes

        assert kind == 1  # host to device
        if self.fail_at is not None and len(self.copies) >= self.fail_at:
            raise RuntimeError("transfer failed")
        self.copies.append(nbytes)
        ctypes.memmove(dst, src, nbytes)


class _FakeDeviceArray:
    def __init__(self, shape, dtype):
        from types import SimpleNamespace

        self.host = np.zeros(shape, dtype=dtype)
        self.shape, self.dtype = self.host.shape, self.host.dtype
        self.data = SimpleNamespace(ptr=self.host.ctypes.data)

    def set(self, array, stream=None):
        self.host[...] = array


def _fake_cupy(runtime):
    from types import SimpleNamespace

    class Event:
        def __init__(self, disable_timing=False):
            self.ptr = id(self)

        def synchronize(self):
            pass

    cuda = SimpleNamespace(runtime=runtime, Event=Event, alloc_pinned_memory=bytearray)
    return SimpleNamespace(cuda=cuda, empty=lambda shape, dtype: _FakeDeviceArray(shape, dtype))


@pytest.mark.parametrize("count", [0, 1, 15, 16, 17, 1000])
@pytest.mark.parametrize("threads", [2, 3])
def test_upload_logic_on_host_memory(count, threads):
    """The threads' chunks and slots on host memory (a stand-in for CuPy's calls): every
    byte lands once, each chunk at most one slot long, each thread on the device."""
    from types import SimpleNamespace

    from gswitch.engine.upload import Uploader

    rt = _FakeRuntime()
    up = Uploader(_fake_cupy(rt), SimpleNamespace(ptr=7), 3, threads, chunk=64, least=1)
    host = np.arange(count, dtype=np.int32) * 7 - 5
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(2):  # the second upload reuses the slots
            dev = up.to_device(host, pool)
            assert np.array_equal(dev.host, host)
            host = host[::-1].copy()
    assert sum(rt.copies) == 2 * host.nbytes and all(0 < c <= 64 for c in rt.copies)
    assert rt.devices <= {3} and (count == 0 or rt.devices == {3})
    plain = up.to_device(host[::2], None)  # no pool: the plain copy of a strided view
    assert np.array_equal(plain.host, host[::2])


def test_a_failed_transfer_fails_the_upload_after_every_thread_stopped():
    from types import SimpleNamespace

    from gswitch.engine.upload import Uploader

    rt = _FakeRuntime(fail_at=5)
    up = Uploader(_fake_cupy(rt), SimpleNamespace(ptr=7), 0, 3, chunk=64, least=1)
    with ThreadPoolExecutor(3) as pool:
        with pytest.raises(RuntimeError, match="transfer failed"):
            up.to_device(np.ones(4096, dtype=np.int32), pool)
        assert up._lock.acquire(blocking=False)  # released: the next upload may start
        up._lock.release()


@needs_gpu
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.int64, np.uint8])
@pytest.mark.parametrize("count", [1, 256, 257, 4099])
@pytest.mark.parametrize("threads", [2, 5])
def test_threaded_upload_matches_the_host_array(dtype, count, threads):
    import cupy as cp

    from gswitch.engine.gpu import GpuEngine
    from gswitch.engine.upload import Uploader

    engine = GpuEngine.instance()
    up = Uploader(cp, engine.stream, engine.device_id, threads, chunk=64, least=1)
    rng = np.random.default_rng(count)
    host = rng.integers(0, 250, count).astype(dtype)
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(2):  # the second reuses the slots
            dev = up.to_device(host, pool)
            engine.stream.synchronize()
            assert dev.dtype == host.dtype and dev.shape == host.shape
            assert np.array_equal(dev.get(), host)
            host = host[::-1].copy()
    dev = up.to_device(host[::2], None)  # the plain copy, from a strided view
    engine.stream.synchronize()
    assert np.array_equal(dev.get(), host[::2])


@needs_gpu
@pytest.mark.parametrize("alg", ["bfs", "sssp"])
def test_a_graph_uploaded_by_threads_gives_the_reference_answer(monkeypatch, alg):
    from gswitch.engine.gpu import GpuEngine
    from gswitch.generators import rmat
    from gswitch.testing.reference import compare, reference

    engine = GpuEngine.instance()
    # at least two copying threads even on a small host (the pool runs them in turn)
    monkeypatch.setattr(engine.uploader, "threads", max(2, engine.uploader.threads))
    monkeypatch.setattr(engine.uploader, "least", 1)
    monkeypatch.setattr(engine.uploader, "chunk", 4096)
    g = rmat(12, 8, seed=3, weighted=True)
    r = gs.run(alg, g, source=0, backend="gpu")
    out = r.fields["depth" if alg == "bfs" else "dist"]
    assert compare(alg, out, reference(alg, g, source=0)) is None
    res = engine.resident(g)
    assert np.array_equal(res.row.get(), g.indptr.astype(np.int32))
    assert np.array_equal(res.col.get(), g.indices)
    assert np.array_equal(res.weights.get(), g.weights)
