"""The operator language: expression trees traced from plain Python functions.

An operator is written as an ordinary function over proxies (``e.src.dist + e.weight``);
calling it with proxies records an expression tree instead of computing numbers. The
tree is the single source of truth: the CPU engine evaluates it with NumPy and the GPU
engine lowers it to CUDA C. Nothing here parses Python source.

Statements (reductions, exchanges, assignments) are recorded in program order by the
tracer of :mod:`gswitch.algorithm` (``trace_operator``); expressions are immutable
values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import AlgorithmError

__all__ = [
    "DTYPES",
    "Expr",
    "Const",
    "ParamRef",
    "StepTotalRef",
    "Bucket",
    "FieldLoad",
    "FieldAt",
    "Total",
    "EdgeWeight",
    "LabelFrequency",
    "NodeId",
    "Degree",
    "Iteration",
    "NumNodes",
    "BinOp",
    "UnaryOp",
    "Compare",
    "Select",
    "Cast",
    "StmtValue",
    "Guard",
    "Reduction",
    "Assign",
    "REDUCTIONS",
    "ReductionKind",
    "where",
    "minimum",
    "maximum",
    "format_tree",
]

#: Supported scalar types, by their NumPy name.
DTYPES = ("bool", "int32", "uint32", "int64", "uint64", "float32", "float64")

_RANK = {"bool": 0, "int32": 1, "uint32": 2, "int64": 3, "uint64": 4, "float32": 5,
         "float64": 6}


def _promote(a: str, b: str) -> str:
    if a == b:
        return a
    if {a, b} & {"int64", "uint64"} and "float32" in (a, b):
        return "float64"
    return a if _RANK[a] > _RANK[b] else b


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def _is_int(dtype: str) -> bool:
    return dtype in ("int32", "uint32", "int64", "uint64")


def _lift(value: Any, like: str | None = None) -> Expr:
    """Turn a Python number into a constant, typed after the other operand when possible."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):
        return Const(value, "bool")
    if isinstance(value, (int, np.integer)):
        dtype = like if like is not None and like != "bool" else "int32"
        if dtype == "int32" and like in (None, "bool") and not -2**31 <= value < 2**31:
            dtype = "int64"  # a literal beyond int32 with nothing to follow: int64, not a wrap
        return Const(int(value), dtype)
    if isinstance(value, (float, np.floating)):
        if np.isinf(value) and _is_int(like or ""):
            # INF next to an integer stays an integer: the headroom infinity that
            # gswitch.algorithm.int_inf gives integer fields (never float32's inf, which
            # converts to the most negative integer)
            big = int(np.iinfo(np.dtype(like)).max // 2 + 1) if like != "uint32" else 2**30
            return Const(big if value > 0 else -big, like)
        dtype = like if like is not None and _is_float(like) else "float32"
        return Const(float(value), dtype)
    raise AlgorithmError(
        f"cannot use {type(value).__name__} value {value!r} in an operator; use numbers, "
        "node fields, parameters or gswitch.where(...)"
    )


class Expr:
    """Base of every expression node. Arithmetic and comparisons build new nodes."""

    dtype: str = "float32"

    def children(self) -> tuple[Expr, ...]:
        return ()

    # -- arithmetic -----------------------------------------------------------
    def _bin(self, op: str, other: Any, reverse: bool = False) -> Expr:
        o = _lift(other, self.dtype)
        a, b = (o, self) if reverse else (self, o)
        return BinOp(op, a, b)

    def __add__(self, o: Any) -> Expr:
        return self._bin("+", o)

    def __radd__(self, o: Any) -> Expr:
        return self._bin("+", o, True)

    def __sub__(self, o: Any) -> Expr:
        return self._bin("-", o)

    def __rsub__(self, o: Any) -> Expr:
        return self._bin("-", o, True)

    def __mul__(self, o: Any) -> Expr:
        return self._bin("*", o)

    def __rmul__(self, o: Any) -> Expr:
        return self._bin("*", o, True)

    def __truediv__(self, o: Any) -> Expr:
        return self._bin("/", o)

    def __rtruediv__(self, o: Any) -> Expr:
        return self._bin("/", o, True)

    def __floordiv__(self, o: Any) -> Expr:
        return self._bin("//", o)

    def __and__(self, o: Any) -> Expr:
        return self._bin("&", o)

    def __rand__(self, o: Any) -> Expr:
        return self._bin("&", o, True)

    def __or__(self, o: Any) -> Expr:
        return self._bin("|", o)

    def __ror__(self, o: Any) -> Expr:
        return self._bin("|", o, True)

    def __xor__(self, o: Any) -> Expr:
        return self._bin("^", o)

    def __rxor__(self, o: Any) -> Expr:
        return self._bin("^", o, True)

    def __lshift__(self, o: Any) -> Expr:
        return self._bin("<<", o)

    def __rshift__(self, o: Any) -> Expr:
        return self._bin(">>", o)

    def __neg__(self) -> Expr:
        return UnaryOp("-", self)

    def __abs__(self) -> Expr:
        return UnaryOp("abs", self)

    def __invert__(self) -> Expr:
        return UnaryOp("not", self)

    # -- comparisons ----------------------------------------------------------
    def __lt__(self, o: Any) -> Expr:  # type: ignore[override]
        return Compare("<", self, _lift(o, self.dtype))

    def __le__(self, o: Any) -> Expr:  # type: ignore[override]
        return Compare("<=", self, _lift(o, self.dtype))

    def __gt__(self, o: Any) -> Expr:  # type: ignore[override]
        return Compare(">", self, _lift(o, self.dtype))

    def __ge__(self, o: Any) -> Expr:  # type: ignore[override]
        return Compare(">=", self, _lift(o, self.dtype))

    def eq(self, o: Any) -> Expr:
        """Equality test (``==`` keeps its Python meaning so expressions stay hashable)."""
        return Compare("==", self, _lift(o, self.dtype))

    def ne(self, o: Any) -> Expr:
        """Inequality test."""
        return Compare("!=", self, _lift(o, self.dtype))

    def astype(self, dtype: str) -> Expr:
        """Convert to another scalar type."""
        if dtype not in DTYPES:
            raise AlgorithmError(f"unknown dtype {dtype!r}; choose one of {', '.join(DTYPES)}")
        return Cast(self, dtype)

    def __bool__(self) -> bool:
        raise AlgorithmError(
            "an operator used a traced value in a Python `if`/`and`/`or`; the value is not "
            "known while tracing. Use gswitch.where(cond, a, b) or & and | instead"
        )

    def __repr__(self) -> str:
        return format_expr(self)


@dataclass(frozen=True, eq=False, repr=False)
class Const(Expr):
    """A literal number."""

    value: float | int | bool
    dtype: str = "float32"


@dataclass(frozen=True, eq=False, repr=False)
class ParamRef(Expr):
    """An algorithm parameter, a kernel argument at run time."""

    name: str
    dtype: str = "float32"


@dataclass(frozen=True, eq=False, repr=False)
class StepTotalRef(ParamRef):
    """The previous step's value of a :class:`~gswitch.declare.StepTotal` (its
    ``slot``-th), zero in a run's first step; a float64 read from the control block on
    the GPU, and a run-time parameter the CPU engine updates after every step.
    """

    slot: int = 0


@dataclass(frozen=True, eq=False, repr=False)
class Bucket(StepTotalRef):
    """``p.bucket``: the bucket of priority keys the step processes under driving
    ``priority`` (``key // width``), 0 under every other driving. Like a step total it
    changes between steps, so nothing that reads it is cached across steps or hoisted
    out of an edge loop.
    """

    name: str = "@bucket"
    dtype: str = "int32"


@dataclass(frozen=True, eq=False, repr=False)
class FieldLoad(Expr):
    """Read of a node field on ``node`` (``"src"``, ``"dst"`` or ``"self"``)."""

    field: str
    node: str
    dtype: str = "float32"


@dataclass(frozen=True, eq=False, repr=False)
class FieldAt(Expr):
    """Indirect read: field ``field`` at the node whose id ``at`` evaluates to
    (``comp[comp[v]]`` is ``FieldAt("comp", FieldLoad("comp", "self"))``).

    The index must be a node id of the graph; the CPU engine raises on one out of range
    and the GPU engine checks it under ``GSWITCH_CUDA_DEBUG=1``.
    """

    field: str
    at: Expr
    dtype: str = "float32"

    def children(self) -> tuple[Expr, ...]:
        return (self.at,)


@dataclass(frozen=True, eq=False, repr=False)
class EdgeWeight(Expr):
    """The current edge's weight (1 on unweighted graphs)."""

    dtype: str = "float32"


@dataclass(frozen=True, eq=False, repr=False)
class CommonNeighbours(Expr):
    """Intrinsic of edge operators: how many distinct nodes, other than the edge's two
    ends, both ends' rows hold: the triangles through the edge of a simple undirected
    graph. Rows are read sorted (the run sorts a graph whose rows are not).

    ``method`` is how the GPU intersects the two rows: ``merge`` walks both (cheap on
    rows of similar length), ``search`` looks each id of the shorter row up in the longer
    by binary search (cheap when one end is a hub). The CPU engine counts with a
    vectorised search of the shorter row's ids either way.

    ``among`` restricts the common neighbours counted by id, with ``lo < hi`` the edge's
    two ends: ``all`` of them, those ``below`` (ids under ``lo``) or those ``between``
    (ids strictly between ``lo`` and ``hi``). Only the matching part of each sorted row
    is walked, so on a graph numbered by degree (hubs first) both restricted forms
    intersect short lists: the oriented counting of triangles.
    """

    method: str = "merge"
    among: str = "all"
    dtype: str = "int32"


#: How :class:`CommonNeighbours` may intersect two rows.
INTERSECTIONS = ("merge", "search")
#: Which common neighbours :class:`CommonNeighbours` counts, by id.
AMONG = ("all", "below", "between")


@dataclass(frozen=True, eq=False, repr=False)
class LabelFrequency(Expr):
    """Intrinsic of edge operators: how many entries of one end's row carry the other
    end's value of the integer field ``field``. With ``row="dst"``, the entries ``w`` of
    the destination's row with ``field[w] == field[src]``; with ``row="src"``, those of
    the source's row with ``field[w] == field[dst]``. A parallel edge counts each time,
    a self-loop counts the node itself. On a symmetric graph the row is the node's
    neighbours, so a node reducing it over its edges sees the frequency of every label
    among its neighbours: ``reduce_max`` of ``(frequency << 32) | label`` is the most
    frequent label, the largest of the tied ones (label propagation's mode).

    The GPU walks the row once per edge (the sum of the row's length over the edges it
    is evaluated on: guard the edges first with ``e.only_if``); the CPU engine sorts the
    ``(row, label)`` pairs of the rows a step reads once and counts every edge's pair by
    binary search.
    """

    field: str
    row: str = "dst"
    dtype: str = "int32"


#: Whose row :class:`LabelFrequency` counts in.
LABEL_ROWS = ("dst", "src")


@dataclass(frozen=True, eq=False, repr=False)
class NodeId(Expr):
    """The id of ``node``."""

    node: str
    dtype: str = "int32"


@dataclass(frozen=True, eq=False, repr=False)
class Degree(Expr):
    """Out- or in-degree of ``node``."""

    node: str
    kind: str = "out"
    dtype: str = "int32"


@dataclass(frozen=True, eq=False, repr=False)
class Iteration(Expr):
    """The super-step number, from 0."""

    dtype: str = "int32"


@dataclass(frozen=True, eq=False, repr=False)
class NumNodes(Expr):
    """The number of nodes of the graph."""

    dtype: str = "int32"


@dataclass(frozen=True, eq=False, repr=False)
class BinOp(Expr):
    """Binary arithmetic ``a op b`` (``+ - * / // & | ^ << >> min max``).

    ``^`` is bitwise exclusive or; ``<<`` and ``>>`` shift the bits of ``a`` by ``b``,
    which must lie in ``0 .. bits - 1`` of the result type (C leaves other counts
    undefined). On ``uint32`` both engines agree bit for bit, multiplication wrapping
    modulo 2**32 included, which is what an integer hash needs; ``>>`` of a negative
    signed value shifts in sign bits on both. ``uint64`` holds 64-bit sets (one bit per
    member, e.g. the sources of a multi-source BFS): ``& | ^ << >>`` and ``reduce_or``
    act on all 64 bits on both engines.
    """

    op: str
    a: Expr
    b: Expr
    dtype: str = field(init=False)

    def __post_init__(self) -> None:
        if self.op == "/":
            dtype = _promote(self.a.dtype, self.b.dtype)
            dtype = dtype if _is_float(dtype) else "float32"
        elif self.op in ("&", "|", "^"):
            if _is_float(self.a.dtype) or _is_float(self.b.dtype):
                raise AlgorithmError(f"operator {self.op!r} needs integer or bool operands")
            dtype = _promote(self.a.dtype, self.b.dtype)
        elif self.op in ("<<", ">>"):
            if not (_is_int(self.a.dtype) and _is_int(self.b.dtype)):
                raise AlgorithmError(f"operator {self.op!r} needs integer operands, got "
                                     f"{self.a.dtype} and {self.b.dtype}")
            dtype = _promote(self.a.dtype, self.b.dtype)
        else:
            dtype = _promote(self.a.dtype, self.b.dtype)
        object.__setattr__(self, "dtype", dtype)

    def children(self) -> tuple[Expr, ...]:
        return (self.a, self.b)


@dataclass(frozen=True, eq=False, repr=False)
class UnaryOp(Expr):
    """Unary ``-``, ``abs`` or logical ``not``."""

    op: str
    a: Expr
    dtype: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", "bool" if self.op == "not" else self.a.dtype)

    def children(self) -> tuple[Expr, ...]:
        return (self.a,)


@dataclass(frozen=True, eq=False, repr=False)
class Compare(Expr):
    """Comparison, a bool."""

    op: str
    a: Expr
    b: Expr
    dtype: str = field(init=False, default="bool")

    def children(self) -> tuple[Expr, ...]:
        return (self.a, self.b)


@dataclass(frozen=True, eq=False, repr=False)
class Select(Expr):
    """``a if cond else b``, element-wise."""

    cond: Expr
    a: Expr
    b: Expr
    dtype: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", _promote(self.a.dtype, self.b.dtype))

    def children(self) -> tuple[Expr, ...]:
        return (self.cond, self.a, self.b)


@dataclass(frozen=True, eq=False, repr=False)
class Cast(Expr):
    """Type conversion."""

    a: Expr
    dtype: str = "float32"

    def children(self) -> tuple[Expr, ...]:
        return (self.a,)


@dataclass(frozen=True, eq=False, repr=False)
class StmtValue(Expr):
    """The value a statement returned (the old value of an exchange), by statement index."""

    index: int
    dtype: str = "float32"


# ---------------------------------------------------------------------- reductions
@dataclass(frozen=True)
class ReductionKind:
    """Algebraic facts about a reduction that strategies may exploit.

    Attributes
    ----------
    name : str
        ``min``, ``max``, ``add``, ``or`` or ``exchange``.
    commutative : bool
        Order of concurrent updates does not change the result.
    idempotent : bool
        Applying the same update twice equals applying it once (so a re-run or a
        duplicated worklist entry is harmless, and pull may stop at the first hit).
    monotone : bool
        The stored value only moves one way; a lost non-atomic update is repaired by
        the next sweep that offers it again (atomic-free topology-driven sweeps).

    """

    name: str
    commutative: bool
    idempotent: bool
    monotone: bool


REDUCTIONS: dict[str, ReductionKind] = {
    "min": ReductionKind("min", True, True, True),
    "max": ReductionKind("max", True, True, True),
    "or": ReductionKind("or", True, True, True),
    "add": ReductionKind("add", True, False, False),
    "exchange": ReductionKind("exchange", False, False, False),
}


@dataclass(frozen=True, eq=False)
class Reduction:
    """Statement: combine ``value`` into field ``field`` of ``node`` with ``kind``.

    For edge operators ``node`` is ``"dst"`` and the reduction reports whether it
    activated the destination: ``min``/``max``/``or`` when the stored value changed,
    ``add`` when the stored value crossed ``activate_above`` upwards (or, without a
    threshold, whenever a non-zero amount was added). ``exchange`` stores ``value`` and
    returns the previous value; it is allowed in node operators only.

    With ``at`` the target is not ``node`` but the node whose id ``at`` evaluates to
    (indirect reduction, e.g. hooking ``comp[comp[u]] = min(comp[comp[u]], x)``); the
    activated node is then that one. Reductions of node operators activate only when
    traced with ``activate=True`` (``activating``); those of edge operators always do.
    """

    kind: ReductionKind
    field: str
    node: str
    value: Expr
    dtype: str
    activate_above: Expr | None = None
    index: int = -1
    at: Expr | None = None
    activating: bool = True

    @property
    def activates(self) -> bool:
        """Whether this statement can put its target in the next active set."""
        return (self.activating and self.kind.name != "exchange"
                and (self.node == "dst" or self.at is not None or self.node == "self"))


@dataclass(frozen=True, eq=False)
class Assign:
    """Statement: plain store of ``value`` into a field of the operator's own node."""

    field: str
    node: str
    value: Expr
    dtype: str
    index: int = -1


@dataclass(frozen=True, eq=False)
class Total:
    """Statement: add ``value`` (of each node the node operator runs on) to the step's
    total, which an algorithm declaring ``converge_below`` compares with its threshold
    after the step (the L1 change of a power iteration). Summed in float64.
    """

    value: Expr
    dtype: str = "float64"
    index: int = -1
    field: str = ""
    node: str = "self"
    #: the :class:`~gswitch.declare.StepTotal` it adds to; empty: the convergence total
    into: str = ""


@dataclass(frozen=True, eq=False)
class Guard:
    """Statement: the edge operator's later statements run only for edges where
    ``value`` (a bool expression) holds; earlier ones ran for every edge. Traced from
    ``e.only_if(cond)``. The GPU returns from the operator there, before any gather the
    rest would issue; the CPU engine masks the later statements' edges.
    """

    value: Expr
    dtype: str = "bool"
    index: int = -1
    field: str = ""
    node: str = "edge"


Statement = Reduction | Assign | Total | Guard


def where(cond: Expr, a: Any, b: Any) -> Expr:
    """Element-wise ``a if cond else b`` inside an operator.

    Parameters
    ----------
    cond : Expr
        A comparison or bool expression.
    a, b : Expr or number
        Values for true and false.

    Returns
    -------
    Expr

    """
    if not isinstance(cond, Expr):
        raise AlgorithmError("where() needs a traced condition, e.g. where(e.src.x > 0, a, b)")
    ea = _lift(a, b.dtype if isinstance(b, Expr) else None)
    eb = _lift(b, ea.dtype)
    return Select(cond, ea, eb)


def minimum(a: Any, b: Any) -> Expr:
    """Element-wise minimum of two operator values."""
    ea = _lift(a, b.dtype if isinstance(b, Expr) else None)
    return BinOp("min", ea, _lift(b, ea.dtype))


def maximum(a: Any, b: Any) -> Expr:
    """Element-wise maximum of two operator values."""
    ea = _lift(a, b.dtype if isinstance(b, Expr) else None)
    return BinOp("max", ea, _lift(b, ea.dtype))


# ---------------------------------------------------------------------- printing
def format_expr(e: Expr) -> str:
    """One-line infix rendering of an expression."""
    if isinstance(e, Const):
        if isinstance(e.value, float) and math.isinf(e.value):
            return "INF" if e.value > 0 else "-INF"
        return repr(e.value)
    if isinstance(e, Bucket):
        return "bucket"
    if isinstance(e, StepTotalRef):
        return f"last_step.{e.name}"
    if isinstance(e, ParamRef):
        return f"param.{e.name}"
    if isinstance(e, FieldLoad):
        return f"{e.node}.{e.field}"
    if isinstance(e, FieldAt):
        return f"{e.field}[{format_expr(e.at)}]"
    if isinstance(e, EdgeWeight):
        return "edge.weight"
    if isinstance(e, CommonNeighbours):
        among = "" if e.among == "all" else f", among={e.among}"
        return f"common_neighbours({e.method}{among})"
    if isinstance(e, LabelFrequency):
        return f"label_frequency({e.field}, row={e.row})"
    if isinstance(e, NodeId):
        return f"{e.node}.id"
    if isinstance(e, Degree):
        return f"{e.node}.{e.kind}_degree"
    if isinstance(e, Iteration):
        return "iteration"
    if isinstance(e, NumNodes):
        return "n_nodes"
    if isinstance(e, BinOp):
        if e.op in ("min", "max"):
            return f"{e.op}({format_expr(e.a)}, {format_expr(e.b)})"
        return f"({format_expr(e.a)} {e.op} {format_expr(e.b)})"
    if isinstance(e, UnaryOp):
        return f"{e.op}({format_expr(e.a)})" if e.op != "-" else f"-{format_expr(e.a)}"
    if isinstance(e, Compare):
        return f"({format_expr(e.a)} {e.op} {format_expr(e.b)})"
    if isinstance(e, Select):
        return f"where({format_expr(e.cond)}, {format_expr(e.a)}, {format_expr(e.b)})"
    if isinstance(e, Cast):
        return f"{e.dtype}({format_expr(e.a)})"
    if isinstance(e, StmtValue):
        return f"%{e.index}"
    return type(e).__name__


def format_statement(s: Statement) -> str:
    """One-line rendering of a statement."""
    if isinstance(s, Assign):
        return f"%{s.index} = {s.node}.{s.field} := {format_expr(s.value)}"
    if isinstance(s, Total):
        return f"%{s.index} = {s.into or 'step_total'} += {format_expr(s.value)}"
    if isinstance(s, Guard):
        return f"%{s.index} = only_if {format_expr(s.value)}"
    extra = ""
    if s.activate_above is not None:
        extra = f", activate_above={format_expr(s.activate_above)}"
    if s.activates and s.node == "self":
        extra += ", activate=True"
    props = [p for p in ("commutative", "idempotent", "monotone") if getattr(s.kind, p)]
    tag = f"  [{', '.join(props)}]" if props else ""
    target = f"{s.node}.{s.field}" if s.at is None else f"{s.field}[{format_expr(s.at)}]"
    return (f"%{s.index} = {target}.{s.kind.name}({format_expr(s.value)}{extra})"
            f"{tag}")


def format_tree(e: Expr, indent: int = 0) -> str:
    """Indented multi-line rendering showing every node and its dtype."""
    pad = "  " * indent
    label = type(e).__name__
    if isinstance(e, (BinOp, UnaryOp, Compare)):
        label += f" {e.op}"
    elif not e.children():
        label += f" {format_expr(e)}"
    lines = [f"{pad}{label} : {e.dtype}"]
    for c in e.children():
        lines.append(format_tree(c, indent + 1))
    return "\n".join(lines)


def walk(e: Expr):
    """Yield every node of an expression tree (pre-order)."""
    yield e
    for c in e.children():
        yield from walk(c)
