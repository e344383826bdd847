"""A run replayed (:mod:`gswitch.engine.repeat`): the same answers and statistics as
the usual path, on the GPU.

Each replayed call is checked against the algorithm's own reference (scipy or
networkx) and against the same call run the usual way (a call with a deadline is never
replayed), for every worklist under the persistent launch, one-block and many-block
grids, host start ids and every-node starts, changed parameters, plans interleaved on
one graph, and a replay that overflows its worklist (it must fall back and still give
the reference).
"""

from __future__ import annotations

import numpy as np
import pytest

import gswitch as gs
from gswitch.generators import path, uniform_random
from gswitch.graph import Graph
from gswitch.plugins import get_registry
from gswitch.runner import check_combination, with_variant_defaults
from gswitch.testing.reference import compare, reference

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

#: a deadline far away: the call runs the usual way (a replay needs none)
USUAL = {"deadline_s": 1e6}
#: statistics a replay must give exactly as the usual path does
SAME_STATS = ("converged", "overflows", "grid_blocks")
#: ... and, where the steps do not depend on the order of racing updates (a BFS level is
#: a level; SSSP's and label propagation's step sizes vary from run to run), these too
STEP_STATS = ("iterations", "active", "modes", "directions", "edges_processed")
#: the selector's pick for a tiny graph, and a grid of many blocks on a few hundred nodes
BASE = [
    {"launch": "persistent"},
    {"launch": "persistent", "worklist": "warp_aggregated", "load_balance": "virtual_warp",
     "load_balance.size": 4, "block_size": 128, "l2_prefetch": True,
     "read_before_atomic": False},
    {"launch": "persistent", "block_size": 64},
    {"launch": "persistent", "direction": "direction_optimizing"},
]


def _configs(alg: str, graph: Graph, variant: str = "") -> list[dict]:
    """The base configurations and the persistent launch with every worklist, each one
    the combination check accepts for ``alg`` (its ``variant``, else the default) on
    ``graph``, as a call with that mapping runs it."""
    reg = get_registry()
    spec = reg.variants[alg][variant] if variant else reg.algorithm(alg)
    extra = {"variant": variant} if variant else {}
    out, seen = [], set()
    for cfg in BASE + [{"launch": "persistent", "worklist": w}
                       for w in sorted(reg.strategies["worklist"])]:
        cfg = {**cfg, **extra}
        full = with_variant_defaults(spec, cfg, "gpu")
        if full.key() not in seen and check_combination(spec, graph, full, "gpu") is None:
            seen.add(full.key())
            out.append(cfg)
    return out


def _check_same(got, usual, alg: str, want) -> None:
    name = next(iter(got.fields))
    problem = compare(alg, got.fields[name], want)
    assert problem is None, problem
    for k in got.fields:
        np.testing.assert_array_equal(got.fields[k], usual.fields[k], err_msg=k)
    for k in SAME_STATS + (STEP_STATS if alg == "bfs" else ()):
        assert got.stats.get(k) == usual.stats.get(k), (k, got.stats.get(k),
                                                        usual.stats.get(k))
    for r in (got, usual):
        steps = r.stats["iterations"]
        assert len(r.stats["active"]) == len(r.stats["modes"]) == steps > 0
        assert r.stats["edges_processed"] > 0


def _graphs(weighted: bool) -> dict[str, Graph]:
    return {"path4": path(4, weighted=weighted, seed=1),
            "uniform300": uniform_random(300, 1200, weighted=weighted, seed=3)}


@pytest.mark.parametrize("alg", ["bfs", "sssp"])
def test_replays_from_host_sources_match_the_usual_path(alg):
    for gname, g in _graphs(alg == "sssp").items():
        configs = _configs(alg, g)
        assert len(configs) >= 6, configs
        for cfg in configs:
            for i, s in enumerate([0, 3, 1, 0, 2, 3]):
                got = gs.run(alg, g, source=s, backend="gpu", config=cfg)
                usual = gs.run(alg, g, source=s, backend="gpu", config=cfg, **USUAL)
                assert "replayed" not in usual.stats
                # the first call records (or replays one that an equal graph left);
                # every later one replays
                assert got.stats.get("replayed", False) or i == 0, (gname, cfg, i)
                _check_same(got, usual, alg, reference(alg, g, s))


def test_start_sets_of_other_sizes_replay_until_the_block_grows():
    """A replay takes any number of start ids the recorded blocks hold (at least 64);
    a larger set grows the core block, runs the usual way and records again."""
    g = uniform_random(300, 1200, seed=5)
    cfg = {"launch": "persistent"}
    many = list(range(0, 300, 3))  # 100 ids: more than the first block holds
    for i, src in enumerate([[0], [1, 2], [1, 2], [7], many, [3, 4, 5], many[::-1]]):
        got = gs.run("bfs", g, source=src, backend="gpu", config=cfg)
        usual = gs.run("bfs", g, source=src, backend="gpu", config=cfg, **USUAL)
        if i:  # the first call may find an equal graph's record
            assert got.stats.get("replayed", False) == (i != 4), i
        want = gs.run("bfs", g, source=src, backend="cpu").fields["depth"]
        np.testing.assert_array_equal(got.fields["depth"], want)
        _check_same(got, usual, "bfs", want)


@pytest.mark.parametrize("alg,variant,params", [
    ("cc", "label_propagation", [{}, {}, {}]),
    ("pagerank", "", [{"alpha": 0.85}, {"alpha": 0.5}, {"alpha": 0.85}, {"alpha": 0.7}]),
])
def test_every_node_starts_and_changed_parameters(alg, variant, params):
    g = uniform_random(200, 600, seed=2)
    configs = _configs(alg, g, variant)
    assert len(configs) >= 3, configs
    for cfg in configs:
        for i, p in enumerate(params):
            got = gs.run(alg, g, backend="gpu", config=cfg, **p)
            usual = gs.run(alg, g, backend="gpu", config=cfg, **USUAL, **p)
            assert got.stats.get("replayed", False) or i == 0, (cfg, i)
            _check_same(got, usual, alg, reference(alg, g, **p))


def test_plans_interleaved_on_one_graph():
    """Other plans' runs on the same graph share its pool and core blocks between
    replays: each replay still gives the reference."""
    g = uniform_random(300, 1500, weighted=True, seed=7)
    calls = [("bfs", {"launch": "persistent"}), ("sssp", {"launch": "persistent"}),
             ("bfs", {"launch": "persistent", "worklist": "bitmap"}),
             ("cc", {"launch": "persistent", "variant": "label_propagation"}),
             ("bfs", {"launch": "persistent", "block_size": 64})]
    for rnd in range(3):
        for alg, cfg in calls:
            s = None if alg == "cc" else (rnd * 37) % 300
            kw = {} if s is None else {"source": s}
            got = gs.run(alg, g, backend="gpu", config=cfg, **kw)
            # the first round grows the shared blocks, so the second records again
            assert got.stats.get("replayed", False) or rnd < 2, (alg, cfg, rnd)
            want = reference(alg, g, s) if s is not None else reference(alg, g)
            assert compare(alg, next(iter(got.fields.values())), want) is None


def test_a_replay_that_overflows_falls_back():
    """Recorded from a source whose frontiers fit a four-slot worklist; replayed from a
    hub whose frontier does not: the replay gives up and the usual path grows it."""
    leaves = np.arange(1, 64)  # a star on nodes 0..63 (0 the hub), a path on 64..71
    line = np.arange(64, 71)
    g = Graph.from_edges(np.concatenate([np.zeros(63, dtype=np.int64), line]),
                         np.concatenate([leaves, line + 1]), n_nodes=72, directed=False)
    cfg = {"launch": "persistent", "worklist_capacity": 4}
    first = gs.run("bfs", g, source=66, backend="gpu", config=cfg)
    assert first.stats["overflows"] == 0
    again = gs.run("bfs", g, source=67, backend="gpu", config=cfg)
    assert again.stats.get("replayed") is True
    big = gs.run("bfs", g, source=0, backend="gpu", config=cfg)
    assert "replayed" not in big.stats and big.stats["overflows"] >= 1
    for s, r in ((66, first), (67, again), (0, big)):
        assert compare("bfs", r.fields["depth"], reference("bfs", g, s)) is None
    after = gs.run("bfs", g, source=66, backend="gpu", config=cfg)
    np.testing.assert_array_equal(after.fields["depth"], first.fields["depth"])


def test_larger_fields_are_replayed_into_host_and_device_arrays():
    """Fields past what comes back with the first read of the control block: a replay
    reads the control block and the trace's head, then the results come back as for
    any run, as host arrays or as device arrays (``arrays="cupy"``)."""
    import cupy as cp

    g = uniform_random(5000, 20000, seed=4)
    cfg = {"launch": "persistent"}
    for arrays in ("numpy", "cupy"):
        for i, s in enumerate([0, 7, 0, 4999]):
            got = gs.run("bfs", g, source=s, backend="gpu", config=cfg, arrays=arrays)
            usual = gs.run("bfs", g, source=s, backend="gpu", config=cfg, arrays=arrays,
                           **USUAL)
            assert got.stats.get("replayed", False) or (i == 0 and arrays == "numpy"), i
            assert "replayed" not in usual.stats
            if arrays == "cupy":
                assert isinstance(got.fields["depth"], cp.ndarray)
                got.fields = {k: cp.asnumpy(v) for k, v in got.fields.items()}
                usual.fields = {k: cp.asnumpy(v) for k, v in usual.fields.items()}
            _check_same(got, usual, "bfs", reference("bfs", g, s))


def test_device_arrays_of_a_replay_are_ready_on_the_callers_stream():
    """The host does not wait for the copies of a replay's device results: the stream
    current at the call waits for them. Work queued there right after the call (on a
    stream of the caller's own) sees the finished values."""
    import cupy as cp

    g = uniform_random(20000, 80000, seed=5)
    cfg = {"launch": "persistent"}
    want = {s: reference("bfs", g, s) for s in (0, 11)}
    with cp.cuda.Stream(non_blocking=True) as mine:
        for i in range(6):
            s = (0, 11)[i % 2]
            r = gs.run("bfs", g, source=s, backend="gpu", config=cfg, arrays="cupy")
            depth = r.fields["depth"]
            # queued on the caller's stream at once: it must wait for the engine's copy
            total = int((depth.astype(cp.int64) * 3 + 1).sum())
            host = depth.get(stream=mine)
            mine.synchronize()
            assert compare("bfs", host, want[s]) is None, i
            assert total == int((want[s].astype(np.int64) * 3 + 1).sum()), i
            assert r.stats.get("replayed", False) or i < 2, i


@pytest.mark.parametrize("arrays", ["numpy", "cupy"])
def test_staged_stages_are_replayed(arrays):
    """Afforest's two operator stages (every node, then the start set a host step chose
    on the device) are replayed once their blocks stop growing, with the reference's
    answer every time, on two graphs in turn."""
    import cupy as cp

    graphs = [uniform_random(30000, 60000, seed=6), uniform_random(20000, 90000, seed=7)]
    wants = [reference("cc", g) for g in graphs]
    cfg = {"variant": "afforest", "launch": "persistent"}
    for rnd in range(3):
        for g, want in zip(graphs, wants, strict=True):
            r = gs.run("cc", g, backend="gpu", config=cfg, arrays=arrays)
            comp = r.fields["comp"]
            comp = cp.asnumpy(comp) if arrays == "cupy" else comp
            assert compare("cc", comp, want) is None, rnd
            ops = [s for s in r.stats["stages"] if "replayed" in s]
            assert [s["stage"] for s in ops] == ["sample", "finish"]
            # the first round records; a block grown by a later run (the second stage's
            # start ids, the other graph's) makes a record stale once: by the third
            # round every stage replays
            if rnd != 1:
                assert all(s["replayed"] == (rnd == 2) for s in ops), (rnd, ops)


def test_other_launches_are_not_replayed():
    g = path(4)
    for launch in ("host_loop", "cuda_graph"):
        for _ in range(3):
            r = gs.run("bfs", g, source=0, backend="gpu", config={"launch": launch})
            assert "replayed" not in r.stats
            assert r.fields["depth"].tolist() == [0, 1, 2, 3]


def test_a_replayed_graph_is_freed_with_its_graph():
    """The replay record keeps its run's context; the context must not keep the graph
    (and so its device copy) alive."""
    import gc
    import weakref

    from gswitch.engine.gpu import GpuEngine

    engine = GpuEngine.instance()
    gc.collect()
    g = gs.Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 4])
    for _ in range(3):
        r = gs.run("bfs", g, source=0, backend="gpu", config={"launch": "persistent"})
    assert r.stats.get("replayed") is True and g in engine._graphs
    res = engine._graphs[g]
    # the resident keeps its records, and no record keeps the resident (no cycle)
    assert res.repeats and all(rec.ctx.res is None for rec in res.repeats.values())
    gone = weakref.ref(res)
    before = len(engine._graphs)
    del g, res
    gc.collect()
    assert len(engine._graphs) == before - 1
    assert gone() is None
