"""gswitch's networkx backend for label propagation and ``k_core``: answers against
networkx itself, fallbacks, and what each call refuses."""

import networkx as nx
import pytest

from gswitch.nxbackend import BackendInterface
from gswitch.nxbackend._info import FUNCTIONS

#: node-order and shape cases: shuffled labels, a self-loop, isolated nodes, a multigraph
GRAPHS = {
    "karate": nx.karate_club_graph(),
    "planted": nx.planted_partition_graph(5, 20, 0.5, 0.03, seed=4),
    "caveman": nx.relaxed_caveman_graph(6, 7, 0.15, seed=2),
    "named": nx.relabel_nodes(nx.les_miserables_graph(), str),
    "loops_and_isolated": nx.Graph([(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (4, 5)] +
                                   [(6, 6)]).copy(),
}
MULTI = nx.MultiGraph([(0, 1), (0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (2, 3)])


@pytest.fixture(autouse=True)
def quiet_cache_note():
    """networkx warns when it reuses a converted graph; these tests reuse on purpose."""
    nx.config.warnings_to_ignore.add("cache")
    yield
    nx.config.warnings_to_ignore.discard("cache")


def _sets(communities):
    return {frozenset(c) for c in communities}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_label_propagation_communities_equals_networkx(name):
    """The same partition as networkx, as an iterable (not an iterator) of sets."""
    G = GRAPHS[name]
    got = nx.community.label_propagation_communities(G, backend="gswitch")
    with pytest.raises(TypeError):
        next(got)
    assert _sets(got) == _sets(nx.community.label_propagation_communities(G))


def test_label_propagation_refuses_directed_graphs_and_leaves_multigraphs():
    """A directed graph is networkx's error, and the dispatch leaves it to networkx;
    so is a multigraph (networkx orders by degree with multiplicity but counts distinct
    neighbours), whose answer is then networkx's."""
    D = nx.DiGraph([(0, 1), (1, 2)])
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.community.label_propagation_communities(D, backend="gswitch")
    assert "directed" in BackendInterface.can_run("label_propagation_communities", (D,), {})
    for name in ("label_propagation_communities", "asyn_lpa_communities"):
        assert "multigraph" in BackendInterface.can_run(name, (MULTI,), {})


def _unhappy(G, communities):
    label = {v: k for k, c in enumerate(communities) for v in c}
    bad = []
    for v in G:
        counts = {}
        for u in G[v]:
            counts[label[u]] = counts.get(label[u], 0) + 1
        if counts and counts.get(label[v], 0) < max(counts.values()):
            bad.append(v)
    return bad


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_asyn_lpa_communities_is_a_fixpoint_partition(name):
    """Every node is in exactly one community and holds a most frequent label of its
    neighbours; modularity stays near networkx's on the community graphs."""
    G = GRAPHS[name]
    got = list(nx.community.asyn_lpa_communities(G, seed=5, backend="gswitch"))
    assert sorted(len(c) for c in got) and sum(map(len, got)) == len(G)
    assert set().union(*got) == set(G)
    assert _unhappy(G, got) == []
    if name in ("planted", "caveman"):
        theirs = nx.community.modularity(G, nx.community.asyn_lpa_communities(G, seed=5))
        assert nx.community.modularity(G, got) >= theirs - 0.1


def test_asyn_lpa_seed_and_fallbacks():
    """One seed gives one partition; a weight or a directed graph goes to networkx."""
    G = GRAPHS["planted"]
    a = _sets(nx.community.asyn_lpa_communities(G, seed=9, backend="gswitch"))
    assert a == _sets(nx.community.asyn_lpa_communities(G, seed=9, backend="gswitch"))
    assert "weighted" in BackendInterface.can_run("asyn_lpa_communities", (G,),
                                                  {"weight": "weight"})
    assert "directed" in BackendInterface.can_run("asyn_lpa_communities",
                                                  (nx.DiGraph([(0, 1)]),), {})
    assert list(nx.community.asyn_lpa_communities(nx.null_graph(), backend="gswitch")) == []


@pytest.mark.parametrize("name", ["karate", "planted", "caveman", "named"])
@pytest.mark.parametrize("k", [None, 1, 2, 3, 4])
def test_k_core_equals_networkx(name, k):
    """The same subgraph as networkx, node and edge attributes included."""
    G = GRAPHS[name].copy()
    for i, (u, v) in enumerate(G.edges()):
        G.edges[u, v]["tag"] = i
    G.nodes[next(iter(G))]["colour"] = "red"
    got = nx.k_core(G, k, backend="gswitch")
    want = nx.k_core(G, k)
    assert isinstance(got, nx.Graph) and nx.utils.graphs_equal(got, want)
    assert dict(got.nodes(data=True)) == dict(want.nodes(data=True))


def test_k_core_with_given_core_numbers_and_errors():
    """Given core numbers are used as they are; self loops and multigraphs raise
    networkx's error; a directed graph is left to networkx."""
    G = GRAPHS["karate"]
    fake = {v: (5 if v < 4 else 0) for v in G}
    assert set(nx.k_core(G, 3, core_number=fake, backend="gswitch")) == {0, 1, 2, 3}
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.k_core(nx.Graph([(0, 1), (1, 1)]), backend="gswitch")
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.k_core(MULTI, backend="gswitch")
    assert isinstance(BackendInterface.can_run("k_core", (nx.DiGraph([(0, 1)]),), {}), str)


def test_functions_are_registered():
    """The three functions are in the backend's info and on its interface."""
    for name in ("label_propagation_communities", "asyn_lpa_communities", "k_core"):
        assert name in FUNCTIONS and callable(getattr(BackendInterface, name))
