"""Ordered passes inside spatial partitions: SSSP's ``delta_stepping`` variant under
spatial driving takes, after a partition's first pass, the queued nodes of the nearest
priority bucket first (delta-stepping inside a partition). Both engines, against
scipy's Dijkstra; the edges it saves against the unordered ``bellman_ford``; its
refusals; and the GPU suite (marked ``gpu``, skipped without a device).
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from gswitch.strategies.driving.spatial import SpatialDriving

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.config import Config
from gswitch.engine.cpu_local import near_split
from gswitch.generators import clique_chain, road
from gswitch.plugins import get_registry
from gswitch.testing.nvcc import compile_source
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

# spatial does its steps on the CPU (no shortest-path closure)
pytestmark = pytest.mark.usefixtures("super_steps")

WIDTHS = (1.0 / 16, 1.0, 16.0)


def _sssp(graph, cfg, backend="cpu", variant="delta_stepping"):
    r = gs.run("sssp", graph, source=0, backend=backend,
               config={"direction": "push", "variant": variant, "driving": "spatial", **cfg})
    problem = compare("sssp", r.fields["dist"], reference("sssp", graph, source=0))
    assert problem is None, (graph.name, variant, cfg, backend, problem)
    return r


def _ordered(size, scale, local=None):
    cfg = {"driving.partition_size": size, "driving.width_scale": scale}
    if local is not None:
        cfg["driving.local_iterations"] = local
    return cfg


@pytest.mark.parametrize("graph_name", [n for n in ZOO_NAMES if n != "empty"])
def test_ordered_passes_give_the_reference_on_the_zoo(graph_name):
    """Three widths, two partition sizes, to local stability and for three passes at
    most (whose last pass takes every queued node, held or not)."""
    g = zoo_graph(graph_name)
    for size in (32, 256):
        for scale in WIDTHS:
            for local in (None, 3):
                _sssp(g, _ordered(size, scale, local))


def test_ordered_passes_relax_each_chain_edge_about_once():
    """On the chain of weighted 32-node cliques, unordered passes relax a clique again
    for each improvement of its entry; ordered ones rarely: the same steps (the fixed
    point of a partition and so the partitions it marks do not depend on the order),
    at most a third of the edges, and about each edge once with narrow buckets."""
    g = clique_chain(64, 32, weighted=True, seed=1)
    for size in (256, 2048):
        plain = _sssp(g, {"driving.partition_size": size}, variant="bellman_ford")
        for scale in (1.0 / 16, 1.0):
            r = _sssp(g, _ordered(size, scale))
            assert r.stats["iterations"] == plain.stats["iterations"], (size, scale)
            assert 3 * r.stats["edges_processed"] < plain.stats["edges_processed"]
        narrow = _sssp(g, _ordered(size, 1.0 / 64))
        assert g.n_edges <= narrow.stats["edges_processed"] < 1.1 * g.n_edges


def test_ordered_passes_on_a_road_grid_and_a_long_path():
    for g in (road(20, 20, seed=3), zoo_graph("path")):
        for scale in WIDTHS:
            _sssp(g, _ordered(64, scale))


def test_near_split_takes_the_nearest_bucket():
    nodes = np.array([3, 5, 8, 9], dtype=np.int32)
    near, held, b = near_split(nodes, np.array([4, 2, 7, 2]), -1)
    assert (near.tolist(), held.tolist(), b) == ([5, 9], [3, 8], 2)
    # the bucket never goes back: a later queue of lower buckets takes up to it
    near, held, b = near_split(nodes, np.array([1, 6, 5, 3]), b)
    assert (near.tolist(), held.tolist(), b) == ([3], [5, 8, 9], 2)
    near, held, b = near_split(nodes[:0], np.array([], dtype=np.int64), b)
    assert near.size == held.size == 0 and b == 2


def test_width_scale_orders_only_where_there_is_a_priority_key():
    """bellman_ford declares no priority key: the width changes nothing there, and is
    not refused (so a draw over spatial's parameters stays valid); delta_stepping's
    passes change with it."""
    g = clique_chain(16, 32, weighted=True, seed=4)
    for variant, same in (("bellman_ford", True), ("delta_stepping", False)):
        a, b = (_sssp(g, {"driving.partition_size": 256, "driving.width_scale": w},
                      variant=variant).stats["edges_processed"] for w in (1.0 / 16, 16.0))
        assert (a == b) == same, (variant, a, b)


def test_width_scale_is_refused_where_the_algorithm_fixes_the_width():
    spec = get_registry().algorithm("core_number", "peel_buckets")
    assert spec.priority_width is not None
    strat = SpatialDriving({**{k: v.default for k, v in SpatialDriving.params.items()},
                            "width_scale": 2.0})
    assert "fixes its bucket width" in strat._width_problem(spec)
    assert SpatialDriving({**{k: v.default for k, v in SpatialDriving.params.items()}}
                          )._width_problem(spec) is None


def test_ordered_width_follows_the_graph():
    g = clique_chain(8, 32, weighted=True, seed=1)
    strat = SpatialDriving({**{k: v.default for k, v in SpatialDriving.params.items()},
                            "width_scale": 4.0})
    base = 32 * g.mean_weight / (g.n_edges / g.n_nodes)
    assert strat.local_width(g, None) == pytest.approx(4.0 * base)
    assert strat.local_width(g, 2.0) == 2.0  # the algorithm's own width
    args = strat.runtime_args(g, None)
    assert args["inv_width"][1] == pytest.approx(1.0 / (4.0 * base))


def test_the_gpu_search_offers_ordered_passes():
    """The tuner's GPU search for SSSP offers spatial driving under delta_stepping, with
    the width among spatial's searched parameters, and a drawn width gives a valid
    configuration of either formulation."""
    from gswitch.tuner import build_space

    space = build_space(get_registry().algorithm("sssp"),
                        clique_chain(4, 32, weighted=True, seed=1), "gpu")
    assert "spatial" in space.axis_choices("driving", "delta_stepping")[1]
    assert "spatial" in space.axis_choices("driving", "bellman_ford")[1]
    assert "width_scale" in space.strategy_params("delta_stepping", "driving", "spatial")
    for variant in ("delta_stepping", "bellman_ford"):
        cfg = gs.Config({"variant": variant, "direction": "push", "driving": "spatial",
                         "driving.width_scale": 0.25})
        assert space.spec(cfg).variant == variant
        assert gs.runner.check_combination(space.spec(cfg), None, cfg, "gpu") is None


def test_the_search_draws_partitions_of_a_multiple_of_32():
    """The tuner draws only the searched partition sizes (powers of two from 32, which
    take the marked and ordered passes on the GPU), moves between neighbouring ones, and
    reads a study's stray size as the nearest of them; any size in the range stays a
    valid configuration."""
    import optuna
    from gswitch.tuner import build_space
    from gswitch.tuner.space import moves

    size = SpatialDriving.params["partition_size"]
    assert size.searched == tuple(32 << k for k in range(8))
    space = build_space(get_registry().algorithm("bfs"), road(8, 8), "gpu")
    axis, choices = space.axis_choices("driving", space.default_variant)
    assert "spatial" in choices
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    drawn = set()
    for _ in range(60):
        study.enqueue_trial({axis: "spatial"})
        trial = study.ask()
        cfg = space.suggest(trial)
        if cfg["driving"] == "spatial":
            drawn.add(cfg["driving.partition_size"])
            full = dict(trial.params)
        study.tell(trial, 1.0)
    assert drawn and drawn <= set(size.searched) and len(drawn) >= 4
    assert moves(size, 256) == [512, 128, 2048, 32]
    assert moves(size, 4096) == [2048, 512]
    assert size.nearest_searched(100) == 128 and size.nearest_searched(90) == 64
    # a configuration's own size enqueues as the nearest searched one
    params = space.trial_params({"driving": "spatial", "driving.partition_size": 100})
    assert 128 in params.values() and 100 not in params.values()
    # a move that paid is continued to the next searched size the same way, and stops
    # at the end of the list
    key = next(k for k, v in params.items() if v == 128)
    assert space.continued({**full, key: 256}, {**full, key: 128})[key] == 512
    assert space.continued({**full, key: 64}, {**full, key: 128})[key] == 32
    assert space.continued({**full, key: 4096}, {**full, key: 2048}) is None
    assert space.config({**full, key: 300})["driving.partition_size"] == 256
    assert gs.Config({"driving": "spatial", "driving.partition_size": 100})[
        "driving.partition_size"] == 100


@pytest.mark.compile
def test_ordered_passes_compile(nvcc):
    """The ordered kernel (its bucket from the staged distances and from global memory),
    with each launch, and the generated source names it only where there is a key."""
    reg = get_registry()
    cases = [("delta_stepping", {"launch": launch, "block_size": 1024})
             for launch in ("host_loop", "persistent", "cuda_graph")]
    sources = [generate_source(reg.algorithm("sssp", v),
                               Config({"direction": "push", "driving": "spatial", **c}),
                               weighted=True).source for v, c in cases]
    assert all("double gs_priority_local(" in src for src in sources)
    plain = generate_source(reg.algorithm("sssp", "bellman_ford"),
                            Config({"direction": "push", "driving": "spatial"}),
                            weighted=True).source
    assert "double gs_priority_local(" not in plain and "#define GS_HAS_PRIORITY 0" in plain
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda src: compile_source(src, nvcc=nvcc), sources))
    for case, (ok, out) in zip(cases, results, strict=True):
        assert ok, (case, out[-2000:])


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_gpu_ordered_passes_give_the_reference(launch):
    graphs = [zoo_graph(n) for n in ZOO_NAMES] + [
        clique_chain(12, 32, weighted=True, seed=2), road(24, 24, seed=5)]
    for g in graphs:
        if g.n_nodes == 0:
            continue
        for size in (96, 4096, 100):
            for scale in WIDTHS:
                _sssp(g, {**_ordered(size, scale), "launch": launch}, "gpu")
        for block in (64, 1024):  # a warp per held node, and 32 in turns
            _sssp(g, {**_ordered(256, 1.0, 3), "launch": launch, "block_size": block},
                  "gpu")


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
def test_gpu_ordered_passes_relax_fewer_edges():
    """The GPU's steps are the CPU engine's, and ordered passes relax at most half the
    edges unordered ones do (blocks read values as other warps improve them, so the
    counts are not the CPU's)."""
    g = clique_chain(64, 32, weighted=True, seed=1)
    for size in (256, 2048):
        cfg = {"driving.partition_size": size, "block_size": 1024}
        plain = _sssp(g, cfg, "gpu", variant="bellman_ford")
        cpu = _sssp(g, _ordered(size, 1.0))
        gpu = _sssp(g, {**cfg, **_ordered(size, 1.0)}, "gpu")
        assert gpu.stats["iterations"] == cpu.stats["iterations"], size
        assert 2 * gpu.stats["edges_processed"] < plain.stats["edges_processed"], size
