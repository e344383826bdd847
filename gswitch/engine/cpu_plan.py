"""Compiled expressions for the CPU engine: a traced tree becomes nested closures, once.

:func:`gswitch.engine.cpu_eval.evaluate` runs an operator's expressions on every
statement of every step, most of them on a few nodes when the graph is small, where
walking the tree and deciding each node's conversions again costs more than the NumPy
work. :func:`root` compiles a tree once per set of shared subexpressions (the memo of
:class:`~gswitch.engine.cpu_env.Env`, fixed per operator) into closures that took those
decisions ahead: which operands need converting, constants converted once, which nodes
keep their value (``Env.memo``, ``Env.run_cache``), scalar arithmetic by NumPy's scalar
operators. A plan reads nothing of a graph or a run but through the Env it is given,
and is keyed by the expression objects (hashed by identity), which hold no array.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import expr as ex
from ..errors import AlgorithmError
from .cpu_env import ALL, Env

__all__ = ["ALL", "needs_quiet", "node_index", "plan", "quiet", "reads", "root"]

_NP = {d: np.dtype(d) for d in ex.DTYPES}
ndarray = np.ndarray  # a global, not an attribute lookup, in the plans below

_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide,
           "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
           "<<": np.left_shift, ">>": np.right_shift, "min": np.minimum, "max": np.maximum}
#: NumPy's scalar arithmetic on two scalars of one dtype gives what the ufunc gives, at a
#: tenth of its cost (a ufunc makes arrays of its scalar operands)
_SCALAR_BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul,
                  "/": operator.truediv, "&": operator.and_, "|": operator.or_,
                  "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift}
_COMPARE = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
            "==": np.equal, "!=": np.not_equal}
#: the comparisons of two NumPy scalars of one dtype, by their scalar operators (a
#: ``np.bool_``, as the ufunc gives, at a fifth of its cost)
_SCALAR_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt,
                   ">=": operator.ge, "==": operator.eq, "!=": operator.ne}

LEAVES = (ex.Const, ex.ParamRef, ex.FieldLoad, ex.EdgeWeight, ex.NodeId, ex.Degree,
          ex.Iteration, ex.NumNodes, ex.StmtValue, ex.CommonNeighbours, ex.LabelFrequency)
#: leaves whose plan makes a value of exactly their dtype
_EXACT_LEAVES = (ex.Const, ex.ParamRef, ex.NodeId, ex.Iteration, ex.NumNodes)
_SCALAR_LEAVES = (ex.Const, ex.ParamRef, ex.Iteration, ex.NumNodes)
_STEP_DEPENDENT = (ex.FieldLoad, ex.FieldAt, ex.StmtValue, ex.Iteration, ex.StepTotalRef,
                   ex.EdgeWeight, ex.LabelFrequency)
#: Arrays of fewer elements are not written in place: passing ``out=`` costs more than a
#: small array (in place pays where a new array would be freshly paged in)
_IN_PLACE = 1 << 12

#: A compiled expression: the value of its tree in an Env and whether it is a new array
#: that only this use holds, which the caller may then write its own result into (a
#: chain of operations on every node otherwise allocates an array per operation)
Plan = Callable[["Env"], tuple[Any, bool]]
_Key = tuple[ex.Expr, frozenset]
#: (expression, shared subexpressions) -> its plan, and its root (what evaluate runs).
#: Several threads may compile one tree at once; each gets an equivalent plan.
_PLANS: dict[_Key, Plan] = {}
_ROOTS: dict[_Key, Callable[[Env], Any]] = {}
#: plans kept at most (a process that traces algorithms without end starts over)
_MAX_PLANS = 1 << 16
_READS: dict[ex.Expr, frozenset[str]] = {}
_INVARIANT: dict[ex.Expr, bool] = {}


def quiet() -> Any:
    """The floating-point error state every evaluation runs in (overflow, division by
    zero and invalid operations give inf and NaN, as on the GPU, without warnings).

    A caller that evaluates several trees may enter it once and set ``Env.quiet``, so
    that each evaluation need not (entering it costs twice a small ufunc).
    """
    return np.errstate(divide="ignore", invalid="ignore", over="ignore")


_QUIET: dict[tuple[Any, ...], bool] = {}


def needs_quiet(statements: list[Any]) -> bool:
    """Whether evaluating ``statements`` and applying them may raise a floating-point
    warning that :func:`quiet` silences: they hold a float value or field, a division,
    a conversion, arithmetic on NumPy scalars (which warns on integer overflow) or an
    intrinsic. Integer array operations, comparisons and reductions never warn, so an
    operator of only those (connected components' hooks) need not enter it.
    """
    key = tuple(statements)
    hit = _QUIET.get(key)
    if hit is None:
        if len(_QUIET) > _MAX_PLANS:
            _QUIET.clear()
        hit = _QUIET[key] = any(_may_warn(st) for st in statements)
    return hit


def _may_warn(st: Any) -> bool:
    if _NP[getattr(st, "dtype", "float32")].kind == "f":
        return True
    for root_expr in (st.value, getattr(st, "at", None), getattr(st, "activate_above", None)):
        if root_expr is None:
            continue
        for x in ex.walk(root_expr):
            if _NP[x.dtype].kind == "f" or isinstance(x, (ex.Cast, ex.CommonNeighbours,
                                                          ex.LabelFrequency)):
                return True
            if isinstance(x, ex.BinOp) and (x.op in ("/", "//") or _scalar_only(x)):
                return True
    return False


def root(e: ex.Expr, shared: frozenset) -> Callable[[Env], Any]:
    """The compiled evaluation of ``e`` in an Env whose ``shared`` is ``shared``: a leaf
    is read as it is; a compound tree runs in :func:`quiet` unless its caller has
    entered it (``Env.quiet``).
    """
    key = (e, shared)
    hit = _ROOTS.get(key)
    if hit is not None:
        return hit
    p = plan(e, shared)
    if isinstance(e, LEAVES):
        def evaluation(env: Env) -> Any:
            return p(env)[0]
    else:
        def evaluation(env: Env) -> Any:
            if env.quiet:
                return p(env)[0]
            with quiet():
                return p(env)[0]
    if len(_ROOTS) > _MAX_PLANS:
        _ROOTS.clear()
    _ROOTS[key] = evaluation
    return evaluation


def plan(e: ex.Expr, shared: frozenset) -> Plan:
    """The plan of ``e`` (see :data:`Plan`) among the ``shared`` subexpressions."""
    key = (e, shared)
    hit = _PLANS.get(key)
    if hit is None:
        if len(_PLANS) > _MAX_PLANS:
            _PLANS.clear()
        hit = _PLANS[key] = _leaf(e) if isinstance(e, LEAVES) else _kept(
            e, shared, _body(e, shared))
    return hit


def reads(e: ex.Expr) -> frozenset[str]:
    """The fields ``e`` reads, directly or indirectly."""
    if e not in _READS:
        _READS[e] = frozenset(x.field for x in ex.walk(e)
                              if isinstance(x, (ex.FieldLoad, ex.FieldAt,
                                                ex.LabelFrequency)))
    return _READS[e]


def _invariant(e: ex.Expr) -> bool:
    """Whether ``e`` has the same value every step of a run (see ``Env.run_cache``)."""
    if e not in _INVARIANT:
        _INVARIANT[e] = not any(isinstance(x, _STEP_DEPENDENT) for x in ex.walk(e))
    return _INVARIANT[e]


def _kept(e: ex.Expr, shared: frozenset, body: Plan) -> Plan:
    """``body`` with the values it may keep: a step-invariant value (``Env.run_cache``)
    for the run, over every node or, reading only constants, parameters and the node
    count, anywhere; a shared subexpression until a field it reads is written
    (``Env.memo``).
    """
    inner = body
    if e in shared:
        fields_read = reads(e)

        def memo(env: Env) -> tuple[Any, bool]:
            hit = env.memo.get(e)
            if hit is None:
                hit = env.memo[e] = (body(env)[0], fields_read)
            return hit[0], False

        inner = memo
    if not _invariant(e):
        return inner
    return _run_kept(e, e, body, inner)


def _run_kept(e: ex.Expr, key: Any, body: Plan, inner: Plan) -> Plan:
    """``body``'s value kept under ``key`` in ``Env.run_cache`` for the run where it is
    the same everywhere ``e`` (step-invariant) is evaluated: a scalar in any Env that
    keeps them, an array over every node in one whose ids cover every node
    (``Env.whole_cache``); ``inner`` elsewhere.
    """
    if _scalar_only(e):  # a scalar of the run's parameters: the same for every role
        def invariant_scalar(env: Env) -> tuple[Any, bool]:
            cache = env.run_cache
            if cache is None:
                return inner(env)
            hit = cache.get(key, cache)
            if hit is cache:
                hit = cache[key] = body(env)[0]
            return hit, False

        return invariant_scalar

    def invariant(env: Env) -> tuple[Any, bool]:
        cache = env.whole_cache
        if cache is not None:
            hit = cache.get(key, cache)
            if hit is cache:
                hit = cache[key] = body(env)[0]
            return hit, False
        return inner(env)

    return invariant


def _leaf(e: ex.Expr) -> Plan:
    if isinstance(e, ex.Const):
        value = (_NP[e.dtype].type(e.value), False)
        return lambda env: value
    if isinstance(e, ex.ParamRef):
        name, scalar = e.name, _NP[e.dtype].type
        return lambda env: (scalar(env.params[name]), False)
    if isinstance(e, ex.FieldLoad):
        field, role = e.field, e.node
        return lambda env: (env.load(field, role), False)
    if isinstance(e, ex.StmtValue):
        index = e.index
        return lambda env: (env.values[index], False)
    if isinstance(e, ex.NumNodes):
        return lambda env: (np.int32(env.graph.n_nodes), False)
    if isinstance(e, ex.Iteration):
        def iteration(env: Env) -> tuple[Any, bool]:
            it = env.iteration
            return (_STEPS[it] if it < _KEPT_STEPS else np.int32(it)), False

        return iteration
    if isinstance(e, ex.Degree):
        kind, role = e.kind, e.node
        return lambda env: (env.degree(kind, role), False)
    if isinstance(e, ex.NodeId):
        role = e.node
        return lambda env: (env.node_ids(role), False)
    if isinstance(e, ex.EdgeWeight):
        one = (np.float32(1.0), False)
        return lambda env: one if env.weights is None else (env.weights, False)
    return lambda env: (_intrinsic(e, env), False)


#: the first step numbers as int32 scalars, made once (a conversion costs more than a
#: comparison of two of them)
_KEPT_STEPS = 1 << 10
_STEPS = tuple(np.int32(i) for i in range(_KEPT_STEPS))


def _intrinsic(e: ex.Expr, env: Env) -> Any:
    if isinstance(e, ex.CommonNeighbours):
        from .cpu_intrinsics import common_neighbours

        return common_neighbours(env.graph, env.node_ids("src"), env.node_ids("dst"),
                                 e.among)
    if isinstance(e, ex.LabelFrequency):
        # a step's statements often read it twice (the mode and the own label's count):
        # kept until its field is written
        hit = env.memo.get(e)
        if hit is None:
            from .cpu_intrinsics import label_frequency

            who, row = ("src", "dst") if e.row == "dst" else ("dst", "src")
            hit = env.memo[e] = (label_frequency(env.graph, env.fields[e.field],
                                                 env.node_ids(who), env.node_ids(row)),
                                 reads(e))
        return hit[0]
    raise AssertionError(f"cannot evaluate {type(e).__name__}")


def _typed(e: ex.Expr, dt: np.dtype, shared: frozenset) -> Plan:
    """The plan of ``e`` with its value as dtype ``dt`` (a conversion is a new array):
    the plan itself where ``e`` already gives ``dt``, a constant converted once, a
    scalar leaf read and converted in one step, a step-invariant value converted once
    per run where its value is kept (:func:`_kept`).
    """
    p = plan(e, shared)
    if _NP[e.dtype] == dt and _gives_own_dtype(e):
        return p
    if isinstance(e, ex.Const):
        value = (dt.type(p(None)[0]), False)
        return lambda env: value
    convert = dt.type
    if isinstance(e, (ex.ParamRef, ex.NumNodes)):
        if isinstance(e, ex.ParamRef):  # as its own dtype first, then as ``dt``
            name, scalar = e.name, _NP[e.dtype].type

            def converted(env: Env) -> tuple[Any, bool]:
                return convert(scalar(env.params[name])), False
        else:
            def converted(env: Env) -> tuple[Any, bool]:
                return convert(np.int32(env.graph.n_nodes)), False

        # a parameter (not a step total) or the node count: converted once per run
        return _run_kept(e, (e, dt), converted, converted) if _invariant(e) else converted
    if isinstance(e, ex.FieldLoad):  # an array: read and converted in one closure
        field, role = e.field, e.node

        def typed_load(env: Env) -> tuple[Any, bool]:
            v = env.load(field, role)
            if v.dtype != dt:
                return v.astype(dt), True
            return v, False

        return typed_load

    def typed(env: Env) -> tuple[Any, bool]:
        v, own = p(env)
        if isinstance(v, np.ndarray):
            if v.dtype != dt:
                return v.astype(dt), True
            return v, own
        if type(v) is convert:
            return v, False
        return convert(v), False

    if not _invariant(e):
        return typed
    return _run_kept(e, (e, dt), typed, typed)


def _array_operand(e: ex.Expr, dt: np.dtype, typed: Plan) -> Plan:
    """``typed`` (``e``'s plan as dtype ``dt``) for an operand of an operation over
    arrays: where ``e`` is a constant or a step-invariant scalar, its value as a
    read-only array of no dimensions (kept for the run), which a ufunc takes at two
    thirds of the cost of a NumPy scalar and with the same result.
    """
    if not _scalar_only(e) or not _invariant(e):
        return typed

    def as_array(env: Env) -> tuple[Any, bool]:
        v = np.array(typed(env)[0], dtype=dt)
        v.flags.writeable = False
        return v, False

    if isinstance(e, ex.Const):
        value = as_array(None)  # type: ignore[arg-type] - a constant reads no Env
        return lambda env: value
    return _run_kept(e, (e, dt, ndarray), as_array, typed)


def _gives_own_dtype(e: ex.Expr) -> bool:
    """Whether ``e``'s plan always gives ``e.dtype`` (an array or a NumPy scalar of it)."""
    if isinstance(e, ex.UnaryOp):
        return e.op == "not" or _gives_own_dtype(e.a)
    return isinstance(e, (ex.BinOp, ex.Cast, ex.Compare, ex.Select) + _EXACT_LEAVES)


def _into(x: Any, own_x: bool, y: Any, own_y: bool) -> np.ndarray | None:
    """An operand array (both have the result's dtype) of the result's shape that this
    use holds alone (``own_x``, ``own_y``), to write the result into; ``None`` where
    there is none or it is small.
    """
    if own_x and x.size >= _IN_PLACE and _holds(x, y):
        return x
    if own_y and y.size >= _IN_PLACE and _holds(y, x):
        return y
    return None


def _holds(x: np.ndarray, y: Any) -> bool:
    """Whether ``x``'s shape is that of ``x`` and ``y`` broadcast together."""
    sy = np.shape(y)
    return sy == () or sy == x.shape or np.broadcast_shapes(x.shape, sy) == x.shape


def _scalar_only(e: ex.Expr) -> bool:
    """Whether ``e``'s value is a NumPy scalar wherever it is evaluated: it reads only
    constants, parameters, the step number and the node count.
    """
    return all(isinstance(x, _SCALAR_LEAVES) or not isinstance(x, LEAVES) and not
               isinstance(x, ex.FieldAt) for x in ex.walk(e))


def _body(e: ex.Expr, shared: frozenset) -> Plan:
    """The plan of a compound node, without what :func:`_kept` adds."""
    if isinstance(e, ex.FieldAt):
        at, field = plan(e.at, shared), e.field

        def field_at(env: Env) -> tuple[Any, bool]:
            # take: faster than indexing, and several times so with int32 ids
            r = env.fields[field].take(node_index(e, at(env)[0], env.graph.n_nodes))
            return r, isinstance(r, ndarray) and r.ndim > 0

        return field_at
    if isinstance(e, ex.Cast):
        a, dt = plan(e.a, shared), _NP[e.dtype]

        def cast(env: Env) -> tuple[Any, bool]:
            v, own = a(env)
            if not isinstance(v, np.ndarray):
                v = np.asarray(v)
            if v.dtype == dt:
                return v, own
            return v.astype(dt), v.ndim > 0

        return cast
    if isinstance(e, ex.BinOp):
        return _binary(e, shared)
    if isinstance(e, ex.UnaryOp):
        return _unary(e, shared)
    if isinstance(e, ex.Compare):
        dt = _NP[ex._promote(e.a.dtype, e.b.dtype)]
        a, b, compare = _typed(e.a, dt, shared), _typed(e.b, dt, shared), _COMPARE[e.op]
        if _scalar_only(e):  # two NumPy scalars (``p.iteration < 1``)
            scalar_compare = _SCALAR_COMPARE[e.op]

            def scalar_comparison(env: Env) -> tuple[Any, bool]:
                return scalar_compare(a(env)[0], b(env)[0]), False

            return scalar_comparison

        a, b = _array_operand(e.a, dt, a), _array_operand(e.b, dt, b)

        def comparison(env: Env) -> tuple[Any, bool]:
            r = compare(a(env)[0], b(env)[0])
            return r, isinstance(r, ndarray) and r.ndim > 0

        return comparison
    if isinstance(e, ex.Select):
        dt = _NP[e.dtype]
        cond, a, b = plan(e.cond, shared), _typed(e.a, dt, shared), _typed(e.b, dt, shared)
        if _scalar_only(e.cond):
            # one condition for every node (``p.iteration < 1``): only the branch it picks
            # is evaluated, and its value (of dtype ``dt``) is the select's, a scalar where
            # that branch is one
            def select_branch(env: Env) -> tuple[Any, bool]:
                return a(env) if cond(env)[0] else b(env)

            return select_branch

        a, b = _array_operand(e.a, dt, a), _array_operand(e.b, dt, b)

        def select(env: Env) -> tuple[Any, bool]:
            r = np.where(cond(env)[0], a(env)[0], b(env)[0])
            return r, isinstance(r, ndarray) and r.ndim > 0

        return select
    raise AssertionError(f"cannot evaluate {type(e).__name__}")


def _binary(e: ex.BinOp, shared: frozenset) -> Plan:
    dt = _NP[e.dtype]
    a, b = _typed(e.a, dt, shared), _typed(e.b, dt, shared)
    if e.op == "//":
        def floor_divide(env: Env) -> tuple[Any, bool]:
            x, y = a(env)[0], b(env)[0]
            r = np.floor_divide(x, y) if dt.kind == "f" else _trunc_div(x, y)
            return r, isinstance(r, ndarray) and r.ndim > 0

        return floor_divide
    ufunc = _BINARY.get(e.op)
    if ufunc is None:
        raise AssertionError(f"unknown operator {e.op}")
    if _scalar_only(e):  # scalars: no array of its own to write into
        op = _SCALAR_BINARY.get(e.op) if dt.kind in "iuf" else None
        if op is not None:
            def scalar_op(env: Env) -> tuple[Any, bool]:
                return op(a(env)[0], b(env)[0]), False

            return scalar_op

        def scalar(env: Env) -> tuple[Any, bool]:
            return ufunc(a(env)[0], b(env)[0], dtype=dt), False

        return scalar

    # both operands have dtype ``dt``, so the ufunc's own loop for them is ``dt``'s
    a, b = _array_operand(e.a, dt, a), _array_operand(e.b, dt, b)

    def binary(env: Env) -> tuple[Any, bool]:
        x, own_x = a(env)
        y, own_y = b(env)
        if own_x and x.size >= _IN_PLACE or own_y and y.size >= _IN_PLACE:
            out = _into(x, own_x, y, own_y)
            if out is not None:
                return ufunc(x, y, out=out), True
        r = ufunc(x, y)
        return r, isinstance(r, ndarray) and r.ndim > 0

    return binary


def _unary(e: ex.UnaryOp, shared: frozenset) -> Plan:
    a = plan(e.a, shared)
    if e.op == "-":
        ufunc = np.negative
    elif e.op == "abs":
        ufunc = np.abs
    else:
        def logical_not(env: Env) -> tuple[Any, bool]:
            v, own = a(env)
            if own and v.dtype == np.bool_ and v.size >= _IN_PLACE:
                return np.logical_not(v, out=v), True
            r = np.logical_not(v)
            return r, isinstance(r, ndarray) and r.ndim > 0

        return logical_not

    def unary(env: Env) -> tuple[Any, bool]:
        v, own = a(env)
        if own and v.size >= _IN_PLACE:
            return ufunc(v, out=v), True
        r = ufunc(v)
        return r, isinstance(r, ndarray) and r.ndim > 0

    return unary


_UNSIGNED = {np.dtype(t): np.dtype(u) for t, u in (
    (np.int8, np.uint8), (np.int16, np.uint16), (np.int32, np.uint32), (np.int64, np.uint64),
    (np.uint8, np.uint8), (np.uint16, np.uint16), (np.uint32, np.uint32),
    (np.uint64, np.uint64))}
#: Index arrays up to this size are checked element by element in Python (cheaper than
#: a NumPy reduction on a handful of ids)
_FEW_IDS = 8


def node_index(e: ex.FieldAt | ex.Reduction, index: Any, n: int) -> np.ndarray:
    """``index`` as node ids, after checking that every one is in ``0..n-1``."""
    idx = np.asarray(index)
    size = idx.size
    if not size:
        return idx
    unsigned = _UNSIGNED.get(idx.dtype)
    if unsigned is not None:
        if size <= _FEW_IDS:
            if all(0 <= i < n for i in idx.ravel().tolist()):
                return idx
        elif int(np.maximum.reduce(idx.view(unsigned), axis=None)) < n:
            return idx  # one pass: a negative id is a large unsigned one
    elif int(idx.min()) >= 0 and int(idx.max()) < n:
        return idx
    bad = int(idx[(idx < 0) | (idx >= n)].ravel()[0])
    what = (f"{e.field}.at({ex.format_expr(e.at)})" if e.at is not None else e.field)
    raise AlgorithmError(f"{what} names node {bad}, outside the graph's ids 0..{n - 1}; "
                         "an index given to .at() must be a node id")


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # C semantics: integer division truncates toward zero
    q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
    return np.where((a < 0) ^ (b < 0), -q, q).astype(a.dtype)
