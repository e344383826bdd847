"""Independent reference answers (scipy.sparse.csgraph, networkx) and comparisons.

Used by the test-suites of both engines and by the tuner's answer check, so a strategy
combination is never judged against the code it is testing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph

from ..graph import Graph

__all__ = ["reference", "compare", "canonical_labels", "PAGERANK_L1_TOLERANCE"]

#: Allowed L1 distance between a PageRank vector and the reference.
PAGERANK_L1_TOLERANCE = 1e-4


def canonical_labels(labels: np.ndarray) -> np.ndarray:
    """Relabel components so each node carries the smallest node id of its component."""
    labels = np.asarray(labels)
    if labels.size == 0:
        return labels.astype(np.int64)
    _, inv = np.unique(labels, return_inverse=True)
    mins = np.full(inv.max() + 1, labels.size, dtype=np.int64)
    np.minimum.at(mins, inv, np.arange(labels.size))
    return mins[inv]


def _bfs(graph: Graph, source: int) -> np.ndarray:
    d = csgraph.shortest_path(graph.to_scipy(), unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def _sssp(graph: Graph, source: int) -> np.ndarray:
    g = graph if graph.weighted else graph.with_weights(np.ones(graph.n_edges, np.float32))
    # parallel edges: the shortest one counts (scipy would sum them)
    return csgraph.dijkstra(g.deduplicate("min").to_scipy(), indices=source)


def _cc(graph: Graph) -> np.ndarray:
    if graph.n_nodes == 0:
        return np.zeros(0, dtype=np.int64)
    _, labels = csgraph.connected_components(graph.to_scipy(), directed=True, connection="weak")
    return canonical_labels(labels)


def _pagerank(graph: Graph, alpha: float) -> np.ndarray:
    """PageRank by scipy power iteration, with networkx's definition and stopping rule.

    As :func:`networkx.pagerank` (``tol=1e-12``): parallel edges count with multiplicity,
    rows are normalised by out-degree, dangling nodes spread their rank uniformly and the
    iteration stops when the L1 change falls below ``n * tol``. Building a networkx graph
    first takes minutes on graphs of millions of nodes; this takes seconds.
    """
    n = graph.n_nodes
    if n == 0:
        return np.zeros(0)
    # parallel edges stay separate entries; products and row sums count each of them
    a = sp.csr_array((np.ones(graph.n_edges), graph.indices, graph.indptr), shape=(n, n))
    out = np.asarray(a.sum(axis=1)).ravel()
    dangling = out == 0
    scale = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, out))
    at = (sp.diags_array(scale) @ a).T.tocsr()
    x = np.full(n, 1.0 / n)
    tol = 1e-12
    for _ in range(10000):
        last = x
        x = alpha * (at @ x + x[dangling].sum() / n) + (1 - alpha) / n
        if np.abs(x - last).sum() < n * tol:
            return x
    raise RuntimeError("reference PageRank did not converge in 10000 iterations")


def reference(algorithm: str, graph: Graph, source: int | None = None,
              **params: Any) -> np.ndarray:
    """Reference output array of a built-in algorithm on ``graph``."""
    if algorithm == "bfs":
        return _bfs(graph, int(source))
    if algorithm == "sssp":
        return _sssp(graph, int(source))
    if algorithm == "cc":
        return _cc(graph)
    if algorithm == "pagerank":
        return _pagerank(graph, float(params.get("alpha", 0.85)))
    raise KeyError(f"no reference for {algorithm!r}")


def compare(algorithm: str, got: np.ndarray, expected: np.ndarray) -> str | None:
    """``None`` when ``got`` matches the reference, else a one-line description."""
    got = np.asarray(got)
    if got.shape != expected.shape:
        return f"shape {got.shape} != reference {expected.shape}"
    if got.size == 0:
        return None
    if algorithm in ("bfs", "cc"):
        if algorithm == "cc":
            got = canonical_labels(got)
        bad = np.flatnonzero(got != expected)
        if bad.size:
            i = int(bad[0])
            return f"{bad.size} nodes differ, e.g. node {i}: {got[i]} != {expected[i]}"
        return None
    if algorithm == "sssp":
        fin = np.isfinite(expected)
        if not np.array_equal(np.isfinite(got), fin):
            i = int(np.flatnonzero(np.isfinite(got) != fin)[0])
            return f"reachability differs at node {i}: {got[i]} vs {expected[i]}"
        ok = np.isclose(got[fin], expected[fin], rtol=1e-5, atol=1e-4)
        if not ok.all():
            i = int(np.flatnonzero(fin)[np.flatnonzero(~ok)[0]])
            return f"distance differs at node {i}: {got[i]} vs {expected[i]}"
        return None
    if algorithm == "pagerank":
        l1 = float(np.abs(got.astype(np.float64) - expected).sum())
        if not np.isfinite(l1) or l1 > PAGERANK_L1_TOLERANCE:
            return f"L1 distance {l1:.3g} to the reference exceeds {PAGERANK_L1_TOLERANCE}"
        return None
    raise KeyError(algorithm)
