"""Intrinsics of the operator language on the CPU engine.

``e.common_neighbours()``: for each edge ``(a, b)`` of a step, the number of distinct
nodes other than ``a`` and ``b`` that both rows hold. Vectorised over the step's edges:
each edge's shorter row is expanded, and every id in it is looked up among the longer
row's edges by one binary search over the graph's sorted ``row * n + column`` keys, so
the work is the sum over edges of the smaller degree (times a logarithm), the bound of
the classic intersection-based triangle counts. Restricted to the ids below both ends or
between them, each row's part in that range is found by binary search in the same keys
(unless rows are short), and only the shorter part is expanded: on a graph numbered by
degree (the ``oriented`` triangle count) that part is short even at a hub.

``e.label_frequency(field)``: for each edge ``(a, b)`` of a step, how many entries of
``b``'s row carry ``field[a]``. The rows of the step's distinct destinations are
expanded once, their ``(row, label)`` keys sorted, and every edge's key is counted by
two binary searches: a step costs the size of the rows it reads (times a logarithm),
not their squares.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..graph import Graph
from .cpu_derived import derived

__all__ = ["common_neighbours", "label_frequency", "triangles_per_node", "NeighbourSweep"]


#: ``common_neighbours`` restricted to a range of ids finds each row's part in the range
#: (binary searches over every edge's row) where the smaller degree of an edge's ends is
#: above this on average; on graphs of shorter rows (a road network's) it reads the rows
#: whole and filters them, which costs a little less there (a whole ``oriented`` count
#: on road 230x230: 109 ms against 119 ms with the searches, one run each).
_NARROW_DEGREE = 8


def _edge_keys(graph: Graph) -> np.ndarray:
    """``row * n + column`` of every edge, ascending (rows are sorted by the run)."""
    return graph.sources().astype(np.int64) * graph.n_nodes + graph.indices


def common_neighbours(graph: Graph, a: np.ndarray, b: np.ndarray,
                      among: str = "all") -> np.ndarray:
    """Distinct common neighbours of ``a[i]`` and ``b[i]``, excluding both, per edge
    (int32): ``all`` of them, or only those with ids ``below`` both or ``between``
    them. ``graph``'s rows must be sorted (:meth:`Graph.with_sorted_rows`).
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    count = np.zeros(a.size, dtype=np.int32)
    if a.size == 0 or graph.n_edges == 0:
        return count
    keys = derived(graph, "edge_keys", _edge_keys)
    indptr = graph.indptr.astype(np.int64)
    at_a, at_b = indptr[a], indptr[b]
    len_a, len_b = indptr[a + 1] - at_a, indptr[b + 1] - at_b
    lo = hi = None
    if among != "all":
        lo, hi = np.minimum(a, b), np.maximum(a, b)
    if lo is not None and np.minimum(len_a, len_b).mean() > _NARROW_DEGREE:
        # each row's part in the range, found in the sorted keys: only that part is read
        # (a degree order makes the part below two ids short), and it holds neither end
        n = graph.n_nodes
        if among == "between":
            at_a, at_b = (np.searchsorted(keys, r * n + lo + 1) for r in (a, b))
        stop = lo if among == "below" else hi
        len_a = np.maximum(np.searchsorted(keys, a * n + stop) - at_a, 0)
        len_b = np.maximum(np.searchsorted(keys, b * n + stop) - at_b, 0)
    swap = len_a > len_b
    start = np.where(swap, at_b, at_a)  # the shorter range is expanded
    long_ = np.where(swap, a, b)  # and its ids looked up in the other row
    lens = np.where(swap, len_b, len_a)
    total = int(lens.sum())
    if total == 0:
        return count
    owner = np.repeat(np.arange(a.size), lens)  # which edge each candidate belongs to
    first = np.cumsum(lens) - lens
    pos = np.arange(total) - first[owner]
    w = graph.indices[start[owner] + pos].astype(np.int64)
    keep = (w != a[owner]) & (w != b[owner])
    if lo is not None:  # the rows were read whole (short rows), or their part in range
        lo, hi = lo[owner], hi[owner]
        keep &= (w < lo) if among == "below" else (w > lo) & (w < hi)
    # a row's repeated ids (parallel edges) are adjacent in a sorted row: count one
    keep[1:] &= ~((w[1:] == w[:-1]) & (owner[1:] == owner[:-1]))
    w, owner = w[keep], owner[keep]
    q = long_[owner] * graph.n_nodes + w
    at = np.searchsorted(keys, q)
    hit = at < keys.size
    hit[hit] = keys[at[hit]] == q[hit]
    return np.bincount(owner[hit], minlength=a.size).astype(np.int32)


def label_frequency(graph: Graph, labels: np.ndarray, a: np.ndarray,
                    b: np.ndarray) -> np.ndarray:
    """How many entries of ``b[i]``'s row carry ``labels[a[i]]``, per edge (int32)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    if a.size == 0 or graph.n_edges == 0:
        return np.zeros(a.size, dtype=np.int32)
    if bool((b[1:] >= b[:-1]).all()):  # a push step's sources come sorted: no sort
        first = np.ones(b.size, dtype=bool)
        first[1:] = b[1:] != b[:-1]
        rows, slot = b[first], np.cumsum(first) - 1
    else:
        rows, slot = np.unique(b, return_inverse=True)
    indptr = graph.indptr.astype(np.int64)
    starts, lens = indptr[rows], indptr[rows + 1] - indptr[rows]
    total = int(lens.sum())
    owner = np.repeat(np.arange(rows.size, dtype=np.int64), lens)
    first = np.cumsum(lens) - lens
    nbr = graph.indices[starts[owner] + np.arange(total) - first[owner]]
    lab = labels[nbr].astype(np.int64)
    want = labels[a].astype(np.int64)
    lo = min(int(lab.min()) if lab.size else 0, int(want.min()))
    span = max(int(lab.max()) if lab.size else 0, int(want.max())) - lo + 1
    if span * rows.size >= 2**62:  # labels too spread to pack beside the row: rank them
        uniq, inv = np.unique(np.concatenate([lab, want]), return_inverse=True)
        lab, want, lo, span = inv[:lab.size], inv[lab.size:], 0, uniq.size
    keys = owner * span + (lab - lo)
    if a.size == total and np.array_equal(nbr, a):
        # the step's edges are the rows themselves (a push step over whole rows): each
        # edge's pair is one of the keys, so its count is the length of its run
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        first = np.ones(total, dtype=bool)
        first[1:] = ordered[1:] != ordered[:-1]
        starts = np.flatnonzero(first)
        runs = np.diff(np.append(starts, total))
        count = np.empty(total, dtype=np.int32)
        count[order] = runs[np.cumsum(first) - 1]
        return count
    keys = np.sort(keys)
    query = slot.astype(np.int64) * span + (want - lo)
    count = np.searchsorted(keys, query, side="right") - np.searchsorted(keys, query)
    return count.astype(np.int32)


def triangles_per_node(graph: Graph) -> np.ndarray:
    """Triangles through each node of a simple undirected ``graph`` (int64).

    Edges are oriented from the lower to the higher (degree, id), as ``L``; a triangle
    ``a < b < c`` is then the wedge ``a -> b -> c`` closed by ``a -> c``. Two sparse
    products count them (scipy's SpGEMM): ``M = (L @ L) * L`` holds at ``(a, c)`` the
    middles ``b`` of the triangles with lowest ``a`` and highest ``c``, so its row and
    column sums credit those two ends, and ``(L.T @ L) * L`` at ``(b, c)`` the lowest
    ends ``a``, whose row sums credit the middles. Orientation bounds each row by about
    the square root of the edge count; the products' size is estimated first.
    """
    import scipy.sparse as sp

    from .._memory import check_memory

    n = graph.n_nodes
    src, dst = graph.edges()
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), graph.out_degree))] = np.arange(n)
    up = rank[src] < rank[dst]
    a, c = src[up], dst[up]
    outd = np.bincount(a, minlength=n).astype(np.int64)
    ind = np.bincount(c, minlength=n).astype(np.int64)
    # paths of the two products bound their entries: 16 bytes each, twice (scipy's
    # product, then the masked copy)
    paths = int((ind * outd).sum() + (outd * outd).sum())
    check_memory(f"counting the triangles of a graph of {graph.n_edges:,} edges",
                 32 * paths + 64 * a.size,
                 "count on the GPU (backend='gpu'), or on a smaller graph")
    lo = sp.csr_matrix((np.ones(a.size, dtype=np.int64), (a, c)), shape=(n, n))
    ends = (lo @ lo).multiply(lo)
    middles = (lo.T @ lo).multiply(lo)
    return (np.asarray(ends.sum(axis=1)).ravel() + np.asarray(ends.sum(axis=0)).ravel()
            + np.asarray(middles.sum(axis=1)).ravel()).astype(np.int64)


class NeighbourSweep:
    """The whole-graph sweep ``e.dst.x.reduce_add(e.common_neighbours())`` on a simple
    undirected graph: node ``v`` receives the common neighbours over all its edges,
    twice its triangles, counted by :func:`triangles_per_node` instead of one row
    intersection per edge (the answers of the per-edge evaluation, which
    ``tests/test_triangles.py`` compares).
    """

    def __init__(self, s: Any) -> None:
        self.s = s

    @classmethod
    def of(cls, spec: Any, graph: Graph) -> NeighbourSweep | None:
        from .. import expr as ex

        op = spec.edge
        if (op is None or op.raw is not None or len(op.statements) != 1 or graph.directed
                or graph.simple() is not graph):
            return None
        s = op.statements[0]
        value = s.value.a if isinstance(s.value, ex.Cast) else s.value
        if not (isinstance(s, ex.Reduction) and s.kind.name == "add" and s.node == "dst"
                and s.at is None and s.activate_above is None
                and isinstance(value, ex.CommonNeighbours) and value.among == "all"):
            return None
        return cls(s)

    def apply(self, fields: dict[str, np.ndarray], params: dict[str, Any], it: int,
              graph: Graph, degrees: dict[str, np.ndarray], activated: Any) -> None:
        twice = 2 * derived(graph, "triangles_per_node", triangles_per_node)
        f = fields[self.s.field]
        f += twice.astype(f.dtype)
        if self.s.activates:
            activated.add_mask(twice != 0)
