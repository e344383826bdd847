"""Row guards: an edge operator's leading guards on the source alone skip a node's whole
row on the GPU (``gs_row_guard``); what they may read, and that answers are unchanged."""

import numpy as np
import pytest

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.generators import rmat
from gswitch.lowering import row_guards
from gswitch.plugins import get_registry
from gswitch.testing.nvcc import compile_source
from gswitch.testing.reference import compare, reference


def _spec(name, op):
    @gs.algorithm(name=name, reference="none")
    class Spec:
        x = gs.NodeField("int32", init=0)
        y = gs.NodeField("int32", init=0)
        k = gs.Param("int32", 1, low=0, high=10)
        start = gs.all_nodes()
        edge = gs.edge_op(op)

    return Spec


def _src_and_dst(e, p):
    e.only_if((e.src.x > p.k) & (e.dst.y < 1) & (e.src.id.ne(3)))
    e.dst.y.reduce_add(1)


def _guard_after_update(e):
    e.dst.y.reduce_add(1)
    e.only_if(e.src.x > 0)
    e.dst.x.reduce_max(e.src.x)


def _step_dependent(e, p):
    e.only_if((e.src.x > p.iteration) & (e.weight > 0.5))
    e.dst.y.reduce_add(1)


def test_only_source_terms_of_leading_guards_are_hoisted():
    spec = _spec("rg_src_and_dst", _src_and_dst)
    got = [repr(g) for g in row_guards(spec.edge)]
    assert got == ["(src.x > param.k)", "(src.id != 3)"]
    # an update before the guard runs for every edge: nothing may skip the row
    assert row_guards(_spec("rg_after", _guard_after_update).edge) == []
    # the step number and the edge's weight are not the source's alone
    assert row_guards(_spec("rg_step", _step_dependent).edge) == []


@pytest.mark.compile
def test_row_guard_module_compiles(nvcc):
    """The peel step's guard (the node was peeled in this step) is emitted and used."""
    spec = get_registry().algorithm("core_number", "peel_sweep")
    for cfg in (gs.Config({"driving": "topology", "launch": "host_loop"}),
                gs.Config({"driving": "topology", "launch": "persistent",
                           "load_balance": "twc"})):
        src = generate_source(spec, cfg, False).source
        assert "#define GS_ROW_GUARD 1" in src and "gs_row_guard(v)" in src
        ok, log = compile_source(src)
        assert ok, log[-2000:]
    bfs = generate_source(get_registry().algorithm("bfs"), gs.Config({}), False).source
    assert "#define GS_ROW_GUARD" not in bfs  # BFS's operator has no guard



@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("load_balance", ["thread", "virtual_warp", "twc", "block",
                                          "edge_balanced", "dynamic_chunks",
                                          "dynamic_virtual_warp", "work_donation"])
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_guarded_rows_give_the_same_cores_under_every_load_balancer(load_balance, launch):
    """Skipped rows change no answer: the core numbers of every load balancer and launch
    equal networkx's, and fewer edges are walked than the sweeps hold."""
    g = rmat(10, 8, seed=5, directed=False, duplicates="drop", self_loops="drop")
    want = reference("core_number", g)
    cfg = {"variant": "peel_sweep", "load_balance": load_balance, "launch": launch}
    r = gs.run("core_number", g, backend="gpu", config=cfg)
    assert compare("core_number", np.asarray(r.fields["core"]), want) is None
    assert r.stats["edges_processed"] < g.n_edges * r.iterations
