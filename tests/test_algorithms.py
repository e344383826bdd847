"""Every algorithm, driving style and direction on the CPU engine against a reference."""

import numpy as np
import pytest

import gswitch as gs
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import SWEEP_NAMES, ZOO_NAMES, sweep_graph, zoo_graph

# strategies under test do their steps on the CPU (no shortest-path closure)
pytestmark = pytest.mark.usefixtures("super_steps")

ALGORITHMS = ["bfs", "sssp", "cc", "pagerank"]
DRIVING = ["data", "topology", "temporal"]
DIRECTIONS = ["push", "pull"]
OUTPUT = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}


def _source(graph):
    return 0 if graph.n_nodes else None


@pytest.mark.parametrize("graph_name", ZOO_NAMES)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("driving", DRIVING)
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_cpu_matches_reference(graph_name, algorithm, driving, direction):
    """The CPU engine reaches the reference answer under every driving style and direction."""
    graph = zoo_graph(graph_name)
    spec_source = algorithm in ("bfs", "sssp")
    if spec_source and graph.n_nodes == 0:
        with pytest.raises(gs.InvalidInput, match="out of range"):
            gs.run(algorithm, graph, source=0, backend="cpu")
        return
    kwargs = {"source": _source(graph)} if spec_source else {}
    cfg = {"driving": driving, "direction": direction}
    result = gs.run(algorithm, graph, backend="cpu", config=cfg, **kwargs)
    ref = reference(algorithm, graph, **kwargs)
    problem = compare(algorithm, result.fields[OUTPUT[algorithm]], ref)
    assert problem is None, problem
    if algorithm == "pagerank" and graph.n_nodes:
        assert abs(float(result.fields["rank"].sum()) - 1.0) < 1e-4


@pytest.mark.parametrize("threshold", [0.001, 0.05, 0.5, 1.0])
def test_temporal_threshold_switches_both_ways(threshold):
    """Temporal driving switches between modes and still matches BFS on a power-law graph."""
    graph = zoo_graph("rmat")
    result = gs.run("bfs", graph, source=0, backend="cpu",
                    config={"driving": "temporal", "driving.threshold": threshold})
    assert compare("bfs", result.fields["depth"], reference("bfs", graph, source=0)) is None
    modes = set(result.stats["modes"])
    if threshold == 0.05:
        assert "topology" in modes and "transition" in modes
    if threshold == 0.001:
        assert "topology" in modes
    if threshold == 1.0:
        assert modes == {"data"}


def test_stats_are_consistent():
    """Per-iteration active counts add up to the iterations and edges processed."""
    graph = zoo_graph("grid")
    r = gs.run("bfs", graph, source=0, backend="cpu", config={"driving": "data"})
    assert len(r.stats["active"]) == r.iterations
    assert r.stats["active"][0] == 1
    assert r.stats["edges_processed"] == graph.n_edges  # each node expanded exactly once
    t = gs.run("bfs", graph, source=0, backend="cpu", config={"driving": "topology"})
    assert t.stats["edges_processed"] == graph.n_edges * t.iterations


def test_sssp_rejects_negative_weights():
    """A negative weight is refused with the edge named."""
    g = gs.Graph.from_edges([0, 1], [1, 2], [1.0, -2.0])
    with pytest.raises(gs.InvalidInput, match="1 -> 2 has weight -2.0"):
        gs.run("sssp", g, source=0, backend="cpu")


def test_sssp_unweighted_counts_hops():
    """An unweighted graph counts every edge as 1."""
    g = gs.Graph.from_edges([0, 1, 0], [1, 2, 3])
    r = gs.run("sssp", g, source=0, backend="cpu")
    assert r.fields["dist"].tolist() == [0.0, 1.0, 2.0, 1.0]


def test_bfs_unreachable_is_minus_one():
    """Unreachable nodes get depth -1."""
    g = gs.Graph.from_edges([0], [1], n_nodes=3)
    assert gs.run("bfs", g, source=0, backend="cpu").fields["depth"].tolist() == [0, 1, -1]


@pytest.mark.parametrize("alpha", [0.5, 0.85, 0.95])
def test_pagerank_alpha(alpha):
    """PageRank follows its damping factor."""
    graph = zoo_graph("rmat")
    r = gs.run("pagerank", graph, backend="cpu", alpha=alpha, tolerance=1e-7)
    assert compare("pagerank", r.fields["rank"], reference("pagerank", graph, alpha=alpha)) is None


def test_pagerank_max_iterations_stops_early():
    """max_iterations bounds the super-steps and reports non-convergence."""
    r = gs.run("pagerank", zoo_graph("rmat"), backend="cpu", max_iterations=2)
    assert r.iterations == 2 and r.stats["converged"] is False


@pytest.mark.parametrize("variant", ["power_pull", "residual_push"])
def test_stopping_on_the_last_permitted_step_is_converged(variant):
    """A run whose stopping rule (a small change, an empty worklist) fires on its last
    permitted step converged, as the device's decision reports it; one step fewer is
    cut short."""
    graph = zoo_graph("rmat")
    config = {"variant": variant}
    steps = gs.run("pagerank", graph, backend="cpu", config=config).iterations
    r = gs.run("pagerank", graph, backend="cpu", config=config, max_iterations=steps)
    assert r.iterations == steps and r.stats["converged"] is True
    r = gs.run("pagerank", graph, backend="cpu", config=config, max_iterations=steps - 1)
    assert r.stats["converged"] is False


def test_bad_parameter_and_source():
    """Out-of-range parameters, sources and unknown names are refused clearly."""
    g = zoo_graph("grid")
    with pytest.raises(gs.InvalidInput, match="alpha"):
        gs.run("pagerank", g, backend="cpu", alpha=1.5)
    with pytest.raises(gs.InvalidInput, match="source 99999 is out of range"):
        gs.run("bfs", g, source=99999, backend="cpu")
    with pytest.raises(gs.InvalidInput, match="needs a source"):
        gs.run("bfs", g, backend="cpu")
    with pytest.raises(gs.InvalidInput, match="takes no source"):
        gs.run("cc", g, source=0, backend="cpu")
    with pytest.raises(gs.InvalidInput, match="unknown algorithm 'bogus'; choose one of"):
        gs.run("bogus", g, backend="cpu")
    with pytest.raises(gs.InvalidInput, match="no parameter"):
        gs.run("bfs", g, source=0, backend="cpu", alpha=0.1)


@pytest.mark.parametrize("value", [2.5, "1.5", "x", np.float32(2.5)])
def test_an_integer_parameter_refuses_fractions(value):
    """An integer parameter takes integral numbers (3, 3.0, "3") and says "an integer"
    for anything else, instead of truncating 2.5 to 2."""
    g = zoo_graph("grid")
    with pytest.raises(gs.InvalidInput, match="max_iterations must be an integer"):
        gs.run("pagerank", g, backend="cpu", max_iterations=value)
    for ok in (3, 3.0, "3"):
        assert gs.run("pagerank", g, backend="cpu", max_iterations=ok).iterations <= 3


def test_multiple_sources():
    """BFS from several sources gives the minimum over single-source runs."""
    g = zoo_graph("grid")
    r = gs.run("bfs", g, source=[0, 5], backend="cpu").fields["depth"]
    a = reference("bfs", g, source=0)
    b = reference("bfs", g, source=5)
    assert np.array_equal(r, np.minimum(a, b))


@pytest.mark.parametrize("graph_name", ZOO_NAMES)
@pytest.mark.parametrize("alpha", [0.85, 0.5])
def test_pagerank_reference_is_networkx(graph_name, alpha):
    """The scipy power iteration behind the PageRank reference gives networkx's answer
    (parallel edges with multiplicity, self loops, dangling nodes)."""
    nx = pytest.importorskip("networkx")
    graph = zoo_graph(graph_name)
    a = graph.with_weights(np.ones(graph.n_edges, np.float32)).to_scipy()
    a.sum_duplicates()
    g = nx.from_scipy_sparse_array(a, create_using=nx.DiGraph)
    if graph.n_nodes == 0:
        assert reference("pagerank", graph, alpha=alpha).size == 0
        return
    pr = nx.pagerank(g, alpha=alpha, tol=1e-12, max_iter=10000, weight="weight")
    expected = np.array([pr[i] for i in range(graph.n_nodes)])
    np.testing.assert_allclose(reference("pagerank", graph, alpha=alpha), expected,
                               rtol=0, atol=1e-9)


def test_source_forms_agree():
    """A plain int source (the fast path) and its array forms give one answer; bad ones
    are still refused."""
    from gswitch.plugins import get_registry
    from gswitch.runner import prepare

    g = zoo_graph("grid")
    want = gs.run("bfs", g, source=3, backend="cpu").fields["depth"]
    for form in (np.int64(3), [3], np.array([3, 3])):
        assert np.array_equal(gs.run("bfs", g, source=form, backend="cpu").fields["depth"],
                              want)
    _, sources = prepare(get_registry().algorithm("bfs"), g, 3)
    assert sources.dtype == np.int32 and sources.tolist() == [3]
    for bad in (-1, g.n_nodes):
        with pytest.raises(gs.InvalidInput, match="out of range"):
            gs.run("bfs", g, source=bad, backend="cpu")
    with pytest.raises(gs.InvalidInput, match="integer node id"):
        gs.run("bfs", g, source=True, backend="cpu")


def test_fill_initial_matches_initial():
    """Filling a staging array gives what a fresh initial array holds."""
    fields = [gs.NodeField("int32", init=gs.INF), gs.NodeField("float32", init=gs.INF),
              gs.NodeField("int32", init=gs.NODE_ID),
              gs.NodeField("float64", init=lambda p: 1.0 / p["n_nodes"])]
    for f in fields:
        out = np.full(5, 9, dtype=f.dtype)
        f.fill_initial(out, {"n_nodes": 5})
        assert np.array_equal(out, f.initial(5, {"n_nodes": 5}))


@pytest.mark.parametrize("name", SWEEP_NAMES)
def test_sweep_graphs_are_what_the_gpu_sweep_expects(name):
    """Each sweep graph is named, weighted (nonnegative) and has a source with out-edges
    (RMAT's node counts are powers of two, the others' not multiples of 32); BFS and SSSP
    from it match scipy on the CPU engine."""
    g, source = sweep_graph(name)
    assert g.name == name and g.weights is not None and (g.weights >= 0).all()
    assert 0 <= source < g.n_nodes
    assert (g.n_nodes % 32 != 0) == ("rmat" not in name and "zero_weights" not in name)
    assert g.indptr[source + 1] > g.indptr[source]
    for algorithm in ("bfs", "sssp"):
        r = gs.run(algorithm, g, source=source, backend="cpu")
        ref = reference(algorithm, g, source=source)
        assert compare(algorithm, r.fields[OUTPUT[algorithm]], ref) is None


def test_finalize_on_device_is_declared_and_runs_on_the_host_here():
    """``finalize_on_device`` is kept only with a ``finalize``; on the CPU the runner
    finalises on the host and says so, with the declared result (a new float64 output
    computed from a field that is not an output)."""
    from gswitch.plugins import get_registry
    from gswitch.testing.user_algorithms import HALF_HOPS, hop_count

    assert HALF_HOPS.finalize_on_device
    assert get_registry().algorithm("bfs").finalize_on_device
    NoFinalize = hop_count("no_finalize", finalize_on_device=True)
    assert not NoFinalize.finalize_on_device
    g = zoo_graph("rmat")
    r = gs.run(HALF_HOPS, g, source=0, backend="cpu")
    assert r.stats["finalized_on"] == "host" and list(r.fields) == ["half"]
    depth = gs.run("bfs", g, source=0, backend="cpu").fields["depth"]
    want = np.where(depth < 0, np.nan, depth / 2.0)
    assert r.fields["half"].dtype == np.float64
    assert np.array_equal(r.fields["half"], want, equal_nan=True)
    assert "finalized_on" not in gs.run(NoFinalize, g, source=0, backend="cpu").stats


@pytest.mark.parametrize("kwargs,message", [
    ({"arrays": "cupy", "backend": "cpu"}, "arrays='cupy' keeps the results on the GPU, so it "
                                           "needs backend='gpu'"),
    ({"arrays": "torch"}, "arrays must be 'numpy' or 'cupy'; got 'torch'"),
])
def test_bad_arrays_argument_is_one_clear_error(kwargs, message):
    """``arrays`` takes numpy or cupy, and cupy only with the GPU backend."""
    import re

    g = zoo_graph("rmat")
    with pytest.raises(gs.InvalidInput, match=re.escape(message)):
        gs.run("bfs", g, source=0, **kwargs)
    assert isinstance(gs.run("bfs", g, source=0, backend="cpu", arrays="numpy")["depth"],
                      np.ndarray)
