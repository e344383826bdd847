"""Open driving modes and priority driving on the CPU engine (and compiled with nvcc):
a plugin declares its own step modes, and ``priority`` (near-far piles, delta-stepping
buckets) orders the work of ``sssp[delta_stepping]`` without changing any answer.
"""

import numpy as np
import pytest
from gswitch.strategies.driving.priority import default_width

import gswitch as gs
import gswitch.plugins as plugins
from gswitch.codegen import generate_source
from gswitch.config import Config
from gswitch.errors import AlgorithmError, InvalidConfig
from gswitch.generators import road
from gswitch.plugins import get_registry, reset_registry
from gswitch.testing.conformance import compile_problems, strategy_problems
from gswitch.testing.reference import compare, reference
from gswitch.testing.user_strategies import PLUGIN_MODULE
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

# strategies under test do their steps on the CPU (no shortest-path closure)
pytestmark = pytest.mark.usefixtures("super_steps")

PRIORITY = [{"driving": "priority", "driving.policy": p, "driving.width_scale": s}
            for p in ("near_far", "buckets") for s in (1 / 64, 1.0, 64.0)]


@pytest.fixture
def alternating(monkeypatch):
    """The test plugin's driving strategy registered next to the built-ins."""
    original = plugins._builtin_modules
    monkeypatch.setattr(plugins, "_builtin_modules", lambda: original() + (PLUGIN_MODULE,))
    reset_registry()
    yield get_registry().strategies["driving"]["alternating"]
    monkeypatch.setattr(plugins, "_builtin_modules", original)
    reset_registry()


@pytest.mark.parametrize("graph_name", ZOO_NAMES)
def test_delta_stepping_matches_dijkstra_under_every_policy_and_width(graph_name):
    """Both policies at widths from 1/64 to 64 times the graph's default, pushing and
    pulling, give scipy's distances (the zoo has zero weights, self-loops, duplicates)."""
    graph = zoo_graph(graph_name)
    if graph.n_nodes == 0:
        return
    ref = reference("sssp", graph, source=0)
    for cfg in PRIORITY:
        for direction in ("push", "direction_optimizing"):
            r = gs.run("sssp", graph, source=0, backend="cpu",
                       config={"variant": "delta_stepping", "direction": direction, **cfg})
            assert compare("sssp", r.fields["dist"], ref) is None, (cfg, direction)


def test_delta_stepping_relaxes_fewer_edges_than_bellman_ford():
    """On a weighted road grid the priority order relaxes at least half fewer edges and
    refills the worklist from the far set."""
    g = road(128, 128, seed=3)
    bf = gs.run("sssp", g, source=0, backend="cpu", config={"variant": "bellman_ford"})
    ds = gs.run("sssp", g, source=0, backend="cpu", config={"variant": "delta_stepping"})
    assert np.array_equal(bf.fields["dist"], ds.fields["dist"])
    assert ds.stats["edges_processed"] * 2 < bf.stats["edges_processed"]
    assert "refill" in ds.stats["modes"]


def test_priority_needs_a_priority_key():
    """BFS declares no key: driving=priority is refused with a reason naming the fix."""
    with pytest.raises(InvalidConfig, match="priority key"):
        gs.run("bfs", zoo_graph("rmat"), source=0, backend="cpu",
               config={"driving": "priority"})


def test_width_is_a_runtime_argument_with_a_default_from_the_graph():
    """Changing width_scale keeps the generated module; the default width is 32 times
    the mean weight over the mean degree."""
    spec = get_registry().algorithm("sssp", "delta_stepping")
    a = generate_source(spec, Config({"driving": "priority", "driving.width_scale": 1.0}), True)
    b = generate_source(spec, Config({"driving": "priority", "driving.width_scale": 8.0}), True)
    assert a.source == b.source
    g = gs.Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 0], [1.0, 2.0, 3.0, 6.0])
    assert default_width(g) == pytest.approx(32 * 3.0 / 1.0)
    strat = Config({"driving": "priority", "driving.width_scale": 0.5}).strategy("driving")
    assert strat.runtime_args(g, None)["inv_width"][1] == pytest.approx(1 / 48)


def test_priority_key_must_be_an_expression():
    """A priority that reduces is refused when the class is declared."""
    with pytest.raises(AlgorithmError, match="priority must return an expression"):
        @gs.algorithm(name="bad_key", priority=lambda n: n.d.reduce_min(0.0))
        class Bad:
            d = gs.NodeField("float32", init=gs.INF, at_source=0.0)
            start = gs.from_source()

            @gs.edge_op
            def relax(e):
                e.dst.d.reduce_min(e.src.d + e.weight)


def test_a_plugin_adds_a_driving_mode_without_touching_the_core(alternating):
    """The test plugin's own modes ('queue', 'sweep') run on the CPU engine, give the
    reference answers, show up in the step trace and pass the conformance checks."""
    assert strategy_problems(alternating) == []
    for name, kwargs in (("bfs", {"source": 0}), ("sssp", {"source": 0}), ("cc", {})):
        g = zoo_graph("road")
        r = gs.run(name, g, backend="cpu", config={"driving": "alternating"}, **kwargs)
        out = {"bfs": "depth", "sssp": "dist", "cc": "comp"}[name]
        assert compare(name, r.fields[out], reference(name, g, **kwargs)) is None
        assert set(r.stats["modes"]) == {"queue", "sweep"}
    with pytest.raises(InvalidConfig, match="monotone"):
        gs.run("pagerank", zoo_graph("road"), backend="cpu", config={"driving": "alternating"})


@pytest.mark.compile
def test_plugin_driving_mode_compiles(alternating, nvcc):
    """The plugin's fragment and mode table compile inside a real module."""
    assert compile_problems(alternating) == []
