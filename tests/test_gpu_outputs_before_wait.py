"""A persistent run or a replay queues its device outputs (``finalize`` on the device,
the gather into the caller's order) behind its launch, before the host waits
(:meth:`gswitch.engine.gpu.GpuEngine.outputs_before_wait`). The answers equal those of
the same calls with that switched off and the algorithms' references; an overflow
after the outputs were queued takes them again; a failing ``finalize`` is still one
named error. Where the outputs stay on the device, the host waits for the read of the
control block only, and the caller's stream for the outputs.
"""

from __future__ import annotations

import numpy as np
import pytest

import gswitch as gs
from gswitch.generators import rmat
from gswitch.graph import Graph
from gswitch.testing.reference import compare, reference

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

OUTPUT = {"bfs": "depth", "pagerank": "rank", "sssp": "dist"}


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


@pytest.fixture
def queued(monkeypatch):
    """Counts the calls whose outputs were queued before the wait."""
    from gswitch.engine import gpu

    seen = []
    real = gpu.GpuEngine.outputs_before_wait

    def spy(self, ctx):
        mark = real(self, ctx)
        seen.append(self._early is not None)
        return mark

    monkeypatch.setattr(gpu.GpuEngine, "outputs_before_wait", spy)
    return seen


def _late(monkeypatch):
    from gswitch.engine import gpu

    monkeypatch.setattr(gpu.GpuEngine, "outputs_before_wait", lambda self, ctx: None)


@pytest.mark.parametrize("arrays", ["cupy", "numpy"])
@pytest.mark.parametrize("alg", ["bfs", "pagerank"])
def test_outputs_queued_before_the_wait_equal_those_taken_after(alg, arrays, queued,
                                                                monkeypatch):
    from gswitch.engine import gpu

    monkeypatch.setattr(gpu, "_DEVICE_FINALIZE_BYTES", 0)  # finalised on the device
    g = rmat(12, 8, seed=3).symmetrize()
    kw = {"source": 7} if alg == "bfs" else {}
    cfg = {"launch": "persistent"}
    early = [gs.run(alg, g, backend="gpu", config=cfg, arrays=arrays, **kw)
             for _ in range(3)]  # the later calls replay the first
    assert any(queued) and early[-1].stats.get("replayed") is True
    assert all(r.stats["finalized_on"] == "device" for r in early)
    with monkeypatch.context() as m:
        _late(m)
        late = gs.run(alg, g, backend="gpu", config=cfg, arrays=arrays, **kw)
    want = _host(late.fields[OUTPUT[alg]])
    for r in early:
        got = _host(r.fields[OUTPUT[alg]])
        assert got.dtype == want.dtype
        if alg == "bfs":
            np.testing.assert_array_equal(got, want)
            assert compare("bfs", got, reference("bfs", g, source=7)) is None
        else:  # the iteration's float sums may end a step apart between runs
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-9)
            assert compare("pagerank", got, reference("pagerank", g)) is None


def test_an_overflow_after_the_outputs_were_queued_takes_them_again(queued, monkeypatch):
    """A one-slot worklist overflows after the first launch: what was queued behind it
    is stale, and the outputs of the grown run are taken after it."""
    g = rmat(11, 8, seed=5).symmetrize()
    cfg = {"launch": "persistent", "worklist_capacity": 1, "worklist": "warp_aggregated"}
    r = gs.run("bfs", g, source=0, backend="gpu", config=cfg, arrays="cupy")
    assert r.stats["overflows"] > 0
    assert len(queued) >= 2  # queued again after each relaunch
    assert compare("bfs", _host(r.fields["depth"]), reference("bfs", g, source=0)) is None


def test_a_replay_that_overflows_after_queuing_falls_back(queued):
    leaves = np.arange(1, 64)
    line = np.arange(64, 71)
    g = Graph.from_edges(np.concatenate([np.zeros(63, dtype=np.int64), line]),
                         np.concatenate([leaves, line + 1]), n_nodes=72, directed=False)
    cfg = {"launch": "persistent", "worklist_capacity": 4}
    for s in (66, 67, 0, 66):
        r = gs.run("bfs", g, source=s, backend="gpu", config=cfg, arrays="cupy")
        assert compare("bfs", _host(r.fields["depth"]), reference("bfs", g, s)) is None
    assert any(queued)


def _fail(fields, params):
    raise RuntimeError("no such thing")


def test_a_failing_device_finalize_is_still_one_named_error():
    from gswitch.testing.user_algorithms import hop_count

    bad = hop_count("early_bad_finalize", _fail, finalize_on_device=True)
    g = rmat(10, 4, seed=1).symmetrize()
    for _ in range(2):
        with pytest.raises(gs.AlgorithmError, match="finalize failed on the device"):
            gs.run(bad, g, source=0, backend="gpu", arrays="cupy",
                   config={"launch": "persistent"})


@pytest.mark.parametrize("launch", ["persistent", "replay"])
def test_device_outputs_are_waited_for_by_the_callers_stream_not_the_host(launch,
                                                                          monkeypatch):
    """PageRank with CuPy results, finalised on the device: the engine never waits for
    its stream (a first run's persistent loop, and replays), and what the caller's own
    non-blocking stream reads at once is the finished answer."""
    import cupy as cp

    from gswitch.engine import gpu

    monkeypatch.setattr(gpu, "_DEVICE_FINALIZE_BYTES", 0)
    g = rmat(12, 8, seed=3).symmetrize()
    cfg = {"launch": "persistent"}
    want = gs.run("pagerank", g, backend="gpu", config=cfg).fields["rank"]
    if launch == "persistent":  # no replay record: every call runs the loop
        gpu.GpuEngine.instance().release(g)
        monkeypatch.setattr(gpu.Repeat, "after", classmethod(lambda cls, ctx, plan: None))
        gs.run("pagerank", g, backend="gpu", config=cfg, arrays="cupy")  # resident again
    rt = cp.cuda.runtime
    waits = []
    real = rt.streamSynchronize

    def counted(stream):
        waits.append(stream)
        return real(stream)

    monkeypatch.setattr(rt, "streamSynchronize", counted)
    mine = cp.cuda.Stream(non_blocking=True)
    copies = []
    with mine:
        for _ in range(3):
            r = gs.run("pagerank", g, backend="gpu", config=cfg, arrays="cupy")
            assert r.stats["finalized_on"] == "device"
            assert r.stats.get("replayed", False) is (launch == "replay")
            copies.append(r.fields["rank"] * 1)  # queued on the caller's stream
        mine.synchronize()
    monkeypatch.setattr(rt, "streamSynchronize", real)
    assert waits == []
    for c in copies:
        np.testing.assert_allclose(c.get(), want, rtol=1e-5, atol=1e-9)
    assert compare("pagerank", copies[-1].get(), reference("pagerank", g)) is None
