"""Reach closure: the CPU engine's formulation of a guarded label spread.

An algorithm (or stage) whose only operator is the edge operator

    ``e.only_if(c); e.dst.x.reduce_max(e.src.x)``  (or ``reduce_min``)

on an integer field ``x``, with guards ``c`` that read neither ``x`` nor the step
number, spreads labels over the subgraph ``G_c`` of the edges the guards keep (fixed
for the whole run: only ``x`` is written). Where every node outside the start set that
has an edge in ``G_c`` holds the worst value ``m`` of ``x`` (the smallest for ``max``),
those nodes never spread anything, so every driving, direction and worklist reaches one
fixed point: ``x[v]`` becomes the best of its own value and the values of the start
nodes that reach it in ``G_c``. A super-step loop needs as many steps as the longest
such path has edges (a road network's diameter, at tens of microseconds each); here
it is one call of ``scipy.sparse.csgraph.dijkstra`` on ``G_c`` plus a super source
joined to every start node that holds a better value than ``m``, the edge to a node
weighted by its value's rank (1 for the best) and the edges of ``G_c`` by
``1 / (n + 2)``: a path of at most ``n`` edges adds less than one rank, so the whole
part of a node's distance is the rank of the best value that reaches it.

The shape is recognised from the operator's structure; nothing here names an algorithm.
The same conditions as :mod:`~gswitch.engine.cpu_closure` keep the super-steps (an
iteration limit, a node operator, step totals, ``GSWITCH_CPU_STEPS=1``, ...).
``tests/test_cpu_reach.py`` compares both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph

from .. import expr as ex
from ..algorithm import AlgorithmSpec
from ..arrayops import sorted_unique
from ..graph import Graph
from .cpu_closure import NO_LIMIT
from .cpu_derived import derived
from .cpu_eval import Env, evaluate

__all__ = ["Reach", "reach_path"]

#: what a guard may read: the same every step, and not the field the run writes
_STEP_DEPENDENT = (ex.Iteration, ex.StepTotalRef, ex.StmtValue, ex.LabelFrequency,
                   ex.CommonNeighbours)


@dataclass(frozen=True)
class Reach:
    """A recognised spread of ``field`` (``kind``: ``"max"`` or ``"min"``) over the edges
    where every one of ``guards`` holds.
    """

    field: str
    kind: str
    guards: tuple[ex.Expr, ...]

    def run(self, graph: Graph, fields: dict[str, np.ndarray], params: dict[str, Any],
            start: np.ndarray | None, degrees: dict[str, np.ndarray]) -> dict[str, Any] | None:
        """Spread ``fields[field]`` in place to the fixed point and return the run's
        statistics, or ``None`` (nothing changed) where the start set does not meet the
        condition of the module docstring: the caller runs the super-steps.

        ``start`` holds the start node ids (``None``: every node; repeats allowed).
        """
        x = fields[self.field]
        n = graph.n_nodes
        stats: dict[str, Any] = {"formulation": "reach closure "
                                 "(scipy.sparse.csgraph.dijkstra)", "levels": 1,
                                 "reached": 0}
        if n == 0 or graph.n_edges == 0:
            return stats
        src, dst = self._edges(graph, fields, params, degrees)
        worst = x.min() if self.kind == "max" else x.max()
        if start is not None:
            outside = np.ones(n, dtype=bool)
            outside[start] = False
            if bool((x[src[outside[src]]] != worst).any()):
                return None  # a node outside the start set would spread under topology
        seeds = np.flatnonzero(x != worst)
        if start is not None:
            inside = np.zeros(n, dtype=bool)
            inside[start] = True
            seeds = seeds[inside[seeds]]
        if seeds.size == 0 or src.size == 0:
            stats["reached"] = int(seeds.size)
            return stats
        values = sorted_unique(x[seeds])  # distinct, ascending
        if self.kind == "max":
            values = values[::-1]
        rank = np.searchsorted(-values if self.kind == "max" else values,
                               -x[seeds] if self.kind == "max" else x[seeds]) + 1.0
        # rows in CSR order already (the super source's last): built as CSR directly, so
        # parallel edges stay apart rather than summed into a longer one
        weights = np.concatenate([np.full(src.size, 1.0 / (n + 2)), rank])
        indptr = np.zeros(n + 2, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=indptr[1:n + 1])
        indptr[n + 1] = indptr[n] + seeds.size
        matrix = sp.csr_array((weights, np.concatenate([dst, seeds]), indptr),
                              shape=(n + 1, n + 1))
        dist = csgraph.dijkstra(matrix, directed=True, indices=n)[:n]
        reached = np.isfinite(dist)
        best = values[np.floor(dist[reached]).astype(np.intp) - 1]
        combine = np.maximum if self.kind == "max" else np.minimum
        x[reached] = combine(x[reached], best.astype(x.dtype))
        stats["reached"] = int(np.count_nonzero(reached))
        return stats

    def _edges(self, graph: Graph, fields: dict[str, np.ndarray], params: dict[str, Any],
               degrees: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The ends of the edges every guard keeps."""
        src, dst = derived(graph, "reach:ends", lambda g: (
            g.sources().astype(np.intp), g.indices.astype(np.intp)))
        w = graph.weights
        for g in self.guards:
            env = Env(fields, {"src": src, "dst": dst}, w, src.size, params, 0, graph,
                      degrees)
            ok = np.broadcast_to(np.asarray(evaluate(g, env), dtype=bool), src.shape)
            src, dst = src[ok], dst[ok]
            w = None if w is None else w[ok]
        return src, dst


def reach_path(spec: AlgorithmSpec, params: dict[str, Any], fields: dict[str, np.ndarray],
               max_iterations: int) -> Reach | None:
    """The :class:`Reach` of this run's operator, or ``None`` where the run needs its
    super-steps (the module docstring says when).
    """
    op = spec.edge
    if (op is None or op.raw is not None or op.first or spec.node is not None
            or spec.step_totals or spec.converge_below is not None
            or max_iterations < NO_LIMIT or os.environ.get("GSWITCH_CPU_STEPS") == "1"
            or not op.statements):
        return None
    *guards, s = op.statements
    if not (isinstance(s, ex.Reduction) and s.kind.name in ("max", "min")
            and s.node == "dst" and s.at is None and s.activate_above is None
            and s.field in fields and fields[s.field].dtype.kind in "iu"
            and isinstance(s.value, ex.FieldLoad) and s.value.field == s.field
            and s.value.node == "src" and s.dtype == fields[s.field].dtype.name):
        return None
    for g in guards:
        if not isinstance(g, ex.Guard):
            return None
        for e in ex.walk(g.value):
            if isinstance(e, _STEP_DEPENDENT) or (
                    isinstance(e, (ex.FieldLoad, ex.FieldAt)) and e.field == s.field):
                return None
    return Reach(s.field, s.kind.name, tuple(g.value for g in guards))
