"""The CPU engine's whole-graph fast paths and expression evaluation give the answers of
its plain per-edge, per-node paths, on user operators of every shape the paths accept.

The plain paths are forced by making ``whole_edge_path`` find nothing and by treating no
node phase as covering every node; every field and every step's activations must match
(exactly; sums of floats to rounding).
"""

import numpy as np
import pytest

import gswitch as gs
from gswitch.engine import cpu, cpu_fast
from gswitch.errors import AlgorithmError
from gswitch.generators import grid2d, rmat, road
from gswitch.plugins import get_registry


@gs.algorithm(name="fast_float_min", reference="the CPU engine's plain path")
class FloatMin:
    """A float min whose every fifth source offers NaN, which never wins."""

    level = gs.NodeField("float32", init=gs.INF, at_source=0.0)
    start = gs.from_source()

    @gs.edge_op
    def relax(e):
        zero = e.src.level - e.src.level  # NaN where level is INF
        fifth = ((e.src.id // 5) * 5).eq(e.src.id)
        e.dst.level.reduce_min(gs.where(fifth, zero / zero, e.src.level + 1.5))


@gs.algorithm(name="fast_hook_max", symmetric=True, reference="the CPU engine's plain path")
class HookMax:
    """Hooking to the largest id, both to the destination itself and to its parent (as
    the parent was before the first statement wrote it).
    """

    label = gs.NodeField("int64", init=gs.NODE_ID)
    start = gs.all_nodes()

    @gs.edge_op
    def hook(e):
        grand = e.src.label.at(e.src.label)
        e.dst.label.reduce_max(grand)
        e.dst.label.at(e.dst.label).reduce_max(grand)

    @gs.node_op
    def jump(n):
        n.label.reduce_max(n.label.at(n.label), activate=True)


@gs.algorithm(name="fast_bits", reference="the CPU engine's plain path")
class Bits:
    """uint32 bit sets with or, offered to the destination's parent as well."""

    bits = gs.NodeField("uint32", init=0)
    parent = gs.NodeField("int32", init=gs.NODE_ID)
    start = gs.all_nodes()

    @gs.node_op
    def seed(n):
        n.bits.reduce_or(gs.where(n.id < 7, n.id + 1, 0).astype("uint32"))

    @gs.edge_op
    def spread(e):
        e.dst.bits.reduce_or(e.src.bits)
        e.dst.bits.at(e.dst.id // 2).reduce_or(e.src.bits & 3)


@gs.algorithm(name="fast_nan_field", reference="the CPU engine's plain path")
class NanField:
    """A float max into a field that holds NaN but at the sources: NaN stays."""

    level = gs.NodeField("float64", init=float("nan"), at_source=1.0)
    start = gs.from_source()

    @gs.edge_op
    def relax(e):
        e.dst.level.reduce_max(gs.minimum(e.src.level + 1.0, 4.0))


@gs.algorithm(name="fast_edges_only", reference="the CPU engine's plain path")
class EdgesOnly:
    """Indirect reads and targets that name a node only where the node has edges."""

    x = gs.NodeField("int32", init=gs.NODE_ID)
    start = gs.all_nodes()

    @gs.edge_op
    def pull(e):
        e.dst.x.reduce_min(e.src.x.at(gs.where(e.src.out_degree > 0, e.src.x, -1)))
        e.dst.x.at(gs.where(e.dst.in_degree > 0, e.dst.x, -1)).reduce_min(e.src.x)


@gs.algorithm(name="fast_sum", max_iterations_param="steps",
              reference="the CPU engine's plain path")
class Sum:
    """A sum of a function of the source (sparse product), activations counted."""

    steps = gs.Param("int32", 6, low=1, high=100)
    acc = gs.NodeField("float64", init=0.0)
    x = gs.NodeField("float32", init=1.0)
    start = gs.all_nodes()

    @gs.node_op
    def scale(n):
        n.x = (n.acc * 0.25 + 1.0).astype("float32")

    @gs.edge_op
    def gather(e):
        e.dst.acc.reduce_add(e.src.x * 0.5 + e.src.out_degree)


FAST = [(FloatMin, cpu_fast.DestinationReduce), (HookMax, cpu_fast.DestinationReduce),
        (Bits, cpu_fast.DestinationReduce), (NanField, cpu_fast.DestinationReduce),
        (EdgesOnly, cpu_fast.DestinationReduce), (Sum, cpu_fast.SumGather)]
GRAPHS = {"rmat": lambda: rmat(10, 8, seed=4, weighted=True),  # nodes without edges
          "grid": lambda: grid2d(20, 24, weighted=True)}


def _plain(monkeypatch) -> None:
    monkeypatch.setattr(cpu, "whole_edge_path", lambda *args: None)
    monkeypatch.setattr(cpu, "_every_node", lambda nodes, n: False)


@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("spec, path", FAST, ids=lambda x: getattr(x, "name", ""))
@pytest.mark.parametrize("config", [{"driving": "topology"}, {}], ids=["topology", "data"])
def test_fast_paths_match_plain_paths(spec, path, graph, config, monkeypatch):
    g = GRAPHS[graph]()
    assert isinstance(cpu_fast.whole_edge_path(spec, g.symmetrize() if spec.symmetric else g,
                                               cpu._apply_reduction), path)
    kw = {"source": [0, 5, 77]} if spec.start.kind == "source" else {}
    fast = gs.run(spec, g, backend="cpu", config=config, **kw)
    _plain(monkeypatch)
    plain = gs.run(spec, g, backend="cpu", config=config, **kw)
    assert fast.iterations == plain.iterations
    assert fast.stats["active"] == plain.stats["active"]
    for name, want in plain.fields.items():
        got = fast.fields[name]
        assert got.dtype == want.dtype, name
        if path is cpu_fast.SumGather:  # one sparse product: another order of the sums
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)
        else:
            assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f"), name


@pytest.mark.parametrize("variant, path", [("label_propagation", cpu_fast.DestinationReduce),
                                           ("hook_compress", cpu_fast.DestinationReduce)])
def test_built_in_cc_takes_the_destination_reduction(variant, path):
    """The fast path recognises CC's formulations from their operators alone."""
    spec = get_registry().variants["cc"][variant]
    g = road(16, 16, seed=1)
    assert isinstance(cpu_fast.whole_edge_path(spec, g, cpu._apply_reduction), path)


def test_an_index_outside_the_graph_at_a_node_with_edges_still_raises():
    """Evaluating per node does not hide a bad index that the per-edge path would meet."""

    @gs.algorithm(name="fast_bad_index")
    class BadIndex:
        x = gs.NodeField("int32", init=gs.NODE_ID)
        start = gs.all_nodes()

        @gs.edge_op
        def bad(e):
            e.dst.x.reduce_min(e.src.x.at(e.src.x + 1000))

    g = grid2d(4, 5)
    assert isinstance(cpu_fast.whole_edge_path(BadIndex, g, cpu._apply_reduction),
                      cpu_fast.DestinationReduce)
    with pytest.raises(AlgorithmError, match="outside the graph"):
        gs.run(BadIndex, g, backend="cpu", config={"driving": "topology"})


@gs.algorithm(name="fast_shared", max_iterations_param="steps",
              reference="the CPU engine's plain path")
class Shared:
    """Statements sharing a subexpression across a store to a field it reads."""

    steps = gs.Param("int32", 1, low=1, high=10)
    x = gs.NodeField("int64", init=gs.NODE_ID)
    y = gs.NodeField("float64", init=0.0)
    z = gs.NodeField("float64", init=0.0)
    w = gs.NodeField("float64", init=0.0)
    sink = gs.NodeField("int32", init=0)
    start = gs.all_nodes()

    @gs.node_op
    def update(n):
        new = n.x * 2 + 1
        n.y = new.astype("float64") - 0.5
        n.x = new  # `new` is read again below: from the stored x
        n.z = (new * 3).astype("float64") + n.y
        n.w = -abs(n.y - 100.0) * 2.0

    @gs.edge_op
    def idle(e):
        e.dst.sink.reduce_max(0)


@gs.algorithm(name="fast_forward", max_iterations_param="steps",
              reference="the CPU engine's plain path")
class Forward:
    """Each node offers its value to the next id: buffered, not a chain along the ids."""

    steps = gs.Param("int32", 1, low=1, high=10)
    x = gs.NodeField("int32", init=gs.NODE_ID)
    sink = gs.NodeField("int32", init=0)
    start = gs.all_nodes()

    @gs.node_op
    def shift(n, p):
        n.x.at(gs.minimum(n.id + 1, p.n_nodes - 1)).reduce_min(n.x)

    @gs.edge_op
    def idle(e):
        e.dst.sink.reduce_max(0)


@pytest.mark.parametrize("whole", [True, False], ids=["every-node", "plain"])
def test_node_phase_reads_shared_values_after_stores(whole, monkeypatch):
    """A subexpression is evaluated again after a statement stores a field it reads; the
    values of a chain of operations are right whether or not they reuse arrays."""
    if not whole:
        _plain(monkeypatch)
    g = grid2d(6, 7)
    r = gs.run(Shared, g, backend="cpu", config={"driving": "topology"})
    v = np.arange(g.n_nodes, dtype=np.float64)
    assert r.fields["x"].tolist() == (2 * np.arange(g.n_nodes) + 1).tolist()
    np.testing.assert_array_equal(r.fields["y"], 2 * v + 0.5)
    np.testing.assert_array_equal(r.fields["z"], 3 * (4 * v + 3) + 2 * v + 0.5)
    np.testing.assert_array_equal(r.fields["w"], -np.abs(2 * v + 0.5 - 100.0) * 2.0)


@pytest.mark.parametrize("whole", [True, False], ids=["every-node", "plain"])
def test_node_phase_indirect_reduction_reads_values_before_the_step(whole, monkeypatch):
    """On every node a load is the field itself: an indirect reduction of it into the same
    field still reads the values from before the statement."""
    if not whole:
        _plain(monkeypatch)
    g = grid2d(5, 5)
    r = gs.run(Forward, g, backend="cpu", config={"driving": "topology"})
    want = np.concatenate([[0], np.arange(g.n_nodes - 1)])
    assert r.fields["x"].tolist() == want.tolist()
