"""The operator language: tracing, typing, errors, CPU evaluation and lowering to CUDA."""

import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import gswitch as gs
from gswitch import expr as ex
from gswitch.codegen import generate_source, lower_expr
from gswitch.plugins import get_registry


# ---------------------------------------------------------------------- fixtures
@pytest.fixture
def random_graph():
    """A small seeded random weighted directed graph with parallel edges and loops."""
    rng = np.random.default_rng(42)
    n, m = 40, 60
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    w = rng.integers(1, 64, m).astype(np.float32)
    return gs.Graph.from_edges(src, dst, w, n_nodes=n)


def _widest_spec():
    @gs.algorithm(name="widest")
    class Widest:
        """Widest (maximum-bottleneck) path from a source."""

        width = gs.NodeField("float32", init=0.0, at_source=gs.INF)
        start = gs.from_source()

        @gs.edge_op
        def relax(e):
            e.dst.width.reduce_max(gs.minimum(e.src.width, e.weight))

    return Widest


def _typed_spec():
    """An algorithm whose node operator exercises promotion, where, casts and compares."""

    @gs.algorithm(name="typed")
    class Typed:
        """Typing probe."""

        a = gs.NodeField("int32", init=0)
        f = gs.NodeField("float32", init=0.0)
        k = gs.Param("int32", 3)
        start = gs.all_nodes()

        @gs.node_op
        def probe(n, p):
            n.a = n.a + 1                      # %0: int32 + int -> int32
            n.f = n.a + 0.5                    # %1: int32 + float -> float32
            n.f = n.a / p.k                    # %2: int32 / int32 -> float32
            n.a = gs.where(n.a.eq(p.k), n.a, -1)            # %3
            n.f = gs.where(n.f >= 2.0, n.f, 0.0).astype("float64")  # %4 (cast back)

        @gs.edge_op
        def push(e):
            e.dst.a.reduce_min(e.src.a)

    return Typed


# ---------------------------------------------------------------------- tracing
def test_trace_records_statement_kinds_and_targets():
    """Each reduction is recorded in order with its kind, field and node."""

    @gs.algorithm
    class Multi:
        """Several reductions in one edge operator."""

        lo = gs.NodeField("int32", init=gs.INF)
        hi = gs.NodeField("int32", init=0)
        acc = gs.NodeField("float32", init=0.0)
        bits = gs.NodeField("uint32", init=0)
        start = gs.all_nodes()

        @gs.edge_op
        def op(e):
            e.dst.lo.reduce_min(e.src.lo + 1)
            e.dst.hi.reduce_max(e.src.hi)
            e.dst.acc.reduce_add(e.weight, activate_above=1.0)
            e.dst.bits.reduce_or(e.src.bits)

    stmts = Multi.edge.statements
    assert [s.kind.name for s in stmts] == ["min", "max", "add", "or"]
    assert [s.field for s in stmts] == ["lo", "hi", "acc", "bits"]
    assert all(s.node == "dst" for s in stmts)
    assert [s.index for s in stmts] == [0, 1, 2, 3]
    assert stmts[2].activate_above is not None and stmts[0].activate_above is None
    assert Multi.name == "multi"


@pytest.mark.parametrize("kind,commutative,idempotent,monotone", [
    ("min", True, True, True),
    ("max", True, True, True),
    ("or", True, True, True),
    ("add", True, False, False),
    ("exchange", False, False, False),
])
def test_reduction_algebraic_properties(kind, commutative, idempotent, monotone):
    """REDUCTIONS states each kind's algebra (add not idempotent, exchange not commutative)."""
    r = ex.REDUCTIONS[kind]
    assert (r.name, r.commutative, r.idempotent, r.monotone) == (
        kind, commutative, idempotent, monotone)


def test_traced_statement_carries_reduction_properties():
    """A traced reduce_add is tagged non-idempotent and non-monotone; min is monotone."""
    push = get_registry().algorithm("pagerank", "residual_push").edge.statements[0]
    assert push.kind is ex.REDUCTIONS["add"]
    assert not push.kind.idempotent and not push.kind.monotone
    bfs = get_registry().algorithm("bfs")
    assert bfs.edge.activating == [ex.REDUCTIONS["min"]]


def test_node_op_exchange_and_assign_recorded():
    """A node operator records exchange (non-activating) and plain assignments."""
    node = get_registry().algorithm("pagerank", "residual_push").node
    kinds = [type(s).__name__ for s in node.statements]
    assert kinds == ["Reduction", "Assign", "Assign"]
    xch = node.statements[0]
    assert xch.kind.name == "exchange" and xch.node == "self" and not xch.activates
    assert [s.field for s in node.statements] == ["residual", "rank", "send"]
    # the assignment of rank reads the exchange's old value
    assert any(isinstance(x, ex.StmtValue) and x.index == 0
               for x in ex.walk(node.statements[1].value))


def test_type_promotion():
    """int32 + 1 stays int32, int32 + 0.5 and int32 / int32 become float32."""
    stmts = _typed_spec().node.statements
    assert stmts[0].value.dtype == "int32"
    assert isinstance(stmts[0].value, ex.BinOp) and stmts[0].value.b.dtype == "int32"
    assert stmts[1].value.dtype == "float32"
    assert isinstance(stmts[1].value, ex.BinOp) and stmts[1].value.op == "+"
    div = stmts[2].value
    assert div.op == "/" and div.a.dtype == "int32" and div.b.dtype == "int32"
    assert div.dtype == "float32"


def test_promotion_rules_directly():
    """The promotion table: widest wins, int64 with float32 gives float64."""
    i32 = ex.ParamRef("a", "int32")
    i64 = ex.ParamRef("b", "int64")
    f32 = ex.ParamRef("c", "float32")
    f64 = ex.ParamRef("d", "float64")
    assert (i32 + i64).dtype == "int64"
    assert (i64 + f32).dtype == "float64"
    assert (i32 * f32).dtype == "float32"
    assert (f32 - f64).dtype == "float64"
    assert (i64 / i64).dtype == "float32"
    assert (f64 / i32).dtype == "float64"
    assert (i32 // 2).dtype == "int32"
    assert (2.5 * i32).dtype == "float32"


def test_where_eq_and_casts():
    """where() builds a Select, .eq() a Compare, astype() a Cast; assignments cast to the field."""
    stmts = _typed_spec().node.statements
    sel = stmts[3].value
    assert isinstance(sel, ex.Select) and sel.dtype == "int32"
    assert isinstance(sel.cond, ex.Compare) and sel.cond.op == "==" and sel.cond.dtype == "bool"
    assert isinstance(sel.b, ex.Const) and sel.b.value == -1
    # float64 value stored into a float32 field is cast back
    last = stmts[4].value
    assert isinstance(last, ex.Cast) and last.dtype == "float32"
    assert isinstance(last.a, ex.Cast) and last.a.dtype == "float64"
    assert isinstance(last.a.a.cond, ex.Compare) and last.a.a.cond.op == ">="


@pytest.mark.parametrize("build,op", [
    (lambda x: x < 1, "<"), (lambda x: x <= 1, "<="), (lambda x: x > 1, ">"),
    (lambda x: x >= 1, ">="), (lambda x: x.eq(1), "=="), (lambda x: x.ne(1), "!="),
])
def test_comparisons_build_bool_nodes(build, op):
    """Every comparison builds a bool Compare node with the right operator."""
    c = build(ex.ParamRef("x", "int32"))
    assert isinstance(c, ex.Compare) and c.op == op and c.dtype == "bool"
    assert c.b.dtype == "int32"


def test_minimum_maximum_and_bitwise():
    """gs.minimum/maximum build min/max nodes; & | on floats are rejected."""
    a, b = ex.ParamRef("a", "int32"), ex.ParamRef("b", "float32")
    assert gs.minimum(a, b).op == "min" and gs.minimum(a, b).dtype == "float32"
    assert gs.maximum(3, a).op == "max" and gs.maximum(3, a).dtype == "int32"
    assert (a | 4).dtype == "int32"
    with pytest.raises(gs.AlgorithmError, match="integer or bool"):
        a & b


def test_unknown_dtype_cast_rejected():
    """astype() with an unknown type names the valid ones."""
    with pytest.raises(gs.AlgorithmError, match="float32"):
        ex.ParamRef("a", "int32").astype("half")


def test_format_tree_and_statement_show_operators():
    """format_tree, format_statement and describe() print operators and dtypes."""
    spec = _widest_spec()
    stmt = spec.edge.statements[0]
    tree = ex.format_tree(stmt.value)
    assert "BinOp min : float32" in tree
    assert "EdgeWeight edge.weight" in tree
    assert "src.width" in tree
    line = ex.format_statement(stmt)
    assert "dst.width.max(min(src.width, edge.weight))" in line
    assert "monotone" in line
    text = spec.describe()
    assert "algorithm widest" in text
    assert "field width: float32" in text
    assert "edge_op relax" in text
    assert "min(src.width, edge.weight)" in text
    assert "start: source" in text


def test_format_expr_renders_inf_and_where():
    """INF constants and where() render readably."""
    e = gs.where(ex.ParamRef("x", "float32") > 0.0, ex.Const(float("inf"), "float32"), 1.0)
    assert repr(e) == "where((param.x > 0.0), INF, 1.0)"


def test_pagerank_describe_lists_params_and_node_op():
    """describe() of a built-in algorithm lists params, the node op and the threshold."""
    text = get_registry().algorithm("pagerank", "residual_push").describe()
    assert "param alpha: float32 = 0.85" in text
    assert "node_op take" in text
    assert "residual.exchange(0.0)" in text
    assert "activate_above=(param.tolerance / n_nodes)" in text


# ---------------------------------------------------------------------- tracing errors
def _define(edge_body, *, start=True, extra=None, field_dtype="int32"):
    attrs = {"__doc__": "probe", "x": gs.NodeField(field_dtype, init=0),
             "op": gs.edge_op(edge_body)}
    if start:
        attrs["start"] = gs.all_nodes()
    attrs.update(extra or {})
    return gs.algorithm(type("Probe", (), attrs))


def _python_if(e):
    if e.src.x > 0:
        e.dst.x.reduce_min(e.src.x)


@pytest.mark.parametrize("body,kwargs,match", [
    (_python_if, {}, "Python `if`"),
    (lambda e: e.src.x.reduce_min(e.dst.x), {}, "got an update of src.x"),
    (lambda e: e.dst.x.exchange(1), {}, "exchange"),
    (lambda e: e.src.x + 1, {}, "no reduction on e.dst"),
    (lambda e: e.dst.x.reduce_min(e.src.nope), {}, "no field 'nope'"),
    (lambda e: e.dst.x.reduce_min(e.src.x), {"start": False}, "no initial active set"),
    (lambda e: e.dst.x.reduce_or(e.src.x), {"field_dtype": "float32"},
     "reduce_or needs an integer"),
    (lambda e: e.dst.x._reduce("min", 1, activate_above=2), {},
     "activate_above applies to reduce_add"),
    (lambda e: e.dst.x.reduce_min(e.params.nope), {}, "no parameter 'nope'"),
    (lambda e: e.dst.x.reduce_min("text"), {}, "cannot use str"),
    (lambda e: setattr(e.dst, "x", 1), {}, "plain assignment"),
])
def test_tracing_errors(body, kwargs, match):
    """Mistakes in an operator raise AlgorithmError at decoration time with the rule."""
    with pytest.raises(gs.AlgorithmError, match=match):
        _define(body, **kwargs)


def test_two_edge_ops_rejected():
    """Declaring two edge operators is an error."""
    second = gs.edge_op(lambda e: e.dst.x.reduce_max(e.src.x))
    with pytest.raises(gs.AlgorithmError, match="more than one edge operator"):
        _define(lambda e: e.dst.x.reduce_min(e.src.x), extra={"op2": second})


@pytest.mark.parametrize("method", ["reduce_min", "reduce_max", "reduce_or"])
def test_threshold_on_idempotent_reduction_is_refused(method):
    """activate_above on min/max/or is refused with a clear AlgorithmError."""
    with pytest.raises(gs.AlgorithmError, match="activate_above applies to reduce_add only"):
        _define(lambda e: getattr(e.dst.x, method)(1, activate_above=2))


def test_tracer_state_cleaned_after_error():
    """A failed trace leaves no field proxies registered."""
    from gswitch.algorithm import _FIELD_TRACER

    before = len(_FIELD_TRACER)
    with pytest.raises(gs.AlgorithmError):
        _define(_python_if)
    assert len(_FIELD_TRACER) == before


# ---------------------------------------------------------------------- CPU evaluation
def _widest_reference(graph, source):
    """Bottleneck width by thresholding: the largest w such that v is reachable via edges >= w."""
    n = graph.n_nodes
    src, dst = graph.edges()
    w = graph.weights
    best = np.zeros(n)
    for t in np.unique(w):
        keep = w >= t
        g = gs.Graph.from_edges(src[keep], dst[keep], n_nodes=n)
        d = csgraph.shortest_path(g.to_scipy(), unweighted=True, indices=source)
        best[np.isfinite(d)] = np.maximum(best[np.isfinite(d)], t)
    best[source] = np.inf
    return best


@pytest.mark.parametrize("driving", ["data", "topology", "temporal"])
def test_widest_path_matches_threshold_reference(random_graph, driving):
    """A user-defined widest-path algorithm matches reachability over thresholded graphs."""
    spec = _widest_spec()
    for source in (0, 2, 21):
        expected = _widest_reference(random_graph, source)
        r = gs.run(spec, random_graph, source=source, backend="cpu",
                   config={"driving": driving})
        np.testing.assert_array_equal(r.fields["width"], expected)
    assert len(np.unique(expected)) > 3  # the last source reaches several distinct widths


def test_max_label_propagation_matches_ancestors(random_graph):
    """reduce_max of labels gives the largest id among each node's ancestors (and itself)."""

    @gs.algorithm(name="maxlabel")
    class MaxLabel:
        """Largest id that reaches each node."""

        label = gs.NodeField("int32", init=gs.NODE_ID)
        start = gs.all_nodes()

        @gs.edge_op
        def spread(e):
            e.dst.label.reduce_max(e.src.label)

    r = gs.run(MaxLabel, random_graph, backend="cpu")
    d = csgraph.shortest_path(random_graph.to_scipy(), unweighted=True)
    reach = np.isfinite(d)  # reach[u, v]: v reachable from u (diagonal is True)
    ids = np.arange(random_graph.n_nodes)
    expected = np.array([ids[reach[:, v]].max() for v in ids])
    np.testing.assert_array_equal(r.fields["label"], expected)


def _reach_mask_spec():
    @gs.algorithm(name="reach2")
    class Reach2:
        """Bit 0: reachable from source a; bit 1: reachable from source b."""

        a = gs.Param("int32", 0)
        b = gs.Param("int32", 0)
        mask = gs.NodeField("int32", init=0)
        start = gs.from_source()

        @gs.node_op
        def seed(n, p):
            n.mask = n.mask | gs.where(n.id.eq(p.a), 1, 0) | gs.where(n.id.eq(p.b), 2, 0)

        @gs.edge_op
        def spread(e):
            e.dst.mask.reduce_or(e.src.mask)

    return Reach2


@pytest.mark.parametrize("driving", ["data", "topology"])
@pytest.mark.parametrize("direction", ["push", "pull"])
def test_or_reachability_matches_two_bfs(random_graph, driving, direction):
    """An or-reduction bitmask from two sources equals two scipy BFS reachability sets."""
    a, b = 1, 2
    r = gs.run(_reach_mask_spec(), random_graph, source=[a, b], a=a, b=b, backend="cpu",
               config={"driving": driving, "direction": direction})
    da = csgraph.shortest_path(random_graph.to_scipy(), unweighted=True, indices=a)
    db = csgraph.shortest_path(random_graph.to_scipy(), unweighted=True, indices=b)
    expected = np.isfinite(da).astype(int) | (np.isfinite(db).astype(int) << 1)
    assert set(expected.tolist()) == {0, 1, 2, 3}  # every combination occurs
    np.testing.assert_array_equal(r.fields["mask"], expected)


def test_integer_floor_division_truncates_toward_zero():
    """// on int32 follows C truncation on the CPU engine, as it does on the GPU."""
    from gswitch.engine.cpu_eval import _trunc_div

    a = np.array([7, -7, 7, -7], dtype=np.int32)
    b = np.array([2, 2, -2, -2], dtype=np.int32)
    assert _trunc_div(a, b).tolist() == [3, -3, -3, 3]


# ---------------------------------------------------------------------- lowering
def test_lower_field_load_and_weight():
    """Field loads, weights and sums lower to the skeleton's accessors."""
    assert lower_expr(ex.FieldLoad("dist", "src", "float32")) == "s.f_dist"  # loaded once
    assert lower_expr(ex.FieldLoad("dist", "dst", "float32")) == "gs_ld(gs.F_dist + u)"
    assert lower_expr(ex.EdgeWeight()) == "gs_w"
    text = lower_expr(ex.FieldLoad("dist", "src", "float32") + ex.EdgeWeight())
    assert "s.f_dist" in text and "gs_w" in text and " + " in text


def test_lower_constants():
    """Infinities, floats and typed integers lower to valid CUDA literals."""
    assert lower_expr(ex.Const(float("inf"), "float32")) == "__int_as_float(0x7f800000)"
    assert lower_expr(ex.Const(float("-inf"), "float32")) == "(-__int_as_float(0x7f800000))"
    assert lower_expr(ex.Const(2.0, "float32")) == "2.0f"
    assert lower_expr(ex.Const(2.0, "float64")) == "2.0"
    assert lower_expr(ex.Const(5, "int64")) == "5LL"
    assert lower_expr(ex.Const(5, "uint32")) == "5u"
    assert lower_expr(ex.Const(True, "bool")) == "true"


def test_lower_select_min_compare_param():
    """where(), minimum(), comparisons and params lower to ?:, gs_min and gs.P_."""
    x = ex.FieldLoad("w", "src", "float32")
    text = lower_expr(gs.where(x > ex.ParamRef("cut", "float32"), gs.minimum(x, 1.0), 0.0))
    assert " ? " in text and " : " in text
    assert "gs_min<float>" in text
    assert "gs.P_cut" in text
    assert " > " in text
    assert lower_expr(ex.Cast(x, "int32")).startswith("((int)(")
    assert lower_expr(ex.Degree("src", "out")) == "(__ldg(gs.row + v + 1) - __ldg(gs.row + v))"


def test_generate_source_for_custom_algorithm():
    """The composed source of widest path uses the atomic max and the generated state."""
    gen = generate_source(_widest_spec(), gs.Config(), weighted=True)
    assert "gs_atomic_max(gs.F_width + u" in gen.source
    assert "float* F_width;" in gen.source
    assert "#define GS_WEIGHTED 1" in gen.source
    assert gen.source.startswith("// gswitch ")
    assert "widest" in gen.description
    # deterministic
    assert generate_source(_widest_spec(), gs.Config(), weighted=True).key == gen.key


def test_generate_source_atomic_free_plain_variant():
    """Topology driving with atomic_free adds the non-atomic operator variant."""
    cfg = gs.Config({"driving": "topology", "driving.atomic_free": True})
    gen = generate_source(_widest_spec(), cfg, weighted=False)
    assert "gs_edge_op_plain" in gen.source
    assert "#define GS_ATOMIC_FREE 1" in gen.source
    assert "#define GS_WEIGHTED 0" in gen.source


def test_l2_prefetch_prefetches_each_updated_field_a_line_ahead():
    """l2_prefetch: guarded prefetches per updated field, the 128-byte line after or before
    in that field's element size; without it the switch is compiled out."""
    from gswitch.testing.user_algorithms import USER_ALGORITHMS

    by_name = {u.name: u for u in USER_ALGORITHMS}
    on = generate_source(by_name["hops64"], gs.Config({"l2_prefetch": True}), False).source
    assert "#define GS_L2_PREFETCH 1" in on
    assert "if ((u & 15) == 0 && u + 16 < gs.n) gs_prefetch_l2(gs.F_depth + u + 16);" in on
    assert "if ((u & 15) == 15 && u >= 16) gs_prefetch_l2(gs.F_depth + u - 16);" in on
    widest = generate_source(_widest_spec(), gs.Config({"l2_prefetch": True}), True).source
    assert "if ((u & 31) == 0 && u + 32 < gs.n) gs_prefetch_l2(gs.F_width + u + 32);" in widest
    off = generate_source(by_name["hops64"], gs.Config(), False)
    assert "#define GS_L2_PREFETCH 0" in off.source
    assert off.key != generate_source(by_name["hops64"], gs.Config({"l2_prefetch": True}),
                                      False).key
    raw = generate_source(_raw_bfs_spec([]), gs.Config({"l2_prefetch": True}), False).source
    start = raw.index("void gs_prefetch_node(")
    assert "(void)u;" in raw[start:raw.index("}", start)]  # a raw operator names no field


def test_module_reads_weights_only_when_the_operator_does():
    """An operator that reads no weight compiles to one module on weighted and unweighted
    graphs; one that reads weights (expression or raw) keeps GS_WEIGHTED from the graph."""
    from gswitch.codegen import reads_weights

    reg = gs.plugins.get_registry()
    for name in ("bfs", "cc", "pagerank"):
        spec = reg.algorithm(name)
        assert not reads_weights(spec)
        assert (generate_source(spec, gs.Config(), True).key
                == generate_source(spec, gs.Config(), False).key)
    for spec in (reg.algorithm("sssp"), _widest_spec()):
        assert reads_weights(spec)
        weighted = generate_source(spec, gs.Config(), True)
        assert "#define GS_WEIGHTED 1" in weighted.source
        assert weighted.key != generate_source(spec, gs.Config(), False).key
    raw = _raw_bfs_spec([])
    assert not reads_weights(raw)
    assert "#define GS_WEIGHTED 0" in generate_source(raw, gs.Config(), True).source
    heavy = RAW_CUDA.replace("+ 1;", "+ (int)gs_weight(e);")
    assert heavy != RAW_CUDA
    assert reads_weights(_raw_bfs_spec([], heavy))


# ---------------------------------------------------------------------- raw operators
RAW_CUDA = """  // raw relax: integer hop counts with an explicit atomicMin
  const int cand = gs.F_hops[v] + 1;
  const int old = atomicMin(gs.F_hops + u, cand);
  return cand < old;"""


def _raw_bfs_spec(calls, cuda_body=RAW_CUDA):
    def relax_numpy(fields, src, dst, weight, params):
        calls.append(src.size)
        hops = fields["hops"]
        cand = hops[src] + 1
        before = hops.copy()
        np.minimum.at(hops, dst, cand)
        return hops < before

    @gs.algorithm(name="rawbfs")
    class RawBFS:
        """BFS written with a raw edge operator."""

        hops = gs.NodeField("int32", init=gs.INF, at_source=0)
        start = gs.from_source()
        relax = gs.raw_edge_op(cuda_body, relax_numpy, "min")

    return RawBFS


def test_raw_edge_op_runs_numpy_impl_on_cpu(random_graph):
    """The CPU engine runs a raw operator's numpy_impl and reaches scipy's BFS depths."""
    calls = []
    spec = _raw_bfs_spec(calls)
    assert spec.edge.raw is not None and spec.edge.activating == [ex.REDUCTIONS["min"]]
    r = gs.run(spec, random_graph, source=21, backend="cpu")
    assert calls, "numpy_impl was never called"
    d = csgraph.shortest_path(random_graph.to_scipy(), unweighted=True, indices=21)
    got = r.fields["hops"].astype(float)
    reached = np.isfinite(d)
    assert d[reached].max() >= 3 and not reached.all()
    np.testing.assert_array_equal(got[reached], d[reached])
    assert (r.fields["hops"][~reached] >= 2**30).all()


def test_raw_edge_op_body_in_generated_source():
    """The raw CUDA body is pasted verbatim into the edge operator of the generated source."""
    gen = generate_source(_raw_bfs_spec([]), gs.Config(), weighted=False)
    assert RAW_CUDA in gen.source
    assert "raw CUDA operator, reduction=min" in _raw_bfs_spec([]).describe()


def test_raw_edge_op_rejects_exchange_and_atomic_free():
    """raw_edge_op refuses non-commutative reductions; atomic_free refuses raw operators."""
    with pytest.raises(gs.AlgorithmError, match="min, max, add or or"):
        gs.raw_edge_op(RAW_CUDA, lambda *a: None, "exchange")
    cfg = gs.Config({"driving": "topology", "driving.atomic_free": True})
    g = gs.Graph.from_edges([0], [1])
    with pytest.raises(gs.InvalidConfig, match="raw CUDA operator"):
        gs.run(_raw_bfs_spec([]), g, source=0, backend="cpu", config=cfg)


def test_xor_and_shifts_type_like_the_other_bit_operators():
    """``^``, ``<<`` and ``>>`` keep an integer operand's type, lower to C's operators
    and refuse floats; a literal beyond int32 with nothing to follow becomes int64."""
    x = ex.FieldLoad("h", "self", "uint32")
    for e, op in ((x ^ 7, "^"), (x << 3, "<<"), (x >> 16, ">>"), (5 ^ x, "^")):
        assert e.dtype == "uint32" and f" {op} " in lower_expr(e)
    assert "16u" in lower_expr(x >> 16)
    with pytest.raises(gs.AlgorithmError, match="'<<' needs integer operands"):
        _ = ex.FieldLoad("f", "self", "float32") << 1
    with pytest.raises(gs.AlgorithmError, match="'\\^' needs integer or bool"):
        _ = ex.FieldLoad("f", "self", "float32") ^ 1
    big = gs.where(ex.FieldLoad("b", "self", "int32").eq(1), 2**32, 1)
    assert big.dtype == "int64" and ex._lift(7).dtype == "int32"
