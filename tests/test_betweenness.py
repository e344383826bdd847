"""Brandes betweenness against networkx: raw sums, endpoints, sampling, rescaling."""

import networkx as nx
import numpy as np
import pytest
from gswitch.algorithms.betweenness import rescale

import gswitch as gs
from gswitch.errors import AlgorithmError
from gswitch.generators import grid2d, rmat
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import zoo_graph

GRAPHS = {"rmat": rmat(7, 6, seed=1), "grid": grid2d(6, 7),
          "duplicates": zoo_graph("duplicates"), "self_loops": zoo_graph("self_loops"),
          "disconnected": zoo_graph("disconnected"), "dag": zoo_graph("directed_dag"),
          "empty": zoo_graph("empty"), "single": zoo_graph("single")}


@pytest.mark.parametrize("endpoints", [0, 1])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_raw_sums_equal_networkx(name, endpoints):
    g = GRAPHS[name]
    r = gs.run("betweenness", g, backend="cpu", endpoints=endpoints)
    assert compare("betweenness", r.fields["betweenness"],
                   reference("betweenness", g, endpoints=endpoints)) is None


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("endpoints", [False, True])
@pytest.mark.parametrize("k", [None, 7])
def test_rescaled_values_equal_networkx_betweenness_centrality(directed, normalized,
                                                               endpoints, k):
    h = nx.gnm_random_graph(40, 110, seed=3, directed=directed)
    g = gs.Graph.from_networkx(h)
    nodes = None if k is None else np.array(
        nx.utils.create_py_random_state(11).sample(list(h), k))
    kw = {} if nodes is None else {"sources": nodes}
    raw = gs.run("betweenness", g, backend="cpu", endpoints=int(endpoints),
                 **kw).fields["betweenness"]
    got = rescale(raw, directed=directed, normalized=normalized, endpoints=endpoints,
                  sources=nodes)
    want = nx.betweenness_centrality(h, k=k, normalized=normalized, endpoints=endpoints,
                                     seed=11)
    np.testing.assert_allclose(got, [want[v] for v in range(40)], rtol=1e-9, atol=1e-12)


def test_bad_sources_and_the_equality_footgun():
    g = grid2d(3, 3)
    with pytest.raises(gs.InvalidInput, match="source 9 is out of range"):
        gs.run("betweenness", g, sources=[0, 9], backend="cpu")
    with pytest.raises(AlgorithmError, match="write a.eq\\(b\\)"):
        @gs.algorithm(name="uses_double_equals", reference="none")
        class Bad:
            x = gs.NodeField("int32", init=0)
            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.only_if(e.dst.x == e.src.x)
                e.dst.x.reduce_max(e.src.x)
