"""Triangle counting and the common_neighbours() intrinsic, against networkx."""

import networkx as nx
import numpy as np
import pytest

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.engine import cpu
from gswitch.engine.cpu_intrinsics import common_neighbours
from gswitch.errors import AlgorithmError
from gswitch.generators import grid2d, rmat, road, star
from gswitch.plugins import get_registry
from gswitch.runner import check_combination
from gswitch.testing.nvcc import compile_source
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph


def _graphs():
    for name in ZOO_NAMES:
        yield name, zoo_graph(name)
    yield "rmat", rmat(9, 8, seed=4)
    yield "road", road(25, 25, seed=3)
    yield "grid", grid2d(12, 9)
    yield "star", star(50)
    k6 = nx.complete_graph(6)
    yield "k6", gs.Graph.from_networkx(k6)
    # self loops and parallel edges, read as the simple graph networkx counts
    yield "messy", gs.Graph.from_edges([0, 0, 1, 1, 2, 2, 3, 3], [1, 1, 2, 2, 0, 2, 0, 1])


GRAPHS = list(_graphs())


@pytest.mark.parametrize("variant", ["merge", "search"])
@pytest.mark.parametrize("label,graph", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_triangles_equal_networkx_on_both_paths(monkeypatch, variant, label, graph):
    fast = gs.run("triangles", graph, backend="cpu", config={"variant": variant})
    assert compare("triangles", fast.fields["triangles"],
                   reference("triangles", graph)) is None
    assert fast.iterations <= 1  # one sweep that activates nothing
    # the per-edge evaluation of the intrinsic (no whole-graph count) gives the same
    monkeypatch.setattr(cpu, "whole_edge_path", lambda *args: None)
    plain = gs.run("triangles", graph, backend="cpu", config={"variant": variant})
    assert np.array_equal(plain.fields["triangles"], fast.fields["triangles"])


@pytest.mark.parametrize("renumber", ["degree", "none", "rcm"])
@pytest.mark.parametrize("label,graph", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_oriented_count_equals_networkx_under_any_numbering(label, graph, renumber):
    """Each triangle is seen once (below from one edge, between from another) whatever
    the numbering; the result comes back in the caller's ids."""
    r = gs.run("triangles", graph, backend="cpu",
               config={"variant": "oriented", "renumber": renumber})
    assert compare("triangles", r.fields["triangles"],
                   reference("triangles", graph)) is None
    assert r.iterations <= 1


def test_oriented_count_is_the_default_renumbered_by_degree():
    r = gs.run("triangles", rmat(9, 8, seed=2), backend="cpu", config={"variant": "oriented"})
    assert r.config["renumber"] == "degree"
    from gswitch.runner import _spec

    cfg = gs.Config({})
    assert _spec("triangles", cfg, None, "gpu").variant == "oriented"  # the GPU's default
    assert _spec("triangles", cfg, None, "cpu").variant == "merge"


def _common_by_sets(g, a, b, among: str) -> list[int]:
    """Common neighbours of each pair, both ends excluded, ``all`` of them or those with
    ids below both ends or strictly between them: a set computation per pair."""
    rows = {v: set(g.indices[g.indptr[v]:g.indptr[v + 1]].tolist()) for v in range(g.n_nodes)}
    want = []
    for u, v in zip(a.tolist(), b.tolist()):
        lo, hi = min(u, v), max(u, v)
        common = (rows[u] & rows[v]) - {u, v}
        if among == "below":
            common = {w for w in common if w < lo}
        elif among == "between":
            common = {w for w in common if lo < w < hi}
        want.append(len(common))
    return want


@pytest.mark.parametrize("among", ["all", "below", "between"])
def test_common_neighbours_among_an_id_range(among):
    """The restricted intrinsic counts the common neighbours below both ends or strictly
    between them, by id (a set computation per edge as the reference)."""
    g = rmat(7, 8, seed=3).symmetrize().simple().with_sorted_rows()
    a, b = g.edges()
    want = _common_by_sets(g, a, b, among)
    assert common_neighbours(g, a, b, among).tolist() == want
    assert any(want)


@pytest.mark.parametrize("driving", ["data", "topology"])
def test_any_sweeping_driving_counts_once(driving):
    g = rmat(8, 6, seed=1)
    r = gs.run("triangles", g, backend="cpu", config={"driving": driving})
    assert compare("triangles", r.fields["triangles"], reference("triangles", g)) is None
    assert r.iterations == 1


def test_common_neighbours_per_edge_on_a_directed_multigraph():
    """Distinct ids other than both ends, in both out-rows (sorted by the run)."""
    src = [0, 0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4]
    dst = [3, 1, 2, 2, 2, 0, 1, 3, 1, 1, 2, 0]
    g = gs.Graph.from_edges(src, dst).with_sorted_rows()
    rows = {v: set(g.indices[g.indptr[v]:g.indptr[v + 1]].tolist()) for v in range(g.n_nodes)}
    a, b = g.edges()
    got = common_neighbours(g, a, b)
    want = [len((rows[u] & rows[v]) - {u, v}) for u, v in zip(a.tolist(), b.tolist())]
    assert got.tolist() == want


@pytest.mark.parametrize("among", ["all", "below", "between"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("narrow", [0, 10**9], ids=["ranges", "whole-rows"])
def test_common_neighbours_in_a_range_on_multigraphs_with_loops(among, seed, narrow,
                                                                monkeypatch):
    """Each row's part in the range found in the sorted edge keys, or whole rows
    filtered (both ways, by the degree the choice is made at); parallel edges count once,
    self loops and both ends never, rows may be empty (a set computation per edge as the
    reference, on random directed multigraphs)."""
    from gswitch.engine import cpu_intrinsics

    monkeypatch.setattr(cpu_intrinsics, "_NARROW_DEGREE", narrow)
    rng = np.random.default_rng(seed)
    n, m = 40, 400
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    g = gs.Graph.from_edges(src, dst, n_nodes=n + 3).with_sorted_rows()  # 3 without edges
    a = np.concatenate([g.edges()[0], rng.integers(0, n + 3, 50)])
    b = np.concatenate([g.edges()[1], rng.integers(0, n + 3, 50)])
    want = _common_by_sets(g, a, b, among)
    assert common_neighbours(g, a, b, among).tolist() == want
    assert sum(want) > 0


def test_sorted_rows_keep_weights_with_their_edges():
    g = gs.Graph(np.array([0, 3, 4]), np.array([1, 0, 1, 0]), np.array([5., 6., 7., 8.]),
                 validate=True)
    s = g.with_sorted_rows()
    assert s is not g and s.indices.tolist() == [0, 1, 1, 0]
    assert s.weights.tolist() == [6., 5., 7., 8.]
    assert s.with_sorted_rows() is s and rmat(6, seed=1).with_sorted_rows() is not None
    simple = gs.Graph.from_edges([0, 0, 1], [1, 1, 1]).simple()
    assert simple.n_edges == 1 and simple.simple() is simple


def test_language_checks():
    with pytest.raises(AlgorithmError, match="choose one of merge, search"):
        @gs.algorithm(name="bad_intersection", reference="none")
        class Bad:
            x = gs.NodeField("int32", init=0)
            start = gs.all_nodes()

            @gs.edge_op
            def count(e):
                e.dst.x.reduce_add(e.common_neighbours("hash"))
    with pytest.raises(AlgorithmError, match="choose one of all, below, between"):
        @gs.algorithm(name="bad_range", reference="none")
        class BadRange:
            x = gs.NodeField("int32", init=0)
            start = gs.all_nodes()

            @gs.edge_op
            def count(e):
                e.dst.x.reduce_add(e.common_neighbours("merge", among="above"))
    spec = get_registry().algorithm("triangles")
    cfg = gs.Config({"direction": "pull", "driving": "topology"})
    reason = check_combination(spec, rmat(6, seed=1).symmetrize(), cfg, "gpu")
    assert reason and ("common_neighbours" in reason or "pull" in reason)


@pytest.mark.compile
@pytest.mark.parametrize("variant", ["merge", "search"])
def test_triangle_modules_compile(variant, nvcc):
    spec = get_registry().algorithm("triangles", variant)
    for cfg in (gs.Config({"driving": "topology", "launch": "host_loop"}),
                gs.Config({"driving": "data", "launch": "persistent",
                           "load_balance": "twc"})):
        src = generate_source(spec, cfg, False).source
        assert f"gs_common_neighbours_{variant}(v, u)" in src
        ok, log = compile_source(src)
        assert ok, log[-2000:]


@pytest.mark.compile
def test_oriented_triangle_module_compiles(nvcc):
    spec = get_registry().algorithm("triangles", "oriented")
    for cfg in (gs.Config({"driving": "topology", "launch": "host_loop"}),
                gs.Config({"driving": "data", "launch": "persistent",
                           "load_balance": "twc"})):
        src = generate_source(spec, cfg, False).source
        assert "gs_common_neighbours_below_search(v, u)" in src
        assert "gs_common_neighbours_between_search(v, u)" in src
        ok, log = compile_source(src)
        assert ok, log[-2000:]
