"""networkx's strongly-connected-component functions through the gswitch backend, against
networkx itself."""

import networkx as nx
import pytest

from gswitch.nxbackend import BackendInterface

GRAPHS = {
    "gnp": lambda: nx.gnp_random_graph(300, 0.008, seed=3, directed=True),
    "named": lambda: nx.relabel_nodes(nx.gnp_random_graph(80, 0.03, seed=5, directed=True),
                                      {i: f"v{i}" for i in range(80)}),
    "cycles": lambda: nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3), (5, 5)]),
    "multi": lambda: nx.MultiDiGraph([(0, 1), (0, 1), (1, 0), (2, 1)]),
}


def _sets(components):
    return sorted(sorted(map(str, c)) for c in components)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_components_equal_networkx(name):
    G = GRAPHS[name]()
    got = list(nx.strongly_connected_components(G, backend="gswitch"))
    assert _sets(got) == _sets(nx.strongly_connected_components(G))
    assert nx.number_strongly_connected_components(G, backend="gswitch") == \
        nx.number_strongly_connected_components(G)
    assert nx.is_strongly_connected(G, backend="gswitch") == nx.is_strongly_connected(G)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_components_come_sinks_first(name):
    """A component comes after every component it reaches (networkx's order, on which
    condensation() numbering relies)."""
    G = GRAPHS[name]()
    comps = list(nx.strongly_connected_components(G, backend="gswitch"))
    at = {v: i for i, c in enumerate(comps) for v in c}
    assert all(at[u] >= at[v] for u, v in G.edges())


def test_condensation_numbers_the_sink_first():
    """networkx's own condensation over the backend: the sink component is number 0."""
    G = nx.DiGraph([(1, 2), (1, 3), (1, 4), (4, 2), (3, 4), (2, 3)])
    comps = list(nx.strongly_connected_components(G, backend="gswitch"))
    assert comps == [{2, 3, 4}, {1}]
    cG = nx.condensation(G, scc=comps)
    assert cG.graph["mapping"] == {2: 0, 3: 0, 4: 0, 1: 1}


def test_undirected_and_empty_graphs_raise_networkx_errors():
    with pytest.raises(nx.NetworkXNotImplemented):
        list(nx.strongly_connected_components(nx.path_graph(4), backend="gswitch"))
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.is_strongly_connected(nx.DiGraph(), backend="gswitch")
    assert list(nx.strongly_connected_components(nx.DiGraph(), backend="gswitch")) == []


def test_the_backend_lists_them():
    for name in ("strongly_connected_components", "number_strongly_connected_components",
                 "is_strongly_connected"):
        assert hasattr(BackendInterface, name)
