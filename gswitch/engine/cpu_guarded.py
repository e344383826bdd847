"""Whole-run helpers of the CPU engine over the edges an operator's guards keep.

- :class:`GuardedEdges`: the edges an operator's guards keep, with every term of a
  guard that reads one end only (``e.src.scc < 0``) evaluated once per node, not once
  per edge (the reach closure of :mod:`~gswitch.engine.cpu_reach` runs on them);
- :class:`MarkStep`: a stage whose run is one super-step, guarded edges marking their
  ends with a constant and a node operator after them (a trimming sweep), computed
  from the kept edges with plain indexed stores or sparse products counting them
  (``tests/test_scc_cpu_fast_paths.py`` compares it with the super-step).

Nothing here names an algorithm.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import expr as ex
from ..algorithm import AlgorithmSpec
from ..graph import Graph
from .cpu_derived import all_sources, derived
from .cpu_eval import ALL, Env, broadcast, evaluate

__all__ = ["GuardedEdges", "MarkStep", "row_counts"]

try:  # scipy's private kernels behind csr @ vector, csr.T @ vector and csr.diagonal(),
    # into a given array
    from scipy.sparse._sparsetools import csc_matvec as _csc_matvec
    from scipy.sparse._sparsetools import csr_diagonal as _csr_diagonal
    from scipy.sparse._sparsetools import csr_matvec as _csr_matvec
except ImportError:  # pragma: no cover
    _csr_matvec = _csc_matvec = _csr_diagonal = None

_NODE_READS = (ex.FieldLoad, ex.NodeId, ex.Degree)

#: what a guard term evaluated once per node may hold besides one end's loads, ids and
#: degrees: nothing that reads an edge, another node, a statement or the step
_NODE_TERM = (ex.Const, ex.NumNodes, ex.BinOp, ex.UnaryOp, ex.Compare, ex.Select, ex.Cast)


def end_read_by(e: ex.Expr) -> str | None:
    """The one end (``"src"`` or ``"dst"``) whose loads, id and degrees are all that
    ``e`` reads (``""``: none, a constant), or ``None`` where it reads more.
    """
    ends = set()
    for x in ex.walk(e):
        if isinstance(x, _NODE_READS):
            ends.add(x.node)
        elif isinstance(x, ex.ParamRef):
            if isinstance(x, ex.StepTotalRef):
                return None  # changes between steps
        elif not isinstance(x, _NODE_TERM):
            return None
    if len(ends) > 1:
        return None
    return ends.pop() if ends else ""


#: what a guard term evaluated once per graph may read: the ends' ids and degrees
_STRUCTURE = (ex.NodeId, ex.Degree, ex.Const, ex.NumNodes, ex.BinOp, ex.UnaryOp, ex.Compare,
              ex.Select, ex.Cast)


def _conjuncts(e: ex.Expr) -> list[ex.Expr]:
    """The terms of ``e`` joined by a boolean ``&``, in order."""
    if isinstance(e, ex.BinOp) and e.op == "&" and e.dtype == "bool":
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [e]


def _is_loop_test(e: ex.Expr) -> bool:
    """Whether ``e`` is ``e.src.id != e.dst.id`` (either way round): not a self-loop."""
    return (isinstance(e, ex.Compare) and e.op == "!=" and isinstance(e.a, ex.NodeId)
            and isinstance(e.b, ex.NodeId) and {e.a.node, e.b.node} == {"src", "dst"})


class GuardedEdges:
    """The edges of a graph on which every one of ``guards`` (bool expressions over an
    edge) holds, as a mask over the edges in CSR order.

    A guard's terms joined by ``&`` that read one end only are evaluated once per node
    (:meth:`node_masks`) and spread over the edges; terms that read the ends' ids and
    degrees only (``e.src.id != e.dst.id``) once per graph; the others on the edges
    those leave. No array of edge ends is kept: the sources are spread from the rows,
    the destinations are the graph's own. Where a guard reads a field through an index
    (``.at()``), which raises on a bad one, the guards are evaluated whole, each on the
    edges the ones before it keep, as the engine's edge phase does.

    ``loops``: whether self-loops matter to the caller; where they do not (a spread of
    labels), a ``e.src.id != e.dst.id`` term is left out.
    """

    def __init__(self, guards: tuple[ex.Expr, ...], loops: bool = True) -> None:
        self.guards = guards
        self.whole = any(isinstance(x, ex.FieldAt) for g in guards for x in ex.walk(g))
        self.per_node: dict[str, list[ex.Expr]] = {"src": [], "dst": []}
        #: a term keeps only the edges that are not self-loops
        self.no_loops = False
        self.per_graph: list[ex.Expr] = []
        self.per_edge: list[ex.Expr] = []
        for g in guards:
            for term in _conjuncts(g):
                end = end_read_by(term)
                if end is not None:
                    self.per_node[end or "src"].append(term)
                elif _is_loop_test(term):
                    self.no_loops = self.no_loops or loops
                elif all(isinstance(x, _STRUCTURE) for x in ex.walk(term)):
                    self.per_graph.append(term)
                else:
                    self.per_edge.append(term)

    @property
    def by_nodes(self) -> bool:
        """Whether the kept edges are those between the nodes of :meth:`node_masks`
        (self-loops aside where :attr:`no_loops`): no other term.
        """
        return not (self.whole or self.per_graph or self.per_edge)

    def node_masks(self, graph: Graph, fields: dict[str, np.ndarray], params: dict[str, Any],
                   degrees: dict[str, np.ndarray]) -> tuple[Any, Any]:
        """The nodes the one-end terms let send and receive an edge (``ALL``: every
        node).
        """
        out = []
        for end in ("src", "dst"):
            terms = self.per_node[end]
            if self.whole or not terms:
                out.append(ALL)
                continue
            n = graph.n_nodes
            env = Env(fields, {end: ALL}, None, n, params, 0, graph, degrees)
            mask = broadcast(evaluate(terms[0], env), n, "bool").copy()
            for term in terms[1:]:
                mask &= broadcast(evaluate(term, env), n, "bool")
            out.append(ALL if mask.all() else mask)
        return out[0], out[1]

    def kept(self, graph: Graph, fields: dict[str, np.ndarray], params: dict[str, Any],
             degrees: dict[str, np.ndarray],
             masks: tuple[Any, Any] | None = None) -> tuple[np.ndarray | None, Any]:
        """A mask of the kept edges of ``graph`` (``None``: every edge), and one of the
        nodes that may send one (``ALL``: any node); ``masks``: what :meth:`node_masks`
        answered, where the caller asked already.
        """
        if self.whole:
            return self._sequential(graph, fields, params, degrees), ALL
        senders, receivers = masks or self.node_masks(graph, fields, params, degrees)
        if self.few(graph, senders):
            pos, _, _ = self.from_senders(graph, senders, receivers, fields, params, degrees)
            keep = np.zeros(graph.n_edges, dtype=bool)
            keep[pos] = True
            return keep, senders
        keep = None
        if senders is not ALL:
            keep = np.repeat(senders, np.diff(graph.indptr))
        if receivers is not ALL:
            on = receivers.view(np.uint8).take(graph.indices).view(bool)
            keep = on if keep is None else np.logical_and(keep, on, out=keep)
        fixed = [_not_loops(graph)] if self.no_loops else []
        fixed += [self._per_graph(term, graph, degrees) for term in self.per_graph]
        for mask in fixed:
            if mask is not None:
                keep = mask.copy() if keep is None else np.logical_and(keep, mask, out=keep)
        if self.per_edge and (keep is None or _DENSE * np.count_nonzero(keep) > keep.size):
            # most edges kept: the terms on every edge, without gathering their ends
            env = Env(fields, {"src": all_sources(graph), "dst": graph.indices},
                      graph.weights, graph.n_edges, params, 0, graph, degrees)
            hit = broadcast(evaluate(self.per_edge[0], env), graph.n_edges, "bool")
            keep = hit.copy() if keep is None else np.logical_and(keep, hit, out=keep)
            for term in self.per_edge[1:]:
                keep &= broadcast(evaluate(term, env), graph.n_edges, "bool")
        elif self.per_edge:
            ok = np.flatnonzero(keep)
            if ok.size:
                env = Env(fields, {"src": all_sources(graph).take(ok),
                                   "dst": graph.indices.take(ok)},
                          None if graph.weights is None else graph.weights.take(ok),
                          ok.size, params, 0, graph, degrees)
                hit = broadcast(evaluate(self.per_edge[0], env), ok.size, "bool").copy()
                for term in self.per_edge[1:]:
                    hit &= broadcast(evaluate(term, env), ok.size, "bool")
                if keep is None:
                    keep = hit
                else:
                    keep[ok[~hit]] = False
        return keep, senders

    @staticmethod
    def few(graph: Graph, senders: Any) -> bool:
        """Whether ``senders`` (a node mask) send few enough edges that a walk of their
        rows costs less than a pass over every edge.
        """
        return senders is not ALL and _FEW * int(
            graph.out_degree.compress(senders).sum()) < graph.n_edges

    def from_senders(self, graph: Graph, senders: np.ndarray, receivers: Any,
                     fields: dict[str, np.ndarray], params: dict[str, Any],
                     degrees: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
        """The kept edges among the rows of ``senders`` (the one-end terms' nodes, with
        ``receivers``): their positions, sources and destinations (intp).
        """
        rows = np.flatnonzero(senders)
        starts = graph.indptr[rows].astype(np.intp)
        deg = graph.indptr[rows + 1] - starts
        pos = np.arange(int(deg.sum())) + np.repeat(starts - (np.cumsum(deg) - deg), deg)
        src, dst = np.repeat(rows, deg), graph.indices.take(pos).astype(np.intp)
        ok = np.ones(pos.size, dtype=bool)
        if receivers is not ALL:
            ok &= receivers[dst]
        if self.no_loops:
            ok &= src != dst
        for term in self.per_graph:
            ok &= self._per_graph(term, graph, degrees)[pos]
        pos, src, dst = pos[ok], src[ok], dst[ok]
        if self.per_edge and pos.size:
            env = Env(fields, {"src": src, "dst": dst},
                      None if graph.weights is None else graph.weights.take(pos), pos.size,
                      params, 0, graph, degrees)
            ok = broadcast(evaluate(self.per_edge[0], env), pos.size, "bool").copy()
            for term in self.per_edge[1:]:
                ok &= broadcast(evaluate(term, env), pos.size, "bool")
            pos, src, dst = pos[ok], src[ok], dst[ok]
        return pos, src, dst

    def few_receivers(self, graph: Graph, receivers: Any) -> bool:
        """Whether ``receivers`` (a node mask) get few enough edges that a walk of their
        rows in the reverse graph costs less than a pass over every edge, and the terms
        can be read there (no edge weight: the reverse graph's edges are in another
        order).
        """
        if receivers is ALL or self.whole:
            return False
        if graph.weights is not None and any(
                isinstance(x, ex.EdgeWeight) for t in self.per_graph + self.per_edge
                for x in ex.walk(t)):
            return False
        return _FEW * int(graph.in_degree.compress(receivers).sum()) < graph.n_edges

    def from_receivers(self, graph: Graph, senders: Any, receivers: np.ndarray,
                       fields: dict[str, np.ndarray], params: dict[str, Any],
                       degrees: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The kept edges into the nodes of ``receivers`` (where :meth:`few_receivers`
        holds), walked on the reverse graph: their sources and destinations (intp), by
        destination.
        """
        rev = graph.reverse
        dst = np.flatnonzero(receivers)
        starts = rev.indptr[dst].astype(np.intp)
        deg = rev.indptr[dst + 1] - starts
        pos = np.arange(int(deg.sum())) + np.repeat(starts - (np.cumsum(deg) - deg), deg)
        src, dst = rev.indices.take(pos).astype(np.intp), np.repeat(dst, deg)
        ok = np.ones(src.size, dtype=bool)
        if senders is not ALL:
            ok &= senders[src]
        if self.no_loops:
            ok &= src != dst
        src, dst = src[ok], dst[ok]
        terms = self.per_graph + self.per_edge
        if terms and src.size:
            env = Env(fields, {"src": src, "dst": dst}, None, src.size, params, 0, graph,
                      degrees)
            ok = broadcast(evaluate(terms[0], env), src.size, "bool").copy()
            for term in terms[1:]:
                ok &= broadcast(evaluate(term, env), src.size, "bool")
            src, dst = src[ok], dst[ok]
        return src, dst

    def _sequential(self, graph: Graph, fields: dict[str, np.ndarray], params: dict[str, Any],
                    degrees: dict[str, np.ndarray]) -> np.ndarray:
        """The kept edges, each guard evaluated whole on those the ones before it keep."""
        ok = np.arange(graph.n_edges)
        src, w = all_sources(graph), graph.weights
        for g in self.guards:
            env = Env(fields, {"src": src.take(ok), "dst": graph.indices.take(ok)},
                      None if w is None else w.take(ok), ok.size, params, 0, graph, degrees)
            ok = ok[broadcast(evaluate(g, env), ok.size, "bool")]
        keep = np.zeros(graph.n_edges, dtype=bool)
        keep[ok] = True
        return keep

    @staticmethod
    def _per_graph(term: ex.Expr, graph: Graph, degrees: dict[str, np.ndarray]) -> np.ndarray:
        """``term`` (reading ids and degrees only) on every edge, once per graph."""
        fixed = derived(graph, f"guard_term:{id(term)}", lambda g: [None, None])
        if fixed[0] is not term:
            env = Env({}, {"src": all_sources(graph), "dst": graph.indices}, None, graph.n_edges,
                      {}, 0, graph, degrees)
            fixed[:] = [term, broadcast(evaluate(term, env), graph.n_edges, "bool")]
        return fixed[1]


def row_counts(graph: Graph, keep: np.ndarray | None) -> np.ndarray:
    """How many of the edges ``keep`` marks (``None``: all) each node sends."""
    if keep is None:
        return np.diff(graph.indptr)
    total = np.zeros(keep.size + 1, dtype=np.int32 if keep.size < 2**31 else np.int64)
    np.cumsum(keep, out=total[1:])
    return np.diff(total[graph.indptr])


def _structure(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``graph``'s CSR rows with a one (int32) per entry: what a sparse product counting
    neighbours takes, once per graph.
    """
    def build(g: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # one index type for both, as the kernels want
        return g.indptr, g.indices.astype(g.indptr.dtype, copy=False), _ones(g.n_edges)

    return derived(graph, "count_pattern", build)


#: Entries up to which the products' ones are views of one shared read-only array, not
#: a new array a graph: its first touch of fresh memory costs more than the product.
_SHARED_ONES = 1 << 21
_ones_kept = np.ones(0, dtype=np.int32)


def _ones(size: int) -> np.ndarray:
    """``size`` ones (int32, read-only)."""
    global _ones_kept
    if size > _SHARED_ONES:
        return np.ones(size, dtype=np.int32)
    if _ones_kept.size < size:
        _ones_kept = np.ones(min(max(size, 2 * _ones_kept.size), _SHARED_ONES),
                             dtype=np.int32)
        _ones_kept.flags.writeable = False
    return _ones_kept[:size]


def _loops(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """The nodes with a self-loop and how many each has, once per graph: the diagonal of
    the counting pattern, summed in one pass in C (no array of every edge's source).
    """
    def build(g: Graph) -> tuple[np.ndarray, np.ndarray]:
        indptr, indices, ones = _structure(g)
        n = g.n_nodes
        if _csr_diagonal is not None:  # no sparse array: its checks read every entry
            diagonal = np.zeros(n, dtype=ones.dtype)
            _csr_diagonal(0, n, n, indptr, indices, ones, diagonal)
        else:  # pragma: no cover
            import scipy.sparse as sp

            diagonal = sp.csr_array((ones, indices, indptr), shape=(n, n)).diagonal()
        nodes = np.flatnonzero(diagonal)
        return nodes, diagonal[nodes]

    return derived(graph, "self_loops", build)


def _not_loops(graph: Graph) -> np.ndarray | None:
    """The edges that are not self-loops (``None``: the graph has none), once per graph."""
    def build(g: Graph) -> np.ndarray | None:
        mask = g.indices != all_sources(g)
        return None if mask.all() else mask

    return derived(graph, "not_loops", build)


#: Senders whose rows hold less than 1 / _FEW of the edges are walked row by row.
_FEW = 8
#: Where the one-end terms keep more than 1 / _DENSE of the edges, the other terms are
#: evaluated on every edge rather than on those kept.
_DENSE = 2


#: what a node operator's values may read for :class:`MarkStep`: the node's own fields,
#: id and degrees, constants and parameters; nothing of another node or of a statement
_OWN_NODE = (ex.FieldLoad, ex.NodeId, ex.Degree, ex.Const, ex.NumNodes, ex.Iteration,
             ex.BinOp, ex.UnaryOp, ex.Compare, ex.Select, ex.Cast)


def _reads_own_node_only(e: ex.Expr) -> bool:
    for x in ex.walk(e):
        if isinstance(x, ex.ParamRef):
            if isinstance(x, ex.StepTotalRef):
                return False
        elif not isinstance(x, _OWN_NODE):
            return False
    return True


class MarkStep:
    """A stage whose run is one super-step, run at once over every kept edge.

    The shape: an edge operator of guards followed by non-activating ``min``, ``max``
    or ``or`` reductions of a constant into an integer field of ``e.dst`` or of the
    node ``e.src.id`` or ``e.dst.id`` names (``e.dst.has_in.reduce_max(1,
    activate=False)``), and at most a node operator after the edges made of plain
    stores that read their own node only. Nothing activates, so the run stops after its
    first step: each end of a kept edge gets the constant, then the node operator runs
    on the step's nodes.

    Which nodes a first step processes depends on the driving: the start set (data,
    subset), every node (topology), whole partitions (spatial). :meth:`run` takes the
    start set's answer only where every driving gives it: no kept edge leaves a node
    outside the start set, and the node operator changes no node outside it; else it
    declines and the engine runs the super-step.
    """

    def __init__(self, guards: GuardedEdges, marks: tuple[ex.Reduction, ...],
                 stores: tuple[ex.Assign, ...]) -> None:
        self.guards = guards
        self.marks = marks
        self.stores = stores

    @classmethod
    def of(cls, spec: AlgorithmSpec) -> MarkStep | None:
        """The :class:`MarkStep` of ``spec``, or ``None`` where it has another shape."""
        op = spec.edge
        if (op is None or op.raw is not None or op.first or spec.step_totals
                or spec.converge_below is not None or spec.priority is not None
                or (spec.node is not None and not spec.node_after_edges)):
            return None
        guards = [s.value for s in op.statements if isinstance(s, ex.Guard)]
        marks = op.statements[len(guards):]
        if not marks or any(not isinstance(s, ex.Guard) for s in op.statements[:len(guards)]):
            return None
        for s in marks:
            if not (isinstance(s, ex.Reduction) and s.kind.name in _AT_KINDS
                    and not s.activating and s.activate_above is None
                    and isinstance(s.value, (ex.Const, ex.ParamRef))
                    and not isinstance(s.value, ex.StepTotalRef)
                    and (s.at is None or isinstance(s.at, ex.NodeId))):
                return None
        for g in guards:
            if any(isinstance(x, (ex.StmtValue, ex.StepTotalRef)) for x in ex.walk(g)):
                return None
        stores = () if spec.node is None else tuple(spec.node.statements)
        if not all(isinstance(s, ex.Assign) and _reads_own_node_only(s.value)
                   for s in stores):
            return None
        return cls(GuardedEdges(tuple(guards)), tuple(marks), stores)

    def run(self, graph: Graph, fields: dict[str, np.ndarray], params: dict[str, Any],
            start: np.ndarray | None, degrees: dict[str, np.ndarray]) -> dict[str, Any] | None:
        """Run the step and return the run's statistics; or ``None``, with ``fields``
        untouched, where the answer depends on the driving (see the class docstring).

        ``start`` holds the start node ids (``None``: every node; repeats allowed).
        """
        n = graph.n_nodes
        if any(fields[s.field].dtype.kind not in "iu" for s in self.marks):
            return None
        outside = None
        if start is not None:
            outside = np.ones(n, dtype=bool)
            outside[start] = False
            if not outside.any():
                outside = None
        sends, receives, how = self._ends(graph, fields, params, degrees)
        if outside is not None and bool(np.logical_and(sends, outside).any()):
            return None  # an edge from outside the start set would mark under topology
        out = {s.field: fields[s.field].copy() for s in self.marks}
        scalar = Env(fields, {}, None, 1, params, 0, graph, degrees)
        for s in self.marks:
            hit = receives if s.at is None or s.at.node == "dst" else sends
            f = out[s.field]
            value = np.asarray(evaluate(s.value, scalar)).astype(s.dtype)
            np.copyto(f, _AT_KINDS[s.kind.name](f, value), casting="unsafe", where=hit)
        if self.stores:
            # every node's stores read its own fields only: evaluated at every node, and
            # kept where the nodes outside the start set keep their values
            seen = {**fields, **out}
            stored = self._stores(seen, params, graph, degrees)
            if outside is not None and any(bool(np.logical_and(v != seen[k], outside).any())
                                           for k, v in stored.items()):
                return None  # the node operator would change a node outside the set
            out.update(stored)
        fields.update(out)
        return {"formulation": f"one marking step ({how})", "levels": 1,
                "reached": int(np.count_nonzero(sends | receives))}

    def _ends(self, graph: Graph, fields: dict[str, np.ndarray], params: dict[str, Any],
              degrees: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, str]:
        """The nodes with a kept out-edge, those with a kept in-edge, and how they were
        found.

        Few senders: their rows are walked. Else where the guards keep the edges between
        two sets of nodes (self-loops aside), two sparse products count them: the
        out-edges of each node into a receiver, and its in-edges from a sender (less its
        self-loops where those do not count). Else the kept edges' ends are stored.
        """
        n = graph.n_nodes
        senders, receivers = self.guards.node_masks(graph, fields, params, degrees)
        if not self.guards.whole and self.guards.few(graph, senders):
            _, src, dst = self.guards.from_senders(graph, senders, receivers, fields, params,
                                                   degrees)
            sends = np.zeros(n, dtype=bool)
            receives = np.zeros(n, dtype=bool)
            sends[src] = True
            receives[dst] = True
            return sends, receives, "row walks"
        if self.guards.by_nodes and _csr_matvec is not None:
            # kept edges per node: out-edges into receivers (every node receiving: the
            # out-degrees), in-edges from senders (every node sending: the in-degrees),
            # less the self-loops where they do not count
            indptr, indices, ones = _structure(graph)
            to = np.ones(n, dtype=np.int32) if receivers is ALL else receivers.astype(np.int32)
            frm = np.ones(n, dtype=np.int32) if senders is ALL else senders.astype(np.int32)
            if receivers is ALL:
                out_kept = graph.out_degree.astype(np.int32)
            else:
                out_kept = np.zeros(n, dtype=np.int32)
                _csr_matvec(n, n, indptr, indices, ones, to, out_kept)
            if senders is ALL:
                in_kept = graph.in_degree.astype(np.int32)
            else:
                in_kept = np.zeros(n, dtype=np.int32)
                _csc_matvec(n, n, indptr, indices, ones, frm, in_kept)
            if self.guards.no_loops:
                looped, count = _loops(graph)
                out_kept[looped] -= count * to[looped]
                in_kept[looped] -= count * frm[looped]
            sends = out_kept > 0
            receives = in_kept > 0
            if senders is not ALL:
                sends &= senders
            if receivers is not ALL:
                receives &= receivers
            return sends, receives, "sparse products"
        keep, _ = self.guards.kept(graph, fields, params, degrees)
        sends = row_counts(graph, keep) > 0
        receives = np.zeros(n, dtype=bool)
        receives[graph.indices if keep is None else graph.indices.compress(keep)] = True
        return sends, receives, "indexed stores"

    def _stores(self, fields: dict[str, np.ndarray], params: dict[str, Any], graph: Graph,
                degrees: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The fields the node operator stores into, after it ran on every node, as new
        arrays (``fields`` is left as it is).
        """
        n = graph.n_nodes
        fields = dict(fields)
        written = {}
        env = Env(fields, {"self": ALL}, None, n, params, 0, graph, degrees)
        for s in self.stores:
            value = broadcast(evaluate(s.value, env), n, s.dtype)
            if s.field not in written:
                written[s.field] = fields[s.field] = fields[s.field].copy()
            fields[s.field][:] = value
            env.invalidate(s.field)
        return written


#: the ufunc of each reduction :class:`MarkStep` applies
_AT_KINDS = {"min": np.minimum, "max": np.maximum, "or": np.bitwise_or}
