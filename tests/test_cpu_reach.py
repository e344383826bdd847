"""The CPU engine's reach closure (``gswitch/engine/cpu_reach.py``): a guarded max/min
label spread computed by one library call equals the super-step loop of every driving
and an independent reachability reference (networkx), and shapes it must not take keep
their super-steps.
"""

import networkx as nx
import numpy as np
import pytest

import gswitch as gs
from gswitch.engine.cpu_reach import reach_path
from gswitch.generators import rmat

DRIVINGS = ["data", "topology", "temporal"]


@gs.algorithm(name="guarded_max_spread")
class GuardedMaxSpread:
    """Each node's largest id among the nodes that reach it over edges inside a block."""

    label = gs.NodeField("int32", init=gs.NODE_ID)
    block = gs.NodeField("int32", init=gs.per_node_input("block", default=0))
    start = gs.all_nodes()

    @gs.edge_op
    def spread(e):
        e.only_if(e.src.block.eq(e.dst.block) & e.src.id.ne(e.dst.id))
        e.dst.label.reduce_max(e.src.label)


@gs.algorithm(name="guarded_min_from_source")
class GuardedMinFromSource:
    """The source's mark (7) on the nodes it reaches over edges into blocks other than 1."""

    mark = gs.NodeField("int32", init=100, at_source=7)
    block = gs.NodeField("int32", init=gs.per_node_input("block", default=0))
    start = gs.from_source()

    @gs.edge_op
    def spread(e):
        e.only_if(e.dst.block.ne(1))
        e.dst.mark.reduce_min(e.src.mark)


def _graph():
    g = rmat(9, 3, seed=4)
    block = np.random.default_rng(1).integers(0, 3, g.n_nodes).astype(np.int32)
    return g, block


def _kept(g, keep):
    h = nx.DiGraph()
    h.add_nodes_from(range(g.n_nodes))
    h.add_edges_from((int(a), int(b)) for a, b in zip(*g.edges()) if keep(int(a), int(b)))
    return h


def _max_reference(g, block):
    h = _kept(g, lambda a, b: block[a] == block[b] and a != b)
    return np.array([max([v, *nx.ancestors(h, v)]) for v in range(g.n_nodes)])


@pytest.mark.parametrize("driving", DRIVINGS)
def test_max_spread_matches_reachability_and_super_steps(driving, monkeypatch):
    """Largest reaching id per node: closure, super-steps and networkx agree."""
    g, block = _graph()
    closure = gs.run(GuardedMaxSpread, g, backend="cpu", block=block,
                     config={"driving": driving})
    assert closure.stats["formulation"].startswith("reach closure")
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
    steps = gs.run(GuardedMaxSpread, g, backend="cpu", block=block,
                   config={"driving": driving})
    assert "formulation" not in steps.stats and steps.stats["iterations"] > 1
    want = _max_reference(g, block)
    assert np.array_equal(closure.fields["label"], want)
    assert np.array_equal(steps.fields["label"], want)


@pytest.mark.parametrize("driving", DRIVINGS)
def test_min_spread_from_a_source(driving, monkeypatch):
    """A source's mark over the kept edges: the nodes networkx reaches, and only those."""
    g, block = _graph()
    src = int(np.argmax(g.out_degree))
    closure = gs.run(GuardedMinFromSource, g, backend="cpu", source=src, block=block,
                     config={"driving": driving}).fields["mark"]
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
    steps = gs.run(GuardedMinFromSource, g, backend="cpu", source=src, block=block,
                   config={"driving": driving}).fields["mark"]
    reached = nx.descendants(_kept(g, lambda a, b: block[b] != 1), src) | {src}
    want = np.full(g.n_nodes, 100)
    want[list(reached)] = 7
    assert np.array_equal(closure, want) and np.array_equal(steps, want)


def test_parallel_edges_and_self_loops_do_not_lengthen_paths():
    """Many parallel edges along a long path still leave every node its best label."""
    n = 400
    src = np.repeat(np.arange(n - 1), 30)
    g = gs.Graph.from_edges(np.concatenate([src, np.arange(n)]),
                            np.concatenate([src + 1, np.arange(n)]), n_nodes=n)
    block = np.zeros(n, dtype=np.int32)
    got = gs.run(GuardedMaxSpread, g.reverse, backend="cpu", block=block).fields["label"]
    assert got.tolist() == [n - 1] * n


def test_shapes_the_closure_does_not_take():
    """A guard that reads the spread field, or an added value, keeps the super-steps."""

    @gs.algorithm(name="reads_itself")
    class ReadsItself:
        """The guard reads the field the operator writes."""

        label = gs.NodeField("int32", init=gs.NODE_ID)
        start = gs.all_nodes()

        @gs.edge_op
        def spread(e):
            e.only_if(e.dst.label < 5)
            e.dst.label.reduce_max(e.src.label)

    @gs.algorithm(name="adds_one")
    class AddsOne:
        """A value other than the source's own label."""

        label = gs.NodeField("int32", init=gs.NODE_ID)
        start = gs.all_nodes()

        @gs.edge_op
        def spread(e):
            e.dst.label.reduce_max(e.src.label - 1)

    for spec in (ReadsItself, AddsOne):
        fields = spec.initial_fields(4, {}, None)
        assert reach_path(spec, {}, fields, 1 << 30) is None
    fields = GuardedMaxSpread.initial_fields(4, {}, None)
    assert reach_path(GuardedMaxSpread, {}, fields, 1 << 30) is not None
    assert reach_path(GuardedMaxSpread, {}, fields, 10) is None  # an iteration limit


def test_a_better_value_outside_the_start_set_keeps_the_super_steps():
    """Outside the start set a node holding more than the worst value would spread under
    topology driving and not under data driving: the closure declines."""
    g = gs.Graph.from_edges([0, 1], [1, 2], n_nodes=3)
    spec = GuardedMinFromSource
    reach = reach_path(spec, {}, spec.initial_fields(3, {}, np.array([0])), 1 << 30)
    fields = {"mark": np.array([7, 3, 100], dtype=np.int32),
              "block": np.zeros(3, dtype=np.int32)}
    degrees = {"out": g.out_degree.astype(np.int32), "in": g.in_degree.astype(np.int32)}
    assert reach.run(g, fields, {}, np.array([0]), degrees) is None
    assert fields["mark"].tolist() == [7, 3, 100]  # untouched


@gs.algorithm(name="guarded_max_into_few")
class GuardedMaxIntoFew:
    """Each node's largest id among the nodes that reach it over edges into block 0,
    between nodes of different parity, and no heavier than 2."""

    label = gs.NodeField("int32", init=gs.NODE_ID)
    block = gs.NodeField("int32", init=gs.per_node_input("block", default=0))
    start = gs.all_nodes()

    @gs.edge_op
    def spread(e):
        e.only_if(e.dst.block.eq(0) & (e.src.id & 1).ne(e.dst.id & 1) & (e.weight <= 2.0))
        e.dst.label.reduce_max(e.src.label)


@pytest.mark.parametrize("weighted", [False, True])
def test_few_receivers_walk_the_reverse_graph(weighted, monkeypatch):
    """Edges into a few nodes are read from their rows of the reverse graph (or, where a
    guard reads a weight, from the whole graph): the closure is networkx's answer."""
    g = rmat(10, 4, seed=7)
    w = np.random.default_rng(2).uniform(1.0, 3.0, g.n_edges).astype(np.float32)
    if weighted:
        g = gs.Graph(g.indptr, g.indices, w, directed=True)
    block = np.ones(g.n_nodes, dtype=np.int32)
    block[np.random.default_rng(3).choice(g.n_nodes, 12, replace=False)] = 0
    got = gs.run(GuardedMaxIntoFew, g, backend="cpu", block=block)
    assert got.stats["formulation"].startswith("reach closure")
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
    steps = gs.run(GuardedMaxIntoFew, g, backend="cpu", block=block).fields["label"]
    s, d = g.edges()
    heavy = set() if not weighted else {(int(a), int(b)) for a, b, x in zip(s, d, w)
                                          if x > 2.0}
    light = {(int(a), int(b)) for a, b in zip(s, d)} - heavy  # a parallel edge may be light
    h = _kept(g, lambda a, b: block[b] == 0 and a % 2 != b % 2 and (a, b) in light)
    want = np.array([max([v, *nx.ancestors(h, v)]) for v in range(g.n_nodes)])
    assert np.array_equal(got.fields["label"], want)
    assert np.array_equal(steps, want)


@gs.algorithm(name="guarded_max_within_class")
class GuardedMaxWithinClass:
    """The largest start label that reaches each node over edges inside one block."""

    label = gs.NodeField("int32", init=gs.per_node_input("label", default=-1))
    block = gs.NodeField("int32", init=gs.per_node_input("block", default=0))
    start = gs.from_source()

    @gs.edge_op
    def spread(e):
        e.only_if(e.dst.block.eq(e.src.block))
        e.dst.label.reduce_max(e.src.label)


def _within_class_reference(g, block, label, seeds):
    h = _kept(g, lambda a, b: block[a] == block[b])
    want = label.copy()
    for s in seeds:
        for v in nx.descendants(h, int(s)):
            want[v] = max(want[v], label[s])
    return want


@pytest.mark.parametrize("seeds", [[5], [3, 40, 77], [3, 4, 40, 77, 200]],
                         ids=["one", "one-a-class", "two-in-a-class"])
@pytest.mark.parametrize("driving", DRIVINGS)
def test_class_guard_searches_each_class(seeds, driving, monkeypatch):
    """A guard ``e.dst.block == e.src.block`` keeps each search inside its block: a seed
    alone in its block is searched with the other blocks barred; two in one block take
    the kept graph. Closure, super-steps and networkx agree."""
    g = rmat(10, 4, seed=9)
    rng = np.random.default_rng(4)
    block = rng.integers(0, 8, g.n_nodes).astype(np.int32)
    seeds = np.array(seeds)
    if seeds.size == 3:
        block[seeds] = [1, 2, 3]
    elif seeds.size == 5:
        block[seeds] = [1, 1, 2, 3, 4]
    label = np.full(g.n_nodes, -1, dtype=np.int32)
    label[seeds] = rng.permutation(seeds.size) + 10
    got = gs.run(GuardedMaxWithinClass, g, backend="cpu", source=seeds.tolist(),
                 block=block, label=label, config={"driving": driving})
    assert got.stats["formulation"].startswith("reach closure")
    barred = "barred" in got.stats["formulation"]
    assert barred == (seeds.size < 5)
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
    steps = gs.run(GuardedMaxWithinClass, g, backend="cpu", source=seeds.tolist(),
                   block=block, label=label, config={"driving": driving}).fields["label"]
    want = _within_class_reference(g, block, label, seeds)
    assert np.array_equal(got.fields["label"], want)
    assert np.array_equal(steps, want)


@gs.algorithm(name="guarded_min_among_live")
class GuardedMinAmongLive:
    """The smallest id of a live start node that reaches each node through live nodes."""

    label = gs.NodeField("int32", init=gs.NODE_ID)
    live = gs.NodeField("int32", init=gs.per_node_input("live", default=1))
    start = gs.from_source()

    @gs.edge_op
    def spread(e):
        e.only_if(e.src.live.eq(1) & e.dst.live.eq(1))
        e.dst.label.reduce_min(e.src.label)


@pytest.mark.parametrize("share", [0.9, 0.3], ids=["most-live", "few-live"])
@pytest.mark.parametrize("driving", DRIVINGS)
def test_node_guards_search_with_the_others_barred(share, driving, monkeypatch):
    """Guards that read one end each, from the live nodes: one chained search of the
    graph's own rows (long rows split) with the other nodes barred equals the
    super-steps and networkx, with most nodes live or few."""
    g = rmat(10, 6, seed=3)
    live = (np.random.default_rng(5).random(g.n_nodes) < share).astype(np.int32)
    seeds = np.flatnonzero(live)
    got = gs.run(GuardedMinAmongLive, g, backend="cpu", source=seeds.tolist(), live=live,
                 config={"driving": driving})
    assert "barred" in got.stats["formulation"]
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
    steps = gs.run(GuardedMinAmongLive, g, backend="cpu", source=seeds.tolist(),
                   live=live, config={"driving": driving}).fields["label"]
    h = _kept(g, lambda a, b: live[a] == 1 and live[b] == 1)
    want = np.arange(g.n_nodes)
    for v in seeds:
        want[v] = min([v, *(a for a in nx.ancestors(h, int(v)) if live[a])])
    assert np.array_equal(got.fields["label"], want)
    assert np.array_equal(steps, want)
