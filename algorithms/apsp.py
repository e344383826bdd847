"""All-pairs shortest path lengths: a dense matrix, or the same a block of rows at a time.

Two methods:

``repeated_sssp``
    A shortest-path search from every node, in batches: on an unweighted graph the
    multi-source BFS of :mod:`gswitch.algorithms.msbfs` (64 sources per traversal), on a
    weighted one the ``sssp`` algorithm from each source. Graph operators, so every
    engine and strategy combination those algorithms support runs them.
``floyd_warshall``
    Blocked Floyd-Warshall [1]_ over the dense distance matrix. This is a dense-matrix
    formulation, not a graph operator: its work is the min-plus update
    ``D[i, j] = min(D[i, j], D[i, k] + D[k, j])`` over all ``(i, j)`` pairs for every
    pivot ``k``, with no active set, no edges and no per-node state; the operator
    language speaks of nodes and their edges, so it cannot state an update indexed by
    node pairs. It is written once as array code over ``xp`` (NumPy on the host, CuPy on
    a device), block by block so each pivot block's panels are reused while hot.

The dense answer is ``n * n`` float64s: :func:`shortest_path_lengths` estimates that
first (:mod:`gswitch._memory`) and refuses with one line when it does not fit;
:func:`row_blocks` yields the rows a block at a time instead.

References
----------
.. [1] Venkataraman, Sahni, Mukhopadhyaya, "A blocked all-pairs shortest-paths
   algorithm", J. Exp. Algorithmics 8 (2003).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

import gswitch as gs
from gswitch._memory import MemoryRefused, check_memory
from gswitch.errors import InvalidInput

from .msbfs import BATCH, checked_sources, distances_batches

__all__ = ["METHODS", "shortest_path_lengths", "row_blocks", "floyd_warshall", "dense_bytes"]

#: The formulations :func:`shortest_path_lengths` offers.
METHODS = ("repeated_sssp", "floyd_warshall")
#: Pivots per block of the blocked Floyd-Warshall.
FW_BLOCK = 64
#: Bytes of matrix rows one round updates at a time (about an L2 cache).
CACHE_BYTES = 1 << 19


def dense_bytes(n: int, method: str = "repeated_sssp") -> int:
    """Peak bytes of a dense all-pairs answer on ``n`` nodes: the float64 matrix, plus
    for ``floyd_warshall`` the row-chunk temporaries of its min-plus update (about one
    more matrix at most), plus a batch of int32 rows for ``repeated_sssp``.
    """
    matrix = 8 * n * n
    if method == "floyd_warshall":
        return 2 * matrix
    return matrix + 4 * BATCH * n


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise InvalidInput(f"unknown all-pairs method {method!r}; choose one of "
                           f"{', '.join(METHODS)}")


def _check_fits(n: int, method: str) -> None:
    try:
        check_memory(f"a dense {n:,} x {n:,} all-pairs distance matrix ({method})",
                     dense_bytes(n, method),
                     "use gswitch.algorithms.apsp.row_blocks(graph, rows=...) to get the "
                     "rows a block at a time")
    except MemoryRefused as exc:
        raise InvalidInput(str(exc)) from None


def _check_weights(graph: gs.Graph) -> None:
    w = graph.weights
    if w is not None and w.size and not (w >= 0).all():
        bad = int(np.flatnonzero(~(w >= 0))[0])
        raise InvalidInput(f"all-pairs shortest paths need non-negative weights; edge {bad} "
                           f"has weight {w[bad]}")


def dense_weights(graph: gs.Graph, xp: Any = np) -> Any:
    """The ``n x n`` float64 matrix of the lightest edge ``u -> v`` (1 unweighted),
    ``0`` on the diagonal and ``inf`` where there is no edge.
    """
    n = graph.n_nodes
    src, dst = graph.edges()
    w = np.ones(src.size) if graph.weights is None else graph.weights.astype(np.float64)
    d = np.full((n, n), np.inf)
    np.minimum.at(d, (src, dst), w)
    np.fill_diagonal(d, 0.0)
    return d if xp is np else xp.asarray(d)


def floyd_warshall(d: Any, xp: Any = np, block: int = FW_BLOCK) -> Any:
    """Blocked Floyd-Warshall in place on a dense float64 matrix ``d`` of ``xp``.

    Parameters
    ----------
    d : ndarray
        Edge lengths, ``inf`` for no edge, ``0`` on the diagonal; overwritten with the
        shortest path lengths.
    xp : module
        ``numpy`` or ``cupy``: the array module ``d`` belongs to.
    block : int
        Pivots per round.

    Returns
    -------
    ndarray
        ``d``.

    Notes
    -----
    Each round takes the pivots ``K = k0 .. k1``: first the diagonal block ``D[K, K]``
    closes over its own pivots, then the row panel ``D[K, :]`` and the column panel
    ``D[:, K]`` take paths through them (one rank-1 min-plus update per pivot, over a
    panel only), and last the rest of the matrix takes the min-plus product
    ``D[:, K] (x) D[K, :]`` in chunks of rows that stay in cache over the round's
    pivots (a rank-1 update per pivot and chunk: no ``(rows, block, n)`` temporary).
    The result is the one of the textbook triple loop: a pivot's row and column are
    final for that pivot before anything reads them.
    """
    n = d.shape[0]
    # rows per chunk: a chunk (and its temporary) stays in cache over a round's pivots
    chunk = max(1, CACHE_BYTES // (16 * max(1, n)))
    for k0 in range(0, n, block):
        k1 = min(n, k0 + block)
        diag = d[k0:k1, k0:k1]
        for k in range(k1 - k0):
            xp.minimum(diag, diag[:, k, None] + diag[None, k, :], out=diag)
        rows, cols = d[k0:k1, :], d[:, k0:k1]
        for k in range(k1 - k0):
            xp.minimum(rows, diag[:, k, None] + rows[None, k, :], out=rows)
            xp.minimum(cols, cols[:, k, None] + diag[None, k, :], out=cols)
        for r0 in range(0, n, chunk):
            part, via = d[r0: r0 + chunk], cols[r0: r0 + chunk]
            for k in range(k1 - k0):
                xp.minimum(part, via[:, k, None] + rows[None, k, :], out=part)
    return d


def _sssp_rows(graph: gs.Graph, ids: np.ndarray, **run: Any) -> np.ndarray:
    out = np.empty((ids.size, graph.n_nodes))
    for j, s in enumerate(ids.tolist()):
        dist = np.asarray(gs.run("sssp", graph, source=s, **run).fields["dist"], np.float64)
        out[j] = dist
    return out


def row_blocks(graph: gs.Graph, rows=None, *, method: str = "repeated_sssp",
               block: int = BATCH, **run: Any) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Shortest path lengths from ``rows`` (every node by default), a block at a time.

    Parameters
    ----------
    graph : Graph
        Non-negative weights, or unweighted (every edge 1).
    rows : array of int, optional
        Source node ids, in the order the rows come.
    method : {"repeated_sssp", "floyd_warshall"}
        ``floyd_warshall`` needs the whole matrix once and then slices it; only
        ``repeated_sssp`` keeps memory at one block.
    block : int
        Sources per block (a multiple of 64 keeps BFS traversals full).
    **run
        Passed to :func:`gswitch.run` (``backend``, ``config``).

    Yields
    ------
    ids : ndarray of int64
        The block's sources.
    dist : ndarray of float64, shape (len(ids), n)
        Their distances to every node, ``inf`` where unreachable.

    Raises
    ------
    InvalidInput
        An unknown method, a negative weight or a source out of range.
    """
    _check_method(method)
    _check_weights(graph)
    n = graph.n_nodes
    ids = np.arange(n) if rows is None else checked_sources(rows, n)
    if block < 1:
        raise InvalidInput(f"row block size must be at least 1, got {block}")
    if method == "floyd_warshall":
        _check_fits(n, method)
        d = floyd_warshall(dense_weights(graph))
        for lo in range(0, ids.size, block):
            yield ids[lo: lo + block], d[ids[lo: lo + block]]
        return
    for lo in range(0, ids.size, block):
        part = ids[lo: lo + block]
        if graph.weighted:
            yield part, _sssp_rows(graph, part, **run)
            continue
        out = np.empty((part.size, n))
        row = 0
        for sub, hops in distances_batches(graph, part, **run):
            out[row: row + sub.size] = np.where(hops < 0, np.inf, hops)
            row += sub.size
        yield part, out


def shortest_path_lengths(graph: gs.Graph, *, method: str = "repeated_sssp",
                          **run: Any) -> np.ndarray:
    """All-pairs shortest path lengths as a dense ``(n, n)`` matrix.

    Parameters
    ----------
    graph : Graph
        Non-negative weights, or unweighted (every edge 1; hop counts).
    method : {"repeated_sssp", "floyd_warshall"}
        A search from every node (multi-source BFS batches when unweighted), or blocked
        Floyd-Warshall over the dense matrix.
    **run
        Passed to :func:`gswitch.run` by ``repeated_sssp`` (``backend``, ``config``).

    Returns
    -------
    ndarray of float64, shape (n, n)
        ``d[i, j]``: length of a shortest path from ``i`` to ``j``, ``inf`` where ``j``
        is unreachable from ``i``; as ``scipy.sparse.csgraph.shortest_path``.

    Raises
    ------
    InvalidInput
        The matrix would not fit in memory (the message gives the bytes and says to use
        :func:`row_blocks`), an unknown method or a negative weight.

    Examples
    --------
    >>> import gswitch as gs
    >>> from gswitch.algorithms.apsp import shortest_path_lengths
    >>> g = gs.Graph.from_edges([0, 1], [1, 2])
    >>> shortest_path_lengths(g, backend="cpu").tolist()
    [[0.0, 1.0, 2.0], [inf, 0.0, 1.0], [inf, inf, 0.0]]

    """
    _check_method(method)
    _check_weights(graph)
    n = graph.n_nodes
    _check_fits(n, method)
    if method == "floyd_warshall":
        return floyd_warshall(dense_weights(graph))
    out = np.empty((n, n))
    for ids, dist in row_blocks(graph, method=method, **run):
        out[ids] = dist
    return out
