"""Property tests: random small graphs, every algorithm against its independent reference."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gswitch as gs
from gswitch.testing.reference import compare, reference

# strategies under test do their steps on the CPU (no shortest-path closure)
pytestmark = pytest.mark.usefixtures("super_steps")

OUTPUT = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}
SOURCE_BASED = {"bfs", "sssp"}


@st.composite
def graphs(draw, min_nodes=1):
    """Directed graphs with n <= 40, m <= 150, optional integer weights, loops and duplicates."""
    n = draw(st.integers(min_nodes, 40))
    m = draw(st.integers(0, 150)) if n else 0
    node = st.integers(0, max(n - 1, 0))
    src = draw(st.lists(node, min_size=m, max_size=m))
    dst = draw(st.lists(node, min_size=m, max_size=m))
    src, dst = np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)
    if not draw(st.booleans()):  # no self loops
        keep = src != dst
        src, dst = src[keep], dst[keep]
    if not draw(st.booleans()) and src.size:  # no parallel edges
        _, first = np.unique(src * n + dst, return_index=True)
        first.sort()
        src, dst = src[first], dst[first]
    weights = None
    if draw(st.booleans()):
        weights = np.array(draw(st.lists(st.integers(1, 63), min_size=src.size,
                                         max_size=src.size)), dtype=np.float32)
    return gs.Graph.from_edges(src, dst, weights, n_nodes=n)


def _edge_multiset(graph):
    src, dst = graph.edges()
    w = graph.weights if graph.weighted else np.ones(graph.n_edges, np.float32)
    return Counter(zip(src.tolist(), dst.tolist(), w.tolist()))


@pytest.mark.parametrize("algorithm", ["bfs", "sssp", "cc", "pagerank"])
@settings(max_examples=40, deadline=None)
@given(graph=graphs(), data=st.data(),
       driving=st.sampled_from(["data", "topology", "temporal"]),
       direction=st.sampled_from(["push", "pull"]))
def test_cpu_engine_matches_reference(algorithm, graph, data, driving, direction):
    """The CPU engine agrees with scipy/networkx under any driving style and direction."""
    kwargs = {}
    if algorithm in SOURCE_BASED:
        kwargs["source"] = data.draw(st.integers(0, graph.n_nodes - 1), label="source")
    result = gs.run(algorithm, graph, backend="cpu",
                    config={"driving": driving, "direction": direction}, **kwargs)
    got = result.fields[OUTPUT[algorithm]]
    problem = compare(algorithm, got, reference(algorithm, graph, **kwargs))
    assert problem is None, problem
    assert result.stats["converged"]
    if algorithm == "pagerank":
        assert abs(float(got.sum()) - 1.0) < 1e-4


@settings(max_examples=40, deadline=None)
@given(graph=graphs(min_nodes=0))
def test_symmetrize_is_symmetric_superset(graph):
    """symmetrize() holds exactly the pattern A | A.T, each pair once, with min weights."""
    sym = graph.symmetrize()
    n = graph.n_nodes
    src, dst = graph.edges()
    dense = np.zeros((n, n), dtype=bool)
    dense[src, dst] = True
    ssrc, sdst = sym.edges()
    got = np.zeros((n, n), dtype=np.int64)
    np.add.at(got, (ssrc, sdst), 1)
    np.testing.assert_array_equal(got > 0, dense | dense.T)  # symmetric, every original edge
    assert got.max(initial=0) <= 1  # parallel edges merged
    assert not sym.directed and sym.n_nodes == n
    if graph.weighted:
        best = {}
        for u, v, w in zip(src.tolist(), dst.tolist(), graph.weights.tolist()):
            for key in ((u, v), (v, u)):
                best[key] = min(best.get(key, np.inf), w)
        assert dict(zip(zip(ssrc.tolist(), sdst.tolist()), sym.weights.tolist())) == best


@settings(max_examples=40, deadline=None)
@given(graph=graphs(min_nodes=0))
def test_reverse_twice_is_identity(graph):
    """reverse.reverse has the same edge multiset, and reverse holds every edge flipped."""
    rev = graph.reverse
    flipped = Counter({(v, u, w): c for (u, v, w), c in _edge_multiset(graph).items()})
    assert _edge_multiset(rev) == flipped
    assert _edge_multiset(rev.reverse) == _edge_multiset(graph)
    np.testing.assert_array_equal(rev.out_degree, graph.in_degree)
