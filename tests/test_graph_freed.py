"""A graph the caller drops is freed at once, by reference counting, whatever forms of
it were built (transpose, simple, sorted rows) and after runs on it: no form refers to
itself or back to the graph strongly, so nothing waits for the cycle collector (a large
graph's arrays, and its device copy, would otherwise outlive the caller's last use)."""

import gc
import weakref

import numpy as np
import pytest

import gswitch as gs
from gswitch.generators import rmat


@pytest.fixture
def no_cycle_collector():
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _graph(directed: bool) -> gs.Graph:
    g = rmat(8, 6, seed=2)
    g = g if directed else g.symmetrize()
    # unsorted rows with a duplicate edge, so every derived form is a new graph
    return gs.Graph.from_edges(np.r_[g.sources(), 0, 0], np.r_[g.indices, 5, 3],
                               n_nodes=g.n_nodes, directed=directed)


@pytest.mark.parametrize("directed", [True, False])
def test_graph_freed_after_its_derived_forms(no_cycle_collector, directed):
    g = _graph(directed)
    rev, simple, ordered = g.reverse, g.simple(), g.with_sorted_rows()
    assert rev.reverse is g and g.reverse is rev
    assert simple.simple() is simple and ordered.with_sorted_rows() is ordered
    refs = [weakref.ref(x) for x in (g, rev, simple, ordered)]
    del g, rev, simple, ordered
    assert [r() for r in refs] == [None] * 4


@pytest.mark.parametrize("directed", [True, False])
def test_graph_freed_after_runs(no_cycle_collector, directed):
    g = _graph(directed).deduplicate()
    algs = ["bfs", "pagerank", "betweenness"] + (["scc"] if directed else ["cc"])
    for alg in algs:
        kw = {"source": 0} if alg == "bfs" else {}
        gs.run(alg, g, backend="cpu", **kw)
    ref = weakref.ref(g)
    del g
    assert ref() is None


def test_transpose_outliving_its_graph_still_answers():
    g = _graph(True)
    rev = g.reverse
    src, dst = g.sources().copy(), g.indices.copy()
    del g
    gc.collect()
    back = rev.reverse  # the original is gone: built again from the transpose
    got = sorted(zip(back.sources().tolist(), back.indices.tolist()))
    assert got == sorted(zip(src.tolist(), dst.tolist()))
    assert np.array_equal(rev.in_degree, np.diff(back.indptr))
