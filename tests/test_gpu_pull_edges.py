"""GPU suite for the edge-balanced pull gather (``direction.gather=edges``): topology
sweeps that pull cut the in-edges into merge-path tiles; every algorithm that pulls gives
the reference on the zoo graphs and on graphs whose in-degrees span many tiles, under
each launch, block size and items per thread."""

import functools

import numpy as np
import pytest

import gswitch as gs
from gswitch.plugins import get_registry
from gswitch.runner import check_combination
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

OUTPUT = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}
# (algorithm, variant or None for the default formulation): the formulations that pull
FORMS = [("bfs", None), ("sssp", "bellman_ford"), ("cc", "label_propagation"),
         ("pagerank", "residual_push"), ("pagerank", "power_pull")]


def _spec(algorithm, variant):
    reg = get_registry()
    return reg.variants[algorithm][variant] if variant else reg.algorithm(algorithm)


def _config(variant, **extra):
    cfg = {"driving": "topology", "direction": "pull", "direction.gather": "edges", **extra}
    if variant:
        cfg["variant"] = variant
    return gs.Config(cfg)


def _kwargs(algorithm, source=0):
    return {"source": source} if algorithm in ("bfs", "sssp") else {}


@functools.cache
def _graph(name):
    return zoo_graph(name)


@functools.cache
def _reference(algorithm, name):
    return reference(algorithm, _graph(name), **_kwargs(algorithm))


def _skewed():
    """In-degrees from 0 to far beyond a tile: node 0 gathers from every node, nodes
    1..200 from 300 feeders each, a run of 3000 nodes with no in-edge, and a few edges
    into the last nodes."""
    rng = np.random.default_rng(7)
    n = 5000
    every = np.arange(1, n)
    sinks = np.repeat(np.arange(1, 201), 300)
    feeders = rng.integers(3300, n, size=sinks.size)
    tail_dst = rng.integers(n - 50, n, size=400)
    tail_src = rng.integers(0, n, size=400)
    src = np.concatenate([every, feeders, np.zeros(200, np.int64), tail_src])
    dst = np.concatenate([np.zeros(n - 1, np.int64), sinks, np.arange(1, 201), tail_dst])
    w = rng.integers(1, 20, size=src.size).astype(np.float32)
    return gs.Graph.from_edges(src, dst, w, n_nodes=n)


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize("form", FORMS, ids=[f"{a}-{v or 'default'}" for a, v in FORMS])
def test_edge_gather_matches_reference_on_the_zoo(form, launch):
    """A topology sweep with the edge gather gives the reference on every zoo graph."""
    algorithm, variant = form
    # CUDA-graph replay cannot grow a queue: the bitmap worklist there
    extra = {"worklist": "bitmap"} if launch == "cuda_graph" else {}
    cfg = _config(variant, launch=launch, **extra)
    # every form listed pulls: a refusal is a defect, not a case to skip
    assert check_combination(_spec(algorithm, variant), None, cfg, "gpu") is None
    failures = []
    for name in ZOO_NAMES:
        g = _graph(name)
        if algorithm in ("bfs", "sssp") and g.n_nodes == 0:
            continue
        r = gs.run(algorithm, g, backend="gpu", config=cfg, **_kwargs(algorithm))
        problem = compare(algorithm, r.fields[OUTPUT[algorithm]], _reference(algorithm, name))
        if problem:
            failures.append(f"{name}: {problem}")
    assert not failures, "; ".join(failures)


@pytest.mark.parametrize(("block", "ipt"), [(64, 3), (256, 7), (256, 11), (1024, 7)])
@pytest.mark.parametrize("form", FORMS, ids=[f"{a}-{v or 'default'}" for a, v in FORMS])
def test_edge_gather_spreads_hubs_and_empty_rows(form, block, ipt):
    """Rows longer than a tile, tiles of empty rows and the capped items per thread (11
    does not fit a float64 value in shared memory; 1024 threads get fewer) stay exact."""
    algorithm, variant = form
    g = _skewed()
    ref = reference(algorithm, g, **_kwargs(algorithm, 3))
    for launch in ("host_loop", "persistent"):
        cfg = _config(variant, launch=launch, block_size=block, **{"direction.ipt": ipt})
        r = gs.run(algorithm, g, backend="gpu", config=cfg, **_kwargs(algorithm, 3))
        problem = compare(algorithm, r.fields[OUTPUT[algorithm]], ref)
        assert problem is None, f"{launch}: {problem}"


def test_tile_starts_follow_the_tile_size():
    """The tile starts a graph keeps between runs are searched again when the tile size
    changes (and back)."""
    g = _skewed()
    ref = reference("pagerank", g)
    for ipt in (3, 7, 3, 5):
        cfg = _config("power_pull", **{"direction.ipt": ipt})
        r = gs.run("pagerank", g, backend="gpu", config=cfg)
        assert compare("pagerank", r.fields["rank"], ref) is None, ipt


@pytest.mark.parametrize("direction", ["pull", "direction_optimizing"])
@pytest.mark.parametrize("algorithm", ["bfs", "cc"])
def test_temporal_hybrid_pulls_edges_in_sweeps_only(algorithm, direction):
    """With the temporal hybrid, sweeps gather edge-balanced and the other steps by
    node; the answers stay exact."""
    cfg = gs.Config({"driving": "temporal", "direction": direction,
                     "direction.gather": "edges"})
    for name in ("rmat", "road", "star"):
        g = _graph(name)
        r = gs.run(algorithm, g, backend="gpu", config=cfg, **_kwargs(algorithm))
        problem = compare(algorithm, r.fields[OUTPUT[algorithm]], _reference(algorithm, name))
        assert problem is None, f"{name}: {problem}"


def test_edge_and_node_gathers_agree_on_a_power_law_graph():
    """power_pull: the edge and the node gather give the same ranks to float rounding."""
    from gswitch.generators import rmat

    g = rmat(15, 16, seed=3)
    ranks = []
    for gather in ("nodes", "edges"):
        cfg = {"variant": "power_pull", "driving": "topology", "direction": "pull",
               "direction.gather": gather}
        r = gs.run("pagerank", g, backend="gpu", config=cfg)
        ranks.append(r.fields["rank"].astype(np.float64))
        assert r.stats["edges_processed"] == g.n_edges * r.stats["iterations"]
    assert float(np.abs(ranks[0] - ranks[1]).sum()) < 1e-5
