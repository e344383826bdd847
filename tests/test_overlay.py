"""The partition-overlay variants of BFS and SSSP against scipy, on both engines."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gswitch.algorithms.bfs import expected_depth
from gswitch.algorithms.overlay import boundary
from gswitch.algorithms.sssp import expected_distances

import gswitch as gs
from gswitch.generators import clique_chain, grid2d

OVERLAY = {"variant": "overlay"}
needs_gpu = pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
ALGS = (("bfs", expected_depth, "depth"), ("sssp", expected_distances, "dist"))


def _check(alg: str, got, graph: gs.Graph, source: int) -> None:
    got = np.asarray(got, dtype=np.float64)
    if alg == "bfs":
        np.testing.assert_array_equal(got, expected_depth(graph, source))
    else:
        want = expected_distances(graph, source)
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
        np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)],
                                   rtol=1e-5, atol=1e-4)


def _local_graph(rng: np.random.Generator) -> tuple[gs.Graph, int, int]:
    """A small graph whose edges are mostly between nearby ids (so parts of consecutive
    ids have short boundaries), directed or not, weights with zeros, a part size and a
    source.
    """
    n = int(rng.integers(1, 60))
    m = int(rng.integers(0, 3 * n + 1))
    src = rng.integers(0, n, m)
    near = np.clip(src + rng.integers(-3, 4, m), 0, n - 1)
    dst = np.where(rng.random(m) < 0.8, near, rng.integers(0, n, m))
    w = rng.choice([0.0, 0.5, 1.0, 2.5, 7.0], m).astype(np.float32)
    g = gs.Graph.from_edges(src, dst, w, n_nodes=n, directed=True)
    if rng.integers(0, 2):
        g = g.symmetrize()
    return g, int(rng.integers(1, n + 2)), int(rng.integers(0, n))


@pytest.mark.parametrize("alg,expected,field", ALGS)
def test_random_graphs_match_scipy(alg, expected, field):
    rng = np.random.default_rng(11)
    parted = whole = 0
    for _ in range(150):
        g, size, s = _local_graph(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = gs.run(alg, g, source=s, backend="cpu", config=OVERLAY, partition_size=size)
        _check(alg, r.fields[field], g, s)
        if boundary(g, size).unfit:
            whole += 1
        else:
            parted += 1
    assert parted >= 50 and whole >= 10  # both paths taken


@pytest.mark.parametrize("alg,expected,field", ALGS)
@pytest.mark.parametrize("size", [32, 96, 256, 4096])
def test_weighted_clique_chain(alg, expected, field, size):
    g = clique_chain(64, 32, weighted=True, seed=3)
    for s in (0, 1000, g.n_nodes - 1):
        r = gs.run(alg, g, source=s, backend="cpu", config=OVERLAY, partition_size=size)
        _check(alg, r.fields[field], g, s)


def test_entry_searches_are_kept_with_the_graph():
    g = clique_chain(32, 32, weighted=True, seed=5)
    b = boundary(g, 128)
    assert b.slots == 2  # a part of four cliques is entered from each side
    first = gs.run("sssp", g, source=7, backend="cpu", config=OVERLAY, partition_size=128)
    again = gs.run("sssp", g, source=900, backend="cpu", config=OVERLAY, partition_size=128)
    rounds = [s for s in first.stats["stages"] if s["stage"] == "entry_search"]
    assert len(rounds) == b.slots
    assert [s["stage"] for s in again.stats["stages"]] == [
        "source_search", "plan", "solve", "final_search"]
    _check("sssp", first.fields["dist"], g, 7)
    _check("sssp", again.fields["dist"], g, 900)


def test_boundary_of_the_chain():
    g = clique_chain(8, 32)
    b = boundary(g, 64)
    # parts of two cliques: each inner part is entered at its first and last node
    assert b.keys.tolist() == sorted({63, 64, 127, 128, 191, 192})
    assert b.slots == 2
    assert b.cut_u.size == b.cut_v.size == 6  # three links, both ways


def test_one_part_is_a_plain_search():
    g = clique_chain(4, 32, weighted=True, seed=1)
    r = gs.run("sssp", g, source=3, backend="cpu", config=OVERLAY, partition_size=4096)
    _check("sssp", r.fields["dist"], g, 3)
    assert [s["stage"] for s in r.stats["stages"]] == ["source_search", "plan"]


def test_unreached_nodes():
    g = gs.Graph.from_edges([0, 1, 4, 5], [1, 2, 5, 6], n_nodes=8).symmetrize()
    r = gs.run("bfs", g, source=0, backend="cpu", config=OVERLAY, partition_size=2)
    assert r.fields["depth"].tolist() == [0, 1, 2, -1, -1, -1, -1, -1]


def test_renumbered_run():
    # the chain's ids shuffled: parts of consecutive ids have long boundaries (refused)
    # until a BFS order puts each clique's nodes together again
    chain = clique_chain(16, 32, weighted=True, seed=2)
    perm = np.random.default_rng(0).permutation(chain.n_nodes)
    src, dst = chain.edges()
    g = gs.Graph.from_edges(perm[src], perm[dst], chain.weights, n_nodes=chain.n_nodes)
    assert boundary(g, 64).unfit and not boundary(chain, 64).unfit
    for alg, _, field in ALGS:
        r = gs.run(alg, g, source=40, backend="cpu", config={**OVERLAY, "renumber": "bfs"},
                   partition_size=64)
        _check(alg, r.fields[field], g, 40)


def test_long_boundary_searches_the_whole_graph_and_says_so_once():
    g = grid2d(32, 32)
    with pytest.warns(RuntimeWarning, match="partition_size") as caught:
        r = gs.run("bfs", g, source=0, backend="cpu", config=OVERLAY, partition_size=16)
    assert len(caught) == 1 and "\n" not in str(caught[0].message)
    _check("bfs", r.fields["depth"], g, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # not again for this graph
        r = gs.run("sssp", g, source=5, backend="cpu", config=OVERLAY, partition_size=16)
    _check("sssp", r.fields["dist"], g, 5)


def test_tuner_searches_the_overlay_only_where_it_suits():
    from gswitch.tuner import build_space

    from gswitch.plugins import get_registry

    spec = get_registry().algorithm("sssp")
    chain = clique_chain(64, 32, weighted=True)
    assert "overlay" in build_space(spec, chain, "cpu").variants
    grid = build_space(spec, grid2d(64, 64), "cpu")
    assert "overlay" not in grid.variants and "partition_size" in grid.excluded[
        "variant=overlay"]


def test_negative_weights_refused():
    g = gs.Graph.from_edges([0, 1], [1, 2], [1.0, -1.0])
    with pytest.raises(gs.errors.InvalidInput):
        gs.run("sssp", g, source=0, backend="cpu", config=OVERLAY)


@pytest.mark.gpu
@pytest.mark.parametrize("alg,expected,field", ALGS)
@pytest.mark.parametrize("conf", [
    {}, {"launch": "host_loop"}, {"launch": "cuda_graph"}, {"worklist": "atomic"},
    {"load_balance": "thread"}, {"driving": "topology"},
])
@needs_gpu
def test_gpu_matches_scipy(alg, expected, field, conf):
    g = clique_chain(128, 32, weighted=True, seed=4)
    for size in (64, 1024):
        for s in (0, 2000):
            r = gs.run(alg, g, source=s, backend="gpu", config={**OVERLAY, **conf},
                       partition_size=size)
            _check(alg, r.fields[field], g, s)


@pytest.mark.gpu
@needs_gpu
def test_gpu_priority_driving_and_random_graphs():
    g = clique_chain(64, 32, weighted=True, seed=6)
    r = gs.run("sssp", g, source=5, backend="gpu",
               config={**OVERLAY, "driving": "priority"}, partition_size=256)
    _check("sssp", r.fields["dist"], g, 5)
    rng = np.random.default_rng(12)
    for _ in range(25):
        g, size, s = _local_graph(rng)
        for alg, _, field in ALGS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                r = gs.run(alg, g, source=s, backend="gpu", config=OVERLAY,
                           partition_size=size)
            _check(alg, r.fields[field], g, s)


@pytest.mark.parametrize("alg", ["bfs", "sssp"])
def test_docstring_examples_run(alg):
    import doctest

    from gswitch.plugins import get_registry

    spec = get_registry().algorithm(alg, "overlay")
    test = doctest.DocTestParser().get_doctest(spec.doc, {}, alg, None, 0)
    runner = doctest.DocTestRunner()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # parts that fit: no fallback
        runner.run(test)
    assert test.examples and runner.failures == 0


def _random_parts(rng: np.random.Generator, most: int, degree: int
                  ) -> tuple[gs.Graph, int]:
    """A random multigraph of up to ``most`` nodes and a part size for it."""
    n = int(rng.integers(1, most))
    m = int(rng.integers(0, degree * n + 1))
    g = gs.Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n_nodes=n)
    return g, int(rng.integers(1, n + 3))


def test_cut_edges_match_a_pass_over_every_edge():
    from gswitch.algorithms.overlay import _cut_edges

    rng = np.random.default_rng(3)
    for _ in range(200):
        g, size = _random_parts(rng, 80, 4)
        n = g.n_nodes
        src = np.repeat(np.arange(n), np.diff(g.indptr))
        cut = np.flatnonzero(src // size != g.indices // size)
        u, v, pos = _cut_edges(g, size)
        assert u.tolist() == src[cut].tolist() and v.tolist() == g.indices[cut].tolist()
        assert pos.tolist() == cut.tolist()


@pytest.mark.gpu
@needs_gpu
def test_device_cut_edges_match_the_host_pass(monkeypatch):
    from gswitch.algorithms import overlay

    monkeypatch.setattr(overlay, "_CHUNK", 37)  # several chunks, one cut at an odd edge
    rng = np.random.default_rng(8)
    for _ in range(60):
        g, size = _random_parts(rng, 300, 6)
        want = overlay._cut_edges(g, size)
        got = overlay._cut_edges_on_device(g, size)
        for a, b in zip(got, want):
            assert a.dtype == np.int64 and a.tolist() == b.tolist()
    g = clique_chain(40, 32, weighted=True, seed=2)
    host = overlay._boundary(g, 128)
    import cupy

    dev = overlay._boundary(g, 128, cupy)
    for name in ("keys", "seed", "cut_u", "cut_v", "cut_w"):
        assert np.array_equal(getattr(host, name), getattr(dev, name))
    assert [r.tolist() for r in host.ranked] == [r.tolist() for r in dev.ranked]
    # a graph not on the device that would not fit there: the host pass, no upload
    from gswitch.engine.gpu import GpuEngine

    fresh = clique_chain(40, 32, weighted=True, seed=3)
    monkeypatch.setattr(cupy.cuda.runtime, "memGetInfo", lambda: (0, 1 << 30))
    monkeypatch.setattr(cupy, "get_default_memory_pool",
                        lambda: type("NoPool", (), {"free_bytes": lambda self: 0})())
    got = overlay._cut_edges_on_device(fresh, 128)
    assert GpuEngine.instance()._known(fresh) is None
    for a, b in zip(got, overlay._cut_edges(fresh, 128)):
        assert a.tolist() == b.tolist()


def test_cli_says_in_one_line_which_flags_to_change(capsys):
    from gswitch.cli import main

    code = main(["run", "bfs", "--generate", "grid:40x40", "--backend", "cpu", "--source",
                 "0", "--set", "variant=overlay", "--param", "partition_size=16"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 0
    assert len(err) == 1 and err[0].startswith("gswitch: warning: variant overlay")
    assert "--param partition_size=N" in err[0] and "--set renumber=bfs" in err[0]
