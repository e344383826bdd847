"""Minimum spanning forest (Boruvka) on the CPU engine against networkx and scipy: total
weight, a forest that spans every component, equal and negative weights, parallel edges,
the generated CUDA, and on a GPU where one is present.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from gswitch.algorithms.msf import forest_edges
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.generators import grid2d, rmat, road
from gswitch.plugins import get_registry
from gswitch.staging import stage_config
from gswitch.testing.nvcc import compile_source
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

pytestmark = pytest.mark.usefixtures("super_steps")

NAME = "minimum_spanning_forest"


def _weighted(g, seed=0, low=1.0, high=100.0):
    rng = np.random.default_rng(seed)
    src, dst = g.edges()
    once = src < dst
    w = rng.uniform(low, high, size=int(once.sum())).astype(np.float32)
    return gs.Graph.from_edges(src[once], dst[once], w, n_nodes=g.n_nodes, directed=False,
                               name=f"{g.name} weighted")


GENERATED = {
    "road": lambda: road(40, 40, seed=1),
    "rmat_weighted": lambda: _weighted(rmat(10, 6, seed=2).symmetrize().remove_self_loops()),
    "grid_equal_weights": lambda: grid2d(25, 30),
    "negative": lambda: _weighted(grid2d(12, 12), seed=3, low=-50.0, high=50.0),
    "parallel": lambda: gs.Graph.from_edges([0, 0, 1, 2, 2], [1, 1, 2, 3, 3],
                                            [5.0, 2.0, 1.0, 7.0, 3.0], directed=False),
    "forest": lambda: gs.Graph.from_edges([0, 1, 3, 5, 6], [1, 2, 4, 6, 7],
                                          [1.0, 1.0, 2.0, 3.0, 3.0], n_nodes=10,
                                          directed=False),
}


def _check_forest(graph, result):
    """The forest's edges are edges of the graph, it has no cycle, and it has the
    graph's connected components."""
    g = graph.symmetrize()
    edges = forest_edges(result)
    n = g.n_nodes
    s, d = g.edges()
    present = set(zip(s.tolist(), d.tolist()))
    assert all((u, v) in present for u, v, _ in edges)
    n_comp, labels = connected_components(g.to_scipy(), directed=False)
    if edges:
        u, v, _ = map(np.array, zip(*edges))
        f = sp.csr_array((np.ones(len(edges)), (u, v)), shape=(n, n))
    else:
        f = sp.csr_array((n, n))
    f_comp, f_labels = connected_components(f, directed=False)
    assert len(edges) == n - n_comp  # n - c edges spanning c components: no cycle
    assert f_comp == n_comp
    # each forest tree lies inside one graph component
    assert all(np.unique(labels[f_labels == t]).size == 1 for t in range(f_comp))


@pytest.mark.parametrize("graph_name", ZOO_NAMES)
def test_zoo_matches_networkx(graph_name):
    """Every zoo graph (symmetrised) gets networkx's forest weight and a spanning forest."""
    graph = zoo_graph(graph_name)
    r = gs.run(NAME, graph, backend="cpu")
    assert compare(NAME, r.fields["tree_w"], reference(NAME, graph)) is None
    _check_forest(graph, r)


@pytest.mark.parametrize("graph_name", sorted(GENERATED))
def test_generated_graphs(graph_name):
    graph = GENERATED[graph_name]()
    r = gs.run(NAME, graph, backend="cpu")
    assert compare(NAME, r.fields["tree_w"], reference(NAME, graph)) is None
    _check_forest(graph, r)


@pytest.mark.parametrize("graph_name", ["road", "rmat_weighted"])
def test_weight_equals_scipy(graph_name):
    """Positive weights: the total equals scipy's minimum_spanning_tree."""
    graph = GENERATED[graph_name]()
    r = gs.run(NAME, graph, backend="cpu")
    want = minimum_spanning_tree(graph.to_scipy()).sum()
    got = float(np.nansum(r.fields["tree_w"].astype(np.float64)))
    assert got == pytest.approx(want, rel=1e-5)


@pytest.mark.parametrize("method", ["rcm", "hilbert"])
def test_renumbered_forests_list_each_edge_smaller_end_first(method):
    """A renumbered run's forest is a spanning forest of the caller's graph with
    scipy's weight, and forest_edges lists each edge smaller end first, although the
    pairs come back from the renumbered ids."""
    graph = GENERATED["road"]()
    r = gs.run(NAME, graph, backend="cpu", config={"renumber": method})
    edges = forest_edges(r)
    assert edges and all(u < v for u, v, _ in edges)
    _check_forest(graph, r)
    want = minimum_spanning_tree(graph.to_scipy()).sum()
    assert sum(w for _, _, w in edges) == pytest.approx(want, rel=1e-5)


def test_distinct_weights_give_networkxs_edges():
    """With distinct weights the forest is unique: the same edges as networkx."""
    import networkx as nx

    graph = GENERATED["rmat_weighted"]()
    r = gs.run(NAME, graph, backend="cpu")
    h = nx.Graph()
    s, d = graph.edges()
    for u, v, w in zip(s.tolist(), d.tolist(), graph.weights.tolist()):
        h.add_edge(u, v, weight=w)
    want = {tuple(sorted(e)) for e in nx.minimum_spanning_tree(h).edges()}
    assert {(u, v) for u, v, _ in forest_edges(r)} == want


# one launch here; the compile matrix (tests/test_compile.py, -m compile_all) covers
# every launch with every strategy
@pytest.mark.compile
@pytest.mark.compile_all  # nvcc: .ci/run runs it with the compile matrix
@pytest.mark.parametrize("launch", ["persistent"])
def test_every_stage_compiles(launch, nvcc):
    spec = get_registry().algorithm(NAME)
    cfg = gs.Config({"launch": launch, **spec.config_defaults})
    for st in [s for s in spec.stages if isinstance(s, gs.AlgorithmSpec)]:
        for weighted in (False, True):
            gen = generate_source(st, stage_config(st, cfg), weighted=weighted)
            ok, out = compile_source(gen.source, nvcc=nvcc)
            assert ok, f"{st.stage_name} {launch} weighted={weighted}:\n{out[-3000:]}"


def test_the_tuner_checks_every_trial(tmp_path):
    from gswitch.tuner import tune

    result = tune(NAME, GENERATED["road"](), trials=3, backend="cpu", seed=0,
                  storage=f"journal://{tmp_path / 'studies.journal'}")
    assert result.counts.get("ok", 0) >= 1 and "wrong_answer" not in result.counts


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("graph_name", sorted(GENERATED))
def test_gpu_matches_networkx(graph_name):
    graph = GENERATED[graph_name]()
    r = gs.run(NAME, graph, backend="gpu")
    assert compare(NAME, r.fields["tree_w"], reference(NAME, graph)) is None
    _check_forest(graph, r)
