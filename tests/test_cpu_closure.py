"""The CPU engine's shortest-path closure against its super-step loop and scipy.

Each case runs twice: as the engine chooses (the closure where the operator has the
min-plus shape) and with ``GSWITCH_CPU_STEPS=1`` (the super-step loop); both must give
the same fields, and the references of the built-in algorithms.
"""

import numpy as np
import pytest

import gswitch as gs
from gswitch.algorithm import int_inf
from gswitch.engine import cpu_closure
from gswitch.generators import grid2d, rmat, road
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import zoo_graph


@gs.algorithm(name="closure_param_step", reference="gswitch cpu engine")
class ParamStep:
    """Hops times a parameter, the weight of every edge, written weight-first."""

    cost = gs.NodeField("int64", init=gs.INF, at_source=7)
    step = gs.Param("int64", default=3)
    start = gs.from_source()

    @gs.edge_op
    def relax(e, p):
        e.dst.cost.reduce_min(p.step + e.src.cost)


@gs.algorithm(name="closure_guarded", reference="gswitch cpu engine")
class Guarded:
    """Not the shape: a guard before the relaxation."""

    dist = gs.NodeField("float32", init=gs.INF, at_source=0.0)
    start = gs.from_source()

    @gs.edge_op
    def relax(e):
        e.only_if(e.dst.id > 3)
        e.dst.dist.reduce_min(e.src.dist + e.weight)


def _both(monkeypatch, *args, **kwargs):
    fast = gs.run(*args, backend="cpu", **kwargs)
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
    slow = gs.run(*args, backend="cpu", **kwargs)
    monkeypatch.delenv("GSWITCH_CPU_STEPS")
    return fast, slow


def _graphs():
    yield "rmat", rmat(9, 6, seed=3)
    yield "road", road(20, 20, seed=2)  # weighted
    yield "grid", grid2d(15, 17)
    # parallel edges of different weights, a self-loop, an unreachable part
    yield "multi", gs.Graph.from_edges([0, 0, 1, 1, 2, 4, 5], [1, 1, 1, 2, 3, 5, 4],
                                       [5.0, 1.5, 2.0, 0.25, 3.0, 1.0, 1.0], n_nodes=7)
    for name in ("road", "star", "path", "disconnected", "self_loops", "duplicates"):
        yield f"zoo:{name}", zoo_graph(name)


@pytest.mark.parametrize("alg,out", [("bfs", "depth"), ("sssp", "dist")])
@pytest.mark.parametrize("label,graph", list(_graphs()))
def test_closure_equals_super_steps_and_reference(monkeypatch, alg, out, label, graph):
    source = int(np.argmax(graph.out_degree))
    fast, slow = _both(monkeypatch, alg, graph, source=source)
    assert "closure" in fast.stats["formulation"]
    assert "formulation" not in slow.stats
    if alg == "bfs":
        assert np.array_equal(fast.fields[out], slow.fields[out])
        # the closure's level count is the frontier BFS's step count
        assert fast.iterations == slow.iterations
    else:
        np.testing.assert_allclose(fast.fields[out], slow.fields[out], rtol=1e-6)
    assert compare(alg, fast.fields[out], reference(alg, graph, source=source)) is None


@pytest.mark.parametrize("walk", [4096, 3, 0])  # levels counted one by one, then jumps
def test_bfs_levels_equal_the_data_driven_step_count(monkeypatch, walk):
    monkeypatch.setattr(cpu_closure, "_LEVEL_WALK", walk)
    g = road(30, 30, seed=1)
    fast = gs.run("bfs", g, source=0, backend="cpu")
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
    data = gs.run("bfs", g, source=0, backend="cpu", config={"driving": "data"})
    assert np.array_equal(fast.fields["depth"], data.fields["depth"])
    assert fast.iterations == data.iterations == int(fast.fields["depth"].max()) + 1


def test_several_sources_and_a_parameter_step(monkeypatch):
    g = rmat(8, 4, seed=5)
    fast, slow = _both(monkeypatch, "bfs", g, source=[0, 3, 17])
    assert "closure" in fast.stats["formulation"]
    assert np.array_equal(fast.fields["depth"], slow.fields["depth"])
    w = g.with_weights(np.linspace(0.5, 4.0, g.n_edges, dtype=np.float32))
    fast, slow = _both(monkeypatch, "sssp", w, source=[1, 2])
    assert "dijkstra" in fast.stats["formulation"]
    np.testing.assert_allclose(fast.fields["dist"], slow.fields["dist"], rtol=1e-6)
    for step in (1, 3, 1000):
        fast, slow = _both(monkeypatch, ParamStep, g, source=4, step=step)
        assert "closure" in fast.stats["formulation"]
        assert np.array_equal(fast.fields["cost"], slow.fields["cost"])
        reached = fast.fields["cost"] < int_inf("int64")
        assert (fast.fields["cost"][reached] - 7) % step == 0


def _recognised(spec, graph, params=None, fields=None, max_iterations=cpu_closure.NO_LIMIT):
    fields = fields if fields is not None else spec.initial_fields(
        graph.n_nodes, params or {}, np.array([0], dtype=np.int32))
    return cpu_closure.closure_path(spec, graph, params or {}, fields, max_iterations)


def test_what_is_and_is_not_the_shape(monkeypatch):
    reg = get_registry()
    g = rmat(7, 4, seed=1)
    assert _recognised(reg.algorithm("bfs"), g) == cpu_closure.Closure("depth", 1.0)
    assert _recognised(reg.algorithm("sssp"), g).step == 1.0  # unweighted: unit weights
    w = g.with_weights(np.full(g.n_edges, 2.0, np.float32))
    assert _recognised(reg.algorithm("sssp", "delta_stepping"), w).step is None
    # a zero weight, an iteration limit, a guard, other operators: super-steps
    assert _recognised(reg.algorithm("sssp"), g.with_weights(
        np.zeros(g.n_edges, np.float32))) is None
    assert _recognised(reg.algorithm("bfs"), g, max_iterations=10) is None
    assert _recognised(Guarded, w) is None
    for name in ("cc", "pagerank"):
        spec = reg.algorithm(name)
        fields = spec.initial_fields(g.n_nodes, spec.resolve_params({}, g.n_nodes), None)
        assert cpu_closure.closure_path(spec, g, {}, fields, cpu_closure.NO_LIMIT) is None
    # several different start values: no single closure
    spec = reg.algorithm("bfs")
    fields = spec.initial_fields(g.n_nodes, {}, np.array([0, 1], dtype=np.int32))
    fields["depth"][1] = 2
    assert cpu_closure.closure_path(spec, g, {}, fields, cpu_closure.NO_LIMIT) is None
    # a step that could pass the integer infinity within n - 1 edges
    assert _recognised(ParamStep, g, params={"step": 2**61}) is None
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
    assert _recognised(reg.algorithm("bfs"), g) is None
