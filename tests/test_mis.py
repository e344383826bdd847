"""Maximal independent set (Luby): every driving and direction on the CPU engine checked by
its invariants, the seed, the invariant check itself, the hash in the operator language,
and the generated CUDA.
"""

import doctest

import numpy as np
import pytest

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.generators import grid2d, path, rmat, road, star
from gswitch.plugins import get_registry
from gswitch.testing.nvcc import compile_source
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

NAME = "maximal_independent_set"
DRIVING = list(get_registry().algorithm(NAME).supports["driving"])
GENERATED = {
    "rmat": lambda: rmat(11, 12, seed=2),
    "road": lambda: road(48, 48, seed=3),
    "grid": lambda: grid2d(30, 40),
    "star": lambda: star(3000),
    "path": lambda: path(1500, directed=True),
}


def _run(graph, driving="data", direction="push", **params):
    cfg = {"driving": driving, "direction": direction}
    return gs.run(NAME, graph, backend="cpu", config=cfg, **params).fields["in_set"]


@pytest.mark.parametrize("graph_name", ZOO_NAMES)
def test_zoo_sets_are_independent_maximal_and_the_same_under_every_strategy(graph_name):
    """Every driving and direction gives an independent, maximal set, and the same one:
    the set depends on the graph and the seed only."""
    graph = zoo_graph(graph_name)
    ref = reference(NAME, graph)
    sets = []
    for driving in DRIVING:
        for direction in ("push", "pull"):
            got = _run(graph, driving, direction)
            problem = compare(NAME, got, ref)
            assert problem is None, f"driving={driving} direction={direction}: {problem}"
            sets.append(got)
    assert all(np.array_equal(s, sets[0]) for s in sets)


@pytest.mark.parametrize("graph_name", sorted(GENERATED))
def test_generated_graphs(graph_name):
    """RMAT, road-like, grid, star and path graphs; Luby needs few steps."""
    graph = GENERATED[graph_name]()
    r = gs.run(NAME, graph, backend="cpu")
    assert compare(NAME, r.fields["in_set"], reference(NAME, graph)) is None
    assert r.stats["iterations"] <= 40


def test_seed_changes_the_set_and_every_seed_is_valid():
    """Different seeds give different sets, each independent and maximal."""
    graph = GENERATED["rmat"]()
    ref = reference(NAME, graph)
    sets = [_run(graph, seed=s) for s in (0, 1, 2**32 - 1)]
    for s in sets:
        assert compare(NAME, s, ref) is None
    assert not np.array_equal(sets[0], sets[1]) and not np.array_equal(sets[1], sets[2])
    assert np.array_equal(sets[0], _run(graph, seed=0))


def test_self_loops_do_not_keep_a_node_out():
    """A node whose only edge is a self-loop joins the set, as networkx lets it."""
    g = gs.Graph.from_edges([0, 1, 2], [0, 2, 1], n_nodes=3)
    got = _run(g)
    assert got[0] == 1 and got[1] + got[2] == 1


def test_star_takes_the_leaves_or_the_hub():
    """On a star the set is the hub alone or every leaf."""
    got = _run(star(500))
    assert got.sum() in (1, 499) and (got[0] == 1) == (got.sum() == 1)


@pytest.mark.parametrize("bad,message", [
    (lambda s: np.where(np.arange(s.size) == 0, 2, s), "node 0 holds 2, not 0 or 1"),
    (lambda s: np.ones_like(s), "not independent: edge"),
    (lambda s: np.zeros_like(s), "not maximal: node 0 is outside the set"),
])
def test_comparison_reports_each_violation(bad, message):
    """The invariant check names a value outside 0/1, an edge inside the set and a node
    left uncovered, in one line."""
    graph = zoo_graph("grid")
    ref = reference(NAME, graph)
    got = bad(_run(graph))
    problem = compare(NAME, got, ref)
    assert problem is not None and message in problem and "\n" not in problem
    assert "shape" in compare(NAME, got[:-1], ref)


def test_networkx_set_passes_the_same_check():
    """networkx's own maximal independent set passes the invariant check."""
    nx = pytest.importorskip("networkx")
    graph = zoo_graph("uniform")
    G = graph.symmetrize().remove_self_loops().to_networkx().to_undirected()
    G.add_nodes_from(range(graph.n_nodes))
    chosen = nx.maximal_independent_set(G, seed=3)
    got = np.zeros(graph.n_nodes, dtype=np.int32)
    got[chosen] = 1
    assert compare(NAME, got, reference(NAME, graph)) is None


def _fmix32(ids, seed):
    m = np.uint64(0xFFFFFFFF)
    x = (ids.astype(np.uint64) * 0x9E3779B1 & m) ^ ((np.uint64(seed) * 0x85EBCA77 + 0x27D4EB2F) & m)
    x ^= x >> np.uint64(16)
    x = x * 0x85EBCA6B & m
    x ^= x >> np.uint64(13)
    x = x * 0xC2B2AE35 & m
    x ^= x >> np.uint64(16)
    return x.astype(np.uint32)


@gs.algorithm(name="test_hashed_ids")
class _HashedIds:
    """The priorities of the MIS, stored in a field (a step over every node)."""

    h = gs.NodeField("uint32", init=0)
    seed = gs.Param("uint32", 0, low=0, high=2**32 - 1)
    start = gs.all_nodes()

    @gs.node_op
    def stamp(n, p):
        from gswitch.algorithms.mis import _priority

        n.h = _priority(n, p)

    @gs.edge_op
    def touch(e):
        e.dst.h.reduce_max(0)


@pytest.mark.parametrize("seed", [0, 7, 2**32 - 1])
def test_priorities_are_murmur_finalised_ids_and_distinct(seed):
    """xor, shifts and wrapping uint32 products of the operator language compute
    MurmurHash3's finaliser bit for bit on the CPU engine; ids map to distinct
    priorities."""
    n = 5000
    g = gs.Graph.from_edges([], [], n_nodes=n)
    got = gs.run(_HashedIds, g, backend="cpu", seed=seed).fields["h"]
    want = _fmix32(np.arange(n), seed)
    assert np.array_equal(got, want) and np.unique(got).size == n


def test_docstring_example_runs():
    """The Examples section runs as a doctest."""
    spec = get_registry().algorithm(NAME)
    test = doctest.DocTestParser().get_doctest(spec.cls.__doc__, {}, spec.label, None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert test.examples and runner.failures == 0


@pytest.mark.compile
@pytest.mark.parametrize("cfg", [
    {"launch": "host_loop", "driving": "data", "worklist": "atomic"},
    {"launch": "persistent", "driving": "temporal", "worklist": "bitmap"},
    {"launch": "cuda_graph", "driving": "topology", "load_balance": "twc"},
], ids=lambda c: c["launch"])
def test_compiles(cfg, nvcc):
    """The Luby module compiles with each launch (and the hash test algorithm too)."""
    for spec in (get_registry().algorithm(NAME), _HashedIds):
        gen = generate_source(spec, gs.Config(cfg), weighted=False)
        ok, out = compile_source(gen.source, nvcc=nvcc)
        assert ok, f"{spec.label} {cfg}:\n{out[-3000:]}"


def test_the_tuner_searches_it_and_checks_every_trial(tmp_path):
    """A CPU study of the MIS finishes verified trials: its packed-adjacency reference
    travels to the tuner's workers as a plain .npy."""
    from gswitch.tuner import tune

    g = GENERATED["rmat"]()
    result = tune(NAME, g, trials=3, backend="cpu", seed=0,
                  storage=f"journal://{tmp_path / 'studies.journal'}")
    assert result.counts.get("ok", 0) >= 1 and "wrong_answer" not in result.counts
    assert result.best_config is not None


def test_only_a_nodes_own_decide_puts_it_in_the_next_step():
    """The edge messages (``higher``) do not activate: a queue worklist would hold a node
    once per message, and a second decide in one step reads ``higher`` just reset, so the
    node would join beside a neighbour of higher priority."""
    from gswitch.plugins import get_registry

    spec = get_registry().algorithm("maximal_independent_set")
    assert spec.edge.reductions and not any(r.activates for r in spec.edge.reductions)
    assert any(r.activates for r in spec.node.reductions)


def test_a_renumbered_run_is_refused_so_the_seed_keeps_its_set():
    """The priorities hash node ids: a renumbered copy would draw another set for the
    same seed, so the formulation supports renumber=none only."""
    g = zoo_graph("grid")
    with pytest.raises(gs.InvalidConfig, match="supports renumber none only"):
        gs.run(NAME, g, backend="cpu", config={"renumber": "rcm"})
