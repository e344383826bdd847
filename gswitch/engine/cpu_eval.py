"""Expression evaluation for the CPU engine: a traced operator expression to NumPy arrays.

An :class:`Env` names, per node role (``src``, ``dst``, ``self``), the node ids an
expression runs over; the value of every node of the tree is then one array with one
element per id (or a scalar for constants and parameters). A role may stand for every
node of the graph in id order (``ALL``): loads then read the field itself, with no
gather and no copy (a topology-driven step's node operator, a fast path's per-node
values). Such a value may be the field array itself, so a caller that writes fields
before it has used the value must copy it first (see :func:`unaliased`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import expr as ex
from ..errors import AlgorithmError
from ..graph import Graph

__all__ = ["ALL", "Env", "evaluate", "broadcast", "node_index", "quiet",
           "shared_subexpressions", "unaliased"]

_NP = {d: np.dtype(d) for d in ex.DTYPES}

#: The ids of a role that covers every node of the graph, in id order.
ALL = None


class Env:
    """Arrays an expression is evaluated against: ids per role and the edge weights."""

    def __init__(self, fields: dict[str, np.ndarray], ids: dict[str, np.ndarray | None],
                 weights: np.ndarray | None, length: int, params: dict[str, Any],
                 iteration: int, graph: Graph, degrees: dict[str, np.ndarray]) -> None:
        self.fields = fields
        self.ids = ids
        self.weights = weights
        self.length = length
        self.params = params
        self.iteration = iteration
        self.graph = graph
        self.degrees = degrees
        self.values: dict[int, np.ndarray] = {}
        #: values over every node of expressions that read no field, statement, weight,
        #: step number or step total (``n.out_degree < 1``): the same every step of a
        #: run, so the engine keeps them for the run (``None``: not kept)
        self.run_cache: dict[ex.Expr, Any] | None = None
        #: what the node operator's ``n.total(value)`` statements added up
        self.total = 0.0
        #: what ``n.total(value, into=name)`` statements added up, by StepTotal name
        self.sums: dict[str, float] = {}
        self._gathered: dict[tuple[str, str], np.ndarray] = {}
        self._ids32: dict[str, np.ndarray] = {}
        #: the value of each compound expression evaluated so far and the fields it reads:
        #: an operator's statements share subexpressions (``new`` in ``n.rank = new`` and
        #: ``n.total(abs(new - n.rank))``), evaluated once until a field they read is written
        self.memo: dict[ex.Expr, tuple[Any, frozenset[str]]] = {}
        #: the subexpressions to keep in ``memo`` (:func:`shared_subexpressions`)
        self.shared: frozenset[ex.Expr] = frozenset()
        #: whether the caller has entered :func:`quiet` for the evaluations in this Env
        self.quiet = False

    def load(self, field: str, role: str) -> np.ndarray:
        ids = self.ids[role]
        if ids is ALL:
            return self.fields[field]
        key = (field, role)
        if key not in self._gathered:
            self._gathered[key] = self.fields[field].take(ids)
        return self._gathered[key]

    def node_ids(self, role: str) -> np.ndarray:
        # once per role: an operator often reads e.src.id and e.dst.id several times,
        # and the engine's edge ids are intp, so each read would convert them again
        hit = self._ids32.get(role)
        if hit is None:
            ids = self.ids[role]
            hit = self._ids32[role] = (np.arange(self.graph.n_nodes, dtype=np.int32)
                                       if ids is ALL else ids.astype(np.int32, copy=False))
        return hit

    def seed_ids32(self, ids32: dict[str, np.ndarray]) -> None:
        """The int32 form of a role's ids, already at hand (read, never written)."""
        self._ids32.update(ids32)

    def degree(self, kind: str, role: str) -> np.ndarray:
        ids = self.ids[role]
        return self.degrees[kind] if ids is ALL else self.degrees[kind].take(ids)

    def invalidate(self, field: str) -> None:
        """Forget what was read of ``field``: a statement wrote it."""
        for key in [k for k in self._gathered if k[0] == field]:
            del self._gathered[key]
        for e in [e for e, (_, reads) in self.memo.items() if field in reads]:
            del self.memo[e]


def _const(value: Any, dtype: str) -> Any:
    return _NP[dtype].type(value)


_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide,
           "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
           "<<": np.left_shift, ">>": np.right_shift, "min": np.minimum, "max": np.maximum}
_SCALAR_BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
                  "&": operator.and_, "|": operator.or_, "^": operator.xor,
                  "<<": operator.lshift, ">>": operator.rshift}
_COMPARE = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
            "==": np.equal, "!=": np.not_equal}


_LEAVES = (ex.Const, ex.ParamRef, ex.FieldLoad, ex.EdgeWeight, ex.NodeId, ex.Degree,
           ex.Iteration, ex.NumNodes, ex.StmtValue, ex.CommonNeighbours, ex.LabelFrequency)
_READS: dict[ex.Expr, frozenset[str]] = {}
_STEP_DEPENDENT = (ex.FieldLoad, ex.FieldAt, ex.StmtValue, ex.Iteration, ex.StepTotalRef,
                   ex.EdgeWeight, ex.LabelFrequency)
_INVARIANT: dict[ex.Expr, bool] = {}


def _invariant(e: ex.Expr) -> bool:
    """Whether ``e`` has the same value every step of a run (see ``Env.run_cache``)."""
    if e not in _INVARIANT:
        _INVARIANT[e] = not any(isinstance(x, _STEP_DEPENDENT) for x in ex.walk(e))
    return _INVARIANT[e]
_SHARED: dict[tuple[Any, ...], frozenset[ex.Expr]] = {}


def _reads(e: ex.Expr) -> frozenset[str]:
    """The fields ``e`` reads, directly or indirectly."""
    if e not in _READS:
        _READS[e] = frozenset(x.field for x in ex.walk(e)
                              if isinstance(x, (ex.FieldLoad, ex.FieldAt,
                                                ex.LabelFrequency)))
    return _READS[e]


def shared_subexpressions(statements: list[Any]) -> frozenset[ex.Expr]:
    """The compound expressions that more than one place of ``statements`` uses (a
    traced ``new = ...`` that two statements read): an :class:`Env` given them evaluates
    each once until a field it reads is written.
    """
    key = tuple(statements)
    if key not in _SHARED:
        uses: dict[ex.Expr, int] = {}

        def visit(e: ex.Expr) -> None:
            uses[e] = uses.get(e, 0) + 1
            if uses[e] == 1:
                for c in e.children():
                    visit(c)

        for st in statements:
            for root in (st.value, getattr(st, "at", None), getattr(st, "activate_above", None)):
                if root is not None:
                    visit(root)
        _SHARED[key] = frozenset(e for e, k in uses.items()
                                 if k > 1 and not isinstance(e, _LEAVES))
    return _SHARED[key]


def evaluate(e: ex.Expr, env: Env) -> Any:
    """Evaluate an expression tree to a NumPy array (or scalar) of ``e.dtype``.

    The result may be shared, not copied (a field itself for a load over ``ALL``, the
    kept value of a shared subexpression): nothing may write to it. The tree is compiled
    once into closures (:func:`_root`), which later evaluations reuse.
    """
    root = _ROOTS.get(e)
    if root is None:
        root = _root(e)
    return root(env)


def quiet() -> Any:
    """The floating-point error state every evaluation runs in (overflow, division by
    zero and invalid operations give inf and NaN, as on the GPU, without warnings).

    A caller that evaluates several trees may enter it once and set ``Env.quiet``, so
    that each evaluation need not (entering it costs twice a small ufunc).
    """
    return np.errstate(divide="ignore", invalid="ignore", over="ignore")


#: A compiled expression: the value of its tree in an Env and whether it is a new array
#: that only this use holds, which the caller may then write its own result into (a
#: chain of operations on every node otherwise allocates an array per operation)
_Plan = Callable[[Env], tuple[Any, bool]]
#: expression -> its compiled plan, and its compiled root (what :func:`evaluate` runs).
#: Keyed by the expression objects (hashed by identity), which hold no graph or array;
#: several threads may compile one tree at once, and each gets an equivalent plan.
_PLANS: dict[ex.Expr, _Plan] = {}
_ROOTS: dict[ex.Expr, Callable[[Env], Any]] = {}


def _root(e: ex.Expr) -> Callable[[Env], Any]:
    """The compiled :func:`evaluate` of ``e``: a leaf is read as it is; a compound tree
    runs in :func:`quiet` unless its caller has entered it (``Env.quiet``).
    """
    plan = _plan(e)
    if isinstance(e, _LEAVES):
        def root(env: Env) -> Any:
            return plan(env)[0]
    else:
        def root(env: Env) -> Any:
            if env.quiet:
                return plan(env)[0]
            with quiet():
                return plan(env)[0]
    _ROOTS[e] = root
    return root


def _plan(e: ex.Expr) -> _Plan:
    plan = _PLANS.get(e)
    if plan is None:
        plan = _PLANS[e] = _leaf_plan(e) if isinstance(e, _LEAVES) else _kept(e, _body(e))
    return plan


def _kept(e: ex.Expr, body: _Plan) -> _Plan:
    """``body`` with the values it may keep: over every node, a step-invariant value
    (``Env.run_cache``) for the run; a shared subexpression (``Env.shared``) until a
    field it reads is written (``Env.memo``).
    """
    reads = _reads(e)

    def shared_or(env: Env) -> tuple[Any, bool]:
        if e not in env.shared:
            return body(env)
        hit = env.memo.get(e)
        if hit is None:
            hit = env.memo[e] = (body(env)[0], reads)
        return hit[0], False

    if not _invariant(e):
        return shared_or

    def invariant(env: Env) -> tuple[Any, bool]:
        cache = env.run_cache
        if cache is not None and env.ids.get("self", 0) is ALL:
            hit = cache.get(e, cache)
            if hit is cache:
                hit = cache[e] = body(env)[0]
            return hit, False
        return shared_or(env)

    return invariant


def _leaf_plan(e: ex.Expr) -> _Plan:
    if isinstance(e, ex.Const):
        value = (_const(e.value, e.dtype), False)
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
        return lambda env: (np.int32(env.iteration), False)
    if isinstance(e, ex.Degree):
        kind, role = e.kind, e.node
        return lambda env: (env.degree(kind, role), False)
    if isinstance(e, ex.NodeId):
        role = e.node
        return lambda env: (env.node_ids(role), False)
    return lambda env: (_leaf(e, env), False)


def _leaf(e: ex.Expr, env: Env) -> Any:
    if isinstance(e, ex.EdgeWeight):
        if env.weights is None:
            return np.float32(1.0)
        return env.weights
    if isinstance(e, ex.NodeId):
        return env.node_ids(e.node)
    if isinstance(e, ex.Degree):
        return env.degree(e.kind, e.node)
    if isinstance(e, ex.Iteration):
        return np.int32(env.iteration)
    if isinstance(e, ex.NumNodes):
        return np.int32(env.graph.n_nodes)
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
                                 _reads(e))
        return hit[0]
    raise AssertionError(f"cannot evaluate {type(e).__name__}")


def _typed(e: ex.Expr, dt: np.dtype) -> _Plan:
    """The plan of ``e`` with its value as dtype ``dt`` (a conversion is a new array):
    the plan itself where ``e`` already gives ``dt``, a constant converted once.
    """
    plan = _plan(e)
    if _NP[e.dtype] == dt and _gives_own_dtype(e):
        return plan
    if isinstance(e, ex.Const):
        value = (dt.type(plan(None)[0]), False)
        return lambda env: value
    convert = dt.type

    def typed(env: Env) -> tuple[Any, bool]:
        v, own = plan(env)
        if isinstance(v, np.ndarray):
            if v.dtype != dt:
                return v.astype(dt), True
            return v, own
        if type(v) is convert:
            return v, False
        return convert(v), False

    return typed


def _gives_own_dtype(e: ex.Expr) -> bool:
    """Whether ``e``'s value always has ``e.dtype`` (an array or a NumPy scalar of it)."""
    if isinstance(e, ex.UnaryOp):
        return e.op == "not" or _gives_own_dtype(e.a)
    return isinstance(e, (ex.BinOp, ex.Cast, ex.Compare, ex.Select, ex.Const))


def _array(r: Any) -> bool:
    """Whether ``r`` is an array with elements (not a scalar or 0-d array)."""
    return isinstance(r, np.ndarray) and r.ndim > 0


#: Arrays of fewer elements are not written in place: passing ``out=`` costs more than a
#: small array (in place pays where a new array would be freshly paged in)
_IN_PLACE = 1 << 12


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
    return all(isinstance(x, _SCALAR_LEAVES) or not isinstance(x, _LEAVES) and not
               isinstance(x, ex.FieldAt) for x in ex.walk(e))


_SCALAR_LEAVES = (ex.Const, ex.ParamRef, ex.Iteration, ex.NumNodes)


def _body(e: ex.Expr) -> _Plan:
    """The plan of a compound node, without what :func:`_kept` adds."""
    if isinstance(e, ex.FieldAt):
        at, field = _plan(e.at), e.field

        def field_at(env: Env) -> tuple[Any, bool]:
            # take: faster than indexing, and several times so with int32 ids
            r = env.fields[field].take(node_index(e, at(env)[0], env.graph.n_nodes))
            return r, _array(r)

        return field_at
    if isinstance(e, ex.Cast):
        a, dt = _plan(e.a), _NP[e.dtype]

        def cast(env: Env) -> tuple[Any, bool]:
            v, own = a(env)
            if not isinstance(v, np.ndarray):
                v = np.asarray(v)
            if v.dtype == dt:
                return v, own
            return v.astype(dt), v.ndim > 0

        return cast
    if isinstance(e, ex.BinOp):
        return _binary(e)
    if isinstance(e, ex.UnaryOp):
        return _unary(e)
    if isinstance(e, ex.Compare):
        dt = _NP[ex._promote(e.a.dtype, e.b.dtype)]
        a, b, compare = _typed(e.a, dt), _typed(e.b, dt), _COMPARE[e.op]

        def comparison(env: Env) -> tuple[Any, bool]:
            r = compare(a(env)[0], b(env)[0])
            return r, _array(r)

        return comparison
    if isinstance(e, ex.Select):
        dt = _NP[e.dtype]
        cond, a, b = _plan(e.cond), _typed(e.a, dt), _typed(e.b, dt)

        def select(env: Env) -> tuple[Any, bool]:
            r = np.where(cond(env)[0], a(env)[0], b(env)[0])
            return r, _array(r)

        return select
    raise AssertionError(f"cannot evaluate {type(e).__name__}")


def _binary(e: ex.BinOp) -> _Plan:
    dt = _NP[e.dtype]
    a, b = _typed(e.a, dt), _typed(e.b, dt)
    if e.op == "//":
        def floor_divide(env: Env) -> tuple[Any, bool]:
            x, y = a(env)[0], b(env)[0]
            r = np.floor_divide(x, y) if dt.kind == "f" else _trunc_div(x, y)
            return r, _array(r)

        return floor_divide
    ufunc = _BINARY.get(e.op)
    if ufunc is None:
        raise AssertionError(f"unknown operator {e.op}")
    if _scalar_only(e):  # scalars: no array of its own to write into
        op = _SCALAR_BINARY.get(e.op) if dt.kind in "iuf" else None
        if op is not None:
            # NumPy's scalar arithmetic on two scalars of ``dt``: the same result as the
            # ufunc, at a tenth of its cost (a ufunc makes arrays of its scalar operands)
            def scalar_op(env: Env) -> tuple[Any, bool]:
                return op(a(env)[0], b(env)[0]), False

            return scalar_op

        def scalar(env: Env) -> tuple[Any, bool]:
            return ufunc(a(env)[0], b(env)[0], dtype=dt), False

        return scalar

    # both operands have dtype ``dt``, so the ufunc's own loop for them is ``dt``'s
    def binary(env: Env) -> tuple[Any, bool]:
        x, own_x = a(env)
        y, own_y = b(env)
        if own_x or own_y:
            out = _into(x, own_x, y, own_y)
            if out is not None:
                return ufunc(x, y, out=out), True
        r = ufunc(x, y)
        return r, _array(r)

    return binary


def _unary(e: ex.UnaryOp) -> _Plan:
    a = _plan(e.a)
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
            return r, _array(r)

        return logical_not

    def unary(env: Env) -> tuple[Any, bool]:
        v, own = a(env)
        if own and v.size >= _IN_PLACE:
            return ufunc(v, out=v), True
        r = ufunc(v)
        return r, _array(r)

    return unary


_UNSIGNED = {np.dtype(t): np.dtype(u) for t, u in ((np.int8, np.uint8), (np.int16, np.uint16),
                                                  (np.int32, np.uint32), (np.int64, np.uint64),
                                                  (np.uint8, np.uint8), (np.uint16, np.uint16),
                                                  (np.uint32, np.uint32), (np.uint64, np.uint64))}


def node_index(e: ex.FieldAt | ex.Reduction, index: Any, n: int) -> np.ndarray:
    """``index`` as node ids, after checking that every one is in ``0..n-1``."""
    idx = np.asarray(index)
    if not idx.size:
        return idx
    unsigned = _UNSIGNED.get(idx.dtype)
    if unsigned is not None:  # one pass: a negative id is a large unsigned one
        if int(np.maximum.reduce(idx.view(unsigned), axis=None)) < n:
            return idx
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


def broadcast(v: Any, length: int, dtype: str) -> np.ndarray:
    """``v`` as a ``length`` array of ``dtype`` (a scalar repeated)."""
    dt = _NP[dtype]
    if isinstance(v, np.ndarray) and v.ndim:
        return v.astype(dt, copy=False)
    arr = np.empty(length, dtype=dt)  # np.full costs three times as much on few nodes
    arr.fill(np.asarray(v).astype(dt, copy=False))
    return arr


def unaliased(v: np.ndarray, fields: dict[str, np.ndarray]) -> np.ndarray:
    """``v``, copied where it is (a view of) a field that a reduction may write while it
    still reads ``v``.
    """
    if any(np.may_share_memory(v, f) for f in fields.values()):
        return v.copy()
    return v
