"""Weighted Brandes for many sources at once on the CPU: distances by SciPy's Dijkstra,
then path counts and dependencies as two sparse triangular solves over the
shortest-path DAGs of a batch of sources (the ``dag`` variant of
``weighted_betweenness`` and ``edge_betweenness``).

Per source ``s`` (Brandes [1]_), with ``L`` the DAG's adjacency (``L[v, u] = 1`` for a
shortest-path edge ``u -> v``: ``dist[u] + w == dist[v]`` from a reached ``u``, the
float64 sum of the float32 weight the operator formulation compares):

- the path counts are ``sigma = (I - L)^-1 e_s``: ``sigma[v]`` sums ``sigma[u]`` over
  the DAG predecessors of ``v``;
- with ``c[u] = delta[u] / sigma[u]``, Brandes' recursion
  ``delta[u] = sum_v sigma[u] / sigma[v] * (1 + delta[v])`` over the successors ``v``
  reads ``c[u] = sum_v (1 / sigma[v] + c[v])``: ``c = (I - L^T)^-1 L^T (1 / sigma)``;
- an edge ``u -> v`` of the DAG carries ``sigma[u] * (1 / sigma[v] + c[v])``.

Ordered by distance from their source, the nodes list every DAG edge forwards (positive
weights), so ``I - L`` is unit lower triangular; the pairs (source, reached node) of a
batch form one block-diagonal system, solved by
:func:`scipy.sparse.linalg.spsolve_triangular` in one call per direction (SuperLU's
triangular solver since SciPy 1.14, the minimum the package requires; earlier releases
solved row by row in Python). No level of any source is walked in Python.

References
----------
.. [1] Brandes, "A faster algorithm for betweenness centrality", J. Math. Sociol. 25
   (2001).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gswitch._memory import MemoryRefused, available_bytes, check_memory
from gswitch.errors import InvalidInput

from ._brandes_batch import picked_ids

__all__ = ["brandes_dag", "run_edge_variant", "run_variant", "source_bytes"]

#: Most bytes the arrays of one batch of sources may take (before the memory's share).
BATCH_BUDGET = 256 << 20

#: Share of the available memory a batch may take.
BATCH_SHARE = 0.25


def source_bytes(n_nodes: int, n_edges: int) -> int:
    """Peak bytes one source adds to a batch: its distances, their order and ranks
    (float64 and two int64 per node), the two float64 distance gathers and the test per
    stored edge, and the DAG's edges in the two sparse systems (at most every edge).
    """
    return 3 * 8 * n_nodes + 17 * n_edges + 6 * 8 * n_edges + 64


def batch_size(n_nodes: int, n_edges: int, n_sources: int) -> int:
    """Sources per batch: as many as fit :data:`BATCH_BUDGET` and
    :data:`BATCH_SHARE` of the available memory, at least one.

    Raises
    ------
    InvalidInput
        One source does not fit in the memory available.
    """
    one = source_bytes(n_nodes, n_edges)
    try:
        check_memory(f"the shortest-path DAG of one source ({n_nodes:,} nodes, "
                     f"{n_edges:,} edges)", one,
                     "run variant=per_source, which keeps one value per node")
    except MemoryRefused as exc:
        raise InvalidInput(str(exc)) from None
    budget = BATCH_BUDGET
    available = available_bytes()
    if available is not None:
        budget = min(budget, int(available * BATCH_SHARE))
    return int(max(1, min(n_sources, budget // one)))


def brandes_dag(graph: Any, ids: np.ndarray, *, endpoints: bool = False,
                edges: bool = False, stats: dict[str, Any] | None = None
                ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Raw Brandes sums over the sources ``ids`` of the simple, positively weighted
    ``graph`` (every weight 1 when it has none).

    Parameters
    ----------
    graph : Graph
        The prepared simple graph, on the host.
    ids : ndarray of int
        Distinct source node ids.
    endpoints : bool
        Count the path ends too (networkx's ``endpoints=True``), for the node sums.
    edges : bool
        Sum the edge dependencies (one value per stored edge, CSR order) instead of the
        node betweenness.
    stats : dict, optional
        Receives ``batches``, ``edges_processed`` (edges tested against the distances)
        and ``iterations`` (one per batch: its distances and two solves).

    Returns
    -------
    betweenness : ndarray of float64 or None
        Each node's dependencies on every source but itself (``None`` with ``edges``).
    edge_betweenness : ndarray of float64 or None
        Each stored edge's share (``None`` without ``edges``).

    Raises
    ------
    InvalidInput
        A weight too small to lengthen the paths through it (``d + w == d`` in float64:
        a zero-length cycle), or a source that does not fit in memory.
    """
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import dijkstra

    n, m = graph.n_nodes, graph.n_edges
    indptr = np.asarray(graph.indptr, dtype=np.int64)
    dst = np.asarray(graph.indices, dtype=np.int64)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    w = (np.ones(m) if graph.weights is None
         else np.asarray(graph.weights, dtype=np.float64))
    bc = None if edges else np.zeros(n)
    edge_sum = np.zeros(m) if edges else None
    ids = np.asarray(ids, dtype=np.int64)
    size = batch_size(n, m, ids.size) if ids.size else 1
    lengths = csr_array((w, dst, indptr), shape=(n, n))
    for b in range(0, ids.size, size):
        batch = ids[b:b + size]
        dist = dijkstra(lengths, directed=True, indices=batch)
        _batch(dist, batch, src, dst, w, endpoints, bc, edge_sum)
    if stats is not None:
        batches = -(-ids.size // size)
        stats.update(batches=batches, iterations=batches,
                     edges_processed=int(ids.size) * m)
    return bc, edge_sum


def run_variant(graph: Any, params: dict[str, Any], *, sources: Any, backend: str,
                device_arrays: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``dag`` variant of ``weighted_betweenness``, as :func:`gswitch.run` calls it
    (``direct=`` on :func:`gswitch.algorithm`; the CPU backend only).

    Parameters
    ----------
    graph : Graph
        The simple graph the run prepared (renumbered when the config asks).
    params : dict
        The run's resolved parameters: ``endpoints``, and ``sources`` as a 0/1 mask over
        the nodes when the caller gave sources (every node otherwise).
    sources : None
        The algorithm starts from its ``sources`` parameter, not a source node.
    backend : {"cpu"}
    device_arrays : bool
        Unused: the sums are host arrays.

    Returns
    -------
    fields : dict
        ``betweenness``: the raw sums, as the per-source variant gives them.
    stats : dict
        ``batches``, ``iterations`` (one per batch) and ``edges_processed``.
    """
    stats: dict[str, Any] = {}
    bc, _ = brandes_dag(graph, picked_ids(graph, params), endpoints=bool(params["endpoints"]),
                        stats=stats)
    return {"betweenness": bc}, stats


def run_edge_variant(graph: Any, params: dict[str, Any], *, sources: Any, backend: str,
                     device_arrays: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``dag`` variant of ``edge_betweenness``: as :func:`run_variant`, with
    ``edge_betweenness`` (one raw sum per stored edge of ``graph``, CSR order) returned.
    """
    stats: dict[str, Any] = {}
    _, edge_sum = brandes_dag(graph, picked_ids(graph, params), edges=True, stats=stats)
    return {"edge_betweenness": edge_sum}, stats


def _batch(dist: np.ndarray, batch: np.ndarray, src: np.ndarray, dst: np.ndarray,
           w: np.ndarray, endpoints: bool, bc: np.ndarray | None,
           edge_sum: np.ndarray | None) -> None:
    """Add one batch's sums into ``bc`` or ``edge_sum`` (``dist``: its distances, one
    row per source).
    """
    from scipy.sparse import csr_array
    from scipy.sparse.linalg import spsolve_triangular

    k, n = dist.shape
    # the DAG: the same float64 sum the operator formulation compares
    du = dist[:, src]
    tight = np.isfinite(du)
    np.add(du, w, out=du)
    tight &= du == dist[:, dst]
    del du
    lane, edge = np.nonzero(tight)
    del tight
    # each source's reached nodes in order of distance: the DAG's edges point forwards
    order = np.argsort(dist, axis=1, kind="stable")
    reached = np.isfinite(dist).sum(axis=1)
    offset = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(reached, out=offset[1:])
    rank = np.empty((k, n), dtype=np.int64)
    np.put_along_axis(rank, order, np.arange(n, dtype=np.int64)[None, :], axis=1)
    rank += offset[:-1, None]
    size = int(offset[-1])
    u, v = rank[lane, src[edge]], rank[lane, dst[edge]]
    if np.any(u >= v):
        i = int(np.flatnonzero(u >= v)[0])
        a, b = int(src[edge[i]]), int(dst[edge[i]])
        raise InvalidInput(
            f"weighted betweenness: edge ({a}, {b}) of weight {w[edge[i]]:g} does not "
            f"lengthen a path of length {dist[lane[i], a]:g} in float64 (a zero-length "
            "cycle); scale the weights up or drop the edge")
    diagonal = np.arange(size, dtype=np.int64)
    system = csr_array((np.concatenate([np.ones(size), -np.ones(u.size)]),
                        (np.concatenate([diagonal, v]), np.concatenate([diagonal, u]))),
                       shape=(size, size))
    start = np.zeros(size)
    start[offset[:-1]] = 1.0  # a source is the first of its nodes (distance 0)
    sigma = spsolve_triangular(system, start, lower=True, unit_diagonal=True,
                               overwrite_b=True)
    inv = np.zeros(size)
    np.divide(1.0, sigma, out=inv, where=sigma > 0)
    after = inv[v]
    behind = np.bincount(u, weights=after, minlength=size)
    c = spsolve_triangular(system.T, behind, lower=False, unit_diagonal=True,
                           overwrite_b=True)
    if edge_sum is not None:
        edge_sum += np.bincount(edge, weights=sigma[u] * (after + c[v]),
                                minlength=edge_sum.size)
        return
    delta = sigma * c
    delta[offset[:-1]] = 0.0  # a source's own dependency is no betweenness
    nodes = order[np.arange(n)[None, :] < reached[:, None]]  # row by row, as ranked
    bc += np.bincount(nodes, weights=delta, minlength=n)
    if endpoints:  # every reached node ends a path from the source, which starts them
        bc += np.bincount(nodes, minlength=n)
        bc[batch] += reached - 2.0
