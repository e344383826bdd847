"""GPU suite: every valid combination x algorithm x zoo graph equals the reference."""

import functools

import numpy as np
import pytest

import gswitch as gs
from gswitch.combinations import pairwise_configs
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

ALGORITHMS = ["bfs", "sssp", "cc", "pagerank"]
#: the formulations that run under every strategy (engine mechanics are tested on them;
#: tests/test_gpu_variants.py and friends cover the others)
CLASSIC = {"bfs": "default", "sssp": "bellman_ford", "cc": "label_propagation",
           "pagerank": "residual_push"}
OUTPUT = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}
# all pairs: every option of every axis meets every option of every other axis
def _cases():
    return [(a, c) for a in ALGORITHMS
            for c in pairwise_configs(get_registry().algorithm(a))]


@functools.cache
def _graph(name):
    return zoo_graph(name)


@functools.cache
def _reference(algorithm, name):
    g = _graph(name)
    kwargs = {"source": 0} if algorithm in ("bfs", "sssp") else {}
    return reference(algorithm, g, **kwargs)


def _id(case):
    alg, cfg = case
    extra = [f"{k.split('.')[1]}={v}" for k, v in cfg.items()
             if "." in k and isinstance(v, (bool, str)) or k in ("load_balance.size",
                                                                 "direction.group")]
    return "-".join([alg] + [str(cfg[a]) for a in ("worklist", "load_balance", "driving",
                                                     "direction", "launch")] + extra)


def _assert_zoo_matches(algorithm, cfg):
    """Run ``algorithm`` with ``cfg`` on every zoo graph; all answers equal the reference."""
    failures = []
    for name in ZOO_NAMES:
        g = _graph(name)
        if algorithm in ("bfs", "sssp") and g.n_nodes == 0:
            continue
        kwargs = {"source": 0} if algorithm in ("bfs", "sssp") else {}
        r = gs.run(algorithm, g, backend="gpu", config=cfg, **kwargs)
        problem = compare(algorithm, r.fields[OUTPUT[algorithm]], _reference(algorithm, name))
        if problem:
            failures.append(f"{name}: {problem}")
    assert not failures, "; ".join(failures)


@pytest.mark.cases("case", _cases, ids=_id)
def test_combination_matches_reference(case):
    """This strategy combination gives the reference answer on every zoo graph."""
    algorithm, cfg = case
    _assert_zoo_matches(algorithm, cfg)


@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("driving", ["data", "temporal"])
def test_tiny_worklist_overflows_without_loss(launch, algorithm, driving):
    """A one-slot initial worklist overflows, grows, and still gives the reference answer."""
    g = _graph("rmat")
    kwargs = {"source": 0} if algorithm in ("bfs", "sssp") else {}
    # a queue that grows (a default may keep its frontier as a bitmap, which never does)
    cfg = {"launch": launch, "driving": driving, "worklist_capacity": 1,
           "worklist": "warp_aggregated"}
    r = gs.run(algorithm, g, backend="gpu", config=cfg, **kwargs)
    if driving == "data":
        # a temporal run from all nodes may push only into the first worklist, which is
        # sized for the start set, so only the data-driven runs are sure to overflow
        assert r.stats["overflows"] > 0
    assert compare(algorithm, r.fields[OUTPUT[algorithm]], _reference(algorithm, "rmat")) is None


def test_persistent_overflow_compaction_stays_within_the_cooperative_grid():
    """A persistent run whose worklist overflows on a graph of more nodes than a
    co-resident grid covers compacts with a capped grid: no grid-reduction warning,
    the reference answer."""
    import warnings

    from gswitch.generators import star

    g = star(300_001)
    cfg = {"launch": "persistent", "worklist_capacity": 64, "block_size": 1024}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = gs.run("bfs", g, source=5, backend="gpu", config=cfg)
    assert r.stats["overflows"] > 0
    assert compare("bfs", r.fields["depth"], reference("bfs", g, source=5)) is None


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_gpu_agrees_with_cpu_engine(algorithm):
    """The GPU engine's answer equals the CPU engine's on a larger power-law graph."""
    from gswitch.generators import rmat

    g = rmat(14, 8, seed=5, weighted=True)
    kwargs = {"source": 1} if algorithm in ("bfs", "sssp") else {}
    a = gs.run(algorithm, g, backend="gpu", **kwargs).fields[OUTPUT[algorithm]]
    b = gs.run(algorithm, g, backend="cpu", **kwargs).fields[OUTPUT[algorithm]]
    if algorithm == "pagerank":
        assert np.abs(a.astype(np.float64) - b).sum() < 1e-4
    elif algorithm == "sssp":
        assert np.allclose(a, b, rtol=1e-5)
    else:
        assert np.array_equal(a, b)


def test_stats_and_timing():
    """GPU runs report iterations, per-step active counts, edges and both timings."""
    g = _graph("grid")
    for launch in ("host_loop", "persistent", "cuda_graph"):
        r = gs.run("bfs", g, source=0, backend="gpu", config={
            "launch": launch, "driving": "data", "direction": "push",
            "worklist": "warp_aggregated", "worklist.dedup": True})
        assert r.stats["active"][0] == 1
        assert len(r.stats["active"]) == r.iterations
        assert r.stats["edges_processed"] == g.n_edges
        assert 0 < r.stats["device_time_s"] <= r.stats["time_s"]


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_a_run_stopped_by_its_step_limit_has_not_converged(launch):
    """The step limit ends a run that its stopping rule did not: not converged, as on
    the CPU engine; a run that meets its rule first has converged."""
    g = _graph("grid")
    cfg = {"launch": launch, "variant": "power_pull"}
    short = gs.run("pagerank", g, backend="gpu", config=cfg, max_iterations=3,
                   tolerance=1e-7)
    assert short.iterations == 3 and short.stats["converged"] is False
    cpu = gs.run("pagerank", g, backend="cpu", config={"variant": "power_pull"},
                 max_iterations=3, tolerance=1e-7)
    assert cpu.stats["converged"] is False
    full = gs.run("pagerank", g, backend="gpu", config=cfg, max_iterations=500,
                  tolerance=1e-4)
    assert full.iterations < 500 and full.stats["converged"] is True


def _plant_compile_error(monkeypatch, tag):
    """Make every generated module fail to compile (under a fresh cache key)."""
    import dataclasses

    from gswitch.engine import gpu as gpu_engine

    real = gpu_engine.generate_source

    def broken(*args, **kwargs):
        gen = real(*args, **kwargs)
        return dataclasses.replace(gen, source=gen.source + "\n#error planted\n",
                                   key=gen.key + tag)

    monkeypatch.setattr(gpu_engine, "generate_source", broken)


def test_compile_error_names_the_combination(monkeypatch):
    """A compile failure raises KernelCompileError naming the strategies."""
    _plant_compile_error(monkeypatch, "-broken")
    with pytest.raises(gs.KernelCompileError, match="worklist=atomic"):
        gs.run("bfs", _graph("grid"), source=0, backend="gpu", config={"worklist": "atomic"})


def test_pull_without_pull_form_is_refused():
    """Pull for an operator with no pull form is refused by check() with the reason."""
    from gswitch.testing.user_algorithms import NODE_RUNS

    @gs.algorithm(name="two_statements")
    class Two:
        a = gs.NodeField("int32", init=gs.INF, at_source=0)
        b = gs.NodeField("int32", init=gs.INF, at_source=0)
        start = gs.from_source()

        @gs.edge_op
        def both(e):
            e.dst.a.reduce_min(e.src.a + 1)
            e.dst.b.reduce_min(e.src.b + 2)

    with pytest.raises(gs.InvalidConfig, match="exactly one reduction"):
        gs.run(Two, _graph("grid"), source=0, backend="gpu", config={"direction": "pull"})
    assert NODE_RUNS.name == "node_runs"


def test_cuda_graph_with_growing_worklist_is_refused():
    """cuda_graph cannot grow a worklist inside a replay: refused with the fix. A plain
    queue may push a node twice in one step for SSSP, and for BFS outside data-driven steps.
    """
    with pytest.raises(gs.InvalidConfig, match="worklist.dedup=true"):
        gs.run("sssp", _graph("grid"), source=0, backend="gpu",
               config={"launch": "cuda_graph", "worklist": "atomic"})
    with pytest.raises(gs.InvalidConfig, match="worklist.dedup=true"):
        gs.run("bfs", _graph("grid"), source=0, backend="gpu",
               config={"launch": "cuda_graph", "worklist": "atomic", "driving": "temporal"})


@pytest.mark.parametrize("worklist", ["atomic", "warp_aggregated"])
def test_cuda_graph_bfs_plain_queue_never_overflows(worklist):
    """Level-synchronous BFS queues each node at most once per step, so cuda_graph runs it
    on a plain queue of n slots: exact, and no step ever overflowed.
    """
    for name in ("grid", "rmat", "star", "duplicates"):
        g = _graph(name)
        r = gs.run("bfs", g, source=0, backend="gpu",
                   config={"launch": "cuda_graph", "worklist": worklist, "launch.steps": 4})
        assert compare("bfs", r.fields["depth"], _reference("bfs", name)) is None, name
        assert r.stats["overflows"] == 0, name


def test_graph_larger_than_free_memory_is_refused(monkeypatch):
    """A graph that cannot fit is refused before allocation, with the estimate."""
    import cupy

    monkeypatch.setattr(cupy.cuda.runtime, "memGetInfo", lambda: (4096, 1 << 30))
    with pytest.raises(gs.DeviceError, match=r"needs about .* GiB on the GPU but only"):
        from gswitch.generators import rmat

        fresh = rmat(10, seed=987)  # graphs are keyed by content: this one is not resident
        gs.run("bfs", fresh, source=0, backend="gpu")


def test_graph_with_2_31_edges_is_refused():
    """Graphs with 2^31 or more edges are refused until 64-bit offsets are supported."""

    class Huge(gs.Graph):
        __slots__ = ()

        @property
        def n_edges(self):
            return 2**31

    base = _graph("grid")
    huge = Huge(base.indptr, base.indices, base.weights, directed=False)
    with pytest.raises(gs.DeviceError, match="2\\^31 edges"):
        gs.run("bfs", huge, source=0, backend="gpu")


def test_persistent_refused_when_blocks_cannot_be_resident(monkeypatch):
    """If the occupancy API says no block fits, persistent launch is refused, not launched."""
    import cupy

    from gswitch.engine.gpu import GpuEngine

    monkeypatch.setattr(cupy.cuda.driver, "occupancyMaxActiveBlocksPerMultiprocessor",
                        lambda *a: 0)
    # the engine keeps each kernel's grid: one measured by an earlier test (same module,
    # same block size) would skip the query
    monkeypatch.setattr(GpuEngine.instance(), "_grids", {})
    g = gs.Graph.from_edges(np.arange(1010), np.arange(1, 1011))
    with pytest.raises(gs.InvalidConfig, match="launch=persistent cannot run"):
        gs.run("bfs", g, source=0, backend="gpu",
               config={"launch": "persistent", "block_size": 1024})


def test_compile_error_dumps_numbered_source(monkeypatch, capsys):
    """GSWITCH_DUMP_CUDA_SOURCE_ON_ERROR=1 prints the numbered generated source."""
    _plant_compile_error(monkeypatch, "-dump")
    monkeypatch.setenv("GSWITCH_DUMP_CUDA_SOURCE_ON_ERROR", "1")
    with pytest.raises(gs.KernelCompileError):
        gs.run("bfs", _graph("grid"), source=0, backend="gpu")
    err = capsys.readouterr().err
    assert "    1  // gswitch" in err and "planted" in err


# ---------------------------------------------------------------------- new strategies
from gswitch.testing.user_algorithms import USER_CONFIGS  # noqa: E402

USER = {a.name: a for a in __import__("gswitch.testing.user_algorithms",
                                      fromlist=["USER_ALGORITHMS"]).USER_ALGORITHMS}


@pytest.mark.parametrize("config", USER_CONFIGS, ids=lambda c: "-".join(map(str, c.values()))
                         or "default")
@pytest.mark.parametrize("name", sorted(USER))
def test_user_operator_matches_cpu_engine(name, config):
    """User-defined operators (widest path, int64, uint32 reduce_or, float64, reduce_max,
    where, casts, INF in integer expressions) give the CPU engine's answer on the GPU."""
    from gswitch.generators import rmat
    from gswitch.runner import check_combination

    spec = USER[name]
    cfg = gs.Config(config)
    assert check_combination(spec, None, cfg, "gpu") is None  # every listed config is valid
    g = rmat(11, 8, seed=3, weighted=True)
    kw = {"source": 0} if spec.start.kind == "source" else {}
    a = gs.run(spec, g, backend="gpu", config=cfg, **kw).fields
    b = gs.run(spec, g, backend="cpu", **kw).fields
    for field in b:
        if b[field].dtype.kind == "f":
            assert np.allclose(a[field], b[field], rtol=1e-6), field
        else:
            assert np.array_equal(a[field], b[field]), field


@pytest.mark.parametrize("config,expected", [
    ({"worklist": "atomic"}, None),
    ({"worklist": "atomic", "worklist.dedup": True}, [1, 1, 1]),
    ({"worklist": "warp_aggregated", "worklist.dedup": True}, [1, 1, 1]),
    ({"worklist": "bitmap"}, [1, 1, 1]),
])
def test_node_operator_runs_once_per_step_with_dedup(config, expected):
    """A node pushed twice in one step would run a non-idempotent node operator twice
    unless the worklist deduplicates (dedup=true or the bitmap): a queue without dedup
    is refused for an operator whose add activates on every message, naming the fix;
    the CPU engine runs it once."""
    from gswitch.testing.user_algorithms import NODE_RUNS

    g = gs.Graph.from_edges([0, 1], [2, 2], n_nodes=3)
    if expected is None:
        with pytest.raises(gs.InvalidConfig, match="dedup=true"):
            gs.run(NODE_RUNS, g, source=[0, 1], backend="gpu", config=config)
        return
    r = gs.run(NODE_RUNS, g, source=[0, 1], backend="gpu", config=config)
    assert r.fields["runs"].tolist() == expected
    cpu = gs.run(NODE_RUNS, g, source=[0, 1], backend="cpu")
    assert cpu.fields["runs"].tolist() == [1, 1, 1]


def test_direction_optimizing_pulls_and_matches():
    """Direction-optimizing BFS on a power-law graph switches to pull and stays exact."""
    from gswitch.generators import rmat

    g = rmat(14, 16, seed=2).symmetrize()
    src = int(np.argmax(g.out_degree))
    for wl in ("bitmap", "warp_aggregated"):
        r = gs.run("bfs", g, source=src, backend="gpu",
                   config={"direction": "direction_optimizing", "worklist": wl})
        assert "pull" in r.stats["directions"]
        ref = reference("bfs", g, source=src)
        assert compare("bfs", r.fields["depth"], ref) is None


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_deadline_stops_a_slow_run(launch):
    """A run past its deadline stops with DeadlineExceeded, on the host or device clock."""
    from gswitch.generators import path

    g = path(200_000)
    with pytest.raises(gs.DeadlineExceeded) as info:
        gs.run("bfs", g, source=0, backend="gpu", deadline_s=0.01,
               config={"launch": launch, "worklist.dedup": True, "load_balance": "thread"})
    assert info.value.iterations < 200_000


def test_pool_reuses_buffers_and_results_stay_correct():
    """Repeated runs on a resident graph reuse the pool and give the same answer."""
    g = _graph("rmat")
    first = gs.run("sssp", g, source=0, backend="gpu").fields["dist"]
    for _ in range(3):
        again = gs.run("sssp", g, source=0, backend="gpu").fields["dist"]
        assert np.array_equal(first, again)


def _many_heavy_in_nodes():
    """Sinks 1..200 (consecutive ids, so one block meets all of them) fed by 300 random
    sources each, and node 0 linked both ways with every node: in-degrees far above
    every group's heavy threshold, and more heavy nodes in one block than it has slots.
    """
    rng = np.random.default_rng(11)
    n = 800
    sinks = np.repeat(np.arange(1, 201), 300)
    feeders = rng.integers(201, n, size=sinks.size)
    every = np.arange(1, n)
    src = np.concatenate([feeders, np.zeros(n - 1, np.int64), every, sinks[::7]])
    dst = np.concatenate([sinks, every, np.zeros(n - 1, np.int64), feeders[::7]])
    w = rng.integers(1, 20, size=src.size).astype(np.float32)
    return gs.Graph.from_edges(src, dst, w, n_nodes=n)


@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
@pytest.mark.parametrize("group", [1, 32])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_pull_heavy_in_nodes_match_reference(algorithm, group, launch):
    """Pull hands nodes of large in-degree to the whole block (and falls back to one
    group once the block's slots are full); the answers stay exact.
    """
    g = _many_heavy_in_nodes()
    kwargs = {"source": 3} if algorithm in ("bfs", "sssp") else {}
    ref = reference(algorithm, g, **kwargs)
    for direction in ("pull", "direction_optimizing"):
        if direction == "direction_optimizing" and algorithm != "bfs":
            continue
        cfg = {"direction": direction, "direction.group": group, "launch": launch}
        r = gs.run(algorithm, g, backend="gpu", config=cfg, **kwargs)
        problem = compare(algorithm, r.fields[OUTPUT[algorithm]], ref)
        assert problem is None, f"{direction}: {problem}"


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_repeated_calls_return_fresh_arrays_for_changing_sources(launch):
    """Calls that reuse one plan and its pinned staging each return their own answer in
    arrays of their own: changing the source or writing into an earlier result changes
    nothing else.
    """
    g = _graph("rmat")
    cfg = gs.Config({"launch": launch, "worklist.dedup": True})
    first = gs.run("bfs", g, source=0, backend="gpu", config=cfg).fields["depth"]
    other = gs.run("bfs", g, source=5, backend="gpu", config=cfg).fields["depth"]
    assert compare("bfs", first, reference("bfs", g, source=0)) is None
    assert compare("bfs", other, reference("bfs", g, source=5)) is None
    assert not np.shares_memory(first, other)
    expected = first.copy()
    first[:] = 7
    again = gs.run("bfs", g, source=0, backend="gpu", config=cfg).fields["depth"]
    assert np.array_equal(again, expected)


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_trace_of_a_long_run_is_read_whole(launch):
    """A run of more steps than the early read-back covers still reports every step."""
    from gswitch.generators import path

    g = path(300)
    r = gs.run("bfs", g, source=0, backend="gpu",
               config={"launch": launch, "worklist.dedup": True})
    assert r.iterations >= 299
    assert r.stats["active"][:299] == [1] * 299
    assert len(r.stats["active"]) == r.iterations
    assert r.fields["depth"].tolist() == list(range(300))


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_start_ids_of_changing_count_share_the_control_copy(launch):
    """The start ids travel in one copy with the control block; runs with more start ids
    than the region holds (it grows), then fewer, then every node, all stay exact.
    """
    from scipy.sparse import csgraph

    g = _graph("road")
    cfg = gs.Config({"launch": launch, "worklist.dedup": True})
    rng = np.random.default_rng(5)
    for count in (3, 100, 1000, 2, 1):
        sources = np.sort(rng.choice(g.n_nodes, size=count, replace=False))
        d = csgraph.shortest_path(g.to_scipy(), unweighted=True, indices=sources)
        d = d.min(axis=0)
        want = np.where(np.isinf(d), -1, d).astype(np.int64)
        r = gs.run("bfs", g, source=sources.tolist(), backend="gpu", config=cfg)
        assert compare("bfs", r.fields["depth"], want) is None, f"{count} sources"
        assert r.stats["active"][0] == count
    r = gs.run("cc", g, backend="gpu", config=cfg)
    assert compare("cc", r.fields["comp"], reference("cc", g)) is None


def test_cuda_graph_is_captured_once_and_replayed_by_later_runs():
    """cuda_graph keeps its captured steps with the plan: a later run on the same graph
    replays the same CUDA graph, from other sources, and stays exact.
    """
    from gswitch.engine.gpu import GpuEngine
    from gswitch.generators import path

    g = path(200)
    cfg = gs.Config({"launch": "cuda_graph", "worklist": "bitmap", "launch.steps": 8})
    first = gs.run("bfs", g, source=0, backend="gpu", config=cfg)
    plans = GpuEngine.instance()._graphs[g].plans.values()
    captured = [(k, v) for p in plans for k, v in p.memo.items()]
    assert len(captured) == 1
    again = gs.run("bfs", g, source=199, backend="gpu", config=cfg)
    assert [(k, v) for p in plans for k, v in p.memo.items()] == captured
    assert first.fields["depth"].tolist() == list(range(200))
    assert again.fields["depth"].tolist() == list(range(199, -1, -1))


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_parameter_block_is_rewritten_when_a_parameter_changes(launch):
    """A repeated call with the same parameters skips the copy of the parameter block;
    a changed parameter, another graph on the same module, or another algorithm in
    between still reach the kernels.
    """
    g, other = _graph("rmat"), _graph("uniform")
    cfg = gs.Config({"launch": launch, "worklist": "bitmap"})
    for alpha, graph in ((0.85, g), (0.85, g), (0.5, g), (0.5, g), (0.5, other),
                         (0.85, g), (0.85, other)):
        r = gs.run("pagerank", graph, backend="gpu", config=cfg, alpha=alpha)
        problem = compare("pagerank", r.fields["rank"], reference("pagerank", graph, alpha=alpha))
        assert problem is None, f"alpha={alpha}, {graph.n_nodes} nodes: {problem}"
        b = gs.run("bfs", graph, source=1, backend="gpu", config=cfg)
        assert compare("bfs", b.fields["depth"], reference("bfs", graph, source=1)) is None


@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
def test_plan_follows_pool_arrays_that_others_replaced(launch):
    """A growth in one configuration replaces pooled worklists; a configuration that ran
    before points its cached parameter block at the new arrays and stays exact.
    """
    g = _graph("rmat")
    ref = reference("sssp", g, source=0)
    plain = {"launch": launch}
    tiny = {"launch": launch, "worklist_capacity": 1}
    for cfg in (plain, tiny, plain, tiny):
        r = gs.run("sssp", g, source=0, backend="gpu", config=cfg)
        assert compare("sssp", r.fields["dist"], ref) is None


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_atomic_without_read_first_matches_reference(algorithm, launch):
    """read_before_atomic=False issues every min/max/or atomic at once; same answers."""
    cfg = {"read_before_atomic": False, "launch": launch}
    if launch == "cuda_graph":
        cfg["worklist"] = "bitmap"
    _assert_zoo_matches(algorithm, cfg)


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_l2_prefetch_matches_reference(algorithm, launch):
    """l2_prefetch=True only adds prefetch hints (bounds-checked); same answers."""
    cfg = {"l2_prefetch": True, "launch": launch, "read_before_atomic": launch == "host_loop"}
    if launch == "cuda_graph":
        cfg["worklist"] = "bitmap"
    _assert_zoo_matches(algorithm, cfg)


def test_resident_graph_is_freed_with_its_graph():
    """The engine keeps a graph's device copy only while the graph lives."""
    import gc

    from gswitch.engine.gpu import GpuEngine

    engine = GpuEngine.instance()
    gc.collect()  # graphs an earlier test left to the collector are not counted here
    g = gs.Graph.from_edges([0, 1, 2], [1, 2, 3])
    gs.run("bfs", g, source=0, backend="gpu", config={"direction": "pull"})
    assert g in engine._graphs
    before = len(engine._graphs)
    del g
    gc.collect()
    assert len(engine._graphs) == before - 1


def test_resident_in_degree_counted_on_the_device_matches_the_host(monkeypatch):
    """A large graph whose host in-degrees were never asked for gets them counted on the
    device at upload (here every graph with an edge counts as large); both counts agree
    (isolated nodes and parallel edges included), and the host's are left uncomputed."""
    from gswitch.engine import memory
    from gswitch.engine.gpu import GpuEngine

    monkeypatch.setattr(memory, "HOST_REVERSE_EDGES", 0)
    engine = GpuEngine.instance()
    rng = np.random.default_rng(21)
    for n, m in ((1, 0), (7, 0), (50, 300), (1000, 40)):
        g = gs.Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n_nodes=n)
        res = engine.resident(g)
        if m:
            assert g._in_degree is None
        assert res.in_degree.dtype == np.int32
        assert res.in_degree.get().tolist() == g.in_degree.tolist()
        r = gs.run("bfs", g, source=0, backend="gpu", config={"direction": "pull"})
        assert compare("bfs", r.fields["depth"], reference("bfs", g, source=0)) is None
        gs.release(g)


def test_resident_copy_of_an_equal_graph_follows_the_graph_in_use():
    """Graphs compare by content, so a run finds the copy uploaded for an equal graph:
    the copy is then tied to the graph in use, and outlives the first one (which may be
    freed by the collector during that run) instead of losing its graph.
    """
    import gc

    from gswitch.engine.gpu import GpuEngine

    engine = GpuEngine.instance()
    first = gs.Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 4])
    second = gs.Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 4])
    assert first == second and first is not second
    gs.run("bfs", first, source=0, backend="gpu")
    res = engine._graphs[first]
    r = gs.run("bfs", second, source=0, backend="gpu", config={"launch": "persistent"})
    assert r.fields["depth"].tolist() == [0, 1, 2, 3, 4]
    assert engine._graphs[second] is res and res.graph is second  # no second upload
    del first
    gc.collect()
    assert engine._graphs[second] is res and res.graph is second
    r = gs.run("bfs", second, source=1, backend="gpu", config={"direction": "pull"})
    assert r.fields["depth"].tolist() == [-1, 0, 1, 2, 3]


@pytest.mark.parametrize("sources", [[0, 7, 1234], [1234]], ids=["three", "one"])
@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
@pytest.mark.parametrize("name", ALGORITHMS + sorted(USER))
def test_fields_of_a_large_graph_start_on_the_device(name, launch, sources, monkeypatch):
    """Fields larger than the engine's threshold are initialised on the device (one fill
    launch, then the sources' values unless one source folds into it): the answers equal
    those of the host path (the threshold raised so that the host fills them) for every
    field dtype, node ids as initial labels, one source and several.
    """
    from gswitch.engine import gpu
    from gswitch.generators import rmat

    spec = USER.get(name) or get_registry().algorithm(name, CLASSIC[name])
    g = rmat(15, 4, seed=11, weighted=True)
    assert 4 * g.n_nodes > gpu._DEVICE_FILL_BYTES  # the device path is taken
    kw = {"source": sources} if spec.start.kind == "source" else {}
    cfg = gs.Config({"launch": launch, "worklist.dedup": True})
    on_device = gs.run(spec, g, backend="gpu", config=cfg, **kw).fields
    monkeypatch.setattr(gpu, "_DEVICE_FILL_BYTES", 1 << 40)
    on_host = gs.run(spec, g, backend="gpu", config=cfg, **kw).fields
    assert on_device.keys() == on_host.keys()
    for field in on_host:
        if on_host[field].dtype.kind == "f":
            assert np.allclose(on_device[field], on_host[field], rtol=1e-5), field
        else:
            assert np.array_equal(on_device[field], on_host[field]), field
    if name in OUTPUT:
        if kw:  # several sources: the nearest of them, as scipy measures it
            from scipy.sparse import csgraph

            d = csgraph.dijkstra(g.deduplicate("min").to_scipy(), indices=kw["source"],
                                 min_only=True, unweighted=name == "bfs")
            want = np.where(np.isinf(d), -1, d).astype(np.int64) if name == "bfs" else d
        else:
            want = reference(name, g)
        assert compare(name, on_device[OUTPUT[name]], want) is None


@pytest.mark.parametrize("config", [{}, {"launch": "persistent"},
                                    {"launch": "cuda_graph", "worklist": "bitmap"}],
                         ids=["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize("name", ["bfs", "pagerank", "half_hops"])
def test_finalize_on_device_matches_the_host(name, config, monkeypatch):
    """An algorithm declared ``finalize_on_device`` finalised on the device (threshold
    lowered to every graph) gives the host-finalised answer (threshold raised) and the
    reference: in place (BFS), through a float64 copy and a device sum (PageRank), and
    into a new output of another dtype read from a field that is not an output.
    """
    from gswitch.engine import gpu
    from gswitch.generators import rmat
    from gswitch.testing.user_algorithms import HALF_HOPS

    spec = HALF_HOPS if name == "half_hops" else get_registry().algorithm(name, CLASSIC[name])
    g = rmat(13, 8, seed=5).symmetrize()
    kw = {} if name == "pagerank" else {"source": int(np.argmax(g.out_degree))}
    runs = {}
    for where, bytes_ in (("device", 0), ("host", 1 << 40)):
        monkeypatch.setattr(gpu, "_DEVICE_FINALIZE_BYTES", bytes_)
        for _ in range(2):  # the second run reuses the pooled fields and staging
            r = gs.run(spec, g, backend="gpu", config=config, **kw)
            assert r.stats["finalized_on"] == where
            assert list(r.fields) == spec.outputs
        runs[where] = r.fields
    for field, want in runs["host"].items():
        got = runs["device"][field]
        assert got.dtype == want.dtype, field
        if want.dtype.kind == "f":  # the device sums in another order
            assert np.allclose(got, want, rtol=1e-6, atol=0, equal_nan=True), field
        else:
            assert np.array_equal(got, want), field
    if name in OUTPUT:
        assert compare(name, runs["device"][OUTPUT[name]], reference(name, g, **kw)) is None
    else:
        cpu = gs.run(spec, g, backend="cpu", **kw).fields["half"]
        assert np.array_equal(runs["device"]["half"], cpu, equal_nan=True)


def test_finalize_that_cannot_run_on_the_device_is_named(monkeypatch):
    """A finalize declared ``finalize_on_device`` that converts to NumPy fails with one
    error naming the algorithm and the rule; the engine stays usable and the CPU runs it.
    """
    from gswitch.engine import gpu
    from gswitch.generators import rmat
    from gswitch.testing.user_algorithms import hop_count

    def finalize(fields, params):
        d = np.asarray(fields["depth"])  # a host conversion: not for the device
        fields["depth"] = np.where(d > 1 << 20, -1, d)
        return fields

    HostOnly = hop_count("host_only_finalize", finalize, finalize_on_device=True)
    monkeypatch.setattr(gpu, "_DEVICE_FINALIZE_BYTES", 0)
    g = rmat(10, 8, seed=1)
    with pytest.raises(gs.AlgorithmError, match="host_only_finalize: finalize failed on the "
                       "device arrays .*drop finalize_on_device"):
        gs.run(HostOnly, g, source=0, backend="gpu")
    want = reference("bfs", g, source=0)
    assert compare("bfs", gs.run("bfs", g, source=0, backend="gpu").fields["depth"],
                   want) is None
    assert compare("bfs", gs.run(HostOnly, g, source=0, backend="cpu").fields["depth"],
                   want) is None


def test_finalize_runs_on_the_host_without_room_on_the_device(monkeypatch):
    """Device finalisation needs room for its temporaries; without it the host runs
    ``finalize``, with the same answer."""
    from gswitch.engine import gpu
    from gswitch.generators import rmat

    engine = gpu.GpuEngine.instance()
    assert engine._room_for(1) and not engine._room_for(1 << 60)
    monkeypatch.setattr(gpu, "_DEVICE_FINALIZE_BYTES", 0)
    g = rmat(10, 8, seed=1)
    want = reference("bfs", g, source=0)
    r = gs.run("bfs", g, source=0, backend="gpu")
    assert r.stats["finalized_on"] == "device" and compare("bfs", r["depth"], want) is None
    monkeypatch.setattr(gpu.GpuEngine, "_room_for", lambda self, nbytes: False)
    r = gs.run("bfs", g, source=0, backend="gpu")
    assert r.stats["finalized_on"] == "host" and compare("bfs", r["depth"], want) is None


def test_free_memory_reading_is_reused_within_its_time_to_live(monkeypatch):
    """The device's free memory is asked once per ``_FREE_MEMORY_TTL_S``; in between the
    last answer stands, less what the memory pool took from the device since."""
    import time

    from gswitch.engine import gpu, gpu_results

    engine = gpu.GpuEngine.instance()
    pool = engine.cp.get_default_memory_pool()
    asked = []
    real = engine.runtime.memGetInfo
    monkeypatch.setattr(engine.runtime, "memGetInfo", lambda: asked.append(1) or real())
    engine._free_seen = None
    idle = pool.free_bytes()
    engine._room_for(idle + 1)
    engine._room_for(idle + 1)
    assert len(asked) == 1
    held, spare = pool.total_bytes(), 1 << 20
    engine._free_seen = (time.monotonic(), spare, held - 4096)  # the pool grew by 4 KiB
    idle = pool.free_bytes()
    assert engine._room_for(idle + spare - 4097)
    assert not engine._room_for(idle + spare - 4095)
    assert len(asked) == 1
    engine._free_seen = (time.monotonic() - 2 * gpu_results._FREE_MEMORY_TTL_S, spare,
                          held)
    assert engine._room_for(idle + spare + 1)  # stale: asked again, and the device has room
    assert len(asked) == 2


@pytest.mark.parametrize("way", ["chunks", "pinned", "pinned_pool_full"])
@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
@pytest.mark.parametrize("name", ALGORITHMS + ["half_hops", "dist64"])
def test_results_in_chunks_equal_results_in_one_copy(name, launch, way, monkeypatch):
    """Results brought back in small chunks, each copied out by a host thread once its
    event has passed, or straight into page-locked result arrays, or in chunks because
    the page-locked pool is full (thresholds lowered to every graph; fields of several
    dtypes, an output finalised on the device into a new array), equal those of one
    whole copy."""
    from gswitch.engine import gpu, gpu_results
    from gswitch.generators import rmat
    from gswitch.testing.user_algorithms import HALF_HOPS

    spec = {"half_hops": HALF_HOPS}.get(name) or USER.get(name) or \
        get_registry().algorithm(name, CLASSIC[name])
    g = rmat(12, 8, seed=9, weighted=True)
    kw = {"source": [0, 5]} if spec.start.kind == "source" else {}
    cfg = gs.Config({"launch": launch})
    whole = gs.run(spec, g, backend="gpu", config=cfg, **kw).fields
    monkeypatch.setattr(gpu_results, "_PARALLEL_COPY_BYTES", 0)
    monkeypatch.setattr(gpu_results, "_COPY_CHUNK_BYTES", 1000)
    monkeypatch.setattr(gpu, "_DEVICE_FINALIZE_BYTES", 0)
    monkeypatch.setattr(gpu_results.os, "cpu_count", lambda: 8)
    monkeypatch.setattr(gpu_results, "_PINNED_RESULT_BYTES",
                        1 << 62 if way == "chunks" else 0)
    if way == "pinned_pool_full":
        monkeypatch.setattr(gpu.GpuEngine.instance().results, "cap", 0)
    for _ in range(2):  # the second run reuses the events and the staging
        chunked = gs.run(spec, g, backend="gpu", config=cfg, **kw).fields
        assert chunked.keys() == whole.keys()
        for field, want in whole.items():
            got = chunked[field]
            assert got.dtype == want.dtype and not np.shares_memory(got, want), field
            if want.dtype.kind == "f":
                assert np.allclose(got, want, rtol=1e-6, equal_nan=True), field
            else:
                assert np.array_equal(got, want), field


def _host_only_hops():
    from gswitch.testing.user_algorithms import hop_count

    def finalize(fields, params):
        d = np.asarray(fields["depth"])  # host only: the runner finalises, then uploads
        fields["depth"] = np.where(d > 1 << 20, -1, d)
        return fields

    return hop_count("host_finalize_hops", finalize)


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize("name", ALGORITHMS + ["half_hops", "host_finalize_hops", "widest"])
def test_cupy_arrays_equal_numpy_results_and_stay_put(name, launch, monkeypatch):
    """``arrays="cupy"`` gives fresh CuPy arrays equal to the NumPy results (finalised on
    the device where declared, on the host and uploaded otherwise); a later run does not
    change them; a graph whose results come with every control read, and a larger one."""
    import cupy

    from gswitch.generators import rmat
    from gswitch.testing.user_algorithms import HALF_HOPS

    spec = ({"half_hops": HALF_HOPS, "host_finalize_hops": _host_only_hops()}.get(name)
            or USER.get(name) or get_registry().algorithm(name, CLASSIC[name]))
    cfg = gs.Config({"launch": launch, "worklist": "bitmap"})
    for g in (rmat(6, 4, seed=2, weighted=True), rmat(14, 8, seed=3, weighted=True)):
        kw = {"source": [0, 3]} if spec.start.kind == "source" else {}
        want = gs.run(spec, g, backend="gpu", config=cfg, **kw)
        got = gs.run(spec, g, backend="gpu", config=cfg, arrays="cupy", **kw)
        assert got.fields.keys() == want.fields.keys()
        assert got.stats.get("finalized_on") == want.stats.get("finalized_on") or \
            got.stats.get("finalized_on") == "device"
        kept = {k: v.copy() for k, v in got.fields.items()}
        gs.run(spec, g, backend="gpu", config=cfg, **({"source": [1]} if kw else {}))
        for field, host in want.fields.items():
            dev = got.fields[field]
            assert isinstance(dev, cupy.ndarray) and dev.dtype == host.dtype, field
            assert cupy.array_equal(dev, kept[field], equal_nan=True), field  # untouched
            if host.dtype.kind == "f":
                assert np.allclose(dev.get(), host, rtol=1e-6, equal_nan=True), field
            else:
                assert np.array_equal(dev.get(), host), field


def _poll_engine():
    from gswitch.engine.gpu import GpuEngine

    return GpuEngine.instance()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_polled_control_reads_equal_copied_ones(algorithm, monkeypatch):
    """The host loop's decisions read from host memory the kernel wrote give the
    reference answer, and for level-synchronous BFS the same steps, trace and edge count
    as copying the control block back (SSSP, CC and PageRank relax asynchronously: their
    traces depend on the order of atomics); every read after a step launch is polled,
    and none when polling is off."""
    engine = _poll_engine()
    kwargs = {"source": 0} if algorithm in ("bfs", "sssp") else {}
    for name in ("rmat", "grid"):
        g = _graph(name)
        runs = {}
        for poll in (True, False):
            monkeypatch.setattr(engine, "poll_control", poll)
            runs[poll] = gs.run(algorithm, g, backend="gpu", config={"launch": "host_loop"},
                                **kwargs)
        on, off = runs[True], runs[False]
        if algorithm == "bfs":
            for key in ("iterations", "active", "modes", "directions", "edges_processed"):
                assert on.stats[key] == off.stats[key], (name, key)
        assert on.stats["polled_reads"] == on.iterations
        assert off.stats["polled_reads"] == 0
        for r in (on, off):
            assert compare(algorithm, r.fields[OUTPUT[algorithm]],
                           _reference(algorithm, name)) is None


def test_polled_reads_only_where_the_launch_strategy_polls():
    """Persistent and CUDA-graph launches read their control block by copying it."""
    g = _graph("grid")
    for launch in ("persistent", "cuda_graph"):
        r = gs.run("bfs", g, source=0, backend="gpu", config={
            "launch": launch, "worklist.dedup": True})
        assert r.stats["polled_reads"] == 0, launch
        assert compare("bfs", r.fields["depth"], _reference("bfs", "grid")) is None


def test_a_decision_that_never_shows_falls_back_to_a_copy(monkeypatch):
    """When the step number the host polls for never comes, the host waits on the
    stream, copies the control block and still gives the reference answer."""
    from gswitch.engine import context

    real = context.LaunchContext.launch_step

    def wrong_number(self, *args, **kwargs):
        real(self, *args, **kwargs)
        self._poll_want = -7  # no kernel writes this

    monkeypatch.setattr(context.LaunchContext, "launch_step", wrong_number)
    monkeypatch.setattr(context, "_POLL_S", 1e-5)
    monkeypatch.setattr(_poll_engine(), "poll_control", True)
    r = gs.run("bfs", _graph("rmat"), source=0, backend="gpu",
               config={"launch": "host_loop"})
    assert r.stats["polled_reads"] == 0
    assert r.iterations > 1
    assert compare("bfs", r.fields["depth"], _reference("bfs", "rmat")) is None


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_polled_host_loop_survives_worklist_growth(algorithm, monkeypatch):
    """A one-slot worklist overflows under the polled host loop: every step's decision
    is polled (the read after a growth copies), and the answer is the reference."""
    monkeypatch.setattr(_poll_engine(), "poll_control", True)
    kwargs = {"source": 0} if algorithm in ("bfs", "sssp") else {}
    r = gs.run(algorithm, _graph("rmat"), backend="gpu",
               config={"launch": "host_loop", "driving": "data", "worklist_capacity": 1,
                       "worklist": "warp_aggregated"},
               **kwargs)
    assert r.stats["overflows"] > 0
    assert r.stats["polled_reads"] == r.iterations
    assert compare(algorithm, r.fields[OUTPUT[algorithm]], _reference(algorithm, "rmat")) is None
