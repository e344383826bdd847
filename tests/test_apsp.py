"""All-pairs shortest path lengths (``gswitch.algorithms.apsp``): both methods against
scipy and networkx, unweighted and weighted, the memory refusal and row blocks."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
from gswitch.algorithms.apsp import (
    METHODS,
    dense_bytes,
    floyd_warshall,
    row_blocks,
    shortest_path_lengths,
)

import gswitch as gs
from gswitch.generators import grid2d, rmat, uniform_random
from gswitch.testing.zoo import zoo_graph

ZOO = ["empty", "single", "single_loop", "disconnected", "self_loops", "duplicates",
       "directed_dag"]


def _scipy(graph, weighted):
    """scipy's lengths over the lightest of parallel edges (scipy would sum them)."""
    n = graph.n_nodes
    if n == 0:
        return np.zeros((0, 0))
    s, d = graph.edges()
    w = graph.weights.astype(np.float64) if weighted else np.ones(s.size)
    order = np.lexsort((w, d, s))
    s, d, w = s[order], d[order], w[order]
    first = np.r_[True, (s[1:] != s[:-1]) | (d[1:] != d[:-1])]
    keep = first & (s != d)
    a = sp.csr_array((w[keep], (s[keep], d[keep])), shape=(n, n))
    return csgraph.shortest_path(a, directed=True)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("weighted", [False, True], ids=["hops", "weights"])
@pytest.mark.parametrize("name", ZOO)
def test_zoo_matches_scipy(name, weighted, method):
    """Every pair of every small zoo graph, with and without its weights."""
    g = zoo_graph(name)
    g = g if weighted else g.with_weights(None)
    got = shortest_path_lengths(g, method=method, backend="cpu")
    np.testing.assert_allclose(got, _scipy(g, weighted), rtol=1e-5)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("graph", [
    pytest.param(lambda: uniform_random(150, 300, seed=4), id="directed-disconnected"),
    pytest.param(lambda: uniform_random(140, 500, seed=5, weighted=True), id="weighted"),
    pytest.param(lambda: rmat(7, 4, seed=1, weighted=True), id="rmat-weighted"),
    pytest.param(lambda: grid2d(11, 13), id="grid")])
def test_generated_graphs_match_scipy_and_networkx(graph, method):
    """Generated graphs (more than 64 nodes: several BFS batches) match scipy, and
    networkx's floyd_warshall_numpy on the simple graph of lightest edges."""
    g = graph()
    got = shortest_path_lengths(g, method=method, backend="cpu")
    want = _scipy(g, g.weighted)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    G = nx.DiGraph()
    G.add_nodes_from(range(g.n_nodes))
    w = g.weights if g.weighted else np.ones(g.n_edges)
    for a, b, x in sorted(zip(*(v.tolist() for v in g.edges()), w.tolist()),
                          key=lambda t: -t[2]):
        G.add_edge(a, b, weight=x)  # the lightest parallel edge last: it stays
    np.testing.assert_allclose(got, nx.floyd_warshall_numpy(G), rtol=1e-5)


def test_dense_matrix_is_refused_with_the_fix(monkeypatch):
    """Under a memory limit the dense matrix is one line with the bytes and the fix;
    row blocks still run under it."""
    g = uniform_random(2000, 4000, seed=1)
    monkeypatch.setenv("GSWITCH_MEMORY_LIMIT", "8M")
    assert dense_bytes(2000) > 8 << 20
    for method in METHODS:
        with pytest.raises(gs.InvalidInput, match=r"dense 2,000 x 2,000 all-pairs distance "
                           r"matrix .* needs about .* of memory .* can be used; use "
                           r"gswitch.algorithms.apsp.row_blocks"):
            shortest_path_lengths(g, method=method, backend="cpu")
    ids, rows = next(row_blocks(g, rows=[5, 1999], backend="cpu"))
    assert ids.tolist() == [5, 1999]
    np.testing.assert_array_equal(rows, _scipy(g, False)[[5, 1999]])


@pytest.mark.parametrize("method", METHODS)
def test_row_blocks_cover_the_rows_in_order(method):
    """Blocks of 50 rows of a chosen order equal the matching rows of the matrix."""
    g = uniform_random(120, 400, seed=3, weighted=True)
    want = _scipy(g, True)
    order = np.arange(119, -1, -1)
    seen = []
    for ids, rows in row_blocks(g, rows=order, method=method, block=50, backend="cpu"):
        assert ids.size <= 50
        np.testing.assert_allclose(rows, want[ids], rtol=1e-5)
        seen.extend(ids.tolist())
    assert seen == order.tolist()


@pytest.mark.parametrize("call,match", [
    (lambda g: shortest_path_lengths(g, method="johnson"), "unknown all-pairs method "
     "'johnson'; choose one of repeated_sssp, floyd_warshall"),
    (lambda g: shortest_path_lengths(g.with_weights(np.array([1.0, -2.0]))),
     "need non-negative weights; edge 1 has weight -2"),
    (lambda g: next(row_blocks(g, block=0)), "row block size must be at least 1, got 0"),
    (lambda g: next(row_blocks(g, rows=[3])), "source 3 is out of range")])
def test_bad_input_is_one_line(call, match):
    """An unknown method, a negative weight, an empty block or a bad row id."""
    with pytest.raises(gs.InvalidInput, match=match):
        call(gs.Graph.from_edges([0, 1], [1, 2]))


def test_blocked_floyd_warshall_equals_the_triple_loop_for_any_block():
    """Block sizes that do and do not divide n give scipy's Floyd-Warshall."""
    rng = np.random.default_rng(0)
    d = np.where(rng.random((70, 70)) < 0.1, rng.random((70, 70)) * 10, np.inf)
    np.fill_diagonal(d, 0.0)
    want = csgraph.floyd_warshall(np.where(np.isinf(d), 0, d))
    for block in (1, 7, 64, 100):
        np.testing.assert_allclose(floyd_warshall(d.copy(), block=block), want)


def test_docstring_example_runs():
    """The Examples section of shortest_path_lengths runs as a doctest."""
    import doctest

    from gswitch.algorithms import apsp
    test = doctest.DocTestParser().get_doctest(apsp.shortest_path_lengths.__doc__,
                                               {"inf": np.inf}, "apsp", None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert test.examples and runner.failures == 0


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("weighted", [False, True], ids=["hops", "weights"])
def test_gpu_matches_scipy(weighted):
    """On the GPU: repeated search by the device engine, Floyd-Warshall on CuPy arrays."""
    import cupy as cp
    from gswitch.algorithms.apsp import dense_weights
    g = uniform_random(300, 1200, seed=6, weighted=weighted)
    want = _scipy(g, weighted)
    got = shortest_path_lengths(g, backend="gpu")
    np.testing.assert_allclose(got, want, rtol=1e-5)
    fw = floyd_warshall(dense_weights(g, cp), xp=cp)
    np.testing.assert_allclose(cp.asnumpy(fw), want, rtol=1e-5)
