"""networkx's weighted betweenness and edge betweenness through the gswitch backend,
against networkx itself."""

import random

import networkx as nx
import pytest

from gswitch.nxbackend import BackendInterface, _dispatch
from gswitch.nxbackend._centrality import edge_betweenness_centrality
from gswitch.nxbackend._graph import from_networkx


def _weighted(G, seed, low=1, high=3):
    rng = random.Random(seed)
    for _, _, d in G.edges(data=True):
        d["weight"] = rng.randint(low, high)
    return G


GRAPHS = {
    "undirected": lambda: _weighted(nx.gnm_random_graph(40, 100, seed=2), 1),
    "directed": lambda: _weighted(nx.gnm_random_graph(40, 120, seed=3, directed=True), 2),
    "strings": lambda: nx.relabel_nodes(_weighted(nx.grid_2d_graph(4, 5), 3),
                                        lambda v: f"n{v[0]}-{v[1]}"),
    "disconnected": lambda: _weighted(nx.disjoint_union(nx.path_graph(5),
                                                        nx.cycle_graph(6)), 4),
    "halves": lambda: _weighted(nx.gnm_random_graph(25, 60, seed=5), 5, 1, 4),
}
OPTIONS = ({}, {"normalized": False}, {"k": 7, "seed": 3},
           {"k": 7, "seed": 3, "normalized": False})


def _close(got, want):
    assert list(got) == list(want)
    assert all(got[e] == pytest.approx(want[e], rel=1e-9, abs=1e-12) for e in want)


@pytest.mark.parametrize("weight", [None, "weight"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_edge_betweenness_equals_networkx(name, weight):
    """Every option, weighted or not: networkx's values, keyed in networkx's edge order."""
    G = GRAPHS[name]()
    for kw in OPTIONS:
        got = nx.edge_betweenness_centrality(G, weight=weight, backend="gswitch", **kw)
        _close(got, nx.edge_betweenness_centrality(G, weight=weight, **kw))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_weighted_betweenness_equals_networkx(name):
    """betweenness_centrality(weight=...) runs weighted_betweenness: networkx's values."""
    G = GRAPHS[name]()
    for kw in OPTIONS + ({"endpoints": True}, {"k": 7, "seed": 3, "endpoints": True}):
        got = nx.betweenness_centrality(G, weight="weight", backend="gswitch", **kw)
        _close(got, nx.betweenness_centrality(G, weight="weight", **kw))


@pytest.mark.parametrize("cls", [nx.MultiGraph, nx.MultiDiGraph])
def test_multigraph_edges_split_over_the_lightest_keys(cls):
    """A pair's value goes to its lightest parallel edges, evenly, as networkx splits it."""
    G = cls()
    G.add_weighted_edges_from([(0, 1, 2), (0, 1, 1), (0, 1, 1), (1, 2, 1), (2, 3, 3),
                               (0, 3, 5), (3, 3, 1), (2, 0, 2)])
    G.add_edge(1, 2, key="named", weight=4)
    for weight in (None, "weight"):
        for kw in ({}, {"normalized": False}):
            got = nx.edge_betweenness_centrality(G, weight=weight, backend="gswitch", **kw)
            _close(got, nx.edge_betweenness_centrality(G, weight=weight, **kw))
        got = nx.betweenness_centrality(G, weight=weight, backend="gswitch")
        _close(got, nx.betweenness_centrality(G, weight=weight))


def test_weights_gswitch_cannot_tie_exactly_fall_back():
    """Weights not exact in float32 or not positive leave the call to networkx (a
    NotImplementedError, which networkx's dispatcher answers by running itself); a
    callable weight is refused up front."""
    G = nx.path_graph(4)
    for u, v in G.edges:
        G[u][v]["weight"] = 0.1
    with pytest.raises(NotImplementedError, match="not exact in float32"):
        edge_betweenness_centrality(from_networkx(G, {"weight": 1}), weight="weight")
    G[0][1]["weight"] = 0
    with pytest.raises(NotImplementedError, match="positive"):
        edge_betweenness_centrality(from_networkx(G, {"weight": 1}), weight="weight")
    assert isinstance(BackendInterface.can_run("edge_betweenness_centrality", (G,),
                                               {"weight": lambda u, v, d: 1}), str)
    assert BackendInterface.can_run("edge_betweenness_centrality", (G,),
                                    {"weight": "weight"}) is True


def test_empty_graph_and_the_backend_lists_them():
    assert nx.edge_betweenness_centrality(nx.Graph(), backend="gswitch") == {}
    for name in ("betweenness_centrality", "edge_betweenness_centrality"):
        assert hasattr(BackendInterface, name)


@pytest.mark.parametrize("name", ["betweenness_centrality", "edge_betweenness_centrality"])
def test_refused_weights_leave_networkx_the_random_state(name, monkeypatch):
    """A sampled call whose weights gswitch refuses (not exact in float32) falls back to
    networkx with the random state it was given, untouched: networkx samples the
    sources it would have."""
    G = nx.DiGraph([(0, 3, {"cost": 1.25}), (1, 3, {"cost": 0.1}), (2, 3, {"cost": 0.3})])
    func = getattr(nx, name)
    kw = {"k": 1, "weight": "cost", "normalized": False}
    if name == "betweenness_centrality":
        kw["endpoints"] = True  # else a sampled source's value is NaN
    want = func(G, seed=random.Random(31), backend="networkx", **kw)
    monkeypatch.setattr(_dispatch, "SMALL_GRAPH", {})
    monkeypatch.setattr(nx.config.backend_priority, "algos", ["gswitch"])
    assert func(G, seed=random.Random(31), **kw) == want


@pytest.mark.parametrize("name", ["betweenness_centrality", "edge_betweenness_centrality"])
def test_infinite_weights_fall_back(name, monkeypatch):
    """networkx reaches the nodes behind an infinite weight (at distance inf) and counts
    their paths: left to networkx."""
    G = nx.Graph([(0, 1, {"weight": 1.0}), (0, 2, {"weight": float("inf")}),
                  (2, 3, {"weight": 2.5}), (3, 4, {"weight": 1.0})])
    func = getattr(nx, name)
    want = func(G, weight="weight", normalized=False, backend="networkx")
    monkeypatch.setattr(_dispatch, "SMALL_GRAPH", {})
    monkeypatch.setattr(nx.config.backend_priority, "algos", ["gswitch"])
    assert func(G, weight="weight", normalized=False) == want
    with pytest.raises(NotImplementedError):
        func(G, weight="weight", backend="gswitch")


@pytest.mark.parametrize("name", ["betweenness_centrality", "edge_betweenness_centrality"])
def test_weights_float64_sums_lose_fall_back(name):
    """Weights so far apart that a float64 path sum no longer grows by the lightest
    (2**70 and 1) are left to networkx, which adds Python ints exactly: not gswitch's
    InvalidInput about a zero-length cycle."""
    G = nx.path_graph(4)
    nx.set_edge_attributes(G, 1, "weight")
    G[0][1]["weight"] = 2**70
    with pytest.raises(NotImplementedError):
        getattr(nx, name)(G, weight="weight", backend="gswitch")


@pytest.mark.parametrize("name", ["betweenness_centrality", "edge_betweenness_centrality"])
def test_sampling_more_nodes_than_an_empty_graph_has_raises(name):
    """k=1 on an empty graph is networkx's ValueError, not an empty answer."""
    with pytest.raises(ValueError, match="Sample larger than population"):
        getattr(nx, name)(nx.Graph(), k=1, backend="gswitch")


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("weight", [None, "weight"])
def test_zero_sampled_sources_raise_as_networkx(normalized, weight):
    """k=0 divides by zero sampled sources: networkx's ZeroDivisionError, not NaNs."""
    G = _weighted(nx.path_graph(4), 1)
    for func in (nx.betweenness_centrality, nx.edge_betweenness_centrality):
        with pytest.raises(ZeroDivisionError):
            func(G, k=0, normalized=normalized, weight=weight)
        with pytest.raises(ZeroDivisionError):
            func(G, k=0, normalized=normalized, weight=weight, backend="gswitch")
