"""Tests for the immutable CSR Graph: constructors, policies, transforms, validation."""

from __future__ import annotations

from collections import Counter

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from gswitch.errors import InvalidGraph
from gswitch.graph import Graph

SRC = [0, 0, 1, 2, 2, 2, 3]
DST = [1, 1, 2, 2, 0, 3, 0]
W = [5.0, 2.0, 1.0, 7.0, 3.0, 4.0, 6.0]


def edge_multiset(g: Graph) -> Counter:
    src, dst = g.edges()
    if g.weighted:
        return Counter(zip(src.tolist(), dst.tolist(), g.weights.tolist()))
    return Counter(zip(src.tolist(), dst.tolist()))


def test_from_edges_builds_sorted_csr():
    """Rows hold their out-edges sorted by destination."""
    g = Graph.from_edges([2, 0, 1, 0], [0, 2, 2, 1])
    assert g.indptr.tolist() == [0, 2, 3, 4]
    assert g.indices.tolist() == [1, 2, 2, 0]
    assert g.n_nodes == 3 and g.n_edges == 4


def test_from_edges_keeps_every_edge_with_its_weight():
    """With 'keep', the stored edges are exactly the input multiset."""
    g = Graph.from_edges(SRC, DST, W)
    assert edge_multiset(g) == Counter(zip(SRC, DST, W))


def test_arrays_are_read_only():
    """Graphs are immutable."""
    g = Graph.from_edges(SRC, DST, W)
    for arr in (g.indptr, g.indices, g.weights):
        with pytest.raises(ValueError):
            arr[0] = 1


def test_n_nodes_adds_isolated_nodes():
    """An explicit n_nodes larger than the ids adds isolated nodes."""
    g = Graph.from_edges([0], [1], n_nodes=5)
    assert g.n_nodes == 5 and g.out_degree.tolist() == [1, 0, 0, 0, 0]


def test_empty_graph():
    """No edges and no nodes give a valid empty graph."""
    g = Graph.from_edges([], [])
    assert g.n_nodes == 0 and g.n_edges == 0 and g.indptr.tolist() == [0]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("drop", {(0, 1): 5.0}),
        ("sum", {(0, 1): 7.0}),
        ("min", {(0, 1): 2.0}),
    ],
)
def test_duplicate_policies_merge_weights(policy, expected):
    """drop keeps the first copy, sum adds, min takes the smallest weight."""
    g = Graph.from_edges([0, 0], [1, 1], [5.0, 2.0], duplicates=policy)
    src, dst = g.edges()
    got = {(int(s), int(d)): float(w) for s, d, w in zip(src, dst, g.weights)}
    assert got == expected


def test_duplicate_policy_keep_and_reject():
    """keep stores both copies; reject raises naming the edge."""
    assert Graph.from_edges([0, 0], [1, 1]).n_edges == 2
    with pytest.raises(InvalidGraph, match="duplicate edge 0 -> 1"):
        Graph.from_edges([0, 0], [1, 1], duplicates="reject")


def test_duplicate_sum_matches_scipy():
    """Summing duplicates agrees with scipy's COO -> CSR conversion."""
    rng = np.random.default_rng(0)
    src, dst = rng.integers(0, 20, 300), rng.integers(0, 20, 300)
    w = rng.random(300)
    g = Graph.from_edges(src, dst, w, n_nodes=20, duplicates="sum")
    ref = sp.coo_array((w, (src, dst)), shape=(20, 20)).tocsr()
    ref.sum_duplicates()
    np.testing.assert_array_equal(g.indptr, ref.indptr)
    np.testing.assert_array_equal(g.indices, ref.indices)
    np.testing.assert_allclose(g.weights, ref.data, rtol=1e-6)


@pytest.mark.parametrize(("policy", "n_edges"), [("keep", 3), ("drop", 1)])
def test_self_loop_policies(policy, n_edges):
    """Self loops are kept or dropped."""
    g = Graph.from_edges([0, 1, 1], [0, 1, 2], self_loops=policy)
    assert g.n_edges == n_edges
    assert g.n_self_loops == (2 if policy == "keep" else 0)


def test_self_loop_reject():
    """reject raises naming the node."""
    with pytest.raises(InvalidGraph, match="self loop at node 1"):
        Graph.from_edges([0, 1], [1, 1], self_loops="reject")


def test_undirected_stores_both_directions_and_loops_once():
    """directed=False adds reverse edges; a self loop is stored once."""
    g = Graph.from_edges([0, 1, 2], [1, 2, 2], [1.0, 2.0, 3.0], directed=False)
    assert not g.directed
    assert edge_multiset(g) == Counter(
        [(0, 1, 1.0), (1, 0, 1.0), (1, 2, 2.0), (2, 1, 2.0), (2, 2, 3.0)]
    )


def test_renumber_maps_sparse_ids_in_sorted_order():
    """renumber compacts ids; numpy.unique gives the mapping back."""
    src, dst = [100, 7, 7000], [7, 7000, 100]
    g = Graph.from_edges(src, dst, renumber=True)
    ids = np.unique(src + dst)
    back_src, back_dst = g.edges()
    assert g.n_nodes == 3
    assert Counter(zip(ids[back_src].tolist(), ids[back_dst].tolist())) == Counter(
        zip(src, dst)
    )


def test_symmetrize_matches_networkx():
    """symmetrize() gives the edge set of networkx's to_undirected()."""
    rng = np.random.default_rng(1)
    src, dst = rng.integers(0, 30, 120), rng.integers(0, 30, 120)
    g = Graph.from_edges(src, dst, n_nodes=30).symmetrize()
    ref = nx.DiGraph()
    ref.add_nodes_from(range(30))
    ref.add_edges_from(zip(src.tolist(), dst.tolist()))
    und = ref.to_undirected()
    expected = {(u, v) for u, v in und.edges()} | {(v, u) for u, v in und.edges()}
    got_src, got_dst = g.edges()
    got = list(zip(got_src.tolist(), got_dst.tolist()))
    assert set(got) == expected and len(got) == len(expected)
    assert not g.directed and g.is_symmetric()


def test_symmetrize_takes_min_weight():
    """Merged directions keep the smaller weight."""
    g = Graph.from_edges([0, 1], [1, 0], [5.0, 2.0]).symmetrize()
    assert g.weights.tolist() == [2.0, 2.0]


def test_symmetrize_is_built_once():
    """A second symmetrize() returns the kept graph (CC and PageRank run it every call)."""
    g = Graph.from_edges([0, 1, 2], [1, 2, 0], [1.0, 2.0, 3.0])
    first = g.symmetrize()
    assert g.symmetrize() is first
    assert first.symmetrize() is first and first.n_edges == 6
    from gswitch.plugins import get_registry
    from gswitch.runner import prepare

    prepared, _ = prepare(get_registry().algorithm("cc"), g, None)
    assert prepared is first


def test_reverse_matches_scipy_transpose():
    """reverse is the transpose of the adjacency matrix."""
    g = Graph.from_edges(SRC, DST, W)
    ref = sp.csr_array((W, (SRC, DST)), shape=(4, 4)).T.tocsr()
    got = g.reverse.to_scipy()
    assert (got != ref).nnz == 0
    assert g.reverse.reverse is g


def test_reverse_keeps_each_in_edge_list_in_source_order():
    """Parallel edges and self-loops stay separate, each node's in-edges come in the
    order of their sources' CSR rows (a stable sort by target), and weights follow their
    edges; an empty graph and one without edges reverse too."""
    import numpy as np

    rng = np.random.default_rng(11)
    for n, m in ((0, 0), (3, 0), (1, 5), (30, 200), (200, 3000)):
        src, dst = rng.integers(0, max(n, 1), m), rng.integers(0, max(n, 1), m)
        w = rng.random(m).astype(np.float32)
        g = Graph.from_edges(src, dst, w, n_nodes=n)
        s, d = g.edges()
        order = np.lexsort((np.arange(m), d))
        r = g.reverse
        assert r.indices.dtype == np.int32 and r.n_edges == m
        assert np.array_equal(r.indices, s[order])
        assert np.array_equal(r.weights, g.weights[order])
        assert np.array_equal(np.diff(r.indptr), np.bincount(d, minlength=n))


def test_degrees_match_networkx():
    """out_degree and in_degree agree with a networkx MultiDiGraph."""
    ref = nx.MultiDiGraph()
    ref.add_nodes_from(range(5))
    ref.add_edges_from(zip(SRC, DST))
    g = Graph.from_edges(SRC, DST, n_nodes=5)
    assert g.out_degree.tolist() == [ref.out_degree(v) for v in range(5)]
    assert g.in_degree.tolist() == [ref.in_degree(v) for v in range(5)]


@pytest.mark.parametrize(
    ("src", "dst", "w", "expected"),
    [
        ([0, 1], [1, 0], None, True),
        ([0], [1], None, False),
        ([0], [1], [0.0], False),  # an explicit zero weight is still an edge
        ([0, 0, 1], [1, 1, 0], None, True),  # multiplicity does not matter
        ([0], [0], None, True),
    ],
)
def test_is_symmetric_compares_patterns(src, dst, w, expected):
    """is_symmetric looks at the edge pattern only."""
    assert Graph.from_edges(src, dst, w, n_nodes=2).is_symmetric() is expected


def test_fingerprint_stable_across_construction_order():
    """The same edge set in another input order has the same fingerprint."""
    a = Graph.from_edges(SRC, DST, W)
    order = np.random.default_rng(2).permutation(len(SRC))
    # equal (src, dst) pairs keep input order, so permute only distinct keys' weights
    b = Graph.from_edges(np.take(SRC, order), np.take(DST, order), np.take(W, order))
    c = Graph.from_edges(SRC, DST, W)
    assert a.fingerprint == c.fingerprint
    assert edge_multiset(a) == edge_multiset(b)


@pytest.mark.parametrize(
    "change",
    [
        lambda: Graph.from_edges(SRC, DST, [w + 1 for w in W]),
        lambda: Graph.from_edges(SRC, DST),
        lambda: Graph.from_edges(SRC, DST, W, n_nodes=5),
        lambda: Graph.from_edges(SRC[:-1], DST[:-1], W[:-1]),
        lambda: Graph.from_edges(SRC, DST, W, directed=False),
    ],
)
def test_fingerprint_sensitive_to_changes(change):
    """Weights, nodes, edges and directedness all change the fingerprint."""
    assert change().fingerprint != Graph.from_edges(SRC, DST, W).fingerprint


def test_equality_compares_the_arrays_as_the_fingerprint_would():
    """Graphs compare by their arrays without hashing them; == agrees with equal
    fingerprints, whether or not they were computed (weights compared by their bits,
    as the fingerprint hashes them: -0.0 is not 0.0, float64 is not float32)."""
    rng = np.random.default_rng(4)
    for _ in range(60):
        n = int(rng.integers(1, 30))
        m = int(rng.integers(0, 60))
        src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
        w = rng.integers(0, 3, m).astype(np.float64)
        a = Graph.from_edges(src, dst, w, n_nodes=n, directed=bool(rng.integers(2)))
        variants = [Graph(a.indptr, a.indices, a.weights, directed=a.directed, validate=False),
                    Graph(a.indptr, a.indices, None, directed=a.directed, validate=False),
                    Graph(a.indptr.astype(np.int32), a.indices, a.weights,
                          directed=a.directed, validate=False)]
        if m:
            flipped = a.weights.copy()
            flipped[int(rng.integers(m))] += 1.0
            signed = np.where(a.weights == 0, -0.0, a.weights)
            variants += [Graph(a.indptr, a.indices, flipped, directed=a.directed,
                               validate=False),
                         Graph(a.indptr, a.indices, signed, directed=a.directed,
                               validate=False),
                         Graph(a.indptr, a.indices, a.weights.astype(np.float32),
                               directed=a.directed, validate=False)]
        for b in variants:
            fresh = Graph(a.indptr, a.indices, a.weights, directed=a.directed, validate=False)
            direct = fresh == b
            assert fresh._fingerprint is None and b._fingerprint is None
            assert direct == (fresh.fingerprint == b.fingerprint) == (fresh == b)


def test_fingerprint_ignores_name():
    """The name is a label, not part of the identity."""
    a = Graph.from_edges(SRC, DST, name="a")
    b = Graph.from_edges(SRC, DST, name="b")
    assert a.fingerprint == b.fingerprint and a == b


@pytest.mark.parametrize(
    ("indptr", "indices", "match"),
    [
        ([1, 2], [0], "start at 0"),
        ([0, 2, 1], [0, 1], "non-decreasing"),
        ([0, 1, 2], [0], "indices has 1 entries"),
        ([0, 1, 2], [0, 5], "out of range"),
        ([0, 1, 2], [0, -1], "out of range"),
    ],
)
def test_constructor_validation(indptr, indices, match):
    """Inconsistent CSR arrays raise InvalidGraph."""
    with pytest.raises(InvalidGraph, match=match):
        Graph(np.array(indptr), np.array(indices))


def test_weights_length_validated():
    """A weight per edge is required."""
    with pytest.raises(InvalidGraph, match="weights has 1 entries"):
        Graph(np.array([0, 1, 2]), np.array([1, 0]), np.array([1.0]))


@pytest.mark.parametrize(
    ("src", "dst", "kwargs", "match"),
    [
        ([0, -1], [1, 0], {}, "negative"),
        ([0, 5], [1, 0], {"n_nodes": 3}, "out of range"),
        ([0, 1], [1], {}, "src has 2 entries"),
    ],
)
def test_from_edges_validation(src, dst, kwargs, match):
    """Bad edge arrays raise InvalidGraph with the offending value."""
    with pytest.raises(InvalidGraph, match=match):
        Graph.from_edges(src, dst, **kwargs)


def test_offsets_are_int32_and_ids_int32():
    """Small graphs use int32 offsets and int32 ids; weights are float32."""
    g = Graph.from_edges(SRC, DST, W)
    assert g.indptr.dtype == np.int32
    assert g.indices.dtype == np.int32
    assert g.weights.dtype == np.float32


def test_from_scipy_keeps_duplicates_and_zeros():
    """COO duplicates become parallel edges and explicit zeros stay edges."""
    m = sp.coo_array(([1.0, 2.0, 0.0], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))
    g = Graph.from_scipy(m)
    assert edge_multiset(g) == Counter([(0, 1, 1.0), (0, 1, 2.0), (1, 0, 0.0)])


def test_to_scipy_round_trip():
    """to_scipy then from_scipy gives the same graph."""
    g = Graph.from_edges(SRC, DST, W)
    assert Graph.from_scipy(g.to_scipy()) == g


def test_remove_self_loops_and_deduplicate():
    """The copy helpers apply the same policies as the constructor."""
    g = Graph.from_edges(SRC, DST, W)
    assert g.remove_self_loops() == Graph.from_edges(SRC, DST, W, self_loops="drop")
    assert g.deduplicate("min") == Graph.from_edges(SRC, DST, W, duplicates="min")


@pytest.mark.parametrize("src,dst,needle", [
    ([0.0, 1.5], [1, 2], r"src\[1\] = 1.5 is not an integer node id"),
    ([0], [np.nan], r"dst\[0\] = nan is not an integer node id"),
    (["a"], ["b"], "must hold integer node ids"),
    (None, None, "must hold integer node ids"),
    ([[0], [1, 2]], [1, 2], "1-d array of integer node ids"),
    (np.array([2**63], dtype=np.uint64), np.array([0], dtype=np.uint64), "too large"),
])
def test_from_edges_refuses_ids_it_would_truncate_or_wrap(src, dst, needle):
    """Fractional, NaN, non-numeric or overflowing ids are InvalidGraph, never truncated."""
    with pytest.raises(InvalidGraph, match=needle):
        Graph.from_edges(src, dst)


def test_from_edges_accepts_integral_floats():
    """Float ids with no fractional part (as read from a float column) still work."""
    g = Graph.from_edges(np.array([0.0, 1.0]), np.array([1.0, 2.0]))
    assert g.n_nodes == 3 and g.n_edges == 2


@pytest.mark.parametrize("weights,needle", [
    ([1.0, np.nan], r"weights\[1\] is NaN"),
    ([1j, 2j], "must be real numbers"),
    (["x", "y"], "must be real numbers"),
])
def test_from_edges_refuses_bad_weights(weights, needle):
    """NaN, complex or non-numeric weights are refused like the loaders refuse them."""
    with pytest.raises(InvalidGraph, match=needle):
        Graph.from_edges([0, 1], [1, 2], weights)


@pytest.mark.parametrize("kwargs,needle", [
    ({"duplicates": "first"}, "duplicates must be one of"),
    ({"self_loops": "ignore"}, "self_loops must be one of"),
    ({"n_nodes": 3.5}, "n_nodes must be an integer"),
])
def test_from_edges_refuses_bad_options(kwargs, needle):
    """A misspelt policy or a fractional n_nodes is refused, not silently ignored."""
    with pytest.raises(InvalidGraph, match=needle):
        Graph.from_edges([0, 0], [1, 1], **kwargs)


def test_deduplicate_refuses_unknown_policy():
    """Graph.deduplicate with a misspelt policy raises instead of keeping every copy."""
    with pytest.raises(InvalidGraph, match="policy must be one of"):
        Graph.from_edges([0, 0], [1, 1]).deduplicate("first")


def test_hash_agrees_with_equality_without_the_fingerprint():
    """A graph hashes from its sizes and a sample of its arrays: equal graphs hash
    alike, a weak-keyed lookup of the same object computes no fingerprint, and graphs
    that differ only off the sample still compare unequal."""
    import weakref

    from gswitch.generators import road

    g = road(64, 64, seed=1)
    same = Graph(g.indptr, g.indices, g.weights, directed=g.directed, validate=False)
    kept = weakref.WeakKeyDictionary({g: "resident"})
    assert kept.get(g) == "resident" and g._fingerprint is None and same._fingerprint is None
    assert hash(same) == hash(g) and same == g and kept.get(same) == "resident"
    w = g.weights.copy()
    w[1] += 1.0  # position 1 is not sampled (64 of 15,000 edges)
    other = Graph(g.indptr, g.indices, w, directed=g.directed, validate=False)
    assert hash(other) == hash(g) and other != g and kept.get(other) is None
    empty = Graph.from_edges([], [], n_nodes=0)
    assert hash(empty) == hash(Graph.from_edges([], [], n_nodes=0))


def _weight_of(g, u, v):
    src, dst = g.edges()
    return g.weights[(src == u) & (dst == v)].tolist()


def test_undirected_drop_keeps_one_edge_for_both_directions():
    """duplicates='drop' on an undirected graph keeps the same edge in both directions:
    kept per direction, 0-1 weighed 2 from 0 and 5 from 1."""
    g = Graph.from_edges([0, 1], [1, 0], [2.0, 5.0], directed=False, duplicates="drop")
    assert _weight_of(g, 0, 1) == _weight_of(g, 1, 0) == [2.0]
    multi = Graph.from_edges([0, 0, 1], [1, 1, 0], [2.0, 3.0, 5.0], directed=False)
    d = multi.deduplicate("drop")
    assert not d.directed and _weight_of(d, 0, 1) == _weight_of(d, 1, 0) == [2.0]
