"""Expression evaluation for the CPU engine: a traced operator expression to NumPy arrays.

An :class:`Env` names, per node role (``src``, ``dst``, ``self``), the node ids an
expression runs over; the value of every node of the tree is then one array with one
element per id (or a scalar for constants and parameters). A role may stand for every
node of the graph in id order (``ALL``): loads then read the field itself, with no
gather and no copy (a topology-driven step's node operator, a fast path's per-node
values). Such a value may be the field array itself, so a caller that writes fields
before it has used the value must copy it first (see :func:`unaliased`). Trees are
compiled once into closures by :mod:`gswitch.engine.cpu_plan`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import expr as ex
from ..graph import Graph
from .cpu_plan import ALL, LEAVES, node_index, quiet, root
from .cpu_plan import _trunc_div as _trunc_div  # noqa: F401 - tests check it here

__all__ = ["ALL", "Env", "evaluate", "broadcast", "kept_values", "node_index", "quiet",
           "shared_subexpressions", "unaliased"]

_NP = {d: np.dtype(d) for d in ex.DTYPES}


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
        #: ``run_cache`` where the node role stands for every node (``ids["self"]`` is
        #: ``ALL``), whose values over every node it may then hold; ``None`` elsewhere
        self.whole_cache: dict[ex.Expr, Any] | None = None
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

    def begin_step(self, ids: dict[str, np.ndarray | None], length: int,
                   iteration: int) -> None:
        """Serve another step of the run over ``ids``: nothing computed for the last
        step is kept but the run's step-invariant values (``run_cache``).
        """
        self.ids = ids
        self.length = length
        self.iteration = iteration
        self.values = {}
        self.total = 0.0
        self.sums = {}
        if self._gathered:
            self._gathered = {}
        if self._ids32:
            self._ids32 = {}
        if self.memo:
            self.memo = {}

    def forget(self, field: str, kept: tuple[ex.Expr, ...]) -> None:
        """:meth:`invalidate`, where the kept values that read ``field`` are known
        (those of ``kept``: :func:`kept_values` that read it).
        """
        if self._gathered:
            for key in [k for k in self._gathered if k[0] == field]:
                del self._gathered[key]
        memo = self.memo
        if memo:
            for e in kept:
                memo.pop(e, None)

    def invalidate(self, field: str) -> None:
        """Forget what was read of ``field``: a statement wrote it."""
        if self._gathered:
            for key in [k for k in self._gathered if k[0] == field]:
                del self._gathered[key]
        if self.memo:
            for e in [e for e, (_, reads) in self.memo.items() if field in reads]:
                del self.memo[e]


_SHARED: dict[tuple[Any, ...], frozenset[ex.Expr]] = {}


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
                                 if k > 1 and not isinstance(e, LEAVES))
    return _SHARED[key]


def kept_values(statements: list[Any], shared: frozenset[ex.Expr]) -> tuple[ex.Expr, ...]:
    """The expressions whose values an :class:`Env` evaluating ``statements`` among the
    ``shared`` subexpressions may keep in ``memo``: those and every label frequency.
    """
    found = dict.fromkeys(shared)
    for st in statements:
        for root_expr in (st.value, getattr(st, "at", None),
                          getattr(st, "activate_above", None)):
            if root_expr is not None:
                found.update((x, None) for x in ex.walk(root_expr)
                             if isinstance(x, ex.LabelFrequency))
    return tuple(found)


def evaluate(e: ex.Expr, env: Env) -> Any:
    """Evaluate an expression tree to a NumPy array (or scalar) of ``e.dtype``.

    The result may be shared, not copied (a field itself for a load over ``ALL``, the
    kept value of a shared subexpression): nothing may write to it. The tree is compiled
    once (:mod:`gswitch.engine.cpu_plan`) and the compiled form reused.
    """
    return root(e, env.shared)(env)


def broadcast(v: Any, length: int, dtype: str) -> np.ndarray:
    """``v`` as a ``length`` array of ``dtype`` (a scalar repeated)."""
    dt = _NP[dtype]
    if isinstance(v, np.ndarray) and v.ndim:
        return v if v.dtype == dt else v.astype(dt)
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
