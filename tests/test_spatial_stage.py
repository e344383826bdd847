"""Spatial driving with a partition's fields in shared memory (``gswitch.codegen_stage``).

What is staged and where (no GPU needed), that the staged kernels compile for every
field type they support (nvcc), and on the GPU that staged and unstaged partitions give
the CPU engine's answer, including a graph whose ids have no locality, where other blocks
update a staged partition's nodes while it runs.
"""

from __future__ import annotations

import pytest

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.codegen_stage import STAGE_BYTES, capacity, staged_fields
from gswitch.generators import clique_chain, rmat, road
from gswitch.plugins import get_registry
from gswitch.testing.nvcc import compile_source
from gswitch.testing.reference import compare, fields_differ, reference
from gswitch.testing.user_algorithms import USER_ALGORITHMS

USER = {u.name: u for u in USER_ALGORITHMS}
#: The user algorithms staging applies to (every type with shared-memory atomics), and
#: the one it does not (a node operator).
STAGED_USER = ("widest", "hops64", "dist64", "max_label")


def _spec(name):
    if name == "cc":
        return get_registry().algorithm("cc", "label_propagation")
    return USER.get(name) or get_registry().algorithm(name)


def _source(name, cfg, weighted=True):
    return generate_source(_spec(name), gs.Config({"direction": "push", **cfg}),
                           weighted=weighted).source


def test_staged_fields_are_the_order_free_reductions_into_the_target():
    assert staged_fields(_spec("bfs")) == {"depth": "min"}
    assert staged_fields(_spec("sssp")) == {"dist": "min"}
    assert staged_fields(_spec("cc")) == {"comp": "min"}
    assert staged_fields(USER["widest"]) == {"width": "max"}
    assert staged_fields(USER["max_label"]) == {"label": "max"}
    # a node operator, an add reduction, a step total: nothing is staged
    for name in ("reach_bits", "pagerank", "triangles"):
        assert staged_fields(_spec(name)) == {}, name


def test_capacity_fits_the_stage_budget():
    assert capacity(_spec("bfs"), {"depth": "min"}) == 4096
    assert capacity(USER["dist64"], {"dist": "min"}) == STAGE_BYTES // 8
    assert capacity(USER["hops64"], {"depth": "min"}) * 8 <= STAGE_BYTES


def test_only_spatial_stages_the_operator():
    staged = _source("bfs", {"driving": "spatial"})
    assert "#define GS_LOCAL_STAGE 4096" in staged and "gs_edge_op_local" in staged
    assert "gs_edge_op_local" not in _source("bfs", {"driving": "data"})
    assert "GS_LOCAL_STAGE" not in _source("pagerank", {"driving": "topology"})
    # the staged operator reads and reduces the target in shared memory only
    body = staged.split("bool gs_edge_op_local(", 1)[1].split("\n}\n", 1)[0]
    assert "gs.F_depth" not in body and "gs_shared_min(L.f_depth" in body


@pytest.mark.compile
@pytest.mark.parametrize("name", ["bfs", "sssp", "cc", *STAGED_USER])
def test_staged_kernels_compile(nvcc, name):
    for cfg in ({"driving": "spatial"},
                {"driving": "spatial", "launch": "persistent", "block_size": 1024}):
        source = _source(name, cfg, weighted=name not in ("bfs", "hops64", "max_label"))
        assert "GS_LOCAL_STAGE" in source
        ok, out = compile_source(source, nvcc=nvcc)
        assert ok, (name, cfg, out[-2000:])


@pytest.mark.compile
def test_unstaged_spatial_kernels_compile(nvcc):
    """An operator staging does not apply to (an add reduction, one pass) runs the same
    passes on global memory."""
    source = _source("triangles", {"driving": "spatial", "driving.local_iterations": 0})
    assert "GS_LOCAL_STAGE" in source and "gs_edge_op_local" in source  # the fallback
    assert "#define GS_LOCAL_STAGE 4096" not in source
    ok, out = compile_source(source, nvcc=nvcc)
    assert ok, out[-2000:]


needs_gpu = pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
@pytest.mark.parametrize("graph", ["chain", "road", "rmat"])
@pytest.mark.parametrize("alg", ["bfs", "sssp", "cc"])
def test_gpu_staged_partitions_give_the_reference(alg, graph, launch):
    g = {"chain": lambda: clique_chain(200, 32, weighted=True, seed=3),
         "road": lambda: road(60, 60, seed=4),
         "rmat": lambda: rmat(13, 8, seed=5, weighted=True).symmetrize()}[graph]()
    kw = {} if alg == "cc" else {"source": 0}
    extra = {"variant": "label_propagation"} if alg == "cc" else {}
    ref = reference(alg, g, **kw)
    field = {"bfs": "depth", "sssp": "dist", "cc": "comp"}[alg]
    # partitions of 32 to 4096, with and without inner passes, one pass, few and many warps
    for size, local, block in ((32, None, 256), (512, None, 1024), (4096, None, 256),
                               (256, 1, 64), (1024, 0, 256)):
        cfg = {"direction": "push", "driving": "spatial", "driving.partition_size": size,
               "block_size": block, "launch": launch, **extra}
        if local is not None:
            cfg["driving.local_iterations"] = local
        r = gs.run(alg, g, backend="gpu", config=cfg, **kw)
        assert compare(alg, r.fields[field], ref) is None, (alg, graph, cfg)


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("name", STAGED_USER)
def test_gpu_staged_user_operators_match_the_cpu_engine(name):
    """Every staged type (float32 max, int64 min, float64 min, int32 max), in partitions
    that fit the stage and, for float64, in 4096-node ones that do not."""
    spec = USER[name]
    g = rmat(12, 8, seed=7, weighted=True).symmetrize()
    kw = {"source": 0} if spec.start.kind == "source" else {}
    want = gs.run(spec, g, backend="cpu", **kw).fields
    for size in (64, 2048, 4096):
        cfg = {"direction": "push", "driving": "spatial", "driving.partition_size": size}
        got = gs.run(spec, g, backend="gpu", config=cfg, **kw).fields
        assert fields_differ(got, want) is None, (name, size, fields_differ(got, want))


@pytest.mark.gpu
@needs_gpu
def test_gpu_unstaged_spatial_gives_the_reference():
    g = rmat(11, 8, seed=9).symmetrize().remove_self_loops()
    want = reference("triangles", g)
    for size in (32, 1024):
        cfg = {"direction": "push", "driving": "spatial", "driving.partition_size": size,
               "driving.local_iterations": 0, "variant": "merge"}
        r = gs.run("triangles", g, backend="gpu", config=cfg)
        assert compare("triangles", r.fields["triangles"], want) is None, size
