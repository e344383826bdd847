"""Spatial driving with resident partitions (``driving.resident``).

What is refused and why, the module the option selects and that it compiles (nvcc, no
GPU), and on the GPU that resident partitions give the reference on every staged
algorithm and type: partitions of 32 to 4096 nodes, one to four nodes a thread, passes
cut short by ``local_iterations``, partitions whose columns do not fit shared memory,
renumbered graphs, every launch, and a graph without locality, where other blocks
update a resident partition while it runs.
"""

from __future__ import annotations

import pytest
from gswitch.strategies.driving.spatial import RESIDENT_EDGES, SpatialDriving

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.generators import clique_chain, grid2d, rmat, road
from gswitch.plugins import get_registry
from gswitch.runner import check_combination
from gswitch.testing.nvcc import compile_source
from gswitch.testing.reference import compare, fields_differ, reference
from gswitch.testing.user_algorithms import USER_ALGORITHMS

USER = {u.name: u for u in USER_ALGORITHMS}
FIELD = {"bfs": "depth", "sssp": "dist", "cc": "comp"}


def _spec(name):
    if not isinstance(name, str):
        return name
    if name == "cc":
        return get_registry().algorithm("cc", "label_propagation")
    return USER.get(name) or get_registry().algorithm(name)


def _resident(size=1024, block=512, **extra):
    """Resident partitions of ``size`` nodes, the fewest nodes a thread that cover them."""
    per = next(k for k in (1, 2, 4, 8) if k * block >= size)
    return {"direction": "push", "driving": "spatial", "driving.resident": per,
            "driving.partition_size": size, "block_size": block, **extra}


def _problem(name, cfg, backend="gpu"):
    spec = _spec(name)
    conf = gs.Config(cfg)
    strat = SpatialDriving({k.split(".", 1)[1]: v for k, v in conf.to_dict().items()
                            if k.startswith("driving.")})
    return strat.check(spec, None, conf, backend)


def test_resident_runs_where_the_operator_is_staged():
    for name in ("bfs", "sssp", "cc", "widest", "hops64", "dist64", "max_label"):
        assert _problem(name, _resident()) is None, name


@pytest.mark.parametrize(("name", "cfg", "words"), [
    ("triangles", _resident(**{"driving.local_iterations": 0}), "cannot be held there"),
    ("bfs", _resident(**{"driving.local_iterations": 0}), "driving.local_iterations > 0"),
    ("bfs", _resident(size=1000), "multiple of 32"),
    ("bfs", {**_resident(size=2048, block=256), "driving.resident": 4},
     "at most 4 x block_size (256)"),
    ("bfs", {**_resident(size=1024, block=512), "driving.resident": 1},
     "raise driving.resident or block_size"),
    ("dist64", _resident(size=4096, block=1024), "at most 2048 nodes"),
])
def test_resident_refusals_name_the_setting(name, cfg, words):
    problem = _problem(name, cfg)
    assert problem is not None and words in problem, problem


@gs.algorithm(name="hops_capped", reference="gswitch cpu engine")
class HopsCapped:
    """Hops from the source, passed on only by nodes fewer than 5 hops out."""

    depth = gs.NodeField("int32", init=gs.INF, at_source=0)
    start = gs.from_source()

    @gs.edge_op
    def visit(e):
        e.only_if(e.src.depth < 5)
        e.dst.depth.reduce_min(e.src.depth + 1)


def test_a_guard_on_a_staged_source_value_is_refused():
    """Leaving edges go once per visit from final values: a guard on the source's staged
    value could pass for an earlier one only."""
    problem = _problem(HopsCapped, _resident())
    assert problem is not None and "guards on the source's depth" in problem, problem
    assert _problem(HopsCapped, {**_resident(), "driving.resident": 0}) is None


def test_the_cpu_engine_ignores_residency():
    """A GPU mechanism: the CPU engine gives the same answer with the option set."""
    assert _problem("bfs", {**_resident(size=2048, block=256), "driving.resident": 4},
                    backend="cpu") is None
    g = road(20, 20, seed=2)
    want = reference("sssp", g, source=0)
    r = gs.run("sssp", g, source=0, backend="cpu", config=_resident(size=64, block=64))
    assert compare("sssp", r.fields["dist"], want) is None


def test_refused_runs_say_why_in_one_line():
    g = road(20, 20, seed=2)
    cfg = {**_resident(size=2048, block=256), "driving.resident": 4}
    reason = check_combination(_spec("bfs"), g, gs.Config(cfg), "gpu")
    assert reason.startswith("driving=spatial: driving.resident") and "\n" not in reason


def test_resident_module_lists_partitions_and_holds_rows():
    spec = _spec("bfs")
    src = generate_source(spec, gs.Config(_resident()), weighted=False).source
    assert "#define GS_SPATIAL_RESIDENT 2" in src and "struct GsKeep" in src
    assert "driving_list" in src
    plain = generate_source(spec, gs.Config({**_resident(), "driving.resident": 0}),
                            weighted=False).source
    assert "#define GS_SPATIAL_RESIDENT 0" in plain
    strat = SpatialDriving({"resident": 2, "partition_size": 1024})
    conf = gs.Config(_resident())
    assert [b.name for b in strat.buffers(spec, road(8, 8), conf)] == ["parts", "list", "dirty"]
    # rows and columns in 16 bits, with the staged values, inside a block's static budget
    assert strat.shared_bytes(spec, conf) < SpatialDriving({}).shared_bytes(spec, conf)


def test_the_gpu_search_offers_residency_and_the_ring():
    """Validated on the GPU suite: the tuner's GPU search draws ``driving.resident`` and
    ``driving.schedule``, and the shipped selector model was retrained on that space."""
    import json

    from gswitch.tuner import build_space

    from gswitch.selector import MODEL_PATH, model_version

    space = build_space(_spec("bfs"), road(8, 8), "gpu")
    params = space.params[("driving", "spatial")]
    assert "resident" in params and "schedule" in params
    assert not any(k.startswith("driving=spatial") for k in space.excluded)
    model = json.loads(MODEL_PATH.read_text())
    assert model["space_version"] == model_version(model["algorithms"])


@pytest.mark.compile
@pytest.mark.parametrize("name", ["bfs", "sssp", "cc", "widest", "hops64", "dist64",
                                  "max_label"])
def test_resident_kernels_compile(nvcc, name):
    check_compiles(nvcc, name, (_resident(size=1024, block=256, launch="persistent"),
                                _resident(size=128, block=64, launch="host_loop"),
                                _resident(size=2048, block=1024, launch="persistent")))


def check_compiles(nvcc, name, configs):
    """Each of ``configs`` that ``name`` accepts compiles (nvcc, no GPU)."""
    weighted = name not in ("bfs", "hops64", "max_label")
    for cfg in configs:
        if _problem(name, cfg) is not None:
            continue
        src = generate_source(_spec(name), gs.Config(cfg), weighted=weighted).source
        ok, out = compile_source(src, nvcc=nvcc)
        assert ok, (name, cfg, out[-2000:])


needs_gpu = pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")

GRAPHS = {
    "road": lambda: road(64, 64, seed=4),
    "grid": lambda: grid2d(48, 40, weighted=True, seed=6),
    # 32-node cliques: partitions of 256 and more hold more than RESIDENT_EDGES columns
    "chain": lambda: clique_chain(120, 32, weighted=True, seed=3),
    # no locality: every partition's nodes are updated by other blocks meanwhile
    "rmat": lambda: rmat(12, 8, seed=5, weighted=True).symmetrize(),
}
CONFIGS = [  # (partition, block, local_iterations, renumber)
    (32, 64, None, "none"),
    (256, 64, None, "none"),
    (1024, 256, None, "hilbert"),
    (1024, 512, 2, "none"),
    (4096, 1024, None, "none"),
    (512, 128, 1, "rcm"),
]


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("alg", ["bfs", "sssp", "cc"])
def test_gpu_resident_partitions_give_the_reference(alg, graph, launch):
    if graph == "chain":
        assert 1024 * 31 > RESIDENT_EDGES  # the global-column path runs
    check_reference(alg, graph, launch)


def check_reference(alg, graph, launch, **more):
    """``alg`` on ``GRAPHS[graph]`` under each of :data:`CONFIGS` (resident partitions and
    ``more``) gives the reference."""
    g = GRAPHS[graph]()
    kw = {} if alg == "cc" else {"source": 0}
    extra = {"variant": "label_propagation"} if alg == "cc" else {}
    ref = reference(alg, g, **kw)
    for size, block, local, renumber in CONFIGS:
        cfg = _resident(size, block, launch=launch, renumber=renumber, **extra, **more)
        if local is not None:  # passes cut short
            cfg["driving.local_iterations"] = local
        r = gs.run(alg, g, backend="gpu", config=cfg, **kw)
        assert compare(alg, r.fields[FIELD[alg]], ref) is None, (alg, graph, cfg)


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("name", ["widest", "hops64", "dist64", "max_label"])
def test_gpu_resident_user_operators_match_the_cpu_engine(name):
    """Every staged type: float32 max, int64 min, float64 min, int32 max."""
    check_user_operator(name)


def check_user_operator(name, **more):
    """The user operator ``name`` under resident partitions (and ``more``) gives the CPU
    engine's fields on a skewed graph, at three partition sizes."""
    spec = USER[name]
    g = rmat(12, 8, seed=7, weighted=True).symmetrize()
    kw = {"source": 0} if spec.start.kind == "source" else {}
    want = gs.run(spec, g, backend="cpu", **kw).fields
    for size, block in ((64, 64), (1024, 256), (2048, 512)):
        cfg = _resident(size, block, **more)
        if _problem(name, cfg) is not None:
            continue
        got = gs.run(spec, g, backend="gpu", config=cfg, **kw).fields
        assert fields_differ(got, want) is None, (name, size, fields_differ(got, want))


@pytest.mark.gpu
@needs_gpu
def test_gpu_resident_runs_again_on_pooled_buffers():
    """Two runs in a row from other sources: the partition lists start empty each time."""
    g = road(50, 50, seed=8)
    for source in (0, 1234, 2499):
        want = reference("bfs", g, source=source)
        r = gs.run("bfs", g, source=source, backend="gpu",
                   config=_resident(256, 64, launch="persistent"))
        assert compare("bfs", r.fields["depth"], want) is None, source
