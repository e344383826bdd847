"""A node operator's step over one node, as one Python function over NumPy scalars.

A step of the node operator over a single node (every step on a one-node graph, a
worklist of one) costs the NumPy calls of its statements. On arrays of one element each
costs about five times the same operation on two NumPy scalars, which gives the same
value of the same type: NumPy's scalar arithmetic, comparisons and conversions are its
ufuncs' and casts' on one element (for two operands of one dtype, which the array plans
of :mod:`gswitch.engine.cpu_plan` also arrange). Walking a tree of closures would cost
as much again, so :class:`OneNodeProgram` writes the operator's statements once as the
straight-line source of one function, as the GPU engine writes one CUDA module, with
the array plans' conversions and order of evaluation, and compiles it.

The source holds only names the writer makes (``t3``, ``k5``) and Python's own
operators: every value it uses, a constant, a field's or a parameter's name, a dtype,
is an object of the function's namespace, never text.

Operators it does not state (a reduction, an intrinsic, an edge's value) keep the array
plans: :meth:`OneNodeProgram.build` gives ``None`` for them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import expr as ex
from .cpu_plan import (
    _BINARY,
    _SCALAR_BINARY,
    _SCALAR_COMPARE,
    _gives_own_dtype,
    _invariant,
    _scalar_only,
    _trunc_div,
    node_index,
    quiet,
)

__all__ = ["OneNodeProgram"]

_NP = {d: np.dtype(d) for d in ex.DTYPES}
#: a step: (fields, params, degrees, node id, step number, node count, the run's
#: state) -> (its convergence total, its named sums)
Step = Callable[[dict, dict, dict, int, int, int, list], tuple[float, dict[str, float]]]


class _Unsupported(Exception):
    """An expression the writer does not state over scalars."""


class OneNodeProgram:
    """A node operator's statements (assignments and step totals) over one node, as one
    compiled function of NumPy scalars.

    Parameters
    ----------
    steps
        ``_NodeProgram.steps``: per statement, the statement, its form, its dtype, its
        kind and the kept values that a store to its field invalidates.
    shared
        The operator's shared subexpressions: each is evaluated once and reused until a
        statement stores to a field it reads, as ``Env.memo`` keeps them.
    quiet_entered
        Whether the engine runs the operator inside :func:`quiet` already; where not,
        :meth:`run` enters it (arithmetic on NumPy scalars warns on integer overflow,
        where the same on arrays does not).
    total_kind
        The kind that marks a step total in ``steps``.
    """

    def __init__(self, steps: list[tuple[Any, ...]], shared: frozenset,
                 quiet_entered: bool, total_kind: int) -> None:
        writer = _Writer(shared)
        self.source, self._step = writer.function(steps, total_kind)
        self._enter_quiet = not quiet_entered

    @classmethod
    def build(cls, steps: list[tuple[Any, ...]], shared: frozenset, quiet_entered: bool,
              total_kind: int, assign_kind: int) -> OneNodeProgram | None:
        """The program of ``steps``, or ``None`` where one of them is neither an
        assignment nor a total, or an expression is not one the writer states.
        """
        if any(kind not in (total_kind, assign_kind) for _, _, _, kind, _ in steps):
            return None
        try:
            return cls(steps, shared, quiet_entered, total_kind)
        except _Unsupported:
            return None

    def run(self, fields: dict[str, np.ndarray], params: dict[str, Any],
            degrees: dict[str, np.ndarray], node: int, iteration: int, n_nodes: int,
            state: list) -> tuple[float, dict[str, float]]:
        """One step at node ``node``: the statements in order, each seeing the stores of
        the ones before; gives the step's convergence total and its named sums.

        ``state`` is the run's, ``[None]`` before its first step: the values that read
        only constants, parameters and the node count are kept there for the run (as
        ``Env.run_cache`` keeps them), so the parameters are not converted every step.
        """
        if self._enter_quiet:
            with quiet():
                return self._step(fields, params, degrees, node, iteration, n_nodes, state)
        return self._step(fields, params, degrees, node, iteration, n_nodes, state)


class _Writer:
    """Writes one step's source: each expression's value into a new local, in the
    order the array plans evaluate them.
    """

    def __init__(self, shared: frozenset) -> None:
        self.shared = shared
        self.lines: list[str] = []
        self.indent = "    "
        self.namespace: dict[str, Any] = {}
        self._ids: dict[int, str] = {}
        self._temps = 0
        #: shared subexpressions and loads (:func:`_load_key`) evaluated on every path
        #: to here, by their local; a store forgets what reads its field
        self.known: dict[Any, str] = {}
        #: the run's values (see ``OneNodeProgram.run``): the lines that compute them
        #: and their locals, by (expression, dtype)
        self.prologue: list[str] = []
        self.kept: dict[tuple[ex.Expr, Any], str] = {}

    # ------------------------------------------------------------------ the function
    def function(self, steps: list[tuple[Any, ...]], total_kind: int) -> tuple[str, Step]:
        into = sorted({s.into for s, _, _, kind, _ in steps if kind == total_kind and s.into})
        sums = {name: self.temp() for name in into}
        self.line("total = 0.0")
        for local in sums.values():
            self.line(f"{local} = 0.0")
        for s, _form, dt, kind, drops in steps:
            if kind == total_kind:
                value, cond, sum_dt = _sum_parts(s.value)
                v = self.typed(value, sum_dt)
                target = sums[s.into] if s.into else "total"
                if cond is None:
                    self.line(f"{target} += float({v})")
                else:
                    self.line(f"if {self.expr(cond)}:")
                    self.line(f"    {target} += float({v})")
                continue
            v = self.expr(s.value)
            if not (_NP[s.value.dtype] == dt and _gives_own_dtype(s.value)):
                v = self.convert(v, dt)
            self.line(f"fields[{self.const(s.field)}][node] = {v}")
            for e in drops:
                self.known.pop(e, None)
            self.known.pop(("field", s.field), None)
        named = ", ".join(f"{self.const(k)}: {v}" for k, v in sums.items())
        self.line(f"return total, {{{named}}}")
        head = ["def step(fields, params, degrees, node, iteration, n_nodes, state):"]
        # the run's values held by locals (a constant's name is the namespace's)
        locals_kept = [v for v in dict.fromkeys(self.kept.values()) if v.startswith("t")]
        if locals_kept:
            kept = ", ".join(locals_kept) + ","
            head += ["    kept = state[0]", "    if kept is None:", *self.prologue,
                     f"        kept = state[0] = ({kept})", f"    {kept} = kept"]
        source = "\n".join(head + self.lines) + "\n"
        # the text holds only the writer's names and Python's operators (see above)
        exec(compile(source, "<gswitch one-node step>", "exec"), self.namespace)
        return source, self.namespace["step"]

    def line(self, text: str) -> None:
        self.lines.append(self.indent + text)

    def temp(self) -> str:
        self._temps += 1
        return f"t{self._temps}"

    def const(self, value: Any) -> str:
        """A name in the namespace that holds ``value`` (one per object)."""
        name = self._ids.get(id(value))
        if name is None:
            name = self._ids[id(value)] = f"k{len(self._ids)}"
            self.namespace[name] = value
        return name

    def assign(self, text: str) -> str:
        t = self.temp()
        self.line(f"{t} = {text}")
        return t

    def convert(self, v: str, dt: np.dtype) -> str:
        T = self.const(dt.type)
        return self.assign(f"{v} if type({v}) is {T} else {T}({v})")

    # ------------------------------------------------------------------ expressions
    def typed(self, e: ex.Expr, dt: np.dtype) -> str:
        """``e``'s value as a ``dt`` scalar, converted as ``cpu_plan._typed`` does (a
        constant and a parameter from their own dtype first).
        """
        if isinstance(e, ex.Const):
            return self.const(dt.type(_NP[e.dtype].type(e.value)))
        if not self._in_prologue and _run_value(e):
            return self._kept(e, dt)
        v = self.expr(e)
        if _NP[e.dtype] == dt and _gives_own_dtype(e):
            return v
        return self.convert(v, dt)

    @property
    def _in_prologue(self) -> bool:
        return self.lines is self.prologue

    def _kept(self, e: ex.Expr, dt: np.dtype | None) -> str:
        """The local that holds ``e``'s value for the run (as ``dt``, where given),
        computed by the prologue.
        """
        key = (e, dt)
        hit = self.kept.get(key)
        if hit is None:
            lines, known, indent = self.lines, self.known, self.indent
            self.lines, self.known, self.indent = self.prologue, {}, "        "
            hit = self.kept[key] = self.expr(e) if dt is None else self.typed(e, dt)
            self.lines, self.known, self.indent = lines, known, indent
        return hit

    def expr(self, e: ex.Expr) -> str:
        if not self._in_prologue and not isinstance(e, ex.Const) and _run_value(e):
            return self._kept(e, None)
        key = _load_key(e) or e
        hit = self.known.get(key)
        if hit is not None:
            return hit
        v = self._body(e)
        if key is not e or e in self.shared:
            self.known[key] = v
        return v

    def _body(self, e: ex.Expr) -> str:
        if isinstance(e, ex.Const):
            return self.const(_NP[e.dtype].type(e.value))
        if isinstance(e, ex.ParamRef):
            scalar = self.const(_NP[e.dtype].type)
            return self.assign(f"{scalar}(params[{self.const(e.name)}])")
        if isinstance(e, ex.FieldLoad) and e.node == "self":
            return self.assign(f"fields[{self.const(e.field)}][node]")
        if isinstance(e, ex.Degree) and e.node == "self":
            return self.assign(f"degrees[{self.const(e.kind)}][node]")
        int32 = self.const(np.int32)
        if isinstance(e, ex.NodeId) and e.node == "self":
            return self.assign(f"{int32}(node)")
        if isinstance(e, ex.Iteration):
            return self.assign(f"{int32}(iteration)")
        if isinstance(e, ex.NumNodes):
            return self.assign(f"{int32}(n_nodes)")
        if isinstance(e, ex.FieldAt):
            at = self.expr(e.at)  # the array plans' check of the id, and its error
            return self.assign(f"fields[{self.const(e.field)}].take({self.const(node_index)}("
                               f"{self.const(e)}, {self.const(np.asarray)}({at}), n_nodes))[()]")
        if isinstance(e, ex.Cast):
            return self.typed(e.a, _NP[e.dtype])
        if isinstance(e, ex.BinOp):
            return self._binary(e)
        if isinstance(e, ex.UnaryOp):
            return self._unary(e)
        if isinstance(e, ex.Compare):
            if e.op not in _SCALAR_COMPARE:
                raise _Unsupported(e.op)
            dt = _NP[ex._promote(e.a.dtype, e.b.dtype)]
            a, b = self.typed(e.a, dt), self.typed(e.b, dt)
            return self.assign(f"{a} {e.op} {b}")
        if isinstance(e, ex.Select):
            return self._select(e)
        raise _Unsupported(type(e).__name__)

    def _binary(self, e: ex.BinOp) -> str:
        dt = _NP[e.dtype]
        a, b = self.typed(e.a, dt), self.typed(e.b, dt)
        if e.op == "//":
            if dt.kind == "f":
                return self.assign(f"{self.const(np.floor_divide)}({a}, {b})")
            return self.assign(f"{self.const(dt.type)}({self.const(_trunc_div)}({a}, {b})[()])")
        if e.op in _SCALAR_BINARY and dt.kind in "iuf":
            return self.assign(f"{a} {e.op} {b}")
        ufunc = _BINARY.get(e.op)
        if ufunc is None:
            raise _Unsupported(e.op)
        return self.assign(f"{self.const(ufunc)}({a}, {b})")

    def _unary(self, e: ex.UnaryOp) -> str:
        a = self.expr(e.a)
        if e.op == "not":
            return self.assign(f"{self.const(np.False_)} if {a} else {self.const(np.True_)}")
        if e.a.dtype == "bool":  # NumPy's negative and abs of a bool: its ufuncs'
            return self.assign(f"{self.const(np.negative if e.op == '-' else np.abs)}({a})")
        return self.assign(f"-{a}" if e.op == "-" else f"abs({a})")

    def _select(self, e: ex.Select) -> str:
        dt = _NP[e.dtype]
        cond = self.expr(e.cond)
        if not _scalar_only(e.cond):  # as np.where: both branches, then the pick
            a, b = self.typed(e.a, dt), self.typed(e.b, dt)
            return self.assign(f"{a} if {cond} else {b}")
        # one condition for every node: only the branch it picks, as the array plans
        t = self.temp()
        self.line(f"if {cond}:")
        self._branch(e.a, dt, t)
        self.line("else:")
        self._branch(e.b, dt, t)
        return t

    def _branch(self, e: ex.Expr, dt: np.dtype, into: str) -> None:
        known, indent = dict(self.known), self.indent
        self.indent += "    "
        self.line(f"{into} = {self.typed(e, dt)}")
        # what the branch evaluated is not known on the other path
        self.known, self.indent = known, indent


def _load_key(e: ex.Expr) -> tuple[str, str] | None:
    """What a load of the node's own field or degree is known by until a store to the
    field (a load is a leaf, never a shared subexpression).
    """
    if isinstance(e, ex.FieldLoad) and e.node == "self":
        return ("field", e.field)
    if isinstance(e, ex.Degree) and e.node == "self":
        return ("degree", e.kind)
    return None


def _run_value(e: ex.Expr) -> bool:
    """Whether ``e`` reads only constants, parameters (not step totals) and the node
    count: the same every step of a run.
    """
    return _scalar_only(e) and _invariant(e)


def _sum_parts(e: ex.Expr) -> tuple[ex.Expr, ex.Expr | None, np.dtype]:
    """An ``n.total`` value as ``cpu._total_form`` sums it: a float64 conversion at its
    root made by the sum, ``where(cond, x, 0)`` as ``x`` under ``cond``.
    """
    if isinstance(e, ex.Cast) and e.dtype == "float64":
        e = e.a
    if isinstance(e, ex.Select) and isinstance(e.b, ex.Const) and e.b.value == 0:
        return e.a, e.cond, _NP[e.a.dtype]
    return e, None, _NP[e.dtype]
