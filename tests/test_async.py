"""Asynchronous driving (``driving=async``): the whole traversal in one barrier-free step
over a shared FIFO ring. On the CPU engine (passes inside one step until nothing is
activated) against scipy references, its refusals, the tuner's search space, nvcc, and
the GPU suite (marked ``gpu``) under every worklist, launch and lane width, on a road
grid, a clique chain, a skewed RMAT graph, a star and the zoo, with a ring small enough
that pushes spill into further steps.
"""

import pytest
from gswitch.strategies.driving.asynchronous import AsyncDriving

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.config import Config
from gswitch.errors import InvalidConfig
from gswitch.generators import clique_chain, rmat, road, star
from gswitch.plugins import get_registry
from gswitch.testing.nvcc import compile_source
from gswitch.testing.order_free import ORDER_FREE_OUTPUT, WORKLISTS, run_checked
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

pytestmark = pytest.mark.usefixtures("super_steps")  # the CPU engine does its steps

OUTPUT = ORDER_FREE_OUTPUT


def _check(alg, graph, cfg, backend="cpu"):
    return run_checked(alg, graph, {"driving": "async", **cfg}, backend)


def _graphs():
    return [road(24, 24, seed=5), clique_chain(12, 32, weighted=True, seed=1),
            rmat(9, 8, seed=4).remove_self_loops().deduplicate().symmetrize().deduplicate(),
            star(3000, weighted=True, seed=2)]


@pytest.mark.parametrize("graph_name", ZOO_NAMES)
def test_async_driving_gives_the_reference_on_the_zoo(graph_name):
    graph = zoo_graph(graph_name)
    if graph.n_nodes == 0:
        return
    for alg in OUTPUT:
        _check(alg, graph, {})


@pytest.mark.parametrize(("algorithm", "field"), [
    ("weighted_betweenness", "betweenness"), ("edge_betweenness", "edge_betweenness"),
    ("betweenness", "betweenness")])
def test_staged_algorithms_run_their_order_free_stages_async(algorithm, field):
    """A staged algorithm takes async driving for the stages it accepts (the distance
    stage of weighted and edge betweenness) and keeps its answer: networkx's sums."""
    g = rmat(7, 6, seed=3).remove_self_loops().deduplicate().symmetrize().deduplicate()
    r = gs.run(algorithm, g, backend="cpu", config={"driving": "async", "direction": "push"})
    assert compare(algorithm, r.fields[field], reference(algorithm, g)) is None
    if algorithm != "betweenness":  # whose stages count paths by addition: not async
        assert "async" in r.stats["modes"]


def test_one_step_does_the_whole_traversal():
    """Where the ring holds every push, the run is one async step, whatever the
    diameter. (The ring is GPU mechanics: the CPU engine has none to spill, and a ring
    of a few slots changes nothing there; the GPU suite runs one.)"""
    for g in (road(30, 30, seed=2), clique_chain(16, 32, weighted=True, seed=3)):
        for alg in ("bfs", "sssp"):
            r = _check(alg, g, {})
            assert r.stats["iterations"] == 1 and r.stats["modes"] == ["async"], (g.name, alg)
    assert _check("bfs", road(30, 30, seed=2), {"driving.ring": 4}).stats["iterations"] == 1


def _refusal(options, alg, config=None):
    spec = get_registry().algorithm(alg)
    return AsyncDriving(options).check(spec, None, config, "cpu")


def test_refusals_name_the_reason():
    assert "direction=push" in _refusal({}, "bfs", Config({"direction": "direction_optimizing"}))
    assert "node operator" in _refusal({}, "pagerank")
    assert "reduce_add" in _refusal({}, "triangles")
    assert _refusal({}, "sssp") is None
    with pytest.raises(InvalidConfig, match=r"lanes_log2 must be in \[0, 5\]"):
        Config({"driving": "async", "driving.lanes_log2": 6})
    with pytest.raises(InvalidConfig, match=r"async driving.*\(set driving=data\)"):
        gs.run("triangles", road(4, 4), backend="cpu", config={"driving": "async"})


def test_ring_size_follows_the_graph_unless_set():
    assert AsyncDriving({"lanes_log2": 0, "ring": 0}).capacity(1000) == 2 * 1000 + 1024
    assert AsyncDriving({"lanes_log2": 0, "ring": 64}).capacity(1000) == 64
    # never more than the graph can use: a drawn ring of 2^30 slots is 4 GB of nothing
    assert AsyncDriving({"lanes_log2": 0, "ring": 1 << 30}).capacity(1000) == 2 * 1000 + 1024
    cfg = Config({"driving": "async", "driving.ring": 64})
    args = cfg.strategy("driving").runtime_args(road(4, 4), cfg)
    assert args["capacity"] == ("long long", 64)


def test_the_gpu_search_leaves_it_out_until_validated():
    """Until its GPU suite has run, the tuner's GPU search names async driving as left
    out and why, and the shipped selector model stays current."""
    import json

    from gswitch.tuner import build_space

    from gswitch.selector import MODEL_PATH, model_version

    space = build_space(get_registry().algorithm("bfs"), gs.generators.grid2d(6, 6), "gpu")
    assert "GPU suite" in space.excluded["driving=async"]
    model = json.loads(MODEL_PATH.read_text())
    assert model["space_version"] == model_version(model["algorithms"])


def test_command_line(capsys, tmp_path):
    """``gswitch strategies`` lists async with its parameters and marks it out of the
    tuner's search; ``gswitch run --set driving=async`` gives scipy's answer; a refused
    combination is one line naming the flag to change."""
    import json

    import numpy as np

    from gswitch.cli import main

    assert main(["strategies", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["driving"]["async"]
    assert set(data["params"]) == {"lanes_log2", "ring"} and data["validated"] is False
    assert main(["strategies"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines()
                if ln.startswith("  async"))
    assert "not yet validated for the tuner" in line
    out = tmp_path / "depth.npy"
    assert main(["run", "bfs", "--generate", "grid:12x9", "--source", "5", "--backend", "cpu",
                 "--set", "driving=async", "--set", "direction=push",
                 "--output", str(out)]) == 0
    want = reference("bfs", gs.generators.grid2d(12, 9), source=5)
    assert np.array_equal(np.load(out, allow_pickle=False), want)
    capsys.readouterr()
    assert main(["run", "bfs", "--generate", "grid:4x4", "--backend", "cpu",
                 "--set", "driving=async", "--set", "direction=pull"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "set direction=push" in err[0]


@pytest.mark.compile
def test_generated_cuda_compiles(nvcc):
    """Every launch, a buffered, a bitmap and a flag worklist, one lane to a warp per
    node (the compile matrix has the rest)."""
    reg = get_registry()
    cases = [("bfs", {"launch": "persistent"}),
             ("sssp", {"worklist": "bitmap", "driving.lanes_log2": 2}),
             ("bfs", {"worklist": "block_aggregated", "launch": "cuda_graph",
                      "worklist.dedup": True, "driving.lanes_log2": 5}),
             ("cc", {"worklist": "prefix_sum", "variant": "label_propagation"})]
    for alg, cfg in cases:
        src = generate_source(reg.algorithm(alg), Config(
            {"direction": "push", "driving": "async", **cfg}), weighted=alg == "sssp").source
        assert "gs_phase_async_run(st)" in src
        ok, out = compile_source(src, nvcc=nvcc)
        assert ok, (alg, cfg, out[-2000:])


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize("worklist", WORKLISTS)
def test_gpu_every_worklist_and_launch(worklist, launch):
    """Every worklist and launch (the worklist seeds the ring and takes its spills), a
    thread, four lanes and a warp per node, the default ring and one of 64 slots."""
    for g in _graphs():
        for alg in OUTPUT:
            for log2, ring in ((0, 0), (2, 64), (5, 0)):
                cfg = {"worklist": worklist, "launch": launch,
                       "driving.lanes_log2": log2, "driving.ring": ring}
                if launch == "cuda_graph" and worklist not in ("bitmap", "prefix_sum"):
                    # a replay cannot grow a queue: dedup bounds it by the node count
                    cfg["worklist.dedup"] = True
                r = _check(alg, g, cfg, "gpu")
                assert set(r.stats["modes"]) == {"async"}
    # a ring of 64 slots spills the road's BFS into further steps; one of a million
    # slots holds it in one
    g = road(24, 24, seed=5)
    cfg = {"worklist": worklist, "launch": launch}
    if launch == "cuda_graph" and worklist not in ("bitmap", "prefix_sum"):
        cfg["worklist.dedup"] = True
    assert _check("bfs", g, {**cfg, "driving.ring": 64}, "gpu").stats["iterations"] > 1
    assert _check("bfs", g, {**cfg, "driving.ring": 1 << 20}, "gpu").stats["iterations"] == 1


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("graph_name", ZOO_NAMES)
def test_gpu_zoo(graph_name):
    g = zoo_graph(graph_name)
    if g.n_nodes == 0:
        return
    for alg in OUTPUT:
        for launch, log2 in (("host_loop", 0), ("persistent", 3)):
            for block in (128, 1024):
                _check(alg, g, {"launch": launch, "driving.lanes_log2": log2,
                                "block_size": block}, "gpu")
