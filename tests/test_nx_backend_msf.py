"""networkx's spanning-tree functions through the gswitch backend, against networkx itself
and scipy."""

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import minimum_spanning_tree as scipy_mst

import gswitch as gs
from gswitch.nxbackend import BackendInterface, _dispatch, _msf


def _weighted(G, seed, integer=False):
    rng = np.random.default_rng(seed)
    for u, v, d in G.edges(data=True):
        d["weight"] = int(rng.integers(1, 5)) if integer else float(rng.random())
        d["tag"] = f"{u}-{v}"
    return G


def _multi():
    G = nx.MultiGraph()
    rng = np.random.default_rng(7)
    for _ in range(120):
        u, v = (int(x) for x in rng.integers(0, 30, 2))
        G.add_edge(u, v, key=f"k{int(rng.integers(0, 99))}", weight=int(rng.integers(1, 6)))
    return G


GRAPHS = {
    "distinct": lambda: _weighted(nx.gnm_random_graph(200, 700, seed=1), 1),
    "ties": lambda: _weighted(nx.gnm_random_graph(150, 500, seed=2), 2, integer=True),
    "disconnected": lambda: _weighted(nx.disjoint_union(nx.cycle_graph(9), nx.path_graph(6)),
                                      3, integer=True),
    "named": lambda: nx.relabel_nodes(_weighted(nx.grid_2d_graph(8, 9), 4, integer=True),
                                      lambda v: f"n{v}"),
    "loops": lambda: _weighted(nx.Graph([(0, 0), (0, 1), (1, 2), (2, 0), (2, 2), (3, 3)]),
                               5, integer=True),
    "multi": _multi,
}


@pytest.fixture
def calls(monkeypatch):
    """How many times the backend ran gswitch's minimum_spanning_forest."""
    seen = []
    real = _msf.run_algorithm

    def spy(name, graph, **kwargs):
        seen.append(name)
        return real(name, graph, **kwargs)

    monkeypatch.setattr(_msf, "run_algorithm", spy)
    return seen


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("func", ["minimum_spanning_edges", "maximum_spanning_edges"])
@pytest.mark.parametrize("keys,data", [(True, True), (False, True), (True, False),
                                       (False, False)])
def test_kruskal_edges_equal_networkx_in_order(name, func, keys, data, calls):
    """Kruskal's edges, tuples and order exactly as networkx yields them."""
    G = GRAPHS[name]()
    want = list(getattr(nx, func)(G, keys=keys, data=data))
    got = list(getattr(nx, func)(G, keys=keys, data=data, backend="gswitch"))
    assert got == want
    assert calls == ["minimum_spanning_forest"] * (G.number_of_edges() > 0)


@pytest.mark.parametrize("name,algorithm", [
    (name, algorithm) for name in sorted(GRAPHS) for algorithm in ("prim", "boruvka")
    if (name, algorithm) != ("multi", "boruvka")])  # networkx refuses: test_networkx_errors
def test_other_algorithms_give_a_forest_of_networkx_weight(name, algorithm):
    """Prim and Boruvka: a forest of networkx's weight (its edges where weights differ)."""
    G = GRAPHS[name]()
    want = nx.minimum_spanning_tree(G, algorithm=algorithm)
    got = nx.minimum_spanning_tree(G, algorithm=algorithm, backend="gswitch")
    assert got.size(weight="weight") == pytest.approx(want.size(weight="weight"))
    assert got.number_of_edges() == want.number_of_edges()
    assert nx.is_forest(got) and set(got) == set(G)
    weights = [d["weight"] for *_, d in G.edges(data=True)]
    if len(set(weights)) == len(weights):
        assert set(map(frozenset, got.edges())) == set(map(frozenset, want.edges()))


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("func", ["minimum_spanning_tree", "maximum_spanning_tree"])
def test_trees_equal_networkx(name, func):
    """The tree graph: class, graph attributes, nodes, edges, keys and data."""
    G = GRAPHS[name]()
    G.graph["title"] = name
    want = getattr(nx, func)(G)
    got = getattr(nx, func)(G, backend="gswitch")
    assert type(got) is type(want) and got.graph == want.graph
    assert dict(got.nodes(data=True)) == dict(want.nodes(data=True))
    assert got._adj == want._adj


def test_weight_equals_scipy():
    """An independent reference: scipy's forest weight on a larger random graph."""
    G = _weighted(nx.gnm_random_graph(2000, 8000, seed=11), 11)
    T = nx.minimum_spanning_tree(G, backend="gswitch")
    u, v, w = zip(*G.edges(data="weight"))
    a = sp.coo_array((w, (u, v)), shape=(2000, 2000)).tocsr()
    assert T.size(weight="weight") == pytest.approx(float(scipy_mst(a).sum()), rel=1e-12)


def test_weight_attribute_default_and_none():
    """A named weight, edges without it weighing 1, and ``weight=None``."""
    G = nx.Graph()
    G.add_edge(0, 1, cost=5)
    G.add_edge(1, 2, cost=1)
    G.add_edge(0, 2)
    G.add_edge(2, 3, cost=0.5)
    for weight in ("cost", None, "missing"):
        G.__networkx_cache__.clear()
        want = list(nx.minimum_spanning_edges(G, weight=weight, data=False))
        got = list(nx.minimum_spanning_edges(G, weight=weight, data=False, backend="gswitch"))
        assert got == want


def test_nan_weights():
    """``ignore_nan`` leaves NaN edges out; without it a NaN raises when read."""
    G = _weighted(nx.gnm_random_graph(40, 90, seed=3), 3)
    G.add_edge(0, 41, weight=math.nan)
    G.add_edge(3, 5, weight=math.nan)
    want = list(nx.minimum_spanning_edges(G, ignore_nan=True, data=False))
    got = list(nx.minimum_spanning_edges(G, ignore_nan=True, data=False, backend="gswitch"))
    assert got == want and not any(41 in e for e in got)
    edges = nx.minimum_spanning_edges(G, backend="gswitch")
    with pytest.raises(ValueError, match="NaN found as an edge weight"):
        list(edges)
    with pytest.raises(ValueError, match="NaN found"):
        nx.minimum_spanning_tree(G, backend="gswitch")


def test_networkx_errors():
    """Directed graphs, Boruvka on a multigraph and unknown algorithms raise as in
    networkx."""
    with pytest.raises(nx.NetworkXNotImplemented):
        list(nx.minimum_spanning_edges(nx.DiGraph([(0, 1)]), backend="gswitch"))
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.minimum_spanning_tree(nx.DiGraph([(0, 1)]), backend="gswitch")
    with pytest.raises(nx.NetworkXNotImplemented):
        list(nx.maximum_spanning_edges(_multi(), algorithm="boruvka", backend="gswitch"))
    with pytest.raises(ValueError, match="random is not a valid choice for an algorithm"):
        nx.minimum_spanning_tree(nx.path_graph(3), algorithm="random", backend="gswitch")
    for backend in ("networkx", "gswitch"):  # directed first, as networkx checks
        with pytest.raises(nx.NetworkXNotImplemented):
            nx.minimum_spanning_tree(nx.DiGraph([(0, 1)]), algorithm="random",
                                     backend=backend)


def test_too_many_edges_to_rank_are_refused_at_the_call(monkeypatch):
    """A graph past the edges float32 ranks exactly is refused when the edges are asked
    for, not when the generator is read: networkx then answers, the spanning tree too
    (networkx's tree reads the edges through the dispatched minimum_spanning_edges)."""
    monkeypatch.setattr(_msf, "_EXACT_RANKS", 3)
    G = _weighted(nx.path_graph(6), 1)
    with pytest.raises(NotImplementedError):
        nx.minimum_spanning_edges(G, backend="gswitch")
    want = list(nx.minimum_spanning_edges(G, backend="networkx"))
    tree = nx.minimum_spanning_tree(G, backend="networkx")
    monkeypatch.setattr(_dispatch, "SMALL_GRAPH", {})
    monkeypatch.setattr(nx.config.backend_priority, "algos", ["gswitch"])
    assert list(nx.minimum_spanning_edges(G)) == want
    assert nx.utils.graphs_equal(nx.minimum_spanning_tree(G), tree)


def test_empty_and_edgeless_graphs():
    """No nodes, or nodes without edges: an edgeless tree with every node."""
    for G in (nx.Graph(), nx.empty_graph(4)):
        T = nx.minimum_spanning_tree(G, backend="gswitch")
        assert sorted(T) == sorted(G) and T.number_of_edges() == 0


def test_a_converted_graph_runs():
    """A graph converted beforehand gives the edges and the weights it holds."""
    G = GRAPHS["ties"]()
    H = BackendInterface.convert_from_nx(G, edge_attrs={"weight": 1})
    got = [(u, v, d["weight"]) for u, v, d in nx.minimum_spanning_edges(H)]
    assert got == [(u, v, d["weight"]) for u, v, d in nx.minimum_spanning_edges(G)]


def test_callable_weight_falls_back():
    """A callable weight is refused with a reason."""
    reason = BackendInterface.can_run("minimum_spanning_tree", (nx.path_graph(3),),
                                      {"weight": lambda u, v, d: 1})
    assert isinstance(reason, str) and "callable" in reason


def test_the_backend_lists_them():
    for name in ("minimum_spanning_edges", "maximum_spanning_edges", "minimum_spanning_tree",
                 "maximum_spanning_tree"):
        assert hasattr(BackendInterface, name)


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("name", ["distinct", "ties", "multi"])
def test_gpu_gives_networkx_kruskal_edges(name):
    """On the GPU engine: networkx's Kruskal edges in its order."""
    G = GRAPHS[name]()
    cfg = nx.config.backends.gswitch
    try:
        cfg.backend = "gpu"
        got = list(nx.minimum_spanning_edges(G, backend="gswitch"))
    finally:
        cfg.backend = "auto"
    assert got == list(nx.minimum_spanning_edges(G))
