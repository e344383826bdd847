"""Locality-aware renumbering (the ``renumber`` key, :mod:`gswitch.locality`): every
algorithm gives the reference answer, in the caller's ids, under every order; the orders
are what scipy computes; they are kept per graph; bad values are one line.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

import gswitch as gs
from gswitch import locality
from gswitch.errors import InvalidConfig
from gswitch.generators import grid2d, rmat, road
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import zoo_graph

METHODS = ["rcm", "bfs", "degree", "hilbert"]
GRAPHS = {
    "rmat": lambda: rmat(8, 6, seed=4).remove_self_loops().deduplicate(),
    "road": lambda: road(12, 12, seed=2),
    "disconnected": lambda: zoo_graph("disconnected"),
    "dag": lambda: zoo_graph("directed_dag"),
}
#: formulations that renumber (semi-synchronous label propagation breaks ties by node
#: id and supports renumber=none only: tests/test_lpa.py checks the refusal)
CASES = [(name, v) for name, family in sorted(get_registry().variants.items())
         for v, spec in family.items() if "renumber" not in spec.supports]
#: answers that are one valid answer among several: checked by the reference's
#: comparison only
NOT_UNIQUE = {"maximal_independent_set", "label_propagation"}


def _check(name, graph, got, ref):
    """Label propagation (the asynchronous variant: the semi-synchronous one does not
    renumber) is checked by its fixpoint: every node holds a most frequent label of its
    neighbours."""
    if name == "label_propagation":
        from gswitch.algorithms.lpa import compare_most_frequent, expected_neighbours

        return compare_most_frequent(got, expected_neighbours(graph))
    return compare(name, got, ref)


def _run(name, variant, graph, method):
    """The run, and the arguments its reference takes: a run that takes a ``sources``
    per-node input (Brandes, one pass per source) starts from three nodes, which the
    reference gets as the input's per-node values."""
    spec = get_registry().algorithm(name, variant)
    kwargs = {"source": 1} if spec.start.kind == "source" else {}
    given = dict(kwargs)
    if "sources" in spec.inputs and graph.n_nodes > 2:
        given["sources"] = [0, 1, 2]
        prepare = spec.inputs["sources"][1].prepare
        kwargs["sources"] = prepare(given["sources"], {"n_nodes": graph.n_nodes})
    r = gs.run(name, graph, backend="cpu", config={"variant": variant, "renumber": method},
               **given)
    return spec, r, kwargs


def _applies(name, variant, graph_name):
    """Whether the formulation is defined on the graph (strong components refuse an
    undirected graph, and say so: tests/test_scc.py; batched edge betweenness refuses
    weights other than 1)."""
    spec = get_registry().algorithm(name, variant)
    graph = GRAPHS[graph_name]()
    return spec.check_graph is None or spec.check_graph(
        graph.symmetrize() if spec.symmetric else graph) is None


@pytest.mark.parametrize("name,variant,graph_name",
                         [(n, v, g) for n, v in CASES for g in sorted(GRAPHS)
                          if _applies(n, v, g)])
def test_every_algorithm_gives_the_reference_in_caller_ids(graph_name, name, variant):
    """Under every order, each algorithm's answer matches its reference (in caller ids),
    and equals the answer of the run without renumbering where the answer is unique."""
    graph = GRAPHS[graph_name]()
    spec, base, kwargs = _run(name, variant, graph, "none")
    out = spec.outputs[0]
    ref = reference(name, graph, **kwargs)
    for method in METHODS:
        _, r, _ = _run(name, variant, graph, method)
        assert r.stats["renumber"] == method
        problem = _check(name, graph, r.fields[out], ref)
        assert problem is None, f"renumber={method}: {problem}"
        if name not in NOT_UNIQUE and r.fields[out].dtype.kind in "iu":
            assert np.array_equal(r.fields[out], base.fields[out]), method


def test_component_labels_stay_the_smallest_caller_id():
    """A component label is the smallest caller id of its component after renumbering."""
    road_graph = road(20, 20, seed=5)  # and three isolated nodes
    g = gs.Graph.from_edges(*road_graph.edges(), n_nodes=road_graph.n_nodes + 3,
                            directed=False)
    comp = gs.run("cc", g, backend="cpu", config={"renumber": "degree"}).fields["comp"]
    for label in np.unique(comp):
        members = np.flatnonzero(comp == label)
        assert label == members.min()


@pytest.mark.parametrize("none", [False, True])
def test_ids_go_back_to_the_caller_as_a_loop_would(none):
    """``to_caller`` against a plain loop: node ids mapped (values outside [0, n) kept),
    group labels made the smallest caller id of their group again; with every value an
    id (the unmasked path) and with some nodes holding none (-1, the masked path)."""
    rng = np.random.default_rng(3)
    n = 500
    perm = rng.permutation(n)
    inv = np.empty(n, dtype=np.int64)
    inv[perm] = np.arange(n)
    # renumbered labels: each node's group's smallest renumbered id
    group = rng.integers(0, 40, n)
    label_r = np.array([np.flatnonzero(group == g).min() for g in group], dtype=np.int32)
    node_r = rng.integers(0, n, n).astype(np.int32)
    if none:
        label_r[rng.random(n) < 0.1] = -1
        node_r[rng.random(n) < 0.1] = -1
    out = locality.to_caller({"lab": label_r, "node": node_r}, perm,
                             {"lab": "min_label", "node": "node"})
    want_node = np.array([perm[node_r[inv[c]]] if node_r[inv[c]] >= 0 else -1
                          for c in range(n)])
    assert np.array_equal(out["node"], want_node) and out["node"].dtype == np.int32
    lab_c = [perm[label_r[inv[c]]] if label_r[inv[c]] >= 0 else -1 for c in range(n)]
    for c in range(n):
        same = [d for d in range(n) if lab_c[d] == lab_c[c]]
        assert out["lab"][c] == (-1 if lab_c[c] < 0 else min(same)), c


def test_rcm_is_scipys_and_narrows_a_shuffled_grid():
    """rcm is scipy's reverse Cuthill-McKee; on a grid with shuffled ids it brings the
    bandwidth back near the grid's width."""
    g = grid2d(30, 30)
    perm = np.random.default_rng(0).permutation(g.n_nodes)
    inv = np.empty_like(perm)
    inv[perm] = np.arange(perm.size)
    src, dst = g.edges()
    once = src < dst
    shuffled = gs.Graph.from_edges(inv[src[once]], inv[dst[once]], n_nodes=g.n_nodes,
                                   directed=False)
    assert shuffled.n_edges == g.n_edges
    a = sp.csr_array((np.ones(shuffled.n_edges), shuffled.indices, shuffled.indptr),
                     shape=(g.n_nodes,) * 2)
    a.sort_indices()
    want = reverse_cuthill_mckee(a, symmetric_mode=True)
    got = locality.order(shuffled, "rcm")
    assert np.array_equal(got, want)

    def bandwidth(graph):
        s, d = graph.edges()
        return int(np.abs(s.astype(np.int64) - d).max())

    renumbered, _, _ = locality.renumbered(shuffled, "rcm")
    assert bandwidth(shuffled) > 500
    assert bandwidth(renumbered) <= 2 * 30


def test_bfs_order_is_breadth_first_per_component():
    """bfs lists each component contiguously, from its highest-degree node, level by
    level (hop distances from the root never decrease along the order)."""
    from scipy.sparse.csgraph import shortest_path

    g = zoo_graph("disconnected").symmetrize()
    perm = locality.order(g, "bfs")
    assert sorted(perm.tolist()) == list(range(g.n_nodes))
    a = sp.csr_array((np.ones(g.n_edges), g.indices, g.indptr), shape=(g.n_nodes,) * 2)
    hops = shortest_path(a, unweighted=True)
    deg = np.diff(g.indptr)
    start = 0
    while start < perm.size:
        root = perm[start]
        comp = np.flatnonzero(np.isfinite(hops[root]))
        block = perm[start:start + comp.size]
        assert set(block.tolist()) == set(comp.tolist())
        assert deg[root] == deg[comp].max()
        assert np.all(np.diff(hops[root][block]) >= 0)
        start += comp.size


def test_hilbert_index_walks_the_square_one_step_at_a_time():
    """On a 2^k square every cell gets its own position, and consecutive positions are
    neighbouring cells (the curve never jumps)."""
    for k in (0, 1, 2, 4):
        side = 1 << k
        x, y = (a.ravel() for a in np.meshgrid(np.arange(side), np.arange(side)))
        h = locality.hilbert_index(x, y)
        assert np.array_equal(np.sort(h), np.arange(side * side))
        walk = np.argsort(h)
        assert np.all(np.abs(np.diff(x[walk])) + np.abs(np.diff(y[walk])) == 1)


def test_hilbert_order_makes_compact_partitions():
    """On a grid, runs of 64 consecutive ids under ``hilbert`` cut far fewer edges than
    the row order or ``rcm`` (whose runs are thin bands) and span few hops; every
    component stays contiguous."""
    g = grid2d(48, 48)
    src, dst = g.edges()

    def cut(perm, size=64):
        inv = np.empty_like(perm)
        inv[perm] = np.arange(perm.size)
        return float(np.mean(inv[src] // size != inv[dst] // size))

    perm = locality.order(g, "hilbert")
    assert sorted(perm.tolist()) == list(range(g.n_nodes))
    assert cut(perm) < 0.5 * cut(np.arange(g.n_nodes))
    assert cut(perm) < 0.5 * cut(locality.order(g, "rcm"))
    rows, cols = perm // 48, perm % 48
    spans = [np.ptp(rows[i:i + 64]) + np.ptp(cols[i:i + 64]) for i in range(0, perm.size, 64)]
    # a row-order run of 64 spans 48 hops, an rcm band more
    assert np.median(spans) <= 24 and max(spans) <= 40
    disconnected = zoo_graph("disconnected").symmetrize()
    from scipy.sparse.csgraph import connected_components

    a = sp.csr_array((np.ones(disconnected.n_edges), disconnected.indices,
                      disconnected.indptr), shape=(disconnected.n_nodes,) * 2)
    _, comp = connected_components(a, directed=False)
    order = comp[locality.order(disconnected, "hilbert")]
    assert np.count_nonzero(np.diff(order)) == np.unique(comp).size - 1


@pytest.mark.parametrize("name", ["disconnected", "directed_dag", "star", "grid"])
def test_hop_distances_are_scipys(name):
    """The hop distances the hilbert order is built from equal scipy's unweighted
    shortest paths from the nearest source, -1 where no source reaches."""
    from scipy.sparse.csgraph import shortest_path

    g = zoo_graph(name) if name != "grid" else grid2d(9, 13)
    a = locality._structure(g)
    sources = np.array([0, g.n_nodes - 1, g.n_nodes // 2])
    want = shortest_path(a, unweighted=True, indices=sources).min(axis=0)
    want = np.where(np.isfinite(want), want, -1).astype(np.int64)
    assert np.array_equal(locality._hops(locality._padded(a), sources), want)


def test_degree_order_puts_hubs_first():
    g = zoo_graph("star")
    perm = locality.order(g, "degree")
    deg = np.diff(g.indptr)[perm]
    assert np.all(np.diff(deg) <= 0)


def test_orders_and_copies_are_kept_per_graph():
    """The second run on the same graph builds nothing; a new graph object builds anew."""
    g = road(15, 15, seed=1)
    first = gs.run("bfs", g, backend="cpu", source=0, config={"renumber": "rcm"})
    again = gs.run("bfs", g, backend="cpu", source=0, config={"renumber": "rcm"})
    assert first.stats["renumber_s"] > 0
    assert again.stats["renumber_s"] == 0
    assert locality.order(g, "rcm") is locality.order(g, "rcm")


def test_per_node_inputs_and_weights_follow_their_nodes():
    """A personalisation given in caller ids and edge weights land on the same nodes and
    edges of the renumbered graph."""
    g = road(10, 10, seed=3)
    weights = (np.arange(g.n_nodes) % 3).astype(float)
    for alg, kw, field in (("personalized_pagerank", {"personalization": weights}, "rank"),
                           ("sssp", {"source": 7}, "dist")):
        base = gs.run(alg, g, backend="cpu", **kw).fields[field]
        for method in METHODS:
            got = gs.run(alg, g, backend="cpu", config={"renumber": method}, **kw)
            np.testing.assert_allclose(got.fields[field], base, rtol=1e-5, atol=1e-7)


def test_bad_value_is_one_line_naming_the_key_and_the_choices():
    g = road(4, 4)
    with pytest.raises(InvalidConfig,
                       match="renumber must be one of none, rcm, bfs, degree, hilbert"):
        gs.run("bfs", g, backend="cpu", source=0, config={"renumber": "metis"})
    with pytest.raises(InvalidConfig, match="renumber must be one of"):
        locality.order(g, "random")


def test_the_tuner_searches_it_on_both_backends():
    from gswitch.tuner import build_space

    g = road(6, 6)
    for backend in ("cpu", "gpu"):
        space = build_space(get_registry().algorithm("bfs"), g, backend)
        assert "renumber" in space.global_params


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("name,variant", [
    c for c in CASES if "gpu" in get_registry().algorithm(*c).backends])
def test_gpu_runs_on_renumbered_graphs(name, variant):
    """On the GPU too, every order gives the reference answer in caller ids."""
    graph = GRAPHS["rmat"]()
    spec = get_registry().algorithm(name, variant)
    kwargs = {"source": 1} if spec.start.kind == "source" else {}
    given = dict(kwargs)
    if "sources" in spec.inputs:  # as _run: three sources (msbfs needs them)
        given["sources"] = [0, 1, 2]
        kwargs["sources"] = spec.inputs["sources"][1].prepare(
            given["sources"], {"n_nodes": graph.n_nodes})
    ref = reference(name, graph, **kwargs)
    for method in METHODS:
        r = gs.run(name, graph, backend="gpu", config={"variant": variant, "renumber": method},
                   **given)
        problem = _check(name, graph, r.fields[spec.outputs[0]], ref)
        assert problem is None, f"renumber={method}: {problem}"
        assert "in_caller_ids" not in r.stats
        if name == "bfs" and variant == "default":  # no host finalize: put back there
            assert r.stats["reordered_on"] == "device"
        # results kept on the device come back in caller ids too
        d = gs.run(name, graph, backend="gpu", arrays="cupy",
                   config={"variant": variant, "renumber": method}, **given)
        out = d.fields[spec.outputs[0]]
        assert type(out).__module__.startswith("cupy")
        problem = _check(name, graph, out.get(), ref)
        assert problem is None, f"renumber={method}, arrays=cupy: {problem}"
