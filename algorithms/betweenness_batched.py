"""Sampled or exact betweenness with up to 64 sources per traversal (batched Brandes).

:func:`betweenness` returns the same raw sums as the ``betweenness`` algorithm (one
source at a time, in the operator language), from one level-synchronous traversal per
batch of 64 sources instead of one per source.

Why array code and not the operator language: a batch keeps 64 path counts and 64
dependencies per node, one per source, and adds them lane by lane: a warp gives each
of its 32 threads two sources of one edge's row. The language's fields hold one value
per node (or a 64-bit set, as ``msbfs`` uses), so it can state the traversal's sets but
not the per-source counts that ride on them. The GPU path is a few CUDA kernels
(``_betweenness_gpu.SOURCE``, compiled in CI like every kernel the GPU runs); the CPU path
runs the same levels in NumPy, so CI checks the formulation without a GPU.

The traversal (Brandes [1]_, with the sources of a batch sharing each edge sweep as in
multi-source BFS [2]_):

- Forward, level ``t``: every entry ``(v, m)`` of level ``t`` (``m``: the sources whose
  level ``t`` holds ``v``) offers ``m`` along its out-edges. Target ``u`` takes the
  sources it has not seen, ``fresh = m & ~seen[u]``; for each of them ``u``'s path count
  gains ``v``'s, and ``u`` joins level ``t + 1`` with the union of its fresh sets.
- Backward, deepest level first: entry ``(v, m)`` of level ``t`` sums
  ``(1 + delta[w]) / sigma[w]`` over out-neighbours ``w`` on level ``t + 1`` of the same
  source, then multiplies by ``sigma[v]``: Brandes' dependency, per source.
- A node's betweenness gains the dependencies of every source but itself (and with
  ``endpoints``, networkx's path-end counts); :func:`edge_betweenness` sums each edge's
  share ``sigma[v] / sigma[w] * (1 + delta[w])`` instead.

Each level's edges are spread over threads evenly (a thread per edge of the level's
rows, found by a search over the rows' degree prefix sums), so hubs cost no more than
their edges.

References
----------
.. [1] Brandes, "A faster algorithm for betweenness centrality", J. Math. Sociol. 25
   (2001).
.. [2] Then et al., "The more the merrier: efficient multi-source graph traversal",
   VLDB 2015.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import gswitch as gs
from gswitch.errors import InvalidInput

from ._brandes_batch import BATCH, batch_bytes, finish, hops_problem, picked_ids
from .msbfs import checked_sources

__all__ = ["BATCH", "batch_bytes", "betweenness", "edge_betweenness", "run_edge_variant",
           "run_variant"]



def _sources(graph: gs.Graph, sources: Any) -> np.ndarray:
    n = graph.n_nodes
    if sources is None:
        return np.arange(n, dtype=np.int64)
    ids = checked_sources(sources, n, "betweenness")
    return np.unique(ids)  # each source counts once, as the per-source algorithm does


def betweenness(graph: gs.Graph, sources: Any = None, *, endpoints: bool = False,
                backend: str = "auto") -> np.ndarray:
    """Raw Brandes sums over ``sources`` (every node by default), 64 sources at a time.

    Parameters
    ----------
    graph : Graph
        Weights are ignored (paths count hops); self loops and parallel edges are
        dropped (:meth:`Graph.simple`), as networkx counts paths.
    sources : array of int, optional
        Source node ids; repeated ids count once. Every node when omitted (exact).
    endpoints : bool
        Count the path ends too (networkx's ``endpoints=True``).
    backend : {"auto", "gpu", "cpu"}
        ``auto``: the GPU when CuPy sees one.

    Returns
    -------
    ndarray of float64
        Equal to ``gs.run("betweenness", graph, sources=...).fields["betweenness"]``:
        networkx's values before :func:`gswitch.algorithms.betweenness.rescale`.

    Raises
    ------
    InvalidInput
        A source out of range, or an unknown backend.
    MemoryRefused
        One batch does not fit in the device's free memory.

    Examples
    --------
    >>> import gswitch as gs
    >>> from gswitch.algorithms.betweenness_batched import betweenness
    >>> g = gs.Graph.from_edges([0, 1, 1, 2], [1, 0, 2, 1])  # a path 0 - 1 - 2
    >>> betweenness(g, backend="cpu").tolist()
    [0.0, 2.0, 0.0]

    """
    return _run(graph, sources, endpoints, backend, edges=False)[0]


def edge_betweenness(graph: gs.Graph, sources: Any = None, *,
                     backend: str = "auto") -> np.ndarray:
    """Raw Brandes edge dependencies over ``sources``, 64 sources at a time.

    Parameters
    ----------
    graph : Graph
        Weights are ignored (paths count hops); self loops and parallel edges are
        dropped (:meth:`Graph.simple`).
    sources : array of int, optional
        Source node ids; repeated ids count once. Every node when omitted.
    backend : {"auto", "gpu", "cpu"}
        ``auto``: the GPU when CuPy sees one.

    Returns
    -------
    ndarray of float64
        One value per stored edge of ``graph.simple()`` in its CSR order: the sum over
        the sources of ``sigma[u] / sigma[v] * (1 + delta[v])`` where the edge ``u -> v``
        is on a shortest path. Equal to ``gs.run("edge_betweenness", graph, ...)``'s
        ``edge_betweenness`` on the unweighted graph;
        ``gswitch.algorithms.betweenness_weighted.rescale_edges`` applies networkx's
        scaling.

    Raises
    ------
    InvalidInput
        A source out of range, or an unknown backend.

    Examples
    --------
    >>> import gswitch as gs
    >>> from gswitch.algorithms.betweenness_batched import edge_betweenness
    >>> g = gs.Graph.from_edges([0, 1, 1, 2], [1, 0, 2, 1])  # a path 0 - 1 - 2
    >>> edge_betweenness(g, backend="cpu").tolist()
    [2.0, 2.0, 2.0, 2.0]

    """
    return _run(graph, sources, False, backend, edges=True)[1]


def run_variant(graph: gs.Graph, params: dict[str, Any], *, sources: Any, backend: str,
                device_arrays: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``batched`` variant of the ``betweenness`` algorithm, as :func:`gswitch.run`
    calls it (``direct=`` on :func:`gswitch.algorithm`).

    Parameters
    ----------
    graph : Graph
        The simple graph the run prepared (renumbered when the config asks).
    params : dict
        The run's resolved parameters: ``endpoints``, and ``sources`` as a 0/1 mask
        over the nodes when the caller gave sources (every node otherwise).
    sources : None
        The algorithm starts from its ``sources`` parameter, not a source node.
    backend : {"cpu", "gpu"}
    device_arrays : bool
        Leave the GPU's sums on the device (CuPy).

    Returns
    -------
    fields : dict
        ``betweenness``: the raw sums, as the per-source variant gives them.
    stats : dict
        ``iterations`` (levels over every batch), ``edges_processed`` (edges the
        forward and backward levels scanned), ``batches``, and on the GPU
        ``device_time_s``.
    """
    stats: dict[str, Any] = {}
    bc, _ = _batched(graph, params, backend, device_arrays, bool(params["endpoints"]),
                     False, stats)
    return {"betweenness": bc}, stats


def run_edge_variant(graph: gs.Graph, params: dict[str, Any], *, sources: Any,
                     backend: str, device_arrays: bool
                     ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``batched`` variant of the ``edge_betweenness`` algorithm, as
    :func:`gswitch.run` calls it (``direct=`` on :func:`gswitch.algorithm`): the traversal
    of :func:`run_variant` summing each edge's share.

    Parameters
    ----------
    graph : Graph
        The simple graph the run prepared (renumbered when the config asks); every
        weight 1, or none.
    params : dict
        The run's resolved parameters: ``sources`` as a 0/1 mask over the nodes when the
        caller gave sources (every node otherwise).
    sources : None
        The algorithm starts from its ``sources`` parameter, not a source node.
    backend : {"cpu", "gpu"}
    device_arrays : bool
        Leave the GPU's sums on the device (CuPy).

    Returns
    -------
    fields : dict
        ``edge_betweenness``: one raw sum per stored edge of ``graph``, in its CSR order.
    stats : dict
        As :func:`run_variant`'s.

    Raises
    ------
    InvalidInput
        A graph with a weight other than 1: hops are not its path lengths.
    """
    problem = hops_problem(graph)
    if problem:  # the run checks the graph first (check_graph); a direct call lands here
        raise InvalidInput(problem)
    stats: dict[str, Any] = {}
    _, edge_sum = _batched(graph, params, backend, device_arrays, False, True, stats)
    return {"edge_betweenness": edge_sum}, stats


def _batched(graph: gs.Graph, params: dict[str, Any], backend: str, device_arrays: bool,
             endpoints: bool, edges: bool, stats: dict[str, Any]) -> tuple[Any, Any]:
    """The two variants' traversal over the run's sources, on ``backend``."""
    ids = picked_ids(graph, params)
    if backend == "gpu":
        from ._betweenness_gpu import run_batches

        return run_batches(graph, ids, endpoints, edges, device_arrays=device_arrays,
                           stats=stats)
    return _cpu(graph, ids, endpoints, edges, stats)


def _run(graph: gs.Graph, sources: Any, endpoints: bool, backend: str, *, edges: bool
         ) -> tuple[np.ndarray, np.ndarray | None]:
    from gswitch.runner import gpu_available

    if backend not in ("auto", "gpu", "cpu"):
        raise InvalidInput(f"backend must be auto, gpu or cpu; got {backend!r}")
    if backend == "auto":
        backend = "gpu" if gpu_available() else "cpu"
    simple = graph.simple()
    ids = _sources(simple, sources)
    if backend == "gpu":
        from ._betweenness_gpu import run_batches

        return run_batches(simple, ids, endpoints, edges)
    return _cpu(simple, ids, endpoints, edges)


# ---- CPU: the same levels in NumPy --------------------------------------------------


def _bits(masks: np.ndarray) -> np.ndarray:
    """``(len(masks), 64)`` booleans: bit ``j`` of each 64-bit set."""
    raw = np.ascontiguousarray(masks, dtype="<u8").view(np.uint8).reshape(-1, 8)
    return np.unpackbits(raw, axis=1, bitorder="little").astype(bool)


def _edges_of(indptr: np.ndarray, indices: np.ndarray, q: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the rows ``q``: the entry index, the CSR index and the target of each of
    their edges.
    """
    starts = indptr[q]
    lens = indptr[q + 1] - starts
    entry = np.repeat(np.arange(q.size), lens)
    first = np.repeat(starts - (np.cumsum(lens) - lens), lens)
    k = first + np.arange(entry.size)
    return entry, k, indices[k]


def _cpu(graph: gs.Graph, ids: np.ndarray, endpoints: bool, edges: bool,
         stats: dict[str, Any] | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    n = graph.n_nodes
    indptr, indices = graph.indptr.astype(np.int64), graph.indices.astype(np.int64)
    bc = np.zeros(n)
    edge_sum = np.zeros(indices.size) if edges else None
    work = {"iterations": 0, "edges_processed": 0}
    for b in range(0, ids.size, BATCH):
        batch = ids[b:b + BATCH]
        bc += _cpu_batch(n, indptr, indices, batch, endpoints, edge_sum, work)
    if stats is not None:
        stats.update(work, batches=-(-ids.size // BATCH))
    return bc, edge_sum


def _cpu_batch(n: int, indptr: np.ndarray, indices: np.ndarray, batch: np.ndarray,
               endpoints: bool, edge_sum: np.ndarray | None, work: dict[str, int]
               ) -> np.ndarray:
    lanes = np.arange(batch.size)
    own = np.left_shift(np.uint64(1), lanes.astype(np.uint64))
    sigma = np.zeros((n, BATCH))
    sigma[batch, lanes] = 1.0
    seen = np.zeros(n, dtype=np.uint64)
    seen[batch] = own
    levels = [(batch.copy(), own.copy())]
    while True:
        q, qm = levels[-1]
        entry, _, u = _edges_of(indptr, indices, q)
        work["iterations"] += 1
        work["edges_processed"] += int(entry.size)
        fresh = qm[entry] & ~seen[u]
        hit = fresh != 0
        entry, u, fresh = entry[hit], u[hit], fresh[hit]
        if u.size == 0:
            break
        e_idx, lane = np.nonzero(_bits(fresh))
        np.add.at(sigma, (u[e_idx], lane), sigma[q[entry[e_idx]], lane])
        nxt = np.zeros(n, dtype=np.uint64)
        np.bitwise_or.at(nxt, u, fresh)
        q_next = np.unique(u)
        seen[q_next] |= nxt[q_next]
        levels.append((q_next, nxt[q_next]))
    delta = np.zeros((n, BATCH))
    on_next = np.zeros(n, dtype=np.uint64)
    for t in range(len(levels) - 2, -1, -1):
        q, qm = levels[t]
        on_next[:] = 0
        on_next[levels[t + 1][0]] = levels[t + 1][1]
        entry, k, w = _edges_of(indptr, indices, q)
        work["edges_processed"] += int(entry.size)
        both = qm[entry] & on_next[w]
        hit = both != 0
        entry, k, w, both = entry[hit], k[hit], w[hit], both[hit]
        e_idx, lane = np.nonzero(_bits(both))
        v = q[entry[e_idx]]
        share = (1.0 + delta[w[e_idx], lane]) / sigma[w[e_idx], lane]
        np.add.at(delta, (v, lane), share)
        if edge_sum is not None:
            np.add.at(edge_sum, k[e_idx], sigma[v, lane] * share)
        rows, lanes_t = np.nonzero(_bits(qm))
        delta[q[rows], lanes_t] *= sigma[q[rows], lanes_t]
    return finish(delta, seen, batch, endpoints, np)
