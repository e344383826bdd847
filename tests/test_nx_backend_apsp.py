"""networkx's all-pairs path lengths, Floyd-Warshall and closeness through the gswitch
backend, against networkx itself."""

import itertools
from unittest import mock

import networkx as nx
import pytest

from gswitch.nxbackend import BackendInterface, _apsp, _dispatch

# each test converts a graph once and calls several functions on the cached conversion
pytestmark = pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs")

GRAPHS = {
    "gnp-directed": lambda: nx.gnp_random_graph(150, 0.02, seed=3, directed=True),
    "gnp": lambda: nx.gnp_random_graph(140, 0.02, seed=4),
    "named": lambda: nx.relabel_nodes(nx.gnp_random_graph(80, 0.05, seed=5, directed=True),
                                      {i: f"v{i}" for i in range(80)}),
    "grid": lambda: nx.convert_node_labels_to_integers(nx.grid_2d_graph(9, 11)),
    "multi": lambda: nx.MultiDiGraph([(0, 1), (0, 1), (1, 2), (3, 3), (2, 0), (4, 2)]),
    "isolated": lambda: nx.empty_graph(3),
}


def _weighted(G, seed=1):
    edges = G.edges(keys=True) if G.is_multigraph() else G.edges()
    for k, e in enumerate(edges):
        G.edges[e]["weight"] = 0.5 + (k * 7919 + seed) % 13 / 4
    return G


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_all_pairs_shortest_path_length_equals_networkx(name):
    """Same dicts, the same nodes in the same order of sources, with and without a
    cutoff; each dict lists nodes level by level."""
    G = GRAPHS[name]()
    for cutoff in (None, 2):
        got = list(nx.all_pairs_shortest_path_length(G, cutoff=cutoff, backend="gswitch"))
        want = list(nx.all_pairs_shortest_path_length(G, cutoff=cutoff))
        assert [s for s, _ in got] == [s for s, _ in want] and dict(got) == dict(want)
        for _, lengths in got:
            assert list(lengths.values()) == sorted(lengths.values())


def test_all_pairs_shortest_path_length_is_lazy_by_batches():
    """Taking the first pair runs one traversal of 64 sources, not one per node."""
    G = GRAPHS["gnp-directed"]()
    with mock.patch.object(_apsp, "run_algorithm", wraps=_apsp.run_algorithm) as run:
        gen = nx.all_pairs_shortest_path_length(G, backend="gswitch")
        assert run.call_count == 0
        first = list(itertools.islice(gen, 64))
        assert run.call_count == 1 and len(first) == 64
        next(gen)
        assert run.call_count == 2
    assert run.call_args.kwargs["sources"].tolist() == list(range(64, 128))


@pytest.mark.parametrize("graph", [
    pytest.param(lambda: nx.gnp_random_graph(40, 0.08, seed=3, directed=True), id="directed"),
    pytest.param(lambda: nx.gnp_random_graph(40, 0.08, seed=4), id="undirected"),
    pytest.param(GRAPHS["multi"], id="multi")])
def test_all_pairs_dijkstra_path_length_equals_networkx(graph):
    """Weighted lengths equal networkx's, with and without a cutoff (one SSSP per node:
    small graphs)."""
    G = _weighted(graph())
    for cutoff in (None, 3.0):
        got = dict(nx.all_pairs_dijkstra_path_length(G, cutoff=cutoff, backend="gswitch"))
        want = dict(nx.all_pairs_dijkstra_path_length(G, cutoff=cutoff))
        assert got.keys() == want.keys()
        for s in want:
            assert got[s] == pytest.approx(want[s])


def test_integer_lengths_past_float32_stay_exact_ints():
    """Integer lengths past 2**24 are networkx's exact ints (float32 rounds them), from
    every source of the lazy all-pairs generator, not a NotImplementedError at the
    first source that reaches that far."""
    G = nx.path_graph(4)
    nx.set_edge_attributes(G, 2**23, "weight")
    G.add_edge(2, 3, weight=1)
    want = dict(nx.all_pairs_dijkstra_path_length(G))
    assert want[0][3] == 2**24 + 1
    got = dict(nx.all_pairs_dijkstra_path_length(G, backend="gswitch"))
    assert got == want and all(type(x) is int for d in got.values() for x in d.values())
    assert nx.single_source_dijkstra_path_length(G, 0, backend="gswitch") == want[0]


@pytest.mark.parametrize("weight", ["weight", None])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_floyd_warshall_equals_networkx(name, weight):
    """Every pair, inf where unreachable, the inner defaults too."""
    G = _weighted(GRAPHS[name]()) if weight else GRAPHS[name]()
    got = nx.floyd_warshall(G, weight=weight or "missing", backend="gswitch")
    want = nx.floyd_warshall(G, weight=weight or "missing")
    assert got.keys() == want.keys()
    for u in want:
        assert dict(got[u]) == pytest.approx(dict(want[u]))
    u = next(iter(G), None)
    if u is not None:
        assert got[u]["not a node"] == float("inf")


@pytest.mark.parametrize("back", [-2.0, float("nan")], ids=["negative-cycle", "nan"])
def test_floyd_warshall_leaves_order_dependent_answers_to_networkx(back, monkeypatch):
    """A negative cycle or a NaN weight leaves values that depend on the order of the
    updates: networkx answers (a negative edge on no cycle stays with gswitch)."""
    G = nx.DiGraph([(0, 1, {"weight": 1.0}), (1, 2, {"weight": -0.5}), (2, 3, {})])
    assert dict(nx.floyd_warshall(G, backend="gswitch")) == dict(nx.floyd_warshall(G))
    G.add_edge(1, 0, weight=back)
    want = {u: dict(d) for u, d in nx.floyd_warshall(G, backend="networkx").items()}
    monkeypatch.setattr(_dispatch, "SMALL_GRAPH", {})
    monkeypatch.setattr(nx.config.backend_priority, "algos", ["gswitch"])
    got = {u: dict(d) for u, d in nx.floyd_warshall(G).items()}
    assert repr(got) == repr(want)  # NaN included
    with pytest.raises(NotImplementedError):
        nx.floyd_warshall(G, backend="gswitch")


@pytest.mark.parametrize("wf_improved", [True, False])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_closeness_centrality_equals_networkx(name, wf_improved):
    """Closeness of every node (incoming distances on a directed graph) and of one."""
    G = GRAPHS[name]()
    got = nx.closeness_centrality(G, wf_improved=wf_improved, backend="gswitch")
    want = nx.closeness_centrality(G, wf_improved=wf_improved)
    assert list(got) == list(want) and got == pytest.approx(want)
    u = list(G)[-1]
    assert nx.closeness_centrality(G, u=u, backend="gswitch") == \
        pytest.approx(nx.closeness_centrality(G, u=u))


def test_weighted_closeness_and_callable_weights_fall_back():
    """distance= and a callable weight are left to networkx, with a reason."""
    G = nx.path_graph(3)
    assert "weighted closeness" in BackendInterface.can_run(
        "closeness_centrality", (G,), {"distance": "weight"})
    assert "callable weight" in BackendInterface.can_run(
        "floyd_warshall", (G,), {"weight": lambda u, v, d: 1})
    for name in ("all_pairs_shortest_path_length", "all_pairs_dijkstra_path_length",
                 "floyd_warshall", "closeness_centrality"):
        assert BackendInterface.can_run(name, (G,), {}) is True


@pytest.mark.parametrize("backend", ["networkx", "gswitch"])
def test_missing_source_raises_networkx_error(backend):
    """closeness of a node not in G raises networkx's NodeNotFound (from its path
    lengths), not a KeyError."""
    with pytest.raises(nx.NodeNotFound, match="Source 7 is not in G"):
        nx.closeness_centrality(nx.path_graph(3), u=7, backend=backend)
