"""A node operator's step over one node runs as one function of NumPy scalars
(:mod:`gswitch.engine.cpu_one`); every field, total and step count it gives equals what
the array plans give, bit for bit, for every registered formulation and for operators
that use every kind of expression, on graphs whose steps cover one node."""

import numpy as np
import pytest

import gswitch as gs
from gswitch.engine import cpu
from gswitch.engine.cpu_one import OneNodeProgram
from gswitch.errors import AlgorithmError
from gswitch.plugins import get_registry


def _no_scalar_programs(cls, *args, **kwargs):
    return None


def _run(spec, graph, *, scalar, **kw):
    """``spec`` on ``graph`` with fresh node programs, with or without their scalar
    form; gives the result (or the exception raised) and the programs it compiled.
    """
    with pytest.MonkeyPatch.context() as m:
        m.setattr(cpu._NodeProgram, "_kept", {})
        if not scalar:
            m.setattr(OneNodeProgram, "build", classmethod(_no_scalar_programs))
        try:
            out = gs.run(spec, graph, backend="cpu", **kw)
        except Exception as exc:  # noqa: BLE001 - compared with the other path's
            out = exc
        return out, [p for _, p in cpu._NodeProgram._kept.values()]


def _same_number(a, b):
    return a == b or (a != a and b != b)


def _assert_same(spec, graph, **kw):
    """The scalar programs and the array plans agree; gives the scalar programs."""
    got, programs = _run(spec, graph, scalar=True, **kw)
    want, _ = _run(spec, graph, scalar=False, **kw)
    if isinstance(want, Exception):
        # the same error, raised by the run (not by the call's arguments)
        assert type(got) is type(want) and str(got) == str(want)
        assert not isinstance(want, gs.InvalidInput), want
        return programs
    assert not isinstance(got, Exception), got
    assert got.iterations == want.iterations
    assert got.stats["active"] == want.stats["active"]
    totals_got, totals_want = got.stats.get("totals", []), want.stats.get("totals", [])
    assert len(totals_got) == len(totals_want)
    assert all(map(_same_number, totals_got, totals_want)), (totals_got, totals_want)
    assert sorted(got.fields) == sorted(want.fields)
    for name, w in want.fields.items():
        g = got.fields[name]
        assert g.dtype == w.dtype, name
        assert g.tobytes() == w.tobytes(), (name, g, w)
    return programs


@gs.algorithm(name="one_node_mix", max_iterations_param="steps", converge_below="tol",
              reference="the CPU engine's array plans")
class Mix:
    """Every kind of expression a node operator's assignment or total may hold."""

    steps = gs.Param("int32", 6, low=1, high=100)
    tol = gs.Param("float64", -1.0, low=-10.0, high=10.0)
    a = gs.Param("float32", 0.5, low=-1e30, high=1e30)
    k = gs.Param("int32", 3, low=-100, high=100)
    x = gs.NodeField("float32", init=1.5)
    y = gs.NodeField("float64", init=-2.0)
    i = gs.NodeField("int32", init=gs.NODE_ID)
    u = gs.NodeField("uint32", init=7)
    b = gs.NodeField("int64", init=-9)
    m = gs.NodeField("uint64", init=5)
    w = gs.NodeField("float64", init=0.0)
    s = gs.StepTotal()
    start = gs.all_nodes()

    @gs.edge_op
    def spread(e):
        e.dst.w.reduce_add(e.src.y, activate=False)

    @gs.node_op
    def mix(n, p):
        q = n.x * p.a + n.y / (n.i + 1)
        n.total(gs.where(n.i > -1000000, 1.0, 0.0))
        n.total(abs(q - n.x), into="s")
        n.x = (q + p.s).astype("float32")
        n.y = gs.where(p.iteration < 2, n.y * 2.0, -n.y) + q / (n.out_degree - n.in_degree)
        n.i = ((n.i * 3 + p.k) // (n.i - 1) - (n.i >> 1)
               + gs.where(n.x > n.y, p.n_nodes, n.id) + (p.k // 0) - (n.i // -2))
        n.u = ((n.u << 3) ^ (n.u >> 1)) | ((n.u & 12) + n.u * 2654435761) + n.u // 0
        n.b = gs.minimum(n.b * n.b, gs.maximum(n.b, -5)) - n.out_degree + p.iteration
        n.m = n.m * 6364136223846793005 + 1442695040888963407
        n.x = (n.x.at(n.id) + (~(n.x > n.y) & n.i.ne(0)).astype("float32")
               + (n.y // 0.7).astype("float32") + (p.a / 0.0).astype("float32"))
        n.y = (n.y.at(gs.where(n.i > 0, n.id, n.id)) * -1.5 + abs(n.b).astype("float64")
               + gs.where(p.a > 0.0, p.a * 2.0, p.a - 1.0) + gs.minimum(n.y, p.a / 0.0))
        n.b = n.b + (n.x / 0.0).astype("int64") + gs.where(n.x.eq(n.x), 0, 1)


@gs.algorithm(name="one_node_walk", max_iterations_param="steps",
              reference="the CPU engine's array plans")
class Walk:
    """Steps of one node each on a path: a node operator, then an edge operator."""

    steps = gs.Param("int32", 100, low=1, high=1000)
    dist = gs.NodeField("int32", init=gs.INF, at_source=0)
    seen = gs.NodeField("float32", init=0.0)
    start = gs.from_source()

    @gs.node_op
    def mark(n, p):
        n.seen = n.seen + (n.dist + p.iteration).astype("float32") / n.out_degree

    @gs.edge_op
    def relax(e):
        e.dst.dist.reduce_min(e.src.dist + 1)


def _one_node(loop=False):
    return gs.Graph.from_edges([0] if loop else [], [0] if loop else [], n_nodes=1)


def _path(n=6):
    return gs.Graph.from_edges(list(range(n - 1)), list(range(1, n)), n_nodes=n,
                               weights=[1.5 + i for i in range(n - 1)])


@pytest.mark.parametrize("loop", [False, True], ids=["bare", "self_loop"])
@pytest.mark.parametrize("a", [0.5, 0.0, -0.0, 1e30, -3.25])
@pytest.mark.parametrize("k", [3, 0, -7])
def test_every_expression_matches_the_array_plans(loop, a, k):
    programs = _assert_same(Mix, _one_node(loop), a=a, k=k)
    assert [p.one is not None for p in programs] == [True]


def test_steps_of_one_node_in_a_longer_run_match():
    programs = _assert_same(Walk, _path(), source=0)
    assert [p.one is not None for p in programs] == [True]
    assert _assert_same(Walk, _path(), source=2)


def _keep_min(e):
    e.dst.x.reduce_min(e.src.x)


def _read_next(n):
    n.x = n.x.at(n.x + 1)


def _add_one(n):
    n.x.reduce_add(1, activate=False)


def _int_field_algorithm(name, node):
    """An int32 field ``x`` (5 everywhere), a min along edges, and the node operator
    ``node``."""
    body = {"x": gs.NodeField("int32", init=5), "start": gs.all_nodes(),
            "keep": gs.edge_op(_keep_min), "node": gs.node_op(node)}
    return gs.algorithm(type(name, (), body), name=name,
                        reference="the CPU engine's array plans")


def test_an_id_out_of_range_raises_the_array_plans_error():
    bad_index = _int_field_algorithm("one_node_bad_index", _read_next)
    with pytest.raises(AlgorithmError, match="outside the graph's ids 0..0"):
        gs.run(bad_index, _one_node(), backend="cpu")
    _assert_same(bad_index, _one_node())


def test_a_reduction_keeps_the_array_plans():
    programs = _assert_same(_int_field_algorithm("one_node_reduce", _add_one), _one_node())
    assert [p.one for p in programs] == [None]


def test_the_source_names_no_value():
    """The written source holds the writer's names only; values live in its namespace."""
    _, programs = _run(Mix, _one_node(), scalar=True, a=0.25)
    source = programs[0].one.source
    for text in ("0.25", "rank", "'", '"', "params.", "import"):
        assert text not in source


_FORMULATIONS = sorted((name, variant) for name, family in get_registry().variants.items()
                       for variant in family)


@pytest.mark.parametrize(("name", "variant"), _FORMULATIONS,
                         ids=[f"{a}-{v}" for a, v in _FORMULATIONS])
@pytest.mark.parametrize("graph", ["one", "path"])
def test_registered_formulations_match_the_array_plans(name, variant, graph):
    spec = get_registry().algorithm(name, variant)
    g = _one_node() if graph == "one" else _path()
    kw = {"source": 0} if spec.start.kind == "source" else {}
    if "sources" in spec.inputs and spec.inputs["sources"][1].default == 0:
        kw["sources"] = [0]
    _assert_same(spec, g, **kw)


def test_pagerank_on_one_node_runs_its_scalar_program():
    programs = _assert_same(get_registry().algorithm("pagerank"), _one_node())
    assert [p.one is not None for p in programs] == [True]
    r = gs.run("pagerank", _one_node(), backend="cpu")
    np.testing.assert_array_equal(r.fields["rank"], [1.0])
