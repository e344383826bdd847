"""Personalised PageRank and per-node inputs, against a float64 reference and networkx."""

import networkx as nx
import numpy as np
import pytest
from gswitch.algorithms.ppr import expected_personalized

import gswitch as gs
from gswitch.generators import rmat, road
from gswitch.testing.zoo import zoo_graph

VARIANTS = ["power_pull", "residual_push"]


def _l1(a, b):
    return float(np.abs(np.asarray(a, dtype=np.float64) - b).sum())


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("graph", [rmat(8, 6, seed=2), road(15, 15, seed=3),
                                   zoo_graph("disconnected"), zoo_graph("star")],
                         ids=["rmat", "road", "disconnected", "star"])
def test_personalized_pagerank_equals_the_reference(variant, graph):
    n = graph.n_nodes
    weights = np.arange(n, dtype=np.float64) % 4
    for personal, vector in ((None, None), (1, np.eye(n)[1]), (weights, weights)):
        kw = {} if personal is None else {"personalization": personal}
        r = gs.run("personalized_pagerank", graph, backend="cpu",
                   config={"variant": variant}, **kw)
        want = expected_personalized(graph, personalization=vector)
        assert _l1(r.fields["rank"], want) < 1e-4, (variant, personal)
        assert abs(float(r.fields["rank"].sum()) - 1.0) < 1e-5


def test_uniform_personalisation_is_pagerank():
    g = rmat(9, 8, seed=5)
    ppr = gs.run("personalized_pagerank", g, backend="cpu").fields["rank"]
    pr = gs.run("pagerank", g, backend="cpu").fields["rank"]
    assert _l1(ppr, pr) < 1e-4


def test_matches_networkx_on_a_simple_digraph():
    h = nx.gnm_random_graph(80, 300, seed=4, directed=True)
    g = gs.Graph.from_networkx(h)
    personal = {v: float(v % 5 == 0) for v in h}
    want = nx.pagerank(h, personalization=personal, tol=1e-12, max_iter=10000,
                       backend="networkx")
    vec = np.array([personal[v] for v in range(80)])
    got = gs.run("personalized_pagerank", g, personalization=vec, backend="cpu")
    assert _l1(got.fields["rank"], np.array([want[v] for v in range(80)])) < 1e-4


def test_uniform_start_takes_networkx_steps():
    """uniform_start=1 starts from networkx's uniform vector: its first step only sets
    it, then each step is networkx's iteration, and it stops after as many."""
    h = nx.gnm_random_graph(60, 200, seed=6, directed=True)
    g = gs.Graph.from_networkx(h)
    personal = {v: float(v % 7 == 0) for v in h}
    vec = np.array([personal[v] for v in range(60)])
    tol = 1e-6
    steps = next(k for k in range(1, 500) if _converges(h, personal, tol, k))
    r = gs.run("personalized_pagerank", g, personalization=vec, uniform_start=1,
               tolerance=60 * tol, backend="cpu", config={"variant": "power_pull"})
    assert r.stats["converged"] and r.iterations == steps + 1
    want = nx.pagerank(h, personalization=personal, tol=tol, backend="networkx")
    assert _l1(r.fields["rank"], np.array([want[v] for v in range(60)])) < 1e-5


def _converges(h, personal, tol, max_iter):
    try:
        nx.pagerank(h, personalization=personal, tol=tol, max_iter=max_iter,
                    backend="networkx")
    except nx.PowerIterationFailedConvergence:
        return False
    return True


@pytest.mark.parametrize("bad,match", [
    (-1, "node -1 is out of range"), (99, "node 99 is out of range"),
    (np.zeros(10), "not all zero"), (np.r_[1.0, -1.0, np.ones(8)], "non-negative"),
    (np.ones(3), "one weight per node \\(10\\)"), ("abc", "node id or one non-negative"),
])
def test_bad_personalisation_is_one_clear_line(bad, match):
    g = gs.Graph.from_edges(list(range(9)), list(range(1, 10)))
    with pytest.raises(gs.InvalidInput, match=match):
        gs.run("personalized_pagerank", g, personalization=bad, backend="cpu")


@gs.algorithm(name="input_plus_hops", reference="gswitch cpu engine")
class InputPlusHops:
    """Every node starts at its given value; min over in-neighbours of value + 1."""

    x = gs.NodeField("float32", init=gs.per_node_input("start", default=100.0))
    start = gs.all_nodes()

    @gs.edge_op
    def relax(e):
        e.dst.x.reduce_min(e.src.x + 1.0)


def test_per_node_input_sets_the_start_and_is_checked():
    g = gs.Graph.from_edges([0, 1, 2], [1, 2, 3])
    r = gs.run(InputPlusHops, g, backend="cpu", start=[5.0, 0.0, 9.0, 9.0])
    assert r.fields["x"].tolist() == [5.0, 0.0, 1.0, 2.0]
    assert gs.run(InputPlusHops, g, backend="cpu").fields["x"].tolist() == [100.0] * 4
    with pytest.raises(gs.InvalidInput, match="one number per node \\(4\\)"):
        gs.run(InputPlusHops, g, backend="cpu", start=[1.0, 2.0])
    with pytest.raises(gs.InvalidInput, match="must be finite; node 1"):
        gs.run(InputPlusHops, g, backend="cpu", start=[1.0, np.nan, 0.0, 0.0])
    with pytest.raises(gs.InvalidInput, match="parameters are start"):
        gs.run(InputPlusHops, g, backend="cpu", begin=[1.0] * 4)
