"""Strong components on the CPU engine's whole-run formulations: the one-step marking
stage (``cpu_guarded.MarkStep``, a trimming sweep by sparse products or indexed stores) and
the reach closure's chained depth-first search (``cpu_reach``), against scipy's
labelling, networkx reachability and the engine's own super-steps.
"""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import gswitch as gs
from gswitch.engine import cpu_reach
from gswitch.engine.cpu_reach import reach_path
from gswitch.generators import rmat
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference

VARIANTS = sorted(get_registry().variants["scc"])
DRIVINGS = ["data", "topology", "temporal"]


def _graph(src, dst, n, seed=0):
    """A graph of the edges ``src -> dst`` with the ids shuffled."""
    perm = np.random.default_rng(seed).permutation(n)
    return gs.Graph.from_edges(perm[np.asarray(src, dtype=np.int64)],
                               perm[np.asarray(dst, dtype=np.int64)], n_nodes=n)


def _small_components(k=400, seed=0):
    """``k`` cycles of 1 to 5 nodes (a 1-cycle is a self-loop or a bare node), joined by
    edges from lower to higher cycles only (so they stay apart), plus isolated nodes."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, k)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    src, dst = [], []
    for s, z in zip(starts.tolist(), sizes.tolist()):
        nodes = np.arange(s, s + z)
        if z > 1 or rng.random() < 0.5:
            src += nodes.tolist()
            dst += np.roll(nodes, -1).tolist()
    a, b = rng.integers(0, k, (2, 3 * k))
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keep = lo != hi
    src += starts[lo[keep]].tolist()
    dst += (starts[hi[keep]] + sizes[hi[keep]] - 1).tolist()
    n = int(sizes.sum()) + 50  # the last 50: no edges at all
    return _graph(src, dst, n, seed)


def _giant(n=3000, seed=1):
    """One cycle through most nodes with random chords (one giant component), tails
    into and out of it, self-loops and isolated nodes."""
    rng = np.random.default_rng(seed)
    core = n - 300
    src = list(range(core)) + rng.integers(0, core, core).tolist()
    dst = [(i + 1) % core for i in range(core)] + rng.integers(0, core, core).tolist()
    src += list(range(core, core + 100)) + rng.integers(0, core, 100).tolist()
    dst += rng.integers(0, core, 100).tolist() + list(range(core + 100, core + 200))
    loops = rng.integers(0, n, 40)
    src += loops.tolist()
    dst += loops.tolist()
    return _graph(src, dst, n, seed)


def _hub(leaves=3000, seed=2):
    """A hub in a small cycle with thousands of out-edges to sinks and in-edges from
    sources: rows far longer than a depth-first search should rescan."""
    hub = 0
    src = [hub, 1, 2] + [hub] * leaves + list(range(3 + leaves, 3 + 2 * leaves))
    dst = [1, 2, hub] + list(range(3, 3 + leaves)) + [hub] * leaves
    back = np.random.default_rng(seed).integers(3, 3 + leaves, 200)
    src += back.tolist()  # some sinks lead back into the cycle: a larger component
    dst += [1] * back.size
    return _graph(src, dst, 3 + 2 * leaves, seed)


def _random(n, m, seed):
    a, b = np.random.default_rng(seed).integers(0, n, (2, m))
    return _graph(a, b, n, seed)


GRAPHS = {
    "small_components": _small_components,
    "giant": _giant,
    "hub": _hub,
    "sparse_random": lambda: _random(2000, 2400, 3),
    "dense_random": lambda: _random(500, 4000, 4),
    "rmat": lambda: rmat(11, 6, seed=5),
    "rmat_reverse": lambda: rmat(11, 6, seed=6).reverse,
}


def _scipy_labels(graph):
    """Each node's smallest id among its scipy strong component."""
    _, labels = csgraph.connected_components(graph.to_scipy(), directed=True,
                                             connection="strong")
    smallest = np.full(labels.max() + 1, graph.n_nodes)
    np.minimum.at(smallest, labels, np.arange(graph.n_nodes))
    return smallest[labels]


@pytest.mark.parametrize("graph_name", sorted(GRAPHS))
@pytest.mark.parametrize("variant", VARIANTS)
def test_labels_are_scipys_smallest_ids(graph_name, variant):
    """Every node gets the smallest id of its scipy strong component."""
    graph = GRAPHS[graph_name]()
    got = gs.run("scc", graph, backend="cpu", config={"variant": variant}).fields["scc"]
    assert np.array_equal(got, _scipy_labels(graph))
    assert compare("scc", got, reference("scc", graph)) is None


@pytest.mark.parametrize("graph_name", ["small_components", "giant", "hub"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_formulations_and_super_steps_agree(graph_name, variant, monkeypatch):
    """The whole-run formulations give the super-steps' fields, in fewer steps."""
    graph = GRAPHS[graph_name]()
    fast = gs.run("scc", graph, backend="cpu", config={"variant": variant})
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
    steps = gs.run("scc", graph, backend="cpu", config={"variant": variant})
    assert np.array_equal(fast.fields["scc"], steps.fields["scc"])
    assert fast.stats["iterations"] <= steps.stats["iterations"]


def test_the_stages_take_the_fast_formulations():
    """Trimming runs as a marking step by sparse products, the searches as reach closures."""
    spec = get_registry().variants["scc"]["coloring"]
    stages = {st.stage_name: st for st in spec.stages if isinstance(st, gs.AlgorithmSpec)}
    fields = stages["trimming"].initial_fields(4, {}, None)
    assert type(reach_path(stages["trimming"], {}, fields, 1 << 30)).__name__ == "MarkStep"
    for name in ("colouring", "backward_search"):
        assert isinstance(reach_path(stages[name], {}, fields, 1 << 30), cpu_reach.Reach)
    assert reach_path(stages["trimming"], {}, fields, 1) is None  # an iteration limit


# ---------------------------------------------------------------- the marking step alone
@gs.algorithm(name="scc_cpu_marks", node_after_edges=True)
class Marks:
    """Marks of alive neighbours (self-loops aside), then the lonely alive nodes."""

    alive = gs.NodeField("int32", init=gs.per_node_input("alive", default=1))
    has_in = gs.NodeField("int32", init=0)
    has_out = gs.NodeField("int32", init=0)
    lonely = gs.NodeField("int32", init=0)
    start = gs.all_nodes()

    @gs.edge_op
    def mark(e):
        e.only_if((e.src.alive > 0) & (e.dst.alive > 0) & e.src.id.ne(e.dst.id))
        e.dst.has_in.reduce_max(1, activate=False)
        e.src.has_out.at(e.src.id).reduce_max(1, activate=False)

    @gs.node_op
    def trim(n):
        n.lonely = gs.where((n.alive > 0) & ((n.has_in < 1) | (n.has_out < 1)), 1, 0)
        n.has_in = 0


@gs.algorithm(name="scc_cpu_block_marks", node_after_edges=True)
class BlockMarks:
    """Marks over edges inside a block (a term of both ends: indexed stores)."""

    block = gs.NodeField("int32", init=gs.per_node_input("block", default=0))
    has_in = gs.NodeField("int32", init=0)
    has_out = gs.NodeField("int32", init=5)
    start = gs.all_nodes()

    @gs.edge_op
    def mark(e):
        e.only_if(e.src.block.eq(e.dst.block) & (e.dst.block < 2))
        e.dst.has_in.reduce_max(1, activate=False)
        e.src.has_out.at(e.src.id).reduce_min(2, activate=False)


@gs.algorithm(name="scc_cpu_source_marks", node_after_edges=True)
class SourceMarks:
    """Marks from the source only under data driving, from every node under topology."""

    has_in = gs.NodeField("int32", init=0)
    start = gs.from_source()

    @gs.edge_op
    def mark(e):
        e.dst.has_in.reduce_max(1, activate=False)


@gs.algorithm(name="scc_cpu_source_stamp", node_after_edges=True)
class SourceStamp:
    """Marks from the source's edges; every processed node stamped (the source only
    under data driving, every node under topology)."""

    mine = gs.NodeField("int32", init=0, at_source=1)
    has_in = gs.NodeField("int32", init=0)
    stamp = gs.NodeField("int32", init=0)
    start = gs.from_source()

    @gs.edge_op
    def mark(e):
        e.only_if(e.src.mine > 0)
        e.dst.has_in.reduce_max(1, activate=False)

    @gs.node_op
    def stamp_it(n):
        n.stamp = 1


@gs.algorithm(name="scc_cpu_source_keep", node_after_edges=True)
class SourceKeep:
    """As :class:`SourceStamp`, the stamp only where the node is the source: the same
    under every driving."""

    mine = gs.NodeField("int32", init=0, at_source=1)
    has_in = gs.NodeField("int32", init=0)
    stamp = gs.NodeField("int32", init=0)
    start = gs.from_source()

    @gs.edge_op
    def mark(e):
        e.only_if(e.src.mine > 0)
        e.dst.has_in.reduce_max(1, activate=False)

    @gs.node_op
    def stamp_it(n):
        n.stamp = gs.where(n.mine > 0, 1, n.stamp)


def _block_graph():
    g = rmat(9, 4, seed=7)
    loops = np.arange(0, g.n_nodes, 7)
    src, dst = g.edges()
    g = gs.Graph.from_edges(np.concatenate([src, loops]), np.concatenate([dst, loops]),
                            n_nodes=g.n_nodes)
    rng = np.random.default_rng(8)
    return g, rng.integers(0, 2, g.n_nodes).astype(np.int32), rng.integers(
        0, 3, g.n_nodes).astype(np.int32)


@pytest.mark.parametrize("driving", DRIVINGS)
@pytest.mark.parametrize(("spec", "kind"), [(Marks, "sparse products"),
                                            (Marks, "row walks"),
                                            (BlockMarks, "indexed stores")])
def test_marking_step_equals_its_super_step(spec, kind, driving, monkeypatch):
    """Each way of finding the marks (few senders or many, guards of one end or of
    both): the fields of the engine's one super-step, exactly."""
    g, alive, block = _block_graph()
    if kind == "row walks":  # few alive nodes, of few edges
        few = (np.random.default_rng(12).random(g.n_nodes) < 0.2) & (g.out_degree < 4)
        alive = few.astype(np.int32)
    inputs = {"alive": alive} if spec is Marks else {"block": block}
    fast = gs.run(spec, g, backend="cpu", config={"driving": driving}, **inputs)
    assert fast.stats["formulation"] == f"one marking step ({kind})"
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
    steps = gs.run(spec, g, backend="cpu", config={"driving": driving}, **inputs)
    assert "formulation" not in steps.stats
    for name in spec.fields:
        assert np.array_equal(fast.fields[name], steps.fields[name]), name


def test_marks_ignore_self_loops_only_where_the_guard_says():
    """A node whose only alive neighbour is itself (0, 3) is lonely; a dead one (4) is
    not."""
    g = gs.Graph.from_edges([0, 1, 2, 2, 3], [0, 2, 1, 2, 3], n_nodes=5)
    got = gs.run(Marks, g, backend="cpu", alive=np.array([1, 1, 1, 1, 0], np.int32))
    assert got.fields["lonely"].tolist() == [1, 0, 0, 1, 0]
    assert got.fields["has_out"].tolist() == [0, 1, 1, 0, 0]


@pytest.mark.parametrize("driving", DRIVINGS)
def test_a_step_that_depends_on_the_driving_keeps_its_super_step(driving, monkeypatch):
    """Nodes outside the start set would mark under topology driving: the fast path
    declines and the answer is the super-step's under each driving."""
    g = rmat(8, 4, seed=9)
    src = int(np.argmax(g.out_degree))
    fast = gs.run(SourceMarks, g, backend="cpu", source=src, config={"driving": driving})
    assert "formulation" not in fast.stats
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
    steps = gs.run(SourceMarks, g, backend="cpu", source=src, config={"driving": driving})
    assert np.array_equal(fast.fields["has_in"], steps.fields["has_in"])


# --------------------------------------------------------- the chained depth-first search
def _first_reaching(n, src, dst, seeds):
    """Networkx: for each node, the first seed (in the given order) that reaches it."""
    h = nx.DiGraph()
    h.add_nodes_from(range(n))
    h.add_edges_from(zip(src.tolist(), dst.tolist()))
    out = np.full(n, -1)
    for s in seeds[::-1]:
        out[list(nx.descendants(h, int(s)) | {int(s)})] = s
    return out


@pytest.mark.parametrize("fan", [1, 2, 3, 64])
def test_first_search_matches_reachability(fan, monkeypatch):
    """Every node gets the first seed that reaches it, rows split or not, over every
    edge or a subset of them."""
    monkeypatch.setattr(cpu_reach, "_FAN", fan)
    rng = np.random.default_rng(fan)
    for trial in range(60):
        n = int(rng.integers(1, 50))
        src = rng.integers(0, n, int(rng.integers(0, 200)))
        dst = rng.integers(0, n, src.size)
        if trial % 2:  # a hub with a long row
            src = np.concatenate([src, np.full(120, rng.integers(0, n))])
            dst = np.concatenate([dst, rng.integers(0, n, 120)])
        g = gs.Graph.from_edges(src, dst, n_nodes=n)
        keep = None if trial % 3 == 0 else rng.random(g.n_edges) < 0.7
        s, d = g.edges()
        if keep is not None:
            s, d = s[keep], d[keep]
        seeds = rng.permutation(n)[:int(rng.integers(1, n + 1))]
        reached, first = cpu_reach._first_search(g, keep, seeds)
        got = np.full(n, -1)
        got[reached] = first
        assert np.unique(reached).size == reached.size, trial  # each node once
        assert np.array_equal(got, _first_reaching(n, s, d, seeds)), trial


@pytest.mark.parametrize("driving", DRIVINGS)
@pytest.mark.parametrize(("spec", "fast_path"), [(SourceStamp, False), (SourceKeep, True)])
def test_a_node_operator_outside_the_start_set(spec, fast_path, driving, monkeypatch):
    """A node operator that would change nodes outside the start set keeps the
    super-step; one that would not takes the marking step; both give its fields."""
    g = rmat(8, 4, seed=10)
    src = int(np.argmax(g.out_degree))
    fast = gs.run(spec, g, backend="cpu", source=src, config={"driving": driving})
    assert ("formulation" in fast.stats) == fast_path
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
    steps = gs.run(spec, g, backend="cpu", source=src, config={"driving": driving})
    for name in spec.fields:
        assert np.array_equal(fast.fields[name], steps.fields[name]), name


@gs.algorithm(name="scc_cpu_max_spread")
class MaxSpread:
    """Each node's largest id among the nodes that reach it (itself included)."""

    label = gs.NodeField("int32", init=gs.NODE_ID)
    start = gs.all_nodes()

    @gs.edge_op
    def spread(e):
        e.dst.label.reduce_max(e.src.label)


SPREAD_GRAPHS = {"hub": lambda: _hub(300), "small_components": lambda: _small_components(80),
                 "rmat": lambda: rmat(8, 6, seed=11)}


@pytest.mark.parametrize("fan", [2, 64])
@pytest.mark.parametrize("graph_name", sorted(SPREAD_GRAPHS))
def test_max_spread_takes_the_best_seed_first(graph_name, fan, monkeypatch):
    """A spread of the largest id over long rows (split or not) is networkx's."""
    monkeypatch.setattr(cpu_reach, "_FAN", fan)
    graph = SPREAD_GRAPHS[graph_name]()
    got = gs.run(MaxSpread, graph, backend="cpu")
    assert got.stats["formulation"].startswith("reach closure")
    h = nx.DiGraph()
    h.add_nodes_from(range(graph.n_nodes))
    h.add_edges_from(zip(*(a.tolist() for a in graph.edges())))
    want = [max([v, *nx.ancestors(h, v)]) for v in range(graph.n_nodes)]
    assert got.fields["label"].tolist() == want


def test_repeated_self_loops_are_all_taken_off():
    """A node with two self-loops and no other alive neighbour (0) is lonely; one with
    two self-loops and alive neighbours both ways (1) is not."""
    g = gs.Graph.from_edges([0, 0, 1, 1, 1, 2], [0, 0, 1, 1, 2, 1], n_nodes=3)
    assert g.n_self_loops == 4
    got = gs.run(Marks, g, backend="cpu", alive=np.ones(3, np.int32))
    assert got.stats["formulation"] == "one marking step (sparse products)"
    assert got.fields["lonely"].tolist() == [1, 0, 0]
    assert got.fields["has_out"].tolist() == [0, 1, 1]
