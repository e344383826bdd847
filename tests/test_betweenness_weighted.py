"""Weighted and edge betweenness against networkx: raw sums, ties, sampling, rescaling,
renumbering, strategies, bad weights, the EdgeField declaration, CUDA compilation."""

import networkx as nx
import numpy as np
import pytest
from gswitch.algorithms.betweenness import rescale
from gswitch.algorithms.betweenness_weighted import rescale_edges

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.errors import AlgorithmError
from gswitch.generators import grid2d, rmat
from gswitch.plugins import get_registry
from gswitch.staging import stage_config
from gswitch.testing.nvcc import compile_source
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import zoo_graph

NAMES = ("weighted_betweenness", "edge_betweenness")
OUTPUT = {"weighted_betweenness": "betweenness", "edge_betweenness": "edge_betweenness"}


def _weighted(g, weights):
    return g.with_weights(np.asarray(weights, dtype=np.float32))


def _ties():
    """Small integer weights: many equal-length shortest paths."""
    g = grid2d(6, 7)
    rng = np.random.default_rng(4)
    src, dst = g.edges()
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    w = (rng.integers(1, 3, size=g.n_nodes * g.n_nodes)[lo * g.n_nodes + hi]).astype(float)
    return _weighted(g, w)  # the same weight both ways: undirected


def _floats():
    g = rmat(6, 4, seed=2)
    return _weighted(g, np.random.default_rng(3).random(g.n_edges) + 0.05)


def _dag():
    """A weighted DAG (zoo's directed_dag is 300 nodes deep in levels: seconds a run)."""
    rng = np.random.default_rng(6)
    u = rng.integers(0, 60, 240)
    v = rng.integers(0, 60, 240)
    keep = u < v
    return gs.Graph.from_edges(u[keep], v[keep], rng.integers(1, 4, int(keep.sum())) * 1.0,
                               n_nodes=60)


def _with_loops():
    """A small weighted graph with self loops (zoo's self_loops is a 50-level chain)."""
    src, dst = rmat(4, 3, seed=8).edges()
    loops = np.arange(0, 16, 3)
    src, dst = np.concatenate([src, loops]), np.concatenate([dst, loops])
    w = np.random.default_rng(9).integers(1, 3, src.size) * 1.0
    return gs.Graph.from_edges(src, dst, w, n_nodes=16)


GRAPHS = {"ties": _ties(), "floats": _floats(), "unweighted_rmat": rmat(6, 4, seed=1),
          "disconnected": zoo_graph("disconnected"), "self_loops": _with_loops(),
          "duplicates": gs.Graph.from_edges([0, 0, 1, 2, 2, 3, 0], [1, 1, 2, 3, 3, 0, 2],
                                            [2.0, 1.0, 1.0, 1.0, 3.0, 1.0, 2.0]),
          # an undirected edge listed both ways with different weights: the lightest
          # counts, the same in both directions
          "undirected_pairs": gs.Graph.from_edges([0, 2, 1, 3, 4, 3], [2, 0, 0, 1, 2, 4],
                                                  [5.0, 1.0, 2.0, 1.0, 4.0, 1.0],
                                                  directed=False),
          "dag": _dag(), "empty": zoo_graph("empty"),
          "single": zoo_graph("single"), "single_loop": zoo_graph("single_loop")}


#: the formulations of each algorithm that run on the CPU (batched: hop lengths only)
VARIANTS = {"weighted_betweenness": ("per_source", "dag"),
            "edge_betweenness": ("per_source", "dag", "batched")}
CASES = [(a, v, name) for a in NAMES for v in VARIANTS[a] for name in sorted(GRAPHS)
         if v != "batched" or GRAPHS[name].weights is None]


@pytest.mark.parametrize(("algorithm", "variant", "name"), CASES)
def test_raw_sums_equal_networkx(algorithm, variant, name):
    """Every node's (edge's) raw sum is networkx's weighted Brandes sum, by every
    formulation."""
    g = GRAPHS[name]
    r = gs.run(algorithm, g, backend="cpu", config={"variant": variant})
    assert r.stats["variant"] == variant
    assert compare(algorithm, r.fields[OUTPUT[algorithm]], reference(algorithm, g)) is None


@pytest.mark.parametrize("variant", VARIANTS["weighted_betweenness"])
def test_endpoints_and_sampled_sources_equal_networkx(variant):
    """Endpoints counted, and a few sources only, as networkx's sums."""
    g = GRAPHS["ties"]
    config = {"variant": variant}
    got = gs.run("weighted_betweenness", g, backend="cpu", endpoints=1, config=config,
                 sources=[3, 17, 30]).fields["betweenness"]
    mask = np.zeros(g.n_nodes)
    mask[[3, 17, 30]] = 1
    assert compare("weighted_betweenness", got,
                   reference("weighted_betweenness", g, endpoints=1, sources=mask)) is None
    got = gs.run("edge_betweenness", g, backend="cpu", sources=[5, 9],
                 config=config).fields["edge_betweenness"]
    mask[:] = 0
    mask[[5, 9]] = 1
    assert compare("edge_betweenness", got, reference("edge_betweenness", g,
                                                      sources=mask)) is None


def test_unit_weights_give_unweighted_betweenness():
    """On an unweighted graph the hop levels are BFS levels: ``betweenness``'s answer."""
    g = GRAPHS["unweighted_rmat"]
    a = gs.run("weighted_betweenness", g, backend="cpu").fields["betweenness"]
    b = gs.run("betweenness", g, backend="cpu").fields["betweenness"]
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("k", [None, 6])
def test_rescaled_values_equal_networkx(directed, normalized, k):
    """Rescaled as networkx: node and edge values of the weighted centralities."""
    h = nx.gnm_random_graph(30, 80, seed=7, directed=directed)
    rng = np.random.default_rng(5)
    for u, v in h.edges:
        h[u][v]["weight"] = int(rng.integers(1, 4))
    g = gs.Graph.from_networkx(h)
    nodes = None if k is None else np.array(
        nx.utils.create_py_random_state(11).sample(list(h), k))
    kw = {} if nodes is None else {"sources": nodes}
    raw = gs.run("weighted_betweenness", g, backend="cpu", **kw).fields["betweenness"]
    got = rescale(raw, directed=directed, normalized=normalized, sources=nodes)
    want = nx.betweenness_centrality(h, k=k, normalized=normalized, weight="weight", seed=11)
    np.testing.assert_allclose(got, [want[v] for v in range(30)], rtol=1e-9, atol=1e-12)
    per_edge = gs.run("edge_betweenness", g, backend="cpu", **kw).fields["edge_betweenness"]
    simple = g.simple()
    src, dst = simple.edges()
    if not directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    summed = {}
    for a, b, x in zip(src.tolist(), dst.tolist(), per_edge.tolist()):
        summed[(a, b)] = summed.get((a, b), 0.0) + x
    keys = list(summed)
    values = rescale_edges(np.array([summed[e] for e in keys]), 30, directed=directed,
                           normalized=normalized, k=k)
    want = nx.edge_betweenness_centrality(h, k=k, normalized=normalized, weight="weight",
                                          seed=11)
    want = {(min(e), max(e)) if not directed else e: x for e, x in want.items()}
    np.testing.assert_allclose(values, [want[e] for e in keys], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("renumber", ["rcm", "bfs", "degree"])
@pytest.mark.parametrize(("algorithm", "variant"),
                         [(a, v) for a in NAMES for v in VARIANTS[a]])
def test_renumbered_runs_answer_in_caller_ids_and_edges(algorithm, variant, renumber):
    """A renumbered run returns node values in caller ids, edge values in caller edge
    order, whichever formulation wrote them (host steps or array code)."""
    g = GRAPHS["self_loops"]
    if variant == "batched":
        g = g.with_weights(None)
    got = gs.run(algorithm, g, backend="cpu",
                 config={"renumber": renumber, "variant": variant})
    assert got.stats["variant"] == variant and got.stats["renumber"] == renumber
    want = reference(algorithm, g)
    assert compare(algorithm, got.fields[OUTPUT[algorithm]], want) is None


@pytest.mark.parametrize("driving", ["data", "topology", "temporal"])
def test_forward_stage_strategies_agree(driving, super_steps):
    """The distance stage follows the run's driving; the answer does not change."""
    g = GRAPHS["ties"]
    got = gs.run("edge_betweenness", g, backend="cpu",
                 config={"driving": driving, "variant": "per_source"})
    assert got.stats["variant"] == "per_source"
    assert compare("edge_betweenness", got.fields["edge_betweenness"],
                   reference("edge_betweenness", g)) is None


def test_zero_and_negative_weights_are_refused_in_one_line():
    """A zero weight names the edge and the fix; a negative one is refused as for SSSP."""
    g = gs.Graph.from_edges([0, 1, 1], [1, 2, 0], [1.0, 0.0, 2.0])
    with pytest.raises(gs.InvalidInput, match=r"positive edge weights: edge \(1, 2\) has "
                                              r"weight 0; give it a positive weight"):
        gs.run("weighted_betweenness", g, backend="cpu")
    bad = gs.Graph.from_edges([0, 1], [1, 2], [1.0, -1.0])
    with pytest.raises(gs.InvalidInput, match="negative"):
        gs.run("edge_betweenness", bad, backend="cpu")
    with pytest.raises(gs.InvalidInput, match="source 9 is out of range"):
        gs.run("edge_betweenness", grid2d(3, 3), sources=[9], backend="cpu")


def test_edge_fields_need_host_steps():
    """An EdgeField is written by host steps or array code: a plain algorithm cannot declare one,
    and a host step that returns the wrong length is named."""
    with pytest.raises(AlgorithmError, match="only host steps or array code write"):
        @gs.algorithm(name="edge_field_without_stages", reference="none")
        class NoStages:
            x = gs.NodeField("int32", init=0)
            w = gs.EdgeField("float64")
            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_max(e.src.x)
    with pytest.raises(AlgorithmError, match="EdgeField dtype must be one of"):
        gs.EdgeField("bool")

    @gs.algorithm(name="edge_field_wrong_length", reference="none")
    class Wrong:
        x = gs.NodeField("int32", init=0)
        w = gs.EdgeField("float64")

        @gs.stage
        class sweep:
            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_max(e.src.x)

        @gs.host_step(edges=True)
        def fill(fields, params, xp, edges):
            return {"w": xp.zeros(edges.src.size + 1)}

    with pytest.raises(AlgorithmError, match="edge field 'w' of shape"):
        gs.run(Wrong, grid2d(2, 2), backend="cpu")


def test_a_host_step_fills_an_edge_field_from_the_edges():
    """The edges a host step gets are the graph's, in CSR order, with its weights."""
    @gs.algorithm(name="edge_weights_back", reference="none")
    class Back:
        x = gs.NodeField("int32", init=0, output=False)
        w = gs.EdgeField("float32")
        tail = gs.EdgeField("int32", ids="node")

        @gs.stage
        class sweep:
            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_max(e.src.x)

        @gs.host_step(edges=True)
        def fill(fields, params, xp, edges):
            return {"w": edges.weight * 2, "tail": edges.src}

    g = GRAPHS["floats"]
    for renumber in ("none", "rcm"):
        r = gs.run(Back, g, backend="cpu", config={"renumber": renumber})
        np.testing.assert_array_equal(r.fields["w"], g.weights * 2)
        np.testing.assert_array_equal(r.fields["tail"], g.edges()[0])


@pytest.mark.compile
@pytest.mark.compile_all  # nvcc: .ci/run runs it with the compile matrix
def test_generated_cuda_compiles(nvcc):
    """Every operator stage lowers to CUDA that nvcc compiles (one launch: the stages of
    edge_betweenness are weighted_betweenness's; tests/test_compile.py has the matrix)."""
    launch = "persistent"
    for name in NAMES[:1]:
        spec = get_registry().algorithm(name)
        cfg = gs.Config({"launch": launch, **spec.config_defaults})
        for st in [s for s in spec.stages if isinstance(s, gs.AlgorithmSpec)]:
            gen = generate_source(st, stage_config(st, cfg), weighted=True)
            ok, out = compile_source(gen.source, nvcc=nvcc)
            assert ok, f"{name} {st.stage_name} {launch}:\n{out[-3000:]}"


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("name", ["ties", "floats", "disconnected", "self_loops", "dag"])
@pytest.mark.parametrize("algorithm", NAMES)
def test_gpu_equals_networkx_and_the_cpu(algorithm, name):
    """On the GPU: networkx's sums, and the CPU engine's within float64 rounding."""
    g = GRAPHS[name]
    got = gs.run(algorithm, g, backend="gpu").fields[OUTPUT[algorithm]]
    assert compare(algorithm, got, reference(algorithm, g)) is None
    cpu = gs.run(algorithm, g, backend="cpu").fields[OUTPUT[algorithm]]
    np.testing.assert_allclose(got, cpu, rtol=1e-9, atol=1e-9)


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("renumber", ["none", "rcm"])
def test_gpu_unweighted_edge_betweenness_runs_batched(renumber):
    """Unweighted edge betweenness defaults to the batched kernels on the GPU, in caller
    edge order after renumbering, and equals networkx's sums."""
    g = GRAPHS["unweighted_rmat"]
    r = gs.run("edge_betweenness", g, backend="gpu", config={"renumber": renumber})
    assert r.stats["variant"] == "batched"
    got = r.fields["edge_betweenness"]
    assert compare("edge_betweenness", got, reference("edge_betweenness", g)) is None


def test_a_weighted_self_loop_or_heavier_parallel_edge_keeps_hop_lengths():
    """Weights that no shortest path reads (a self loop's, a parallel edge heavier than a
    unit one) leave the graph at hop lengths: the default runs, batched is accepted,
    and the answer is networkx's."""
    g = gs.Graph.from_edges([0, 0, 1, 1, 2], [0, 1, 2, 2, 3], [4.0, 1.0, 1.0, 3.0, 1.0])
    want = reference("edge_betweenness", g)
    for config in (None, {"variant": "batched"}):
        r = gs.run("edge_betweenness", g, backend="cpu", config=config)
        assert r.stats["variant"] == "batched"
        assert compare("edge_betweenness", r.fields["edge_betweenness"], want) is None
