"""The argument of the one-launch device fill (:mod:`gswitch.engine.fill`), checked on
the host: the kernel's work, done in NumPy on the packed argument, gives the arrays that
the host fill (``AlgorithmSpec.fill_fields``) writes, for every registered formulation
and for fields of every dtype the engine holds. The kernel itself runs in the GPU suite
(``tests/test_gpu.py::test_fields_of_a_large_graph_start_on_the_device``).
"""

import functools

import numpy as np
import pytest

import gswitch as gs
from gswitch.algorithm import NODE_ID
from gswitch.engine.fill import FILL_MAX, FieldFill, pattern, plan_fill, writes
from gswitch.plugins import get_registry
from gswitch.testing.user_algorithms import USER_ALGORITHMS


@gs.algorithm(name="fill_every_dtype", reference="the host fill")
class EveryDtype:
    """A field of each dtype, with values at the source that differ from the rest."""

    small = gs.NodeField("int32", init=-3, at_source=5)
    short = gs.NodeField("uint32", init=2**32 - 1, at_source=1)
    label = gs.NodeField("int32", init=gs.NODE_ID)
    wide = gs.NodeField("int64", init=float("inf"), at_source=0)
    neg = gs.NodeField("int64", init=-9)
    big = gs.NodeField("uint64", init=2**64 - 1, at_source=3)
    low = gs.NodeField("float32", init=float("-inf"), at_source=-0.0)
    tenth = gs.NodeField("float32", init=0.1)
    frac = gs.NodeField("float64", init=lambda p: 1.0 / p["n_nodes"], at_source=2.5)
    ids = gs.NodeField("uint32", init=gs.NODE_ID, at_source=9)
    start = gs.from_source()

    @gs.edge_op
    def relax(e):
        e.dst.small.reduce_min(e.src.small)


def _emulated(spec, n, params, sources, device=False):
    """The fields as the engine writes them on the device: the kernel's launches (done
    in NumPy, or on the GPU with ``device``), then what :func:`plan_fill` leaves to the
    engine, as the engine does it; with the launches and that rest."""
    if device:
        import cupy as xp
    else:
        xp = np
    arrays = [xp.full(n, 99, dtype=f.dtype) for f in spec.fields.values()]  # garbage
    memory = {a.data.ptr if device else 1 << 20 | k: a for k, a in enumerate(arrays)}
    fields = [(name, ptr, a.dtype) for name, (ptr, a) in zip(spec.fields, memory.items(),
                                                              strict=True)]
    launches, rest = plan_fill(fields, spec.initial_values(params, sources is not None), n,
                               int(sources[0]) if sources is not None and sources.size == 1
                               else -1)
    assert all(0 < b.count <= FILL_MAX for b in launches)
    for b in launches:
        if device:  # on the stream that wrote the garbage, so after it
            stream = xp.cuda.get_current_stream()
            b.launch(xp.cuda.driver, _fill_kernel(), stream.ptr)
            stream.synchronize()
        else:
            b.emulate(memory)
    for _name, ptr, _dt, written, value, at_source in rest:
        if not written:
            memory[ptr][:] = xp.arange(n) if value is NODE_ID else xp.asarray(value)
        if at_source is not None:
            memory[ptr][xp.asarray(sources)] = at_source
    host = [a.get() if device else a for a in memory.values()]
    return dict(zip(spec.fields, host, strict=True)), launches, rest


@functools.cache
def _fill_kernel():
    """The driver handle of ``gs_fill_fields``, compiled from ``fill.cuh`` alone."""
    from importlib import resources

    import cupy

    src = resources.files("gswitch").joinpath("cuda", "fill.cuh").read_text()
    return int(cupy.RawModule(code=src).get_function("gs_fill_fields").kernel.ptr)


def _host(spec, n, params, sources):
    out = {name: np.empty(n, dtype=f.dtype) for name, f in spec.fields.items()}
    spec.fill_fields(out, params, sources)
    return out


_SPECS = sorted((name, variant) for name, family in get_registry().variants.items()
                for variant in family)


def _check(spec, n, sources=(3,), device=False):
    """The device path's fields equal the host's (``device``: the kernel on the GPU);
    gives the launches and what was left."""
    given = {}
    if "sources" in spec.inputs:
        given["sources"] = list(sources)
    params = spec.resolve_params(given, n)
    ids = np.array(sources, dtype=np.int32) if spec.start.kind == "source" else None
    got, launches, rest = _emulated(spec, n, params, ids, device)
    want = _host(spec, n, params, ids)
    assert got.keys() == want.keys()
    for name, w in want.items():
        assert got[name].dtype == w.dtype, name
        assert got[name].tobytes() == w.tobytes(), (name, got[name][:6], w[:6])
    return launches, rest


@pytest.mark.parametrize("sources", [(3,), (0, 7, 12)], ids=["one-source", "three"])
@pytest.mark.parametrize(("name", "variant"), _SPECS, ids=[f"{a}-{v}" for a, v in _SPECS])
def test_every_registered_formulation_fills_as_the_host(name, variant, sources):
    _check(get_registry().algorithm(name, variant), 37, sources)


@pytest.mark.parametrize("spec", USER_ALGORITHMS, ids=lambda s: s.name)
def test_user_algorithms_fill_as_the_host(spec):
    _check(spec, 37)


def test_bfs_is_one_launch_with_its_source_folded_in():
    launches, rest = _check(get_registry().algorithm("bfs"), 1000)
    assert len(launches) == 1 and rest == []
    launches, rest = _check(get_registry().algorithm("bfs"), 1000, (1, 2))
    assert len(launches) == 1 and [r.written for r in rest] == [True]


@pytest.mark.parametrize("sources", [(3,), (0, 69_999)])
def test_every_dtype_and_more_fields_than_one_launch_takes(sources):
    assert len(EveryDtype.fields) > FILL_MAX
    launches, _ = _check(EveryDtype, 70_000, sources)
    assert [b.count for b in launches] == [FILL_MAX, len(EveryDtype.fields) - FILL_MAX]


@pytest.mark.parametrize(("value", "dtype"), [(-1, "int32"), (-1, "int64"), (7, "uint32"),
                                              (float("inf"), "float32"), (-0.0, "float64"),
                                              (2**63, "uint64"), (0.1, "float32")])
def test_the_pattern_is_the_stored_bits(value, dtype):
    dt = np.dtype(dtype)
    raw = np.array([pattern(value, dt)], dtype=f"<u{dt.itemsize}")
    assert raw.view(dt)[0].tobytes() == np.array(value, dtype=dt).tobytes()


def test_what_the_kernel_leaves_to_the_host():
    assert not writes(np.zeros(4), np.dtype("float32"), False)  # a per-node input
    assert not writes(NODE_ID, np.dtype("float32"), True)  # an id in a float field
    assert not writes(1, np.dtype("int16"), False)  # no node field holds 2 bytes
    assert writes(NODE_ID, np.dtype("int64"), True)
    assert writes(0.5, np.dtype("float64"), False)


def test_a_value_at_the_source_needs_one_and_a_launch_holds_eight():
    f = FieldFill(10)
    with pytest.raises(ValueError, match="needs the source"):
        f.add(1, np.dtype("int32"), 0, at_source=1)
    f = FieldFill(10, 2)
    for k in range(FILL_MAX):
        f.add(k, np.dtype("int32"), k)
    with pytest.raises(ValueError, match="at most"):
        f.add(99, np.dtype("int32"), 0)
