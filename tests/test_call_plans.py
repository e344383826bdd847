"""A call's resolution is kept on its graph, and large GPU results come back page-locked:
both checked on the CPU (the pool with a stand-in for CuPy's pinned memory)."""

from __future__ import annotations

import gc
import types

import numpy as np
import pytest

import gswitch as gs
from gswitch import runner
from gswitch.engine.pinned import PinnedResults
from gswitch.errors import InvalidConfig, InvalidInput
from gswitch.generators import rmat


def _graph():
    return rmat(8, 8, seed=3)


def test_a_repeated_call_reuses_its_plan_and_gives_the_same_answer():
    g = _graph()
    first = gs.run("bfs", g, source=0, backend="cpu")
    plans = dict(g._call_plans)
    assert len(plans) == 1
    again = gs.run("bfs", g, source=5, backend="cpu")
    assert g._call_plans == plans  # no new plan: the key matched
    want = gs.run("bfs", gs.Graph(g.indptr, g.indices), source=5, backend="cpu")
    np.testing.assert_array_equal(again["depth"], want["depth"])
    assert first.stats["config_source"] == again.stats["config_source"]


def test_the_selector_and_the_checks_run_once_per_graph(monkeypatch):
    calls = {"choose": 0, "check": 0}
    choose, check = runner._choose_config, runner.check_combination

    def counted_choose(*a, **k):
        calls["choose"] += 1
        return choose(*a, **k)

    def counted_check(*a, **k):
        calls["check"] += 1
        return check(*a, **k)

    monkeypatch.setattr(runner, "_choose_config", counted_choose)
    monkeypatch.setattr(runner, "check_combination", counted_check)
    g = _graph()
    for s in range(5):
        gs.run("bfs", g, source=s, backend="cpu")
    assert calls["choose"] == 1 and calls["check"] >= 1
    checks = calls["check"]
    gs.run("bfs", g, source=1, backend="cpu", config={"driving": "topology"})
    assert calls["choose"] == 2 and calls["check"] > checks  # another config: resolved
    gs.run("bfs", g, source=2, backend="cpu", config={"driving": "topology"})
    assert calls["choose"] == 2


def test_config_objects_are_told_apart_by_content(monkeypatch):
    """Different Configs get their own plans; an equal Config made afresh (a loop that
    builds one per call) reuses the plan of the first."""
    g = _graph()
    a = gs.Config({"driving": "topology"})
    b = gs.Config({"driving": "data"})
    ra = gs.run("bfs", g, source=0, backend="cpu", config=a)
    rb = gs.run("bfs", g, source=0, backend="cpu", config=b)
    assert ra.config["driving"] == "topology" and rb.config["driving"] == "data"
    np.testing.assert_array_equal(ra["depth"], rb["depth"])
    from gswitch import runner

    built = []
    real = runner._build_plan
    monkeypatch.setattr(runner, "_build_plan", lambda *a, **k: built.append(1) or real(*a, **k))
    rc = gs.run("bfs", g, source=0, backend="cpu", config=gs.Config({"driving": "topology"}))
    assert not built and rc.config["driving"] == "topology"


def test_a_failed_resolution_is_not_kept():
    g = _graph()
    bad = {"variant": "afforest", "direction": "pull"}  # afforest samples out-edges
    for _ in range(2):
        with pytest.raises(InvalidConfig, match="direction=pull"):
            gs.run("cc", g, backend="cpu", config=bad)
    assert not g._call_plans


def test_sources_are_checked_on_every_call():
    g = _graph()
    gs.run("bfs", g, source=0, backend="cpu")
    with pytest.raises(InvalidInput, match="out of range"):
        gs.run("bfs", g, source=g.n_nodes, backend="cpu")


def test_networkx_graphs_keep_no_plan_and_still_run():
    nx = pytest.importorskip("networkx")
    h = nx.path_graph(["a", "b", "c"])
    r = gs.run("bfs", h, source="b", backend="cpu")
    assert r["depth"].tolist() == [1, 0, 1]


class _FakePool:
    """Stands in for ``cupy.cuda.PinnedMemoryPool``: plain host buffers."""

    def __init__(self):
        self.freed = 0

    def malloc(self, size):
        return bytearray(size)

    def free_all_blocks(self):
        self.freed += 1


def _pool(cap):
    cp = types.SimpleNamespace(cuda=types.SimpleNamespace(PinnedMemoryPool=_FakePool))
    return PinnedResults(cp, cap=cap)


def test_pinned_results_are_capped_and_reused():
    pool = _pool(cap=8192)
    a = pool.empty((1000,), np.int32)  # 4000 bytes, rounded to 4096
    assert a is not None and a.shape == (1000,) and a.dtype == np.int32
    a[:] = np.arange(1000)
    assert pool.live == pool.held == 4096
    b = pool.empty(1024, np.int32)
    assert b is not None and pool.held == 8192
    assert pool.empty(10, np.int64) is None  # the cap: live results fill it
    del a
    gc.collect()
    assert pool.live == 4096 and pool.held == 8192
    c = pool.empty(1000, np.int32)  # the idle block of that size serves it
    assert c is not None and pool.held == 8192 and pool._pool.freed == 0
    del c
    gc.collect()
    d = pool.empty(2000, np.int8)  # another size: the idle blocks are freed first
    assert d is not None and pool._pool.freed == 1 and pool.held == 4096 + 2048
    assert pool.empty(1 << 20, np.uint8) is None
    del b, d
    gc.collect()
    assert pool.live == 0


def test_a_view_keeps_its_pinned_result_counted():
    pool = _pool(cap=1 << 20)
    a = pool.empty(4096, np.float64)
    view = a[10:20]
    del a
    gc.collect()
    assert pool.live == 4096 * 8
    view[:] = 1.0
    del view
    gc.collect()
    assert pool.live == 0


def test_a_graph_with_plans_is_freed_as_soon_as_it_is_dropped():
    """A plan holds no reference to the graph it is kept on: dropping the graph frees it
    (and so its device copy) at once, without waiting for a cycle collection."""
    import weakref

    g = _graph()
    gs.run("bfs", g, source=0, backend="cpu")
    gs.run("cc", g, backend="cpu")  # a plan whose prepared graph is the symmetrised one
    assert len(g._call_plans) == 2
    ref = weakref.ref(g)
    gc.disable()
    try:
        del g
        assert ref() is None
    finally:
        gc.enable()


def test_the_formulation_run_elsewhere_gets_its_own_defaults(monkeypatch):
    """Where the default formulation does not apply to a graph (``default_if`` false),
    the one run instead brings its own backend defaults (per-source betweenness on the
    GPU: its bitmap worklist and twc)."""
    from gswitch.plugins import get_registry

    batched = get_registry().algorithm("betweenness", "batched")
    monkeypatch.setattr(batched, "default_if", lambda graph, backend: False)
    plan = runner._build_plan("betweenness", rmat(8, 4, seed=1).symmetrize(), None, "gpu")
    own = get_registry().algorithm("betweenness", "per_source").backend_defaults["gpu"]
    assert plan.spec.variant == "per_source"
    assert all(plan.config[k] == v for k, v in own.items()), (dict(own), plan.config)
