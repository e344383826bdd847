"""Kernel unrolling under data driving (``driving=data``, ``driving.unroll`` k): a thread
processes what it activates within the step, at most k nodes, and pushes the rest. On the
CPU engine (k passes inside the step) against scipy references, its refusals, the search
space, nvcc, and the GPU suite (marked ``gpu``) under every worklist and launch, on a
road grid, a clique chain, a skewed RMAT graph and the zoo.
"""

import pytest
from gswitch.strategies.driving.data import DataDriving

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.config import Config
from gswitch.errors import InvalidConfig
from gswitch.generators import clique_chain, rmat, road, star
from gswitch.plugins import get_registry
from gswitch.testing.nvcc import compile_source
from gswitch.testing.order_free import ORDER_FREE_OUTPUT, WORKLISTS, run_checked
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

pytestmark = pytest.mark.usefixtures("super_steps")  # the CPU engine does its steps

OUTPUT = ORDER_FREE_OUTPUT


def _check(alg, graph, cfg, backend="cpu"):
    return run_checked(alg, graph, {"driving": "data", **cfg}, backend)


def _unroll(k, **more):
    return {"driving.unroll": k, **more}


@pytest.mark.parametrize("graph_name", ZOO_NAMES)
def test_unrolled_data_driving_gives_the_reference_on_the_zoo(graph_name):
    graph = zoo_graph(graph_name)
    if graph.n_nodes == 0:
        return
    for alg in OUTPUT:
        for k in (1, 4, 16):
            _check(alg, graph, _unroll(k))


def test_unrolling_cuts_the_steps_and_keeps_pushing():
    """A wave runs up to k + 1 hops a step on a road grid and on a clique chain: the
    steps drop about k + 1 times, every step stays a data step, and the run still ends
    when nothing is pushed."""
    for g in (road(30, 30, seed=2), clique_chain(16, 32, weighted=True, seed=3)):
        for alg in ("bfs", "sssp"):
            plain = _check(alg, g, {}).stats["iterations"]
            r = _check(alg, g, _unroll(4))
            assert r.stats["iterations"] * 3 <= plain, (g.name, alg)
            assert set(r.stats["modes"]) == {"data"}


def _refusal(options, alg, config=None):
    spec = get_registry().algorithm(alg)
    return DataDriving(options).check(spec, None, config, "cpu")


def test_refusals_name_the_reason():
    assert "direction=push" in _refusal({"unroll": 2}, "bfs",
                                        Config({"direction": "direction_optimizing"}))
    assert "node operator" in _refusal({"unroll": 2}, "pagerank")
    assert "reduce_add" in _refusal({"unroll": 2}, "triangles")
    assert _refusal({"unroll": 0}, "triangles") is None
    assert _refusal({"unroll": 8}, "sssp") is None
    with pytest.raises(InvalidConfig, match=r"unroll must be in \[0, 16\]"):
        Config({"driving": "data", "driving.unroll": 17})
    with pytest.raises(InvalidConfig, match="set driving.unroll=0"):
        gs.run("triangles", road(4, 4), backend="cpu",
               config={"driving": "data", "driving.unroll": 2})


def test_the_gpu_search_keeps_the_new_parameters_at_their_defaults_for_now():
    """Until the GPU suite has run them, the tuner's GPU search leaves data driving's
    unrolling and the unroll lanes out and says why; topology's ``unroll`` stays in, and
    the shipped selector model stays current."""
    import json

    from gswitch.tuner import build_space

    from gswitch.selector import MODEL_PATH, model_version

    space = build_space(get_registry().algorithm("bfs"), gs.generators.grid2d(6, 6), "gpu")
    for key in ("driving=data: driving.unroll", "driving=data: driving.unroll_lanes_log2",
                "driving=topology: driving.unroll_lanes_log2"):
        assert "GPU suite" in space.excluded[key]
    assert "unroll" in space.params[("driving", "topology")]
    model = json.loads(MODEL_PATH.read_text())
    assert model["space_version"] == model_version(model["algorithms"])


@pytest.mark.compile
def test_generated_cuda_compiles(nvcc):
    """Pushed leftovers under a buffered, a bitmap and a flag worklist, in both launches,
    with lanes of a warp walking a queued node together (the compile matrix has the
    rest)."""
    reg = get_registry()
    cases = [("bfs", {"worklist": "block_aggregated", "load_balance": "twc",
                      "launch": "persistent"}),
             ("sssp", {"worklist": "bitmap", "load_balance": "virtual_warp"}),
             ("bfs", {"worklist": "prefix_sum", "load_balance": "thread",
                      "launch": "persistent", "driving.unroll_lanes_log2": 5})]
    for alg, cfg in cases:
        src = generate_source(reg.algorithm(alg), Config(
            {"direction": "push", "driving": "data", "driving.unroll": 4, **cfg}),
            weighted=alg == "sssp").source
        assert "gs_unroll_drain(st);" in src  # drained after every phase
        ok, out = compile_source(src, nvcc=nvcc)
        assert ok, (alg, cfg, out[-2000:])


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize("worklist", WORKLISTS)
def test_gpu_every_worklist_and_launch(worklist, launch):
    """Leftovers pushed by every worklist, in every launch, on graphs where a wave runs
    ahead (road, clique chain) and where a node is reached along many edges at once."""
    graphs = [road(24, 24, seed=5), clique_chain(12, 32, weighted=True, seed=1),
              rmat(9, 8, seed=4).remove_self_loops().deduplicate().symmetrize()
              .deduplicate()]
    for g in graphs:
        for alg in OUTPUT:
            for k, log2, lb in ((1, 0, "thread"), (4, 2, "virtual_warp"), (16, 5, "twc")):
                cfg = _unroll(k, worklist=worklist, launch=launch, load_balance=lb,
                              **{"driving.unroll_lanes_log2": log2})
                if launch == "cuda_graph" and worklist not in ("bitmap", "prefix_sum"):
                    # a replay cannot grow a queue: dedup bounds it by the node count
                    cfg["worklist.dedup"] = True
                _check(alg, g, cfg, "gpu")


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
def test_gpu_zoo_and_outliers():
    """The zoo under both launches; and twc's outlier phase from the hub of a star of
    3,000 leaves (its 2,999 edges make it an outlier): what that phase activates is
    queued there and must be drained there, under data and topology driving."""
    for name in ZOO_NAMES:
        g = zoo_graph(name)
        if g.n_nodes == 0:
            continue
        for alg in OUTPUT:
            for launch, log2 in (("host_loop", 0), ("persistent", 1)):
                _check(alg, g, _unroll(8, launch=launch, **{"driving.unroll_lanes_log2": log2}),
                       "gpu")
    hub = star(3000, weighted=True, seed=2)
    assert int(hub.indptr[1] - hub.indptr[0]) == hub.n_nodes - 1  # node 0, the source
    for alg in OUTPUT:
        for driving in ("data", "topology"):
            for launch in ("host_loop", "persistent"):
                _check(alg, hub, _unroll(4, driving=driving, launch=launch,
                                         load_balance="twc",
                                         **{"load_balance.outlier_threshold": 1024}), "gpu")
