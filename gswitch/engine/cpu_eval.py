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

from typing import Any

import numpy as np

from .. import expr as ex
from ..errors import AlgorithmError
from ..graph import Graph

__all__ = ["ALL", "Env", "evaluate", "broadcast", "node_index", "shared_subexpressions",
           "unaliased"]

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
    kept value of a shared subexpression): nothing may write to it.
    """
    if isinstance(e, _LEAVES):
        return _leaf(e, env)
    # once per tree, not per operation: entering errstate costs twice a small ufunc
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _value(e, env)[0]


def _value(e: ex.Expr, env: Env) -> tuple[Any, bool]:
    """``e``'s value and whether it is a new array that only this use holds, which the
    caller may then write its own result into (a chain of operations on every node
    otherwise allocates an array per operation, each freshly paged in).
    """
    if isinstance(e, _LEAVES):
        return _leaf(e, env), False
    cache = env.run_cache
    if cache is not None and env.ids.get("self", 0) is ALL and _invariant(e):
        if e not in cache:
            cache[e] = _compound(e, env)[0]
        return cache[e], False
    if e not in env.shared:
        return _compound(e, env)
    hit = env.memo.get(e)
    if hit is None:
        hit = env.memo[e] = (_compound(e, env)[0], _reads(e))
    return hit[0], False


def _leaf(e: ex.Expr, env: Env) -> Any:
    if isinstance(e, ex.Const):
        return _const(e.value, e.dtype)
    if isinstance(e, ex.ParamRef):
        return _const(env.params[e.name], e.dtype)
    if isinstance(e, ex.FieldLoad):
        return env.load(e.field, e.node)
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
    if isinstance(e, ex.StmtValue):
        return env.values[e.index]
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


def _typed(e: ex.Expr, env: Env, dt: np.dtype) -> tuple[Any, bool]:
    """``e``'s value as dtype ``dt`` (a conversion is a new array) and whether it is one."""
    v, own = _value(e, env)
    if isinstance(v, np.ndarray):
        if v.dtype != dt:
            return v.astype(dt), True
        return v, own
    return dt.type(v), False


def _into(dt: np.dtype, *operands: tuple[Any, bool]) -> np.ndarray | None:
    """An operand array of dtype ``dt`` and the result's shape that this use holds alone,
    to write the result into; ``None`` where there is none.
    """
    mine = [v for v, own in operands if own and isinstance(v, np.ndarray) and v.dtype == dt]
    if not mine:
        return None
    shapes = {np.shape(v) for v, _ in operands} - {()}
    # one shape (and scalars): the result's; else NumPy's broadcast of them
    shape = shapes.pop() if len(shapes) == 1 else np.broadcast_shapes(
        *(np.shape(v) for v, _ in operands)) if shapes else ()
    return next((v for v in mine if v.shape == shape), None)


def _compound(e: ex.Expr, env: Env) -> tuple[Any, bool]:
    if isinstance(e, ex.FieldAt):
        # take: faster than indexing, and several times so with int32 ids
        at = node_index(e, evaluate(e.at, env), env.graph.n_nodes)
        r = env.fields[e.field].take(at)
        return r, np.ndim(r) > 0
    if isinstance(e, ex.Cast):
        v, own = _value(e.a, env)
        v = np.asarray(v)
        if v.dtype == _NP[e.dtype]:
            return v, own
        return v.astype(_NP[e.dtype]), v.ndim > 0
    if isinstance(e, ex.BinOp):
        dt = _NP[e.dtype]
        a, b = _typed(e.a, env, dt), _typed(e.b, env, dt)
        # (evaluate() entered np.errstate for the whole tree)
        if e.op == "//":
            r = np.floor_divide(a[0], b[0]) if dt.kind == "f" else _trunc_div(a[0], b[0])
            return r, np.ndim(r) > 0
        ufunc = _BINARY.get(e.op)
        if ufunc is None:
            raise AssertionError(f"unknown operator {e.op}")
        out = _into(dt, a, b)
        r = ufunc(a[0], b[0], out=out, dtype=dt)
        return r, np.ndim(r) > 0
    if isinstance(e, ex.UnaryOp):
        a, own = _value(e.a, env)
        out = a if own else None
        if e.op == "-":
            r = np.negative(a, out=out)
        elif e.op == "abs":
            r = np.abs(a, out=out)
        else:
            r = np.logical_not(a, out=out if own and a.dtype == np.bool_ else None)
        return r, np.ndim(r) > 0
    if isinstance(e, ex.Compare):
        dt = _NP[ex._promote(e.a.dtype, e.b.dtype)]
        r = _COMPARE[e.op](_typed(e.a, env, dt)[0], _typed(e.b, env, dt)[0])
        return r, np.ndim(r) > 0
    if isinstance(e, ex.Select):
        dt = _NP[e.dtype]
        r = np.where(evaluate(e.cond, env), _typed(e.a, env, dt)[0], _typed(e.b, env, dt)[0])
        return r, np.ndim(r) > 0
    raise AssertionError(f"cannot evaluate {type(e).__name__}")


def node_index(e: ex.FieldAt | ex.Reduction, index: Any, n: int) -> np.ndarray:
    """``index`` as node ids, after checking that every one is in ``0..n-1``."""
    idx = np.asarray(index)
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        bad = int(idx[(idx < 0) | (idx >= n)].ravel()[0])
        what = (f"{e.field}.at({ex.format_expr(e.at)})" if e.at is not None else e.field)
        raise AlgorithmError(f"{what} names node {bad}, outside the graph's ids 0..{n - 1}; "
                             "an index given to .at() must be a node id")
    return idx


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # C semantics: integer division truncates toward zero
    q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
    return np.where((a < 0) ^ (b < 0), -q, q).astype(a.dtype)


def broadcast(v: Any, length: int, dtype: str) -> np.ndarray:
    """``v`` as a ``length`` array of ``dtype`` (a scalar repeated)."""
    arr = np.asarray(v).astype(_NP[dtype], copy=False)
    if arr.ndim == 0:
        arr = np.full(length, arr, dtype=_NP[dtype])
    return arr


def unaliased(v: np.ndarray, fields: dict[str, np.ndarray]) -> np.ndarray:
    """``v``, copied where it is (a view of) a field that a reduction may write while it
    still reads ``v``.
    """
    if any(np.may_share_memory(v, f) for f in fields.values()):
        return v.copy()
    return v
