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
it is one depth-first search (``scipy.sparse.csgraph.depth_first_order``) from the
start nodes that hold a better value than ``m``, taken best value first: a search
visits everything the nodes before it left unvisited and it reaches, so the node that
starts the search visiting ``v`` holds the best value that reaches ``v`` (one such
start node: a breadth-first search from it).

The searches are chained: one search starts from a new node whose row lists the start
nodes in that order, and it returns to that row after each of their searches; in the
order it visits nodes, a search begins at a start node reached from that row (its
predecessor). scipy's search rescans a node's row from its beginning each time it
returns to the node, so a row longer than :data:`_FAN` entries (that one, or a hub's)
is first split among helper nodes, each holding that many of its entries in turn, and
the row holds its helpers instead (a tree of them for a row of more than ``_FAN **
2``): the rescans cost at most that many times the edges. ``G_c`` is never written out
as an edge list: its rows are counted and its targets compressed from a mask over the
graph's edges (:class:`~gswitch.engine.cpu_guarded.GuardedEdges`), or where few nodes
send or receive its edges, those are read from their rows and searched as a subgraph
of their ends; a fresh array costs more in first touches of memory than most passes
over it on a 100,000-edge graph.

Mostly ``G_c`` is not built at all. Where every guard term reads one end of the edge
(``e.src.scc < 0``, ``e.dst.scc < 0``), a kept edge is one into a node the terms let
receive, from one they let send; where every such receiver may send, the search runs on
the graph's own rows (split once per graph) with scipy's search functions given the
other nodes as visited already (:func:`_barred_search`, with
:func:`scipy.sparse.csgraph.depth_first_order`'s own kernels where this scipy has them
as expected). A term ``a(e.dst) == a(e.src)`` (``e.dst.colour.eq(e.src.colour)``)
keeps every path within one value of ``a``: a single start node's breadth-first search
bars the nodes of the other values, and a few start nodes, each alone in its class,
search their classes one after another.

The shape is recognised from the operator's structure; nothing here names an algorithm.
The same conditions as :mod:`~gswitch.engine.cpu_closure` keep the super-steps (an
iteration limit, a node operator, step totals, ``GSWITCH_CPU_STEPS=1``, ...).
``tests/test_cpu_reach.py`` compares both.

:func:`reach_path` also answers, for a stage of another shape that runs one
super-step, its :class:`~gswitch.engine.cpu_guarded.MarkStep`: the engine runs both the
same way, in place of its super-steps.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from functools import cached_property
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
from .cpu_eval import ALL, Env, broadcast, evaluate
from .cpu_guarded import GuardedEdges, MarkStep, end_read_by, row_counts

__all__ = ["Reach", "reach_path"]

#: The longest row a depth-first search rescans; longer ones are split among helper nodes.
_FAN = 64

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

    @cached_property
    def edges(self) -> GuardedEdges:
        """How the guards are evaluated (read once); a self-loop spreads nothing."""
        return GuardedEdges(self.guards, loops=False)

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
                                 "(scipy.sparse.csgraph.depth_first_order)", "levels": 1,
                                 "reached": 0}
        if n == 0 or graph.n_edges == 0:
            return stats
        edges = self.edges
        masks = (ALL, ALL) if edges.whole else edges.node_masks(graph, fields, params,
                                                                degrees)
        senders = masks[0]
        worst = x.min() if self.kind == "max" else x.max()
        inside = None
        if start is not None:
            inside = np.zeros(n, dtype=bool)
            inside[start] = True
        seeds = np.flatnonzero(x != worst if inside is None else inside & (x != worst))
        barred = self._barred(graph, fields, params, degrees, masks, seeds)
        keep = few = None
        if barred is None:
            keep, few = self._kept(graph, fields, params, degrees, masks)
        if inside is not None:
            # a node outside the start set that may send along a kept edge, holding a
            # better value than the worst, would spread under topology driving: per node
            # first, per edge only where that finds one
            suspect = ~inside & (x != worst)
            if senders is not ALL:
                suspect &= senders
            if suspect.any():
                if barred is not None:  # the kept edges as a mask, to count them per node
                    keep, _ = edges.kept(graph, fields, params, degrees, masks=masks)
                    barred = None
                sends = row_counts(graph, keep) > 0 if few is None else np.bincount(
                    few[0], minlength=n) > 0
                if bool(sends[suspect].any()):
                    return None
        if seeds.size == 0 or (keep is not None and not keep.any()) or (
                few is not None and few[0].size == 0):
            stats["reached"] = int(seeds.size)
            return stats
        values = x[seeds]
        worse = np.greater if self.kind == "max" else np.less  # than the one before
        if seeds.size > 1 and bool(worse(values[1:], values[:-1]).any()):
            # best value first (ties in any order: either search gives the same value);
            # seeds already in that order (each holding its own id) skip the sort
            rank = np.argsort(values, kind="stable")
            seeds = seeds[rank[::-1] if self.kind == "max" else rank]
        # few kept edges: the searches run on the subgraph of their ends (renumbered)
        on, ids = (graph, None) if few is None else _subgraph(*few, seeds)
        local = seeds if ids is None else np.searchsorted(ids, seeds)
        if barred is not None:
            depth = seeds.size > 1 and barred[1] is None
            stats["formulation"] = (f"reach closure (scipy.sparse.csgraph's "
                                    f"{'depth' if depth else 'breadth'}-first "
                                    "search, the nodes no kept edge enters barred)")
            reached, source = _barred_search(graph, *barred, seeds)
        elif seeds.size == 1:
            stats["formulation"] = ("reach closure "
                                    "(scipy.sparse.csgraph.breadth_first_order)")
            matrix, _ = _matrix(on, keep)
            reached = csgraph.breadth_first_order(matrix, int(local[0]), directed=True,
                                                  return_predecessors=False)
            source = np.full(reached.size, local[0])
        else:
            reached, source = _first_search(on, keep, local)
        if ids is not None:
            reached, source = ids[reached], ids[source]
        best = x[source]
        combine = np.maximum if self.kind == "max" else np.minimum
        x[reached] = combine(x[reached], best)
        stats["reached"] = int(reached.size)
        return stats

    def _kept(self, graph: Graph, fields: dict[str, np.ndarray], params: dict[str, Any],
              degrees: dict[str, np.ndarray], masks: tuple[Any, Any]
              ) -> tuple[np.ndarray | None, Any]:
        """The kept edges: a mask over the graph's (``None``: all); or, where the nodes
        that may send or receive one (``masks``, :meth:`GuardedEdges.node_masks`) send or
        receive few edges, the mask ``None`` and the kept edges' sources and
        destinations as the second value (else ``None``).
        """
        edges = self.edges
        if edges.whole:
            return edges.kept(graph, fields, params, degrees)[0], None
        senders, receivers = masks
        if edges.few(graph, senders):
            _, src, dst = edges.from_senders(graph, senders, receivers, fields, params,
                                             degrees)
            return None, (src, dst)
        if edges.few_receivers(graph, receivers):
            return None, edges.from_receivers(graph, senders, receivers, fields, params,
                                              degrees)
        return edges.kept(graph, fields, params, degrees, masks=masks)[0], None

    def _barred(self, graph: Graph, fields: dict[str, np.ndarray], params: dict[str, Any],
                degrees: dict[str, np.ndarray], masks: tuple[Any, Any],
                seeds: np.ndarray) -> tuple[Any, np.ndarray | None] | None:
        """Where the search from ``seeds`` may run on the graph itself with some nodes
        barred (:func:`_barred_search`): the barred nodes (a mask, or ``ALL`` for none),
        and the value per node of the class each seed searches alone (or ``None``);
        else ``None``.

        It may where the kept edges are those into the nodes the guards let receive one,
        every one of which may send (the guards' terms read one end each), and no seed
        is barred. A term ``a(e.dst) == a(e.src)`` (a node expression, the same at both
        ends: ``e.dst.part.eq(e.src.part)``) keeps a path only within one value of ``a``
        (a class): a single seed bars the nodes of the other classes; several seeds, each
        alone in its class and at most :data:`_CLASS_SEARCHES` of them, search their own
        class each, the others barred. A single seed is searched breadth first; several
        (with no such term) are chained depth first on the graph's rows, its long rows
        split once per graph: cheaper than the kept graph's mask, compression and split
        rows, even where few nodes may be entered (the search reads only the rows of
        those it enters; where their rows hold few edges, they are walked instead:
        :meth:`GuardedEdges.few`).
        """
        edges = self.edges
        if (_DFS is None or _BFS is None or seeds.size == 0 or edges.whole
                or edges.per_graph or edges.few(graph, masks[0])
                or edges.few_receivers(graph, masks[1])):
            return None  # (few kept edges: their rows are walked instead)
        senders, receivers = masks
        enter = None if receivers is ALL else receivers
        classes = None
        for term in edges.per_edge:
            end = _one_value_along_paths(term)
            if end is None or (seeds.size > 1 and (
                    len(edges.per_edge) > 1 or seeds.size > _CLASS_SEARCHES)):
                return None
            env = Env(fields, {end: ALL}, None, graph.n_nodes, params, 0, graph, degrees)
            value = broadcast(evaluate(term.a, env), graph.n_nodes, term.a.dtype)
            if seeds.size == 1:
                same = value == value[seeds[0]]
                enter = same if enter is None else enter & same
            elif sorted_unique(value[seeds]).size < seeds.size:
                return None  # two seeds of a class: the better reaches first
            else:
                classes = value
        if enter is None:
            return (ALL, classes) if senders is ALL else None
        if senders is not ALL and bool(np.any(enter & ~senders)):
            return None
        if not bool(enter[seeds].all()):
            return None
        return ~enter, classes


def _one_value_along_paths(term: ex.Expr) -> str | None:
    """For a guard term ``a(one end) == a(the other end)``, the end its left side
    reads (a path of edges that keep it holds one value of ``a``); else ``None``.
    """
    if not (isinstance(term, ex.Compare) and term.op == "=="):
        return None
    end = end_read_by(term.a)
    if {end, end_read_by(term.b)} != {"src", "dst"} or not _same_but_end(term.a, term.b):
        return None
    return end


def _same_but_end(a: Any, b: Any) -> bool:
    """Whether expressions ``a`` and ``b`` are the same but for the edge end they read."""
    if type(a) is not type(b):
        return False
    if not isinstance(a, ex.Expr):
        return a == b
    for f in dataclasses.fields(a):
        if f.name == "node":
            continue
        if not _same_but_end(getattr(a, f.name), getattr(b, f.name)):
            return False
    return True


def _subgraph(src: np.ndarray, dst: np.ndarray, seeds: np.ndarray) -> tuple[Graph, np.ndarray]:
    """The graph of the edges ``src -> dst`` on their ends and ``seeds``, renumbered in id
    order, and those ids (a search costs its edges, not the whole graph's nodes and
    edges).
    """
    if src.size > 1 and bool(np.any(src[1:] < src[:-1])):
        order = np.argsort(src, kind="stable")
        src, dst = src[order], dst[order]
    ids = sorted_unique(np.concatenate([src, dst, seeds]))
    rows = np.searchsorted(ids, src)
    indptr = np.zeros(ids.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=ids.size), out=indptr[1:])
    cols = np.searchsorted(ids, dst).astype(np.int32)
    return Graph(indptr, cols, directed=True, validate=False), ids


def _first_search(graph: Graph, keep: np.ndarray | None,
                  seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The nodes of ``graph`` that ``seeds`` reach over the edges ``keep`` marks
    (``None``: all), and for each the first of the seeds that reaches it: one
    depth-first search from a node whose row lists the seeds in order (module
    docstring).
    """
    matrix, top = _matrix(graph, keep, seeds, fan=True)
    visit, pred = csgraph.depth_first_order(matrix, top, directed=True)
    return _by_first_start(visit, pred, top, graph.n_nodes)


def _by_first_start(visit: np.ndarray, pred: np.ndarray, top: int,
                    n: int) -> tuple[np.ndarray, np.ndarray]:
    """The graph's nodes (ids below ``n``) in a chained search's visit order, and the
    start node whose search visited each.
    """
    # a search starts at a seed the start row (or a helper of it: the nodes from top on)
    # leads to, and goes on up to the next start in the visit order
    if visit.size == 0:
        return visit, visit
    starts = pred.take(visit) >= top
    starts[0] = True  # the chain's own start node (a helper: dropped below)
    at = np.flatnonzero(starts)
    first = np.repeat(visit.take(at), np.diff(at, append=visit.size))
    mine = visit < n
    return visit[mine], first[mine]


def _barred_search(graph: Graph, barred: Any, classes: np.ndarray | None,
                   seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`_first_search` over every edge of ``graph`` into a node that is not
    ``barred`` (a node mask; ``ALL``: none is), where no seed is barred: scipy's
    search is given the barred nodes as visited already, so no mask over the edges is
    computed and no edge list is written. One seed: a breadth-first search on the
    graph's own rows; one seed per value of ``classes``: one such search each, the
    nodes of the other values barred; else the chained depth-first search on the
    graph's rows with its long rows split (:func:`_fanned_all`), built once per graph.
    """
    n = graph.n_nodes
    if seeds.size == 1 or classes is not None:
        indptr, indices = _search_rows(graph)
        visit = np.empty(n, dtype=np.int32)
        pred = np.full(n, _NULL, dtype=np.int32)
        if classes is not None:
            pred[:] = n  # anything but _NULL: taken as visited
        elif barred is not ALL:
            pred[barred] = n
        reached, source = [], []
        open_ = None if classes is None or barred is ALL else ~barred
        for seed in seeds.tolist():
            mine = None
            if classes is not None:  # a pass over the nodes: cheaper than grouping them
                same = classes == classes.item(seed)
                mine = np.flatnonzero(same if open_ is None else np.logical_and(
                    same, open_, out=same))
                pred[mine] = _NULL
            length = int(_BFS(seed, indices, indptr, visit, pred))
            if mine is not None:
                pred[mine] = n  # searched: no other class's search enters it
            reached.append(visit[:length].copy())
            source.append(np.full(length, seed, dtype=np.int32))
        if len(reached) == 1:
            return reached[0], source[0]
        return np.concatenate(reached), np.concatenate(source)
    counts, cols = derived(graph, "reach_fanned_rows", _fanned_rows)
    top = counts.size
    more, entries = _start_rows(seeds, top, _fan_width())
    kind = np.int32 if cols.size + entries.size < 2**31 else np.int64
    indptr = np.zeros(top + more.size + 1, dtype=kind)
    np.cumsum(counts, out=indptr[1:top + 1])
    np.cumsum(more, out=indptr[top + 1:])
    indptr[top + 1:] += indptr[top]
    indices = np.concatenate([cols, entries]).astype(kind, copy=False)
    total = indptr.size - 1
    flag = np.zeros(total, dtype=np.int32)
    if barred is not ALL:
        flag[:n] = barred
    visit = np.empty(total, dtype=np.int32)
    pred = np.full(total, _NULL, dtype=np.int32)
    length = _DFS(top, indices, indptr, visit, pred, np.empty(total, dtype=np.int32), flag)
    return _by_first_start(visit[:length], pred, top, n)


def _search_rows(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """``graph``'s CSR arrays in one index type, as scipy's searches take them."""
    if graph.indptr.dtype == graph.indices.dtype:
        return graph.indptr, graph.indices
    return derived(graph, "reach_search_rows", lambda g: (
        g.indptr, g.indices.astype(g.indptr.dtype)))


def _fanned_rows(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """``graph``'s row lengths and entries with its rows longer than :func:`_fan_width`
    split among helper nodes (:func:`_fanned_all`), read-only: once per graph.
    """
    counts, cols = _fanned_all(np.diff(graph.indptr), graph.indices, _fan_width())
    counts.flags.writeable = False
    cols.flags.writeable = False
    return counts, cols


#: Seeds up to which a reach whose guard keeps each search within a class of nodes
#: (:meth:`Reach._barred`) searches each seed's class on its own: each search costs a
#: pass over the nodes, and the kept graph one over the edges.
_CLASS_SEARCHES = 32

#: what scipy's searches take as "no predecessor": a node not visited yet
_NULL = -9999


def _scipy_searches() -> tuple[Any, Any]:
    """The depth- and breadth-first searches of scipy over CSR arrays, with a caller's
    visited flags (the depth-first one) or predecessors (the breadth-first one): the
    functions behind ``depth_first_order`` and ``breadth_first_order``, where this
    scipy has them with those signatures and they answer a small search right; else
    ``None`` for each.
    """
    try:
        from scipy.sparse.csgraph._traversal import _breadth_first_directed as bfs
        from scipy.sparse.csgraph._traversal import _depth_first_directed as dfs

        # 0 -> 1 -> 2, 0 -> 3 with 1 marked visited: only 0 and 3
        indices = np.array([1, 3, 2], np.int32)
        indptr = np.array([0, 2, 3, 3, 3], np.int32)
        visit, pred = np.empty(4, np.int32), np.full(4, _NULL, np.int32)
        flag = np.array([0, 1, 0, 0], dtype=np.int32)
        length = dfs(0, indices, indptr, visit, pred, np.empty(4, np.int32), flag)
        ok_dfs = int(length) == 2 and visit[:2].tolist() == [0, 3] and int(pred[3]) == 0
        visit, pred = np.empty(4, np.int32), np.full(4, _NULL, np.int32)
        pred[1] = 4
        length = bfs(0, indices, indptr, visit, pred)
        ok_bfs = int(length) == 2 and visit[:2].tolist() == [0, 3] and int(pred[3]) == 0
        if ok_dfs and ok_bfs:
            return dfs, bfs
    except Exception:  # noqa: BLE001 - any failure: the public searches are used
        pass
    return None, None


_DFS, _BFS = _scipy_searches()


def _matrix(graph: Graph, keep: np.ndarray | None, start_row: np.ndarray | None = None,
            fan: bool = False) -> tuple[sp.csr_array, int]:
    """The graph of the edges of ``graph`` that ``keep`` marks (``None``: all) as a
    square CSR matrix of ones for ``scipy.sparse.csgraph``, and ``top``: with a
    ``start_row`` (node ids), a new node whose row lists them, numbered after every
    other node but its own helpers (which follow it); else the number of nodes.

    With ``fan``, a row longer than :func:`_fan_width` entries is split among new nodes
    (numbered after the graph's; :func:`_fanned`). Reachability among the other nodes is
    unchanged, and a depth-first search rescans no row longer than that.
    """
    deg = row_counts(graph, keep)
    m = int(deg.sum())
    counts = deg
    indices = np.empty(m, dtype=np.int32)
    if keep is None:
        indices[:] = graph.indices
    else:
        np.compress(keep, graph.indices, out=indices)
    width = _fan_width()
    if fan:
        counts, indices = _fanned_all(counts, indices, width)
    top = counts.size
    if start_row is not None:
        more, entries = _start_rows(start_row, top, width if fan else start_row.size)
        counts = np.concatenate([counts, more])
        indices = np.concatenate([indices, entries])
    total = counts.size
    indptr = np.zeros(total + 1, dtype=np.int32)
    np.cumsum(counts, out=indptr[1:])
    return sp.csr_array((_ones(indices.size), indices, indptr), shape=(total, total)), top


def _start_rows(start_row: np.ndarray, top: int,
                width: int) -> tuple[np.ndarray, np.ndarray]:
    """Row lengths and entries of node ``top`` listing ``start_row`` and of its helpers
    (numbered from ``top + 1`` on), none longer than ``width``: the list is cut into
    pieces of ``width``, a helper each, and so on up to a row short enough for ``top``.
    """
    counts, entries = [], []
    row = start_row.astype(np.int32, copy=False)
    nxt = top + 1
    while row.size > max(width, 1):
        pieces = -(-row.size // width)
        size = np.full(pieces, width, dtype=np.int64)
        size[-1] = row.size - (pieces - 1) * width
        counts.append(size)
        entries.append(row)
        row = np.arange(nxt, nxt + pieces, dtype=np.int32)
        nxt += pieces
    # top's row, then the helpers' in id order: the pieces cut first come first
    return (np.concatenate([[row.size], *counts]).astype(np.int64),
            np.concatenate([row, *entries]))


def _fanned_all(counts: np.ndarray, cols: np.ndarray,
                width: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_fanned` until no row is longer than ``width``: a row of more than
    ``width ** 2`` entries takes more levels.
    """
    long_rows = np.flatnonzero(counts > width)
    while long_rows.size:
        counts, cols = _fanned(counts, cols, long_rows, width)
        long_rows = long_rows[counts[long_rows] > width]
    return counts, cols


#: Entries up to which the matrices' values (never read by a traversal) are views of
#: one shared array of ones, not a new array a search: a first touch of fresh memory
#: costs more than the search on a 100,000-edge graph.
_SHARED_ONES = 1 << 21
_ones_kept = np.ones(0)


def _ones(size: int) -> np.ndarray:
    """``size`` ones (float64, read-only)."""
    global _ones_kept
    if size > _SHARED_ONES:
        return np.ones(size)
    if _ones_kept.size < size:
        _ones_kept = np.ones(min(max(size, 2 * _ones_kept.size), _SHARED_ONES))
        _ones_kept.flags.writeable = False
    return _ones_kept[:size]


def _fan_width() -> int:
    """The longest row a fanned graph keeps: :data:`_FAN`, and at least 2 (a row split
    into rows of one entry each would be as long as before).
    """
    return max(_FAN, 2)


def _fanned(counts: np.ndarray, cols: np.ndarray, long_rows: np.ndarray,
            width: int) -> tuple[np.ndarray, np.ndarray]:
    """Row lengths and entries of a CSR graph (``counts``, ``cols``) whose rows
    ``long_rows`` are each split into pieces of ``width`` entries: a new node per piece
    (numbered from ``counts.size`` on, in order) holds the piece, and the long row holds
    its new nodes instead. The new nodes' rows are the long rows' entries as they were,
    in order: a mask moves them, and no entry is computed.
    """
    rows = counts.size
    d = counts[long_rows]
    pieces = (d + width - 1) // width
    new_counts = counts.copy()
    new_counts[long_rows] = pieces
    is_long = np.zeros(rows, dtype=bool)
    is_long[long_rows] = True
    moved = np.repeat(is_long, counts)  # the entries that move to the new nodes
    slot = np.repeat(is_long, new_counts)  # where the long rows list their new nodes
    head = np.empty(slot.size, dtype=np.int32)
    head[slot] = np.arange(rows, rows + int(pieces.sum()), dtype=np.int32)
    head[~slot] = cols.compress(~moved)
    piece_counts = np.full(int(pieces.sum()), width, dtype=counts.dtype)
    piece_counts[np.cumsum(pieces) - 1] = d - (pieces - 1) * width  # each row's last
    return (np.concatenate([new_counts, piece_counts]),
            np.concatenate([head, cols.compress(moved)]))


def reach_path(spec: AlgorithmSpec, params: dict[str, Any], fields: dict[str, np.ndarray],
               max_iterations: int) -> Reach | MarkStep | None:
    """The :class:`Reach` of this run's operator, or for a stage that runs one
    super-step its :class:`~gswitch.engine.cpu_guarded.MarkStep`; ``None`` where the run
    needs its super-steps (the module docstring says when).
    """
    found = _shape(spec)  # cached per spec: most operators have no such shape
    if found is None or max_iterations < 2 or os.environ.get("GSWITCH_CPU_STEPS") == "1":
        return None
    if isinstance(found, Reach):
        x = fields.get(found.field)
        if max_iterations < NO_LIMIT or x is None or x.dtype.kind not in "iu" \
                or x.dtype.name != _SHAPES[id(spec)][2]:
            return None
    return found


#: id(spec) -> (spec, what :func:`_read_shape` found, the reduction's dtype): kept (a
#: spec never changes), as every stage run of a staged algorithm asks again
_SHAPES: dict[int, tuple[AlgorithmSpec, Reach | MarkStep | None, str]] = {}


def _shape(spec: AlgorithmSpec) -> Reach | MarkStep | None:
    hit = _SHAPES.get(id(spec))
    if hit is None or hit[0] is not spec:
        if len(_SHAPES) > 256:
            _SHAPES.clear()
        found, dtype = _read_shape(spec)
        hit = _SHAPES[id(spec)] = (spec, found, dtype)
    return hit[1]


def _read_shape(spec: AlgorithmSpec) -> tuple[Reach | MarkStep | None, str]:
    op = spec.edge
    if (op is None or op.raw is not None or op.first or spec.node is not None
            or spec.step_totals or spec.converge_below is not None
            or not op.statements):
        return MarkStep.of(spec), ""
    *guards, s = op.statements
    if not (isinstance(s, ex.Reduction) and s.kind.name in ("max", "min")
            and s.node == "dst" and s.at is None and s.activate_above is None
            and isinstance(s.value, ex.FieldLoad) and s.value.field == s.field
            and s.value.node == "src"):
        return MarkStep.of(spec), ""
    for g in guards:
        if not isinstance(g, ex.Guard):
            return None, ""
        for e in ex.walk(g.value):
            if isinstance(e, _STEP_DEPENDENT) or (
                    isinstance(e, (ex.FieldLoad, ex.FieldAt)) and e.field == s.field):
                return None, ""
    return Reach(s.field, s.kind.name, tuple(g.value for g in guards)), s.dtype
