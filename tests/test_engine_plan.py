"""The GPU engine's plan, built on the host (no GPU needed) from stand-ins for the
resident graph's device arrays and the compiled module: the parameter block's
graph-wide members, the strategies' runtime arguments and buffers, the fields' layout,
and members written by offset as NumPy would write them.
"""

import ctypes
from types import SimpleNamespace

import numpy as np

from gswitch.codegen import generate_source, state_dtype
from gswitch.config import Config
from gswitch.engine.memory import _align
from gswitch.engine.plan import _PackedInts, _Plan
from gswitch.generators import clique_chain
from gswitch.plugins import get_registry


def _array(ptr):
    return SimpleNamespace(data=SimpleNamespace(ptr=ptr))


def _plan(config):
    graph = clique_chain(4, 32, weighted=True, seed=1)
    spec = get_registry().algorithm("sssp", "delta_stepping")
    cfg = Config({"direction": "push", **config})
    gen = generate_source(spec, cfg, weighted=True)
    res = SimpleNamespace(graph=graph, row=_array(0x1000), col=_array(0x2000),
                          weights=_array(0x3000), in_degree=_array(0x4000))
    module = SimpleNamespace(get_global=lambda name: SimpleNamespace(ptr=0x5000))
    return _Plan(state_dtype(list(gen.members)), res, spec, cfg, gen, module), graph, cfg


def test_plan_writes_the_graph_wide_members_once():
    plan, graph, cfg = _plan({"driving": "spatial", "driving.partition_size": 64,
                              "driving.width_scale": 4.0})
    st = plan.st
    assert (int(st["row"]), int(st["col"]), int(st["weights"])) == (0x1000, 0x2000, 0x3000)
    assert (int(st["n"]), int(st["m"])) == (graph.n_nodes, graph.n_edges)
    assert plan.const_ptr == 0x5000 and plan.nbytes == plan.dtype.itemsize
    # the driving strategy's runtime arguments, as it computes them for this graph
    for name, (_ctype, value) in cfg.strategy("driving").runtime_args(graph, cfg).items():
        assert plan.args[("driving", name)] == value
        assert np.isclose(float(st[f"driving_{name}"]), value, rtol=1e-6)
    # spatial's partition bitmap and node marks, two halves each
    names = {b[1]: b[4] for b in plan.buffers}
    assert names["parts"] == 2 and names["dirty"] == 2 * ((graph.n_nodes + 31) // 32)
    # the fields at aligned offsets, in declaration order
    assert [f[0] for f in plan.fields] == ["dist"]
    assert plan.field_bytes == _align(graph.n_nodes * 4)


def test_members_written_by_offset_read_back_through_the_dtype():
    plan, _, _ = _plan({"driving": "priority"})
    block = np.zeros(plan.nbytes, dtype=np.uint8)
    plan.put(block, "n", 123456789)
    plan.put(block, "driving_inv_width", 0.25)
    view = block.view(plan.dtype)[0]
    assert int(view["n"]) == 123456789 and float(view["driving_inv_width"]) == 0.25
    plan.bind("row", 0xABC)
    assert int(plan.st["row"]) == 0xABC


def test_packed_kernel_arguments_point_at_their_values():
    packed = _PackedInts((7, -1, 42))
    addresses = ctypes.cast(packed.ptr, ctypes.POINTER(ctypes.c_void_p))
    got = [ctypes.cast(addresses[i], ctypes.POINTER(ctypes.c_int32))[0] for i in range(3)]
    assert got == [7, -1, 42]
