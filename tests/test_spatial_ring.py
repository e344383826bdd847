"""Resident partitions from a shared ring (``driving.schedule=ring``): no steps.

What is refused, the module and buffers the option selects and that it compiles (nvcc,
no GPU), and on the GPU that the ring gives the reference on every staged algorithm and
type, under every launch, with passes cut short (the block visits again), on a graph
without locality (a partition is activated again while it runs), on pooled buffers run
after run, and on repeated runs of one configuration (a lost update would show as a
wrong depth in some of them).
"""

from __future__ import annotations

import numpy as np
import pytest
from gswitch.strategies.driving.spatial import RING_SLACK, SpatialDriving
from test_spatial_resident import (
    GRAPHS,
    _problem,
    _resident,
    _spec,
    check_compiles,
    check_reference,
    check_user_operator,
)

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.generators import grid2d, road
from gswitch.runner import check_combination
from gswitch.testing.reference import compare, reference


def _ring(size=1024, block=512, **extra):
    return _resident(size, block, **{"driving.schedule": "ring", **extra})


def test_the_ring_is_always_resident():
    """``resident=0`` stands for four nodes a thread there, so the ring combines with
    every other axis as it is (the all-pairs suite draws it so)."""
    strat = SpatialDriving({"resident": 0, "partition_size": 1024, "schedule": "ring"})
    assert strat.resident() == 4 and strat.defines()["GS_SPATIAL_RESIDENT"] == "4"
    assert _problem("bfs", {**_ring(), "driving.resident": 0}) is None
    cfg = {**_ring(size=2048, block=256), "driving.resident": 0}
    problem = _problem("bfs", cfg)
    assert problem is not None and problem.startswith("driving.schedule=ring gives a thread 4")
    assert "lower driving.partition_size or raise block_size" in problem
    reason = check_combination(_spec("bfs"), road(8, 8), gs.Config(cfg), "gpu")
    assert reason.startswith("driving=spatial: driving.schedule=ring") and "\n" not in reason


def test_the_ring_takes_the_resident_refusals():
    """Whatever residency refuses, the ring refuses too (it visits resident partitions)."""
    problem = _problem("triangles", _ring(**{"driving.local_iterations": 0}))
    assert problem is not None and "cannot be held there" in problem, problem
    assert "multiple of 32" in _problem("bfs", _ring(size=1000))
    for name in ("bfs", "sssp", "cc", "widest", "hops64", "dist64", "max_label"):
        assert _problem(name, _ring()) is None, name


def test_the_cpu_engine_ignores_the_ring():
    g = road(24, 24, seed=3)
    want = reference("bfs", g, source=5)
    r = gs.run("bfs", g, source=5, backend="cpu", config=_ring(size=64, block=64))
    assert compare("bfs", r.fields["depth"], want) is None


def test_ring_module_and_buffers():
    spec = _spec("bfs")
    conf = gs.Config(_ring())
    src = generate_source(spec, conf, weighted=False).source
    assert "#define GS_SPATIAL_RING 1" in src and "gs_ring_pop" in src
    steps = generate_source(spec, gs.Config(_resident()), weighted=False).source
    assert "#define GS_SPATIAL_RING 0" in steps
    strat = SpatialDriving({"resident": 2, "partition_size": 1024, "schedule": "ring"})
    g = road(40, 40)  # 1,600 nodes: two partitions
    bufs = {b.name: b for b in strat.buffers(spec, g, conf)}
    assert bufs["ring"].size == 2 * 2 + RING_SLACK and bufs["ring"].zero
    assert bufs["state"].size == 2 and bufs["state"].zero and bufs["ring_ctr"].zero
    assert strat.runtime_args(g, conf)["ring_capacity"] == ("long long", 4 + RING_SLACK)


def test_the_tuner_tries_the_ring_first_on_high_diameter_graphs():
    """The built-in suggestions put the ring first for BFS-like algorithms on road-like
    graphs, where it won; it is accepted there."""
    from gswitch.plugins import get_plugin_manager

    features = {"n_nodes": 4 * 10**6, "n_edges": 1.6 * 10**7, "degree_mean": 4.0,
                "degree_max_over_mean": 1.0, "diameter_estimate": 4000}
    tops = {}
    for name in ("bfs", "sssp"):
        lists = get_plugin_manager().hook.gswitch_suggested_configs(
            algorithm=_spec(name), features=features, backend="gpu")
        tops[name] = gs.Config([c for lst in lists if lst for c in lst][0])
    assert tops["bfs"]["driving"] == "spatial" and tops["bfs"]["driving.schedule"] == "ring"
    assert tops["sssp"]["driving"] != "spatial"  # not measured there: steps stay first
    assert check_combination(_spec("bfs"), road(64, 64), tops["bfs"], "gpu") is None


@pytest.mark.compile
@pytest.mark.parametrize("name", ["bfs", "sssp", "cc", "widest", "hops64", "dist64",
                                  "max_label"])
def test_ring_kernels_compile(nvcc, name):
    check_compiles(nvcc, name, (_ring(size=1024, block=256, launch="persistent"),
                                _ring(size=128, block=64, launch="host_loop"),
                                _ring(size=2048, block=1024, launch="cuda_graph")))


needs_gpu = pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("alg", ["bfs", "sssp", "cc"])
def test_gpu_ring_gives_the_reference(alg, graph, launch):
    # with local_iterations cut short, the block visits the partition again
    check_reference(alg, graph, launch, **{"driving.schedule": "ring"})


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("name", ["widest", "hops64", "dist64", "max_label"])
def test_gpu_ring_user_operators_match_the_cpu_engine(name):
    check_user_operator(name, **{"driving.schedule": "ring"})


@pytest.mark.gpu
@needs_gpu
def test_gpu_ring_runs_again_on_pooled_buffers():
    """Runs in a row from other sources, and one from a node without edges: the ring,
    the states and the marks are left empty by each."""
    g = road(50, 50, seed=8)
    lone = int(np.flatnonzero(np.diff(g.indptr) == 0)[0]) if (np.diff(g.indptr) == 0).any() \
        else None
    for source in (0, 1234, 2499) + ((lone,) if lone is not None else ()):
        want = reference("bfs", g, source=source)
        r = gs.run("bfs", g, source=source, backend="gpu",
                   config=_ring(256, 64, launch="persistent"))
        assert compare("bfs", r.fields["depth"], want) is None, source


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
def test_gpu_ring_repeated_runs_all_match(launch):
    """Forty runs of a large road grid at small partitions: many blocks, many visits
    again, many activations racing a running partition; every run gives the reference."""
    from gswitch.locality import renumbered

    g, _, _ = renumbered(road(256, 256, seed=11), "hilbert")
    want = reference("bfs", g, source=0)
    cfg = _ring(128, 128, launch=launch)
    bad = [i for i in range(40)
           if compare("bfs", gs.run("bfs", g, source=0, backend="gpu", config=cfg)
                      .fields["depth"], want) is not None]
    assert bad == [], bad


@pytest.mark.gpu
@needs_gpu
def test_gpu_ring_is_one_step():
    g = grid2d(64, 64)
    r = gs.run("bfs", g, source=0, backend="gpu", config=_ring(256, 256))
    assert compare("bfs", r.fields["depth"], reference("bfs", g, source=0)) is None
    assert r.stats["iterations"] == 1, r.stats
