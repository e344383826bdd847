"""Whole-graph fast paths of the CPU engine, recognised from an edge operator's structure.

When every node is active, the edge operator runs over every edge of the graph. Two
shapes of operator then need no per-edge expression evaluation at all: the value each
edge offers depends on its source only, and where it goes depends on its destination
only. The value is then evaluated once per node; the edges only carry it from the
source to the destination, where it is combined, once per destination, before it meets
the field. Each path gives the answers of the per-edge evaluation in
:mod:`gswitch.engine.cpu` (``tests/test_cpu_fast.py`` compares them on user operators):

- :class:`SumGather`: ``e.dst.acc.reduce_add(f(e.src))`` is a sparse matrix-vector
  product (a power iteration's gather);
- :class:`DestinationReduce`: ``min``, ``max`` or ``or`` of ``f(e.src)`` into ``e.dst``
  or into the node ``g(e.dst)`` names (label propagation, hooking).

Whole runs rather than steps have their own paths in :mod:`~gswitch.engine.cpu_guarded`
(guarded edges, one-step marking stages) and :mod:`~gswitch.engine.cpu_reach`.

Nothing here names an algorithm.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import expr as ex
from ..algorithm import AlgorithmSpec
from ..errors import AlgorithmError
from ..graph import Graph
from .cpu_derived import derived
from .cpu_eval import ALL, Env, broadcast, evaluate, node_index, unaliased

__all__ = ["SumGather", "DestinationReduce", "whole_edge_path"]

#: ``reduce(s, field, targets, values, threshold, activated)``: the engine's per-edge
#: reduction with its activation rule, applied here to one value per destination.
Reduce = Callable[..., None]

_NODE_READS = (ex.FieldLoad, ex.NodeId, ex.Degree)
_PER_NODE = (ex.Const, ex.ParamRef, ex.Iteration, ex.NumNodes, ex.FieldAt, ex.BinOp,
             ex.UnaryOp, ex.Compare, ex.Select, ex.Cast)


def _depends_only_on(e: ex.Expr, role: str) -> bool:
    """Whether ``e`` reads nothing of an edge but node ``role`` (its fields, indirect reads
    through them, its id and degrees, parameters): not the weight, not the other end, and
    nothing this module does not know.
    """
    for x in ex.walk(e):
        if isinstance(x, _NODE_READS):
            if x.node != role:
                return False
        elif not isinstance(x, _PER_NODE):
            return False
    return True


def _ends_with_edges(has: np.ndarray) -> np.ndarray | None:
    """``ALL`` where ``has`` (one bool per node: has an edge of some role) holds for every
    node, else the ids of the nodes where it does.
    """
    return ALL if has.all() else np.flatnonzero(has).astype(np.int32)


def whole_edge_path(spec: AlgorithmSpec, graph: Graph, reduce: Reduce) -> Any:
    """The fast path for ``spec``'s edge operator over every edge of ``graph``, or ``None``.

    The result's ``apply(fields, params, iteration, graph, degrees, activated)`` runs one
    edge phase over every edge.
    """
    # found once per algorithm and graph (both immutable); the entry holds the spec, so
    # another spec that gets this one's id after it is gone does not match
    kept = derived(graph, f"whole_edge_path:{id(spec)}:{id(reduce)}", lambda g: [None, None])
    if kept[0] is not spec:
        from .cpu_intrinsics import NeighbourSweep

        kept[:] = [spec, SumGather.of(spec, graph) or DestinationReduce.of(spec, graph, reduce)
                   or NeighbourSweep.of(spec, graph)]
    return kept[1]


class SumGather:
    """An edge operator that only adds a function of its source into ``e.dst``
    (``e.dst.acc.reduce_add(e.src.contrib)``), run over every edge at once: a sparse
    matrix-vector product ``A^T x`` with ``x`` evaluated once per node instead of once per
    edge, which is what a scipy power iteration does (parallel edges count with
    multiplicity, as per edge). Activations are exact: a node whose in-edges offered a
    non-zero value, from a second product of the non-zero pattern, unless the algorithm
    stops on its step total (``converge_below``) and so never reads them.
    """

    def __init__(self, s: ex.Reduction, at: Any, count_activations: bool) -> None:
        self.s = s
        self.at = at
        self.count_activations = count_activations

    @classmethod
    def of(cls, spec: AlgorithmSpec, graph: Graph) -> SumGather | None:
        op = spec.edge
        if op is None or op.raw is not None or len(op.statements) != 1:
            return None
        s = op.statements[0]
        if not (isinstance(s, ex.Reduction) and s.kind.name == "add" and s.at is None
                and s.node == "dst" and s.activate_above is None and s.activates):
            return None
        if not _depends_only_on(s.value, "src"):
            return None
        for e in ex.walk(s.value):
            if isinstance(e, ex.FieldAt):
                return None
            if isinstance(e, ex.FieldLoad) and e.field == s.field:
                return None  # reads what it writes: keep the per-edge semantics
        if graph.n_edges < graph.n_nodes:
            return None
        return cls(s, derived(graph, "in_edge_counts", _in_edge_counts),
                   spec.converge_below is None)

    def apply(self, fields: dict[str, np.ndarray], params: dict[str, Any], it: int,
              graph: Graph, degrees: dict[str, np.ndarray], activated: Any) -> None:
        n = graph.n_nodes
        env = Env(fields, {"src": ALL}, None, n, params, it, graph, degrees)
        val = broadcast(evaluate(self.s.value, env), n, self.s.dtype)
        f = fields[self.s.field]
        _add_product(f, self.at, val.astype(np.float64, copy=False))
        if self.count_activations:
            reached = self.at @ (val != 0).astype(np.float64)
            activated.add_mask(reached > 0)


def _in_edge_counts(graph: Graph) -> Any:
    """``A^T`` with ones (parallel edges summed), float64: ``A^T x`` adds up each node's
    in-neighbours' ``x``.
    """
    import scipy.sparse as sp

    n = graph.n_nodes
    a = sp.csr_array((np.ones(graph.n_edges, np.float64), graph.indices, graph.indptr),
                     shape=(n, n))
    return a.T.tocsr()


def _edge_ends(graph: Graph) -> tuple[np.ndarray, np.ndarray, Any, Any, np.ndarray]:
    """Source and destination of every edge as intp (int32 ids are converted on every
    ``take`` and ``ufunc.at``), the nodes with out- and with in-edges, and the node ids.
    """
    return (graph.sources().astype(np.intp), graph.indices.astype(np.intp),
            _ends_with_edges(graph.out_degree > 0), _ends_with_edges(graph.in_degree > 0),
            np.arange(graph.n_nodes, dtype=np.int32))


def _add_product(f: np.ndarray, a: Any, x: np.ndarray) -> None:
    """``f += a @ x`` for a float64 CSR ``a``: into a float64 ``f`` directly with scipy's
    own kernel (``y += A x``), which saves a temporary and a pass on every step.
    """
    if f.dtype == np.float64 and f.flags.c_contiguous and _csr_matvec is not None:
        _csr_matvec(a.shape[0], a.shape[1], a.indptr, a.indices, a.data, x, f)
    else:
        f += (a @ x).astype(f.dtype, copy=False)


try:  # scipy's private kernel behind csr @ vector; the public product where it moved
    from scipy.sparse._sparsetools import csr_matvec as _csr_matvec
except ImportError:  # pragma: no cover
    _csr_matvec = None


def _combiner(kind: str, dtype: np.dtype) -> tuple[np.ufunc, Any]:
    """The ufunc that combines the values offered to one node, and its identity (the value
    of a node offered nothing). Float ``min``/``max`` skip NaN, as the per-edge test
    (``val < cur``) never takes one: a node offered only NaN gets NaN, which never wins.
    """
    if kind == "or":
        return np.bitwise_or, dtype.type(0)
    if dtype.kind == "f":
        return (np.fmin if kind == "min" else np.fmax), dtype.type(np.nan)
    info = np.iinfo(dtype)
    return (np.minimum, info.max) if kind == "min" else (np.maximum, info.min)


class DestinationReduce:
    """An edge operator whose statements each offer a function of the source to the
    destination or to a node a function of the destination names, with ``min``, ``max``
    or ``or`` (``e.dst.comp.reduce_min(e.src.comp)``;
    ``e.dst.comp.at(e.dst.comp).reduce_min(e.src.comp.at(e.src.comp))``).

    The value is evaluated once per source node and carried along the edges into one
    buffer per destination with one unbuffered ``ufunc.at``; the combined value of each
    destination then meets the field (directly, or through the engine's reduction for an
    indirect target) with the per-edge rule: taken where it is better, and the node it
    changed activated. As on the per-edge path, every value and target is read before
    any statement writes.
    """

    def __init__(self, statements: list[ex.Reduction], graph: Graph, reduce: Reduce) -> None:
        self.statements = statements
        self.reduce = reduce
        self.src, self.dst, self.senders, self.receivers, self.ids = derived(
            graph, "edge_ends", _edge_ends)

    @classmethod
    def of(cls, spec: AlgorithmSpec, graph: Graph, reduce: Reduce) -> DestinationReduce | None:
        op = spec.edge
        if op is None or op.raw is not None or not op.statements:
            return None
        for s in op.statements:
            if not (isinstance(s, ex.Reduction) and s.kind.name in ("min", "max", "or")
                    and s.node == "dst" and s.activate_above is None and s.activates):
                return None
            if not _depends_only_on(s.value, "src"):
                return None
            if s.at is not None and not _depends_only_on(s.at, "dst"):
                return None
        if graph.n_edges < graph.n_nodes:
            return None
        return cls(list(op.statements), graph, reduce)

    def apply(self, fields: dict[str, np.ndarray], params: dict[str, Any], it: int,
              graph: Graph, degrees: dict[str, np.ndarray], activated: Any) -> None:
        n = graph.n_nodes
        offered: dict[tuple[int, str, str], np.ndarray] = {}
        pending = []
        for s in self.statements:
            key = (id(s.value), s.kind.name, s.dtype)
            if key not in offered:
                val = self._per_node(s.value, "src", s.dtype, fields, params, it, graph,
                                     degrees)
                ufunc, identity = _combiner(s.kind.name, val.dtype)
                combined = np.full(n, identity, dtype=val.dtype)
                ufunc.at(combined, self.dst, np.take(val, self.src))
                offered[key] = combined
            target = None
            if s.at is not None:
                target = unaliased(self._per_node(s.at, "dst", "int64", fields, params, it,
                                                  graph, degrees, targets_of=s), fields)
            pending.append((s, offered[key], target))
        for s, val, target in pending:
            if target is None:
                self._into_receivers(s, fields[s.field], val, activated)
            else:
                self.reduce(s, fields[s.field], target, val, None, activated)

    def _per_node(self, e: ex.Expr, role: str, dtype: str, fields: dict[str, np.ndarray],
                  params: dict[str, Any], it: int, graph: Graph,
                  degrees: dict[str, np.ndarray],
                  targets_of: ex.Reduction | None = None) -> np.ndarray:
        """``e`` at every node as ``role`` (checked as node ids, the targets of
        ``targets_of``, if given). Where a node without edges of that role names no node
        (in an indirect read or as a target), ``e`` only at the nodes with one, as the
        per-edge path evaluates it (it raises if one of those names none): a source without
        out-edges offers nothing, a destination without in-edges is offered the identity,
        so what stands at the others does not matter (zero, and the node itself as target).
        """
        n = graph.n_nodes
        try:
            env = Env(fields, {role: ALL}, None, n, params, it, graph, degrees)
            val = broadcast(evaluate(e, env), n, dtype)
            return val if targets_of is None else node_index(targets_of, val, n)
        except AlgorithmError:
            some = self.senders if role == "src" else self.receivers
            if some is ALL:
                raise
        env = Env(fields, {role: some}, None, some.size, params, it, graph, degrees)
        val = broadcast(evaluate(e, env), some.size, dtype)
        if targets_of is not None:
            node_index(targets_of, val, n)
        every = np.zeros(n, dtype=val.dtype) if role == "src" else self.ids.astype(val.dtype)
        every[some] = val
        return every

    @staticmethod
    def _into_receivers(s: ex.Reduction, f: np.ndarray, val: np.ndarray,
                        activated: Any) -> None:
        """``f`` at every node combined with the value offered to it, the changed ones
        activated (a node offered nothing holds the identity, which changes nothing).
        """
        if s.kind.name == "or":
            new = f | val
            changed = new != f
        else:
            new = val
            changed = val < f if s.kind.name == "min" else val > f
        np.copyto(f, new, where=changed)
        activated.add_mask(changed)
