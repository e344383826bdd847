"""GPU suite: every valid combination x algorithm x zoo graph equals the reference."""

import functools

import numpy as np
import pytest

import gswitch as gs
from gswitch.combinations import valid_configs
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

ALGORITHMS = ["bfs", "sssp", "cc", "pagerank"]
OUTPUT = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}
CASES = [(a, c) for a in ALGORITHMS for c in valid_configs(get_registry().algorithm(a))]


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
             if "." in k and k not in ("driving.threshold", "launch.blocks_per_sm")]
    return "-".join([alg] + [str(cfg[a]) for a in ("worklist", "load_balance", "driving",
                                                     "launch")] + extra)


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_combination_matches_reference(case):
    """This strategy combination gives the reference answer on every zoo graph."""
    algorithm, cfg = case
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


@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("driving", ["data", "temporal"])
def test_tiny_worklist_overflows_without_loss(launch, algorithm, driving):
    """A one-slot initial worklist overflows, grows, and still gives the reference answer."""
    g = _graph("rmat")
    kwargs = {"source": 0} if algorithm in ("bfs", "sssp") else {}
    cfg = {"launch": launch, "driving": driving, "worklist_capacity": 1}
    r = gs.run(algorithm, g, backend="gpu", config=cfg, **kwargs)
    if driving == "data":
        # a temporal run from all nodes may push only into the first worklist, which is
        # sized for the start set, so only the data-driven runs are sure to overflow
        assert r.stats["overflows"] > 0
    assert compare(algorithm, r.fields[OUTPUT[algorithm]], _reference(algorithm, "rmat")) is None


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
    for launch in ("host_loop", "persistent"):
        r = gs.run("bfs", g, source=0, backend="gpu", config={"launch": launch,
                                                               "driving": "data"})
        assert r.stats["active"][0] == 1
        assert len(r.stats["active"]) == r.iterations
        assert r.stats["edges_processed"] == g.n_edges
        assert 0 < r.stats["kernel_time_s"] <= r.stats["time_s"]


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


def test_pull_is_refused_on_gpu_with_reason():
    """An unsupported combination is refused before anything runs."""
    with pytest.raises(gs.InvalidConfig, match="pull traversal is implemented on the cpu"):
        gs.run("bfs", _graph("grid"), source=0, backend="gpu", config={"direction": "pull"})


def test_graph_larger_than_free_memory_is_refused(monkeypatch):
    """A graph that cannot fit is refused before allocation, with the estimate."""
    import cupy

    monkeypatch.setattr(cupy.cuda.runtime, "memGetInfo", lambda: (4096, 1 << 30))
    with pytest.raises(gs.DeviceError, match=r"needs about .* GiB on the GPU but only"):
        gs.run("bfs", _graph("grid"), source=0, backend="gpu")


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

    monkeypatch.setattr(cupy.cuda.driver, "occupancyMaxActiveBlocksPerMultiprocessor",
                        lambda *a: 0)
    with pytest.raises(gs.InvalidConfig, match="launch=persistent cannot run"):
        gs.run("bfs", _graph("grid"), source=0, backend="gpu",
               config={"launch": "persistent", "block_size": 1024})


def test_compile_error_dumps_numbered_source(monkeypatch, capsys):
    """GSWITCH_DUMP_CUDA_SOURCE_ON_ERROR=1 prints the numbered generated source."""
    _plant_compile_error(monkeypatch, "-dump")
    monkeypatch.setenv("GSWITCH_DUMP_CUDA_SOURCE_ON_ERROR", "1")
    with pytest.raises(gs.KernelCompileError):
        gs.run("bfs", _graph("grid"), source=0, backend="gpu")
    err = capsys.readouterr().err
    assert "    1  // gswitch" in err and "planted" in err
