"""networkx and scipy.sparse interop: conversion both ways and gs.run on them directly."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import gswitch as gs


def test_from_networkx_keeps_names_and_weights():
    """Node names go to node_labels in G.nodes order; weights become edge weights."""
    G = nx.DiGraph()
    G.add_weighted_edges_from([("x", "y", 2.5), ("y", "z", 1.0), ("z", "x", 4.0)])
    G.add_node("lonely")
    g = gs.Graph.from_networkx(G)
    assert list(g.node_labels) == ["x", "y", "z", "lonely"]
    assert g.directed and g.weighted and g.n_nodes == 4 and g.n_edges == 3
    back = g.to_networkx()
    assert isinstance(back, nx.DiGraph) and set(back.nodes) == set(G.nodes)
    assert {(u, v, w) for u, v, w in back.edges(data="weight")} == \
        {(u, v, w) for u, v, w in G.edges(data="weight")}


def test_undirected_multigraph_round_trip():
    """Parallel edges survive as a MultiGraph; self loops are stored once."""
    G = nx.MultiGraph()
    G.add_edges_from([(0, 1), (0, 1), (1, 2), (2, 2)])
    g = gs.Graph.from_networkx(G)
    assert not g.directed and not g.weighted
    back = g.to_networkx()
    assert isinstance(back, nx.MultiGraph) and back.number_of_edges() == 4


def test_unweighted_and_missing_weights():
    """Without the attribute the graph is unweighted; partly missing weights get 1."""
    assert not gs.Graph.from_networkx(nx.path_graph(4)).weighted
    G = nx.Graph()
    G.add_edge(0, 1, weight=3.0)
    G.add_edge(1, 2)
    g = gs.Graph.from_networkx(G)
    assert sorted(g.weights.tolist()) == [1.0, 1.0, 3.0, 3.0]


def test_non_numeric_weight_is_refused():
    """A weight that is not a number is an InvalidGraph naming the edge."""
    G = nx.Graph()
    G.add_edge("a", "b", weight="heavy")
    with pytest.raises(gs.InvalidGraph, match="'a' -> 'b'"):
        gs.Graph.from_networkx(G)


def test_run_on_networkx_matches_dijkstra():
    """gs.run takes a networkx graph, sources by name, results in G.nodes order."""
    G = nx.gnm_random_graph(60, 200, seed=3)
    G = nx.relabel_nodes(G, {v: f"n{v}" for v in G})
    for u, v in G.edges:
        G[u][v]["weight"] = float((hash((u, v)) % 9) + 1)
    r = gs.run("sssp", G, source="n5", backend="cpu")
    ref = nx.single_source_dijkstra_path_length(G, "n5")
    got = dict(zip(G.nodes, r.fields["dist"].tolist()))
    assert all(got[v] == pytest.approx(ref[v]) for v in ref)
    assert all(np.isinf(got[v]) for v in G if v not in ref)


def test_run_on_networkx_unknown_source():
    """A source that is not a node name is refused with the name."""
    with pytest.raises(gs.InvalidInput, match="'nope' is not a node"):
        gs.run("bfs", nx.path_graph(3), source="nope")


def test_a_tuple_source_names_one_node():
    """On a graph of tuple-named nodes (grid coordinates), a tuple source is that node;
    a list of tuples is several."""
    G = nx.grid_2d_graph(3, 4)
    want = nx.single_source_shortest_path_length(G, (1, 2))
    ids = {name: i for i, name in enumerate(G.nodes)}
    depth = gs.run("bfs", G, source=(1, 2), backend="cpu").fields["depth"]
    assert {v: int(depth[ids[v]]) for v in G} == want
    from gswitch.algorithms.msbfs import decode

    fields = gs.run("msbfs", G, sources=[(0, 0), (2, 3)], backend="cpu").fields
    for row, name in zip(decode(fields, 2), [(0, 0), (2, 3)]):
        hops = nx.single_source_shortest_path_length(G, name)
        assert {v: int(row[ids[v]]) for v in G} == hops


def test_personalization_and_sources_name_networkx_nodes():
    """Per-node inputs that name nodes take networkx names: a personalisation's node,
    betweenness sources."""
    G = nx.relabel_nodes(nx.karate_club_graph(), {i: f"n{i}" for i in range(34)})
    rank = gs.run("personalized_pagerank", G, personalization="n3", backend="cpu",
                  tolerance=1e-9).fields["rank"]
    want = nx.pagerank(G, personalization={"n3": 1}, weight=None, tol=1e-12)
    assert np.allclose(rank, [want[v] for v in G], atol=1e-5)
    got = gs.run("betweenness", G, sources=["n0", "n5"], backend="cpu").fields["betweenness"]
    ids = gs.run("betweenness", nx.convert_node_labels_to_integers(G), sources=[0, 5],
                 backend="cpu").fields["betweenness"]
    assert np.allclose(got, ids) and got.any()


def test_run_on_scipy_matrix():
    """gs.run takes a square scipy.sparse matrix (entry (i, j) is i -> j)."""
    m = sp.csr_array(([1.0, 1.0, 1.0], ([0, 1, 2], [1, 2, 3])), shape=(4, 4))
    assert gs.run("bfs", m, source=0).fields["depth"].tolist() == [0, 1, 2, 3]
    with pytest.raises(gs.InvalidInput, match="square"):
        gs.run("bfs", sp.csr_array((2, 3)), source=0)


def test_run_rejects_other_types():
    """Anything else is refused with the accepted types."""
    with pytest.raises(gs.InvalidInput, match="networkx graph or a square scipy"):
        gs.run("cc", [[0, 1]])


def test_to_networkx_custom_labels():
    """to_networkx takes a mapping of ids to names; names must be distinct."""
    g = gs.Graph.from_edges([0, 1], [1, 2])
    G = g.to_networkx(labels={0: "a", 1: "b", 2: "c"})
    assert list(G.edges) == [("a", "b"), ("b", "c")]
    with pytest.raises(gs.InvalidGraph, match="differently"):
        g.to_networkx(labels=["a", "a", "b"])
