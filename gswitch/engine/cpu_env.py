"""The CPU engine's evaluation environment: the arrays an operator expression is
evaluated against (:class:`Env`), and ``ALL``, the ids of a role that covers every node.

The compiled plans (:mod:`gswitch.engine.cpu_plan`) read a graph and a run only through
an Env; :mod:`gswitch.engine.cpu_eval` evaluates trees in one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import expr as ex
from ..graph import Graph

__all__ = ["ALL", "Env"]

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
