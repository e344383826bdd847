"""Tests for graph_info / format_info against networkx and hand-computed values."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from scipy.sparse import csgraph

from gswitch.analysis import format_info, gini, graph_info
from gswitch.generators import grid2d, path, rmat, star, uniform_random
from gswitch.graph import Graph
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph


def to_networkx(g: Graph) -> nx.MultiDiGraph:
    ref = nx.MultiDiGraph()
    ref.add_nodes_from(range(g.n_nodes))
    src, dst = g.edges()
    ref.add_edges_from(zip(src.tolist(), dst.tolist()))
    return ref


def largest_component_diameter(g: Graph) -> int:
    und = nx.Graph(to_networkx(g).to_undirected())
    if und.number_of_nodes() == 0:
        return 0
    comp = max(nx.connected_components(und), key=len)
    return nx.diameter(und.subgraph(comp))


def largest_component_eccentricities(g: Graph) -> set[int]:
    """Hop eccentricities (direction ignored) of the largest weak component, via scipy."""
    if g.n_nodes == 0:
        return {0}
    adj = g.to_scipy()
    _, labels = csgraph.connected_components(adj, directed=True, connection="weak")
    members = np.flatnonzero(labels == np.argmax(np.bincount(labels)))
    dist = csgraph.shortest_path(adj, directed=False, unweighted=True, indices=members)
    return {int(d) for d in dist[:, members].max(axis=1)}


@pytest.mark.parametrize(
    "graph",
    [path(1), path(2), path(300), path(300, directed=True), grid2d(7, 11), grid2d(1, 30),
     star(50), grid2d(20, 20)],
    ids=lambda g: g.name,
)
def test_diameter_exact_on_paths_grids_and_trees(graph):
    """Double sweep gives the exact diameter on paths, stars and grids."""
    assert graph_info(graph)["diameter_estimate"] == largest_component_diameter(graph)


@pytest.mark.parametrize("seed", range(3))
def test_diameter_exact_on_random_trees(seed):
    """Double sweep is exact on trees."""
    tree = nx.random_labeled_tree(200, seed=seed)
    src, dst = zip(*tree.edges())
    g = Graph.from_edges(src, dst, n_nodes=200, directed=False)
    assert graph_info(g)["diameter_estimate"] == nx.diameter(tree)


@pytest.mark.parametrize("name", ZOO_NAMES)
def test_info_matches_networkx_on_zoo(name):
    """Counts, components and a diameter lower bound agree with networkx on every zoo graph."""
    g = zoo_graph(name)
    ref = to_networkx(g)
    info = graph_info(g)
    assert info["n_nodes"] == ref.number_of_nodes()
    assert info["n_edges"] == ref.number_of_edges()
    assert info["n_self_loops"] == nx.number_of_selfloops(ref)
    pairs = list(ref.edges())
    assert info["n_duplicate_edges"] == len(pairs) - len(set(pairs))
    assert info["symmetric"] == all(ref.has_edge(v, u) for u, v in pairs)
    assert info["n_components"] == (nx.number_weakly_connected_components(ref) if len(ref) else 0)
    if len(ref):
        degs = [d for _, d in ref.out_degree()]
        assert (info["degree_min"], info["degree_max"]) == (min(degs), max(degs))
        assert info["degree_mean"] == pytest.approx(np.mean(degs))
        largest = max(nx.weakly_connected_components(ref), key=len)
        assert info["largest_component"] == len(largest)
    assert info["diameter_estimate"] in largest_component_eccentricities(g)
    assert info["weighted"] and info["weight_min"] is None or info["weight_min"] >= 1


def test_disconnected_graph_gives_finite_estimate():
    """Two paths of different length: the estimate is the longer one's diameter."""
    g = Graph.from_edges([0, 1, 2, 10, 11], [1, 2, 3, 11, 12], n_nodes=14, directed=False)
    info = graph_info(g)
    assert info["n_components"] == 2 + 7  # {0..3}, {10..12} and isolated 4..9, 13
    assert info["diameter_estimate"] == 3 and info["largest_component"] == 4


def test_degree_skew_measures():
    """Star and RMAT are skewed; a grid is nearly regular."""
    s, r, g = graph_info(star(101)), graph_info(rmat(10, seed=0)), graph_info(grid2d(20, 20))
    assert s["degree_max_over_mean"] == pytest.approx(100 / (200 / 101))
    assert r["degree_max_over_mean"] > 10 and r["degree_gini"] > 0.5
    assert g["degree_max_over_mean"] < 1.1 and g["degree_gini"] < 0.1


@pytest.mark.parametrize(
    ("values", "expected"),
    [([1, 1, 1, 1], 0.0), ([0, 0, 0, 4], 0.75), ([], 0.0), ([0, 0], 0.0), ([1, 3], 0.25)],
)
def test_gini_hand_computed(values, expected):
    """Gini = sum |xi - xj| / (2 n^2 mean), checked on small cases."""
    assert gini(np.array(values)) == pytest.approx(expected)


def test_gini_matches_pairwise_definition():
    """The sorted-rank formula equals the pairwise definition."""
    x = np.random.default_rng(0).integers(0, 50, 200).astype(float)
    pairwise = np.abs(x[:, None] - x[None, :]).sum() / (2 * x.size**2 * x.mean())
    assert gini(x) == pytest.approx(pairwise)


def test_empty_graph_info():
    """A graph without nodes has zeros, not errors."""
    info = graph_info(Graph.from_edges([], []))
    assert info["n_nodes"] == 0 and info["n_components"] == 0 and info["diameter_estimate"] == 0


def test_weight_range():
    """weight_min / weight_max come from the weights, None when unweighted."""
    info = graph_info(Graph.from_edges([0, 1], [1, 2], [2.5, -1.0]))
    assert (info["weight_min"], info["weight_max"]) == (-1.0, 2.5)
    assert graph_info(path(3))["weight_min"] is None


def test_format_info_is_readable():
    """format_info prints one aligned label per line with the values."""
    g = uniform_random(100, 300, seed=1, weighted=True)
    text = format_info(graph_info(g))
    lines = text.splitlines()
    assert any(line.startswith("nodes:") and "100" in line for line in lines)
    assert any("diameter (lower bound):" in line for line in lines)
    values_start = {len(line) - len(line.split(":", 1)[1].lstrip()) for line in lines}
    assert len(values_start) == 1  # values are aligned in one column
    assert not text.endswith("\n")
