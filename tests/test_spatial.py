"""Spatial driving (partitions activated and processed whole, iterating inside) and
topology kernel unrolling on the CPU engine, against scipy/networkx references; their
refusals; the clique-chain generator; the generated CUDA compiled with nvcc; and the
GPU suite (marked ``gpu``, skipped without a device).
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from gswitch.strategies.driving.spatial import SpatialDriving
from gswitch.strategies.driving.topology import TopologyDriving

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.config import Config
from gswitch.errors import InvalidConfig, InvalidInput
from gswitch.generators import clique_chain, road
from gswitch.plugins import get_registry
from gswitch.strategy import StepMode
from gswitch.testing.nvcc import compile_source
from gswitch.testing.reference import compare, reference
from gswitch.testing.user_algorithms import USER_ALGORITHMS
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

# the strategies under test do their steps on the CPU (no shortest-path closure)
pytestmark = pytest.mark.usefixtures("super_steps")

#: What spatial and unrolling accept: monotone min reductions into e.dst.
ALGORITHMS = {"bfs": "depth", "sssp": "dist", "cc": "comp"}
SIZES = (32, 256, 4096)
#: The zoo graph of 2000 nodes in a line: one step per hop without local iteration.
LONG = "path"


def _run(alg, graph, cfg, backend="cpu"):
    kw = {} if alg == "cc" else {"source": 0}
    extra = {"variant": "label_propagation"} if alg == "cc" else {}
    return gs.run(alg, graph, backend=backend, config={"direction": "push", **extra, **cfg},
                  **kw)


def _check(alg, graph, cfg, backend="cpu"):
    r = _run(alg, graph, cfg, backend)
    ref = reference(alg, graph, **({} if alg == "cc" else {"source": 0}))
    assert compare(alg, r.fields[ALGORITHMS[alg]], ref) is None, (alg, graph.name, cfg)
    return r


def _spatial(size, local=None):
    cfg = {"driving": "spatial", "driving.partition_size": size}
    if local is not None:
        cfg["driving.local_iterations"] = local
    return cfg


@pytest.mark.parametrize("graph_name", ZOO_NAMES)
def test_spatial_gives_the_reference_on_the_zoo(graph_name):
    """BFS, SSSP and CC under three partition sizes, iterating to local stability, for
    one pass at most, and without the inner loop (not on the long path, a step per hop)."""
    graph = zoo_graph(graph_name)
    if graph.n_nodes == 0:
        return
    locals_ = (None,) if graph_name == LONG else (None, 1, 0)
    for alg in ALGORITHMS:
        for size in SIZES[1:] if graph_name == LONG else SIZES:
            for local in locals_:
                _check(alg, graph, _spatial(size, local))


@pytest.mark.parametrize("graph_name", ZOO_NAMES)
def test_unrolled_topology_gives_the_reference_on_the_zoo(graph_name):
    graph = zoo_graph(graph_name)
    if graph.n_nodes == 0 or graph_name == LONG:
        return
    for alg in ALGORITHMS:
        for k in (1, 4):
            _check(alg, graph, {"driving": "topology", "driving.unroll": k})


@pytest.mark.parametrize("graph", [clique_chain(12, 32), clique_chain(5, 32, weighted=True),
                                   road(24, 24, seed=5)], ids=lambda g: g.name)
def test_clique_chain_and_road_under_every_partition_size(graph):
    for alg in ALGORITHMS:
        for size in (32, 64, 128, 1024):
            for local in (None, 2, 0):
                _check(alg, graph, _spatial(size, local))
        _check(alg, graph, {"driving": "topology", "driving.unroll": 8})


def test_local_iteration_cuts_the_steps_on_a_clique_chain():
    """Data driving needs two steps per clique (into it, then across it); spatial with
    one partition per clique one, and with eight cliques a partition a few; without the
    inner loop it saves nothing. The edges a step processes grow with whole partitions."""
    n_cliques = 32
    g = clique_chain(n_cliques, 32)
    data = _check("bfs", g, {"driving": "data"}).stats["iterations"]
    assert data >= 2 * n_cliques - 2
    per_clique = _check("bfs", g, _spatial(32)).stats["iterations"]
    assert per_clique * 2 <= data + 2
    eight = _check("bfs", g, _spatial(256)).stats["iterations"]
    assert eight * 8 <= data
    flat = _check("bfs", g, _spatial(32, 0)).stats["iterations"]
    assert flat >= data
    for alg in ("sssp", "cc"):
        base = _check(alg, g, {"driving": "data" if alg != "cc" else "topology"})
        assert _check(alg, g, _spatial(256)).stats["iterations"] * 4 <= \
            base.stats["iterations"], alg


def test_unrolling_cuts_the_sweeps_on_a_road_grid():
    g = road(30, 30, seed=2)
    plain = _check("bfs", g, {"driving": "topology"}).stats["iterations"]
    unrolled = _check("bfs", g, {"driving": "topology", "driving.unroll": 4})
    assert unrolled.stats["iterations"] * 3 <= plain
    # the extra passes are edges of the same steps
    assert set(unrolled.stats["modes"]) == {"topology"}


def test_spatial_step_items_are_whole_partitions():
    """Without local iteration step 0 of BFS from node 0 processes exactly node 0's
    partition; with it, the first pass takes the activated node alone, and the steps
    stay those of whole partitions (one per partition the wave crosses), each clique's
    edges read once where whole first passes read them twice."""
    g = clique_chain(4, 32)
    for size in (32, 64):
        r = _check("bfs", g, _spatial(size, 0))
        assert r.stats["active"][0] == size
        assert r.stats["modes"][0] == "spatial"
        local = _check("bfs", g, _spatial(size))
        assert local.stats["active"][0] == 1
        assert local.stats["iterations"] == 128 // size
    chain = clique_chain(64, 32)
    r = _check("bfs", chain, _spatial(256))
    assert r.stats["edges_processed"] == chain.n_edges


def test_partition_items_cover_the_last_short_partition():
    s = SpatialDriving({"partition_size": 32, "local_iterations": 0})
    nodes = np.array([0, 5, 70, 71], dtype=np.int32)
    got = s.items(nodes, 75)
    assert got.tolist() == list(range(32)) + list(range(64, 75))
    assert s.items(np.empty(0, np.int32), 75).size == 0


@gs.algorithm(name="spatial_probe_hook", symmetric=True, reference="gswitch cpu engine")
class _Hook:
    """Hooking through .at(): the reduction's target is not e.dst."""

    comp = gs.NodeField("int32", init=gs.NODE_ID)
    start = gs.all_nodes()

    @gs.edge_op
    def hook(e):
        e.dst.comp.at(e.dst.comp).reduce_min(e.src.comp)


@gs.algorithm(name="spatial_probe_level", reference="gswitch cpu engine")
class _Level:
    """Depth written as the step number: a level-synchronous operator."""

    depth = gs.NodeField("int32", init=gs.INF, at_source=0)
    start = gs.from_source()

    @gs.edge_op
    def visit(e):
        e.dst.depth.reduce_min(e.iteration + 1)


def _refusal(cls, options, alg, variant=None, config=None):
    reg = get_registry()
    spec = alg if isinstance(alg, gs.AlgorithmSpec) else (
        reg.variants[alg][variant] if variant else reg.algorithm(alg))
    return cls(options).check(spec, None, config or Config({}), "cpu")


def test_spatial_refusals_name_the_reason():
    add = _refusal(SpatialDriving, {}, "triangles")
    assert "reduce_add" in add and "local_iterations=0" in add
    assert _refusal(SpatialDriving, {"local_iterations": 0}, "triangles") is None
    assert "node operator" in _refusal(SpatialDriving, {}, "pagerank")
    assert ".at()" in _refusal(SpatialDriving, {"local_iterations": 0}, _Hook)
    assert "step number" in _refusal(SpatialDriving, {}, _Level)
    assert _refusal(SpatialDriving, {"local_iterations": 0}, _Level) is None
    pull = _refusal(SpatialDriving, {}, "bfs", config=Config({"direction": "pull"}))
    assert "direction=push" in pull
    widest = next(u for u in USER_ALGORITHMS if u.name == "widest")  # max of min
    for alg in ("bfs", "sssp", widest):
        assert _refusal(SpatialDriving, {}, alg) is None
    assert _refusal(SpatialDriving, {}, "cc", "label_propagation") is None
    with pytest.raises(InvalidConfig, match="spatial local iteration needs monotone"):
        gs.run("triangles", road(4, 4), backend="cpu", config={"driving": "spatial"})


def test_unroll_refusals_name_the_reason():
    assert "atomic_free" in _refusal(TopologyDriving, {"unroll": 2, "atomic_free": True},
                                     "bfs")
    assert "node operator" in _refusal(TopologyDriving, {"unroll": 2}, "pagerank")
    assert "reduce_add" in _refusal(TopologyDriving, {"unroll": 2}, "triangles")
    assert "direction=push" in _refusal(TopologyDriving, {"unroll": 2}, "bfs",
                                        config=Config({"direction": "direction_optimizing"}))
    assert _refusal(TopologyDriving, {"unroll": 0}, "triangles") is None
    assert "step number" in _refusal(TopologyDriving, {"unroll": 1}, _Level)
    assert "reduce into e.dst" in _refusal(TopologyDriving, {"unroll": 1}, _Hook)
    with pytest.raises(InvalidConfig, match=r"partition_size must be in \[32, 4096\]"):
        Config({"driving": "spatial", "driving.partition_size": 16})
    with pytest.raises(InvalidConfig, match=r"unroll must be in \[0, 16\]"):
        Config({"driving": "topology", "driving.unroll": 17})


def test_own_operators_mode_needs_operators():
    with pytest.raises(ValueError, match="own_operators needs operators=True"):
        StepMode("x", items="worklist", pushes=False, operators=False, own_operators=True)


def test_the_gpu_search_offers_spatial_and_unrolling():
    from gswitch.tuner import build_space

    spec = get_registry().algorithm("bfs")
    space = build_space(spec, gs.generators.grid2d(6, 6), "gpu")
    assert "driving=spatial" not in space.excluded
    assert "spatial" in space.axis_choices("driving", space.variants[0])[1]
    assert "unroll" in space.params.get(("driving", "topology"), {})
    assert "driving=topology: driving.unroll" not in space.excluded
    cpu = build_space(spec, gs.generators.grid2d(6, 6), "cpu")
    assert "driving=spatial" not in cpu.excluded


def test_clique_chain_is_cliques_joined_in_a_line():
    nx = pytest.importorskip("networkx")
    g = clique_chain(4, 5, weighted=True, seed=3)
    assert g.n_nodes == 20 and not g.directed
    h = nx.Graph(list(zip(g.sources().tolist(), g.indices.tolist(), strict=True)))
    assert h.number_of_edges() == 4 * 10 + 3
    for k in range(4):
        block = h.subgraph(range(5 * k, 5 * k + 5))
        assert block.number_of_edges() == 10
    assert all(h.has_edge(5 * k + 4, 5 * k + 5) for k in range(3))
    assert nx.diameter(h) == 2 * 4 - 1
    assert g.weights is not None and g.weights.min() >= 1
    assert clique_chain(0, 8).n_nodes == 0 and clique_chain(3, 1).n_edges == 4
    with pytest.raises(InvalidInput, match="clique_chain size"):
        clique_chain(3, -1)


@pytest.mark.compile
def test_generated_cuda_compiles(nvcc):
    """Spatial in the persistent kernel (its phases between grid barriers; the host loop
    and CUDA-graph launches run the same phase functions, and the compile matrix has
    them all), and unrolling with a block-cooperative load balancer."""
    reg = get_registry()
    cases = [("sssp", {"driving": "spatial", "launch": "persistent", "worklist": "bitmap"}),
             ("bfs", {"driving": "topology", "driving.unroll": 4, "load_balance": "twc"})]
    sources = [generate_source(reg.algorithm(a), Config({"direction": "push", **c}),
                               weighted=a == "sssp").source for a, c in cases]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda s: compile_source(s, nvcc=nvcc), sources))
    for (alg, cfg), (ok, out) in zip(cases, results, strict=True):
        assert ok, (alg, cfg, out[-2000:])


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_gpu_spatial_and_unroll_give_the_reference(launch):
    graphs = [zoo_graph(n) for n in ZOO_NAMES if n != LONG] + [clique_chain(12, 32),
                                                                road(24, 24, seed=5)]
    for graph in graphs:
        if graph.n_nodes == 0:
            continue
        for alg in ALGORITHMS:
            for size in (32, 4096):
                for local in (None, 0):
                    _check(alg, graph, {**_spatial(size, local), "launch": launch}, "gpu")
            # not a multiple of 32 nodes: first passes over whole partitions
            _check(alg, graph, {**_spatial(100), "launch": launch}, "gpu")
            # a warp per queued node: the most warps a block has, and the fewest
            for block in (64, 1024):
                _check(alg, graph, {**_spatial(256, None), "launch": launch,
                                    "block_size": block}, "gpu")
            _check(alg, graph, {"driving": "topology", "driving.unroll": 4,
                                "launch": launch}, "gpu")


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
def test_gpu_first_pass_reads_only_the_marked_nodes():
    """With local iteration, on partitions of a multiple of 32 nodes, a partition's first
    pass takes only the nodes marked since it last ran: the CPU engine's steps, and each
    edge of the chain read once (whole first passes read each clique twice). At 100
    nodes a partition (not a multiple of 32) the first passes are whole again.
    """
    g = clique_chain(64, 32)
    for size in (96, 256):
        cpu = _check("bfs", g, _spatial(size))
        gpu = _check("bfs", g, _spatial(size), "gpu")
        assert gpu.stats["iterations"] == cpu.stats["iterations"], size
        assert g.n_edges <= gpu.stats["edges_processed"] < 1.25 * g.n_edges, size
    whole = _check("bfs", g, _spatial(100), "gpu")
    assert whole.stats["edges_processed"] > 1.5 * g.n_edges
