"""Shortest-path closure: the CPU engine's formulation of a min-plus relaxation.

An algorithm whose only operator is the edge operator

    ``e.dst.x.reduce_min(e.src.x + c)``

with ``c`` the edge weight (all weights positive) or a positive constant, and which
starts from nodes that all hold the same finite value ``b`` (every other node holding
infinity), has one fixed point whatever the driving, direction or worklist:
``x[v] = b + dist_c(start, v)``. A super-step loop reaches it in as many steps as the
deepest shortest path has edges, each step paying tens of microseconds of interpreter
work; on a 7,000-node mesh of 65 levels that is eight times scipy's breadth-first
search. Here the fixed point comes from one call of ``scipy.sparse.csgraph``:
``breadth_first_order`` for a constant step (its predecessor tree gives the hop counts
by pointer jumping), ``dijkstra`` for edge weights.

The shape is recognised from the operator's structure; nothing here names an algorithm.
Runs that need the steps themselves keep the super-step loop: an iteration limit, a
node operator, step totals, a convergence threshold, an edge limit, a raw operator.
``GSWITCH_CPU_STEPS=1`` in the environment keeps it for every run, to watch the
strategies at work on the CPU (their step counts, modes and edges processed).
``tests/test_cpu_closure.py`` compares both on user operators.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph

from .. import expr as ex
from ..algorithm import AlgorithmSpec
from ..declare import int_inf
from ..graph import Graph
from .cpu_derived import derived

__all__ = ["Closure", "closure_path", "NO_LIMIT"]

#: Iteration limits at or above this one cannot stop a relaxation before its fixed point
#: (a frontier Bellman-Ford needs at most as many steps as the graph has nodes).
NO_LIMIT = 1 << 30


@dataclass(frozen=True)
class Closure:
    """A recognised relaxation: ``field`` lowered by ``e.src.field + step``.

    ``step`` is the constant added along every edge, or ``None`` for the edge weight;
    ``start``, the nodes whose field held a finite value when :func:`closure_path`
    checked the run's fields (:meth:`run` reuses them).
    """

    field: str
    step: float | None
    start: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def method(self) -> str:
        """The library routine that computes the fixed point."""
        return "scipy.sparse.csgraph." + ("dijkstra" if self.step is None
                                          else "breadth_first_order")

    def run(self, graph: Graph, x: np.ndarray) -> dict[str, Any]:
        """Lower ``x`` (the field, in place) to the fixed point; the run's statistics.

        ``x`` must satisfy :func:`closure_path`'s conditions (checked there), and
        ``start`` name its finite entries if given.
        """
        start = np.flatnonzero(_finite(x)) if self.start is None else self.start
        stats: dict[str, Any] = {"formulation": f"shortest-path closure ({self.method})"}
        if start.size == 0 or graph.n_edges == 0:
            stats.update(levels=1 if start.size else 0, reached=int(start.size))
            return stats
        base = x[start[0]]
        if self.step is not None and start.size == 1:
            order, depth = _levels(graph, int(start[0]))
            stats["levels"] = int(depth[-1]) + 1
            if x.dtype.kind in "iu":
                x[order] = depth * int(self.step) + base
            else:
                x[order] = (depth * self.step + float(base)).astype(x.dtype)
            stats["reached"] = int(order.size)
            return stats
        unweighted = self.step is not None
        matrix = derived(graph, "closure:ones" if unweighted else "closure:weights",
                          lambda g: _matrix(g, unweighted))
        dist = csgraph.dijkstra(matrix, directed=True, indices=start, min_only=True)
        if unweighted:
            dist *= self.step
        reached = np.isfinite(dist)
        x[reached] = (float(base) + dist[reached]).astype(x.dtype)
        stats["reached"] = int(np.count_nonzero(reached))
        return stats


def closure_path(spec: AlgorithmSpec, graph: Graph, params: dict[str, Any],
                 fields: dict[str, np.ndarray], max_iterations: int) -> Closure | None:
    """The :class:`Closure` that computes this run's fixed point, or ``None`` where the
    run needs its super-steps (the module docstring lists when).
    """
    shape = _shape(spec)
    if shape is None or shape[0] not in fields or max_iterations < NO_LIMIT \
            or os.environ.get("GSWITCH_CPU_STEPS") == "1":
        return None
    name, dtype, b = shape
    x = fields[name]
    if x.dtype != dtype:
        return None
    step = _positive_step(b, params, graph, x.dtype)
    if step is False:
        return None
    start = np.flatnonzero(_finite(x))
    if start.size:
        base = x[start[0]]
        # several start values: no single closure
        if start.size > 1 and not (x[start] == base).all():
            return None
        # an integer field must hold the longest possible path (n - 1 steps) below its
        # infinity, as the super-steps would
        if x.dtype.kind in "iu" and (float(base) + step * max(graph.n_nodes - 1, 0)
                                     >= int_inf(x.dtype)):
            return None
    return Closure(name, step, start)


#: id(spec) -> (spec, its shape): what :func:`_shape` found, kept (a spec never changes)
_SHAPES: dict[int, tuple[AlgorithmSpec, tuple[str, np.dtype, ex.Expr] | None]] = {}


def _shape(spec: AlgorithmSpec) -> tuple[str, np.dtype, ex.Expr] | None:
    """The field, its dtype and the added step expression of a spec whose only operator
    is ``dst.x.reduce_min(src.x + step)``; ``None`` for any other spec. Read once per
    spec: every call of a small graph would otherwise pay for the walk.
    """
    hit = _SHAPES.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    shape = _read_shape(spec)
    if len(_SHAPES) > 256:
        _SHAPES.clear()
    _SHAPES[id(spec)] = (spec, shape)
    return shape


def _read_shape(spec: AlgorithmSpec) -> tuple[str, np.dtype, ex.Expr] | None:
    op = spec.edge
    if (op is None or op.raw is not None or op.first or spec.node is not None
            or spec.step_totals or spec.converge_below is not None
            or len(op.statements) != 1):
        return None
    s = op.statements[0]
    if not (isinstance(s, ex.Reduction) and s.kind.name == "min" and s.node == "dst"
            and s.at is None and s.activate_above is None and s.activates):
        return None
    if s.dtype != getattr(s.value, "dtype", None) or not isinstance(s.value, ex.BinOp) \
            or s.value.op != "+":
        return None
    a, b = s.value.a, s.value.b
    if not _reads(a, s.field):
        a, b = b, a
    if not _reads(a, s.field):
        return None
    return s.field, np.dtype(s.dtype), b


def _reads(e: ex.Expr, field: str) -> bool:
    return isinstance(e, ex.FieldLoad) and e.field == field and e.node == "src"


def _positive_step(e: ex.Expr, params: dict[str, Any], graph: Graph,
                   dtype: np.dtype) -> float | None | bool:
    """The constant ``e`` stands for (``None``: the positive edge weights), or ``False``
    where it is neither a positive constant nor such a weight.
    """
    if isinstance(e, ex.EdgeWeight):
        if not graph.weighted:
            return 1.0
        w = graph.min_weight
        return None if w > 0 and np.isfinite(graph.mean_weight) else False
    if isinstance(e, ex.StepTotalRef):
        return False
    if isinstance(e, ex.Const):
        value = e.value
    elif isinstance(e, ex.ParamRef) and e.name in params:
        value = params[e.name]
    else:
        return False
    try:
        value = float(value)
    except (TypeError, ValueError):
        return False
    if not (value > 0 and np.isfinite(value)):
        return False
    if dtype.kind in "iu" and value != int(value):
        return False
    return value


def _finite(x: np.ndarray) -> np.ndarray:
    """Where a field holds something other than its infinity."""
    if x.dtype.kind == "f":
        return x < np.inf
    return x < int_inf(x.dtype)


def _matrix(graph: Graph, unweighted: bool) -> sp.csr_array:
    data = np.ones(graph.n_edges) if unweighted else graph.weights.astype(np.float64)
    return sp.csr_array((data, graph.indices, graph.indptr), shape=(graph.n_nodes,) * 2)


#: Levels counted one by one before the pointer jumping takes over (about 0.1 µs each).
_LEVEL_WALK = 4096


def _levels(graph: Graph, source: int) -> tuple[np.ndarray, np.ndarray]:
    """The nodes ``source`` reaches, in breadth-first order, and their hop counts.

    Order and predecessors come from scipy. Parents appear in breadth-first order too, so
    level ``L + 1`` starts right after the last node whose parent lies before the start
    of level ``L``: a count of parents below each position gives every level's start, one
    lookup per level. Beyond :data:`_LEVEL_WALK` levels, pointer jumping up the tree
    (log2 of the depth passes over the nodes) costs less.
    """
    matrix = derived(graph, "closure:ones", lambda g: _matrix(g, True))
    order, pred = csgraph.breadth_first_order(matrix, source, directed=True)
    k = order.size
    pos = np.empty(graph.n_nodes, dtype=np.intp)
    pos[order] = np.arange(k)
    parent = pos[pred[order[1:]]]  # position of the parent of the node at 1, 2, ...
    below = np.cumsum(np.bincount(parent, minlength=k))  # parents at or before each
    starts, b = [0, 1], 1
    while b < k and len(starts) <= _LEVEL_WALK:
        b = 1 + int(below[b - 1])
        starts.append(b)
    if b >= k:
        return order, np.repeat(np.arange(len(starts) - 1), np.diff(starts))
    anc = np.zeros(k, dtype=np.intp)  # each node's ancestor 2**r levels up; the root's: 0
    anc[1:] = parent
    depth = np.ones(k, dtype=np.int64)
    depth[0] = 0
    # the last node in breadth-first order is a deepest one: once its jump reaches the
    # root, every node's has
    while anc[-1]:
        depth += depth[anc]
        anc = anc[anc]
    return order, depth
