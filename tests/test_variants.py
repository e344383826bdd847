"""Algorithm variants and the language features they use, on the CPU engine: indirect
access (``.at()``), node operators that activate, the node phase after the edges, and
convergence on a step total. Every variant is checked against the algorithm's reference.
"""

import numpy as np
import pytest

import gswitch as gs
from gswitch.errors import AlgorithmError, InvalidConfig, InvalidInput
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

# strategies under test do their steps on the CPU (no shortest-path closure)
pytestmark = pytest.mark.usefixtures("super_steps")

OUTPUT = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}
VARIANTS = [(name, v) for name, family in sorted(get_registry().variants.items())
            if name in OUTPUT for v in family]


def _drivings(spec):
    return spec.supports.get("driving", ("data", "topology", "temporal"))


@pytest.mark.parametrize("graph_name", ZOO_NAMES)
@pytest.mark.parametrize("name,variant", VARIANTS)
def test_every_variant_matches_the_reference(graph_name, name, variant):
    """Each formulation, under each driving style it supports, gives the reference answer."""
    graph = zoo_graph(graph_name)
    spec = get_registry().algorithm(name, variant)
    needs_source = spec.start.kind == "source"
    if needs_source and graph.n_nodes == 0:
        return
    kwargs = {"source": 0} if needs_source else {}
    ref = reference(name, graph, **kwargs)
    for driving in _drivings(spec):
        r = gs.run(name, graph, backend="cpu", config={"variant": variant, "driving": driving},
                   **kwargs)
        problem = compare(name, r.fields[OUTPUT[name]], ref)
        assert problem is None, f"{variant} driving={driving}: {problem}"


def test_hook_compress_needs_far_fewer_steps_than_the_diameter():
    """On a path of 4096 nodes label propagation takes a step per hop; hook-and-compress
    takes a number of steps that grows with the logarithm of the length."""
    from gswitch.generators import path

    g = path(4096)
    lp = gs.run("cc", g, backend="cpu", config={"variant": "label_propagation"})
    hc = gs.run("cc", g, backend="cpu", config={"variant": "hook_compress"})
    assert np.array_equal(lp.fields["comp"], hc.fields["comp"])
    assert lp.stats["iterations"] >= 4000
    assert hc.stats["iterations"] <= 40


def test_variant_defaults_fill_what_the_caller_left_out():
    """variant=hook_compress alone runs topology-driven; a caller's own choice is refused
    with a reason naming the variant."""
    g = zoo_graph("rmat")
    r = gs.run("cc", g, backend="cpu", config={"variant": "hook_compress"})
    assert r.config["driving"] == "topology"
    with pytest.raises(InvalidConfig, match="variant hook_compress of cc supports driving"):
        gs.run("cc", g, backend="cpu", config={"variant": "hook_compress", "driving": "data"})


def test_unknown_variant_lists_the_valid_ones():
    """A variant that does not exist is one line naming the algorithm's variants."""
    with pytest.raises(InvalidInput, match="cc has no variant 'fast'.*hook_compress"):
        gs.run("cc", zoo_graph("rmat"), backend="cpu", config={"variant": "fast"})


def test_variants_share_the_reference_of_their_algorithm():
    """Registering a variant without its own reference gives it its algorithm's."""
    family = get_registry().variants["cc"]
    refs = {spec.reference for spec in family.values()}
    assert len(family) >= 2 and len(refs) == 1 and refs != {""}


def test_power_pull_stops_on_the_l1_change():
    """power_pull ends after the first step whose total (the L1 change) is below the
    tolerance; the steps before it stayed above."""
    g = zoo_graph("rmat")
    tol = 1e-5
    r = gs.run("pagerank", g, backend="cpu", config={"variant": "power_pull"}, tolerance=tol)
    totals = r.stats["totals"]
    assert len(totals) == r.stats["iterations"] >= 3
    assert totals[-1] < tol and all(t >= tol for t in totals[:-1])


@gs.algorithm(name="test_at_out_of_range")
class _OutOfRange:
    x = gs.NodeField("int32", init=gs.NODE_ID)
    start = gs.all_nodes()

    @gs.edge_op
    def bad(e):
        e.dst.x.reduce_min(e.src.x.at(e.src.x + 1000))


def test_indirect_index_outside_the_graph_is_caught():
    """An .at() index past the last node id is one clear error on the CPU engine."""
    g = gs.Graph.from_edges([0, 1], [1, 2])
    with pytest.raises(AlgorithmError, match=r"names node 100\d, outside the graph's ids 0\.\.2"):
        gs.run(_OutOfRange, g, backend="cpu")


@gs.algorithm(name="test_pointer_jump", node_after_edges=True)
class _PointerJump:
    """Each edge v -> v+1 hooks v+1 under v; then every node jumps to its grandparent,
    activating itself when it moved, until every node points at the root."""

    parent = gs.NodeField("int32", init=gs.NODE_ID)
    start = gs.all_nodes()

    @gs.edge_op
    def hook(e):
        e.dst.parent.reduce_min(e.src.id)

    @gs.node_op
    def jump(n):
        n.parent.reduce_min(n.parent.at(n.parent), activate=True)


def test_node_operator_activations_drive_a_topology_run():
    """A node operator that activates (activate=True) keeps a topology run going until it
    changes nothing: pointer jumping over a chain of 1024 ends at the root in about
    log2(1024) steps, although the edges change nothing after the first."""
    n = 1024
    g = gs.Graph.from_edges(np.arange(n - 1), np.arange(1, n), n_nodes=n)
    r = gs.run(_PointerJump, g, backend="cpu", config={"driving": "topology"})
    assert (r.fields["parent"] == 0).all()
    assert 10 <= r.stats["iterations"] <= 13


@gs.algorithm(name="test_order", node_after_edges=True, max_iterations_param="steps")
class _AfterEdges:
    """acc gathers in-neighbour ids; the node phase, after the edges, copies acc to seen
    and resets acc: seen holds the gather of the same step only when the order is right."""

    steps = gs.Param("int32", 1)
    acc = gs.NodeField("int64", init=0)
    seen = gs.NodeField("int64", init=-1)
    start = gs.all_nodes()

    @gs.edge_op
    def gather(e):
        e.dst.acc.reduce_add(e.src.id.astype("int64") + 1)

    @gs.node_op
    def take(n):
        n.seen = n.acc
        n.acc = 0


def test_node_phase_after_edges_sees_the_same_step():
    """With node_after_edges, the node operator reads what the edge expansion of the same
    step reduced (one step over every node)."""
    g = gs.Graph.from_edges([0, 1, 2], [1, 2, 0])
    r = gs.run(_AfterEdges, g, backend="cpu", config={"driving": "topology"})
    assert r.fields["seen"].tolist() == [3, 1, 2]
    assert r.fields["acc"].tolist() == [0, 0, 0]


def test_a_formulation_can_be_the_default_on_one_backend():
    """cc defaults to afforest, but to hook_compress on the CPU engine (default_on); sssp
    to bellman_ford, but to delta-stepping with a narrower bucket on the CPU
    (default_on, backend_defaults); a config that
    names a strategy the default refuses still falls back to a formulation that takes it.
    """
    g = zoo_graph("road")
    reg = get_registry()
    assert reg.algorithm("cc").variant == "afforest"
    cpu = gs.run("cc", g, backend="cpu")
    assert cpu.stats["variant"] == "hook_compress"
    assert np.array_equal(cpu.fields["comp"], reference("cc", g))
    d = gs.run("sssp", g, source=0, backend="cpu")
    assert d.stats["variant"] == "delta_stepping" and d.config["driving.width_scale"] == 1.0
    assert reg.algorithm("sssp").variant == "bellman_ford"  # the GPU default
    assert reg.variants["sssp"]["delta_stepping"].config_defaults["driving.width_scale"] != 1.0
    lp = gs.run("cc", g, backend="cpu", config={"driving": "data"})
    assert lp.stats["variant"] == "label_propagation"
