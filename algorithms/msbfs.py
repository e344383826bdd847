"""Multi-source BFS: hop distances from up to 64 sources in one traversal.

Each node carries 64-bit sets: the sources that reached it, and the hop distance of
each source in bit-sliced form (plane ``i`` holds bit ``i`` of every source's
distance). :func:`distances` runs batches of 64 sources and decodes the planes into a
dense ``(k, n)`` matrix.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

import gswitch as gs
from gswitch._memory import MemoryRefused, check_memory
from gswitch.errors import InvalidInput
from gswitch.verify import exact

#: Sources one traversal carries: the bits of a ``uint64``.
BATCH = 64
#: Bit planes of the distances: hop counts up to ``2**31 - 1`` (every int32 distance).
PLANES = 31
#: The distance :func:`distances` reports for a node a source does not reach.
UNREACHED = -1


def source_bits(values, params) -> np.ndarray:
    """The ``sources`` run argument (at most 64 distinct node ids, in order) as one
    ``uint64`` per node: bit ``j`` set at the ``j``-th source.
    """
    n = int(params["n_nodes"])
    ids = checked_sources(values, n)
    if ids.size > BATCH:
        raise InvalidInput(f"msbfs runs at most {BATCH} sources at once, got {ids.size}; "
                           "use gswitch.algorithms.msbfs.distances, which batches them")
    if np.unique(ids).size != ids.size:
        raise InvalidInput("msbfs sources must be distinct within a run; use "
                           "gswitch.algorithms.msbfs.distances for repeated ids")
    bits = np.zeros(n, dtype=np.uint64)
    bits[ids] = np.left_shift(np.uint64(1), np.arange(ids.size, dtype=np.uint64))
    return bits


def checked_sources(values, n: int, what: str = "msbfs") -> np.ndarray:
    """Source node ids as an int64 array, each checked to lie in ``0 .. n - 1``
    (``what`` names the algorithm in the error).
    """
    try:
        ids = np.asarray(values, dtype=np.int64).ravel()
    except (TypeError, ValueError):
        raise InvalidInput(f"{what} sources must be node ids (integers)") from None
    bad = ids[(ids < 0) | (ids >= n)]
    if bad.size:
        raise InvalidInput(f"{what} source {int(bad[0])} is out of range: the graph has {n} "
                           "nodes (ids 0 .. n - 1)")
    return ids


def decode(fields: Mapping[str, np.ndarray], k: int) -> np.ndarray:
    """The ``(k, n)`` int32 distances of a run's fields: :data:`UNREACHED` where the
    source's bit never arrived, else the hop count its planes spell.
    """
    seen = np.asarray(fields["seen"])
    n = seen.size
    planes = np.stack([np.asarray(fields[f"hop{i}"]) for i in range(PLANES)])
    # bit j of word v of plane i -> bits[i, v, j] (little-endian bytes, bits in order)
    bits = np.unpackbits(planes.astype("<u8").view(np.uint8).reshape(PLANES, n, 8),
                         axis=2, bitorder="little")[:, :, :k]
    dist = np.zeros((n, k), dtype=np.int64)
    for i in range(PLANES):
        if bits[i].any():
            dist |= bits[i].astype(np.int64) << i
    reached = np.unpackbits(seen.astype("<u8").view(np.uint8).reshape(n, 8), axis=1,
                            bitorder="little")[:, :k].astype(bool)
    return np.where(reached, dist, UNREACHED).T.astype(np.int32)


def expected_seen(graph: gs.Graph, source: int | None = None, *, sources=None,
                  **params) -> np.ndarray:
    """The ``seen`` sets by ``scipy.sparse.csgraph.shortest_path``: bit ``j`` of node
    ``v`` set when the ``j``-th source reaches ``v``.
    """
    import scipy.sparse.csgraph as csgraph

    n = graph.n_nodes
    ids = np.flatnonzero(np.zeros(n) if sources is None else sources)
    out = np.zeros(n, dtype=np.uint64)
    if ids.size:
        d = csgraph.shortest_path(graph.to_scipy(), unweighted=True, indices=ids)
        order = np.asarray(sources, dtype=np.uint64)[ids]  # each source's own bit
        for row, bit in zip(d, order):
            out[np.isfinite(row)] |= bit
    return out


def _hop_planes() -> dict[str, gs.NodeField]:
    return {f"hop{i}": gs.NodeField("uint64", init=0, doc=f"bit {i} of each source's hops")
            for i in range(PLANES)}


@gs.algorithm(name="msbfs", reference="scipy.sparse.csgraph.shortest_path(unweighted=True)",
              expected=expected_seen, compare=exact,
              supports={"driving": ("data", "topology")},
              defaults={"driving": "data", "direction": "push"})
class MultiSourceBFS:
    """Breadth-first search from up to 64 sources at once, one bit per source.

    Parameters
    ----------
    sources : array of int
        Up to 64 distinct source node ids (a run argument, required); source ``j`` owns
        bit ``j``.

    Returns
    -------
    seen : ndarray of uint64
        Bit ``j`` set at every node source ``j`` reaches.
    hop0 .. hop30 : ndarray of uint64
        Bit ``j`` of ``hop<i>`` is bit ``i`` of source ``j``'s hop distance to the node;
        :func:`decode` turns them into a ``(k, n)`` matrix, ``-1`` where unreached.

    Raises
    ------
    InvalidInput
        Without ``sources`` (the run would start from no node), with more than 64, a
        repeat or an id out of range.

    Notes
    -----
    The traversal of Then et al. [1]_ in the operator language. A node's ``reach`` is
    the OR of its own bit and of every in-neighbour's ``seen`` (``reduce_or`` on a
    ``uint64``: commutative, idempotent, monotone, so push, pull and every worklist give
    the same sets); it is active in step ``t`` when its reach gained bits in step
    ``t - 1``. Its node operator takes the new bits ``reach ^ seen``, records ``t`` as
    their distance in the bit planes, and sets ``seen = reach``; its edge operator then
    offers ``seen`` to its out-neighbours. Bits arriving in step ``t`` are exactly the
    sources at distance ``t``, since every node at distance ``t - 1`` from a source was
    active in step ``t - 1`` holding that source's bit.

    References
    ----------
    .. [1] Then, Kaufmann, Chirigati, Hoang-Vu, Pham, Kemper, Neumann, Vo, "The more
       the merrier: efficient multi-source graph traversal", VLDB 2015.

    Examples
    --------
    >>> import gswitch as gs
    >>> from gswitch.algorithms.msbfs import distances
    >>> g = gs.Graph.from_edges([0, 1], [1, 2])
    >>> distances(g, [0, 2], backend="cpu").tolist()
    [[0, 1, 2], [-1, -1, 0]]

    """

    reach = gs.NodeField("uint64", output=False, doc="sources that reached the node",
                         init=gs.per_node_input("sources", default=0, prepare=source_bits,
                                                doc="source node ids (at most 64)", names="list"))
    seen = gs.NodeField("uint64", init=0, doc="sources the node has taken in")
    locals().update(_hop_planes())
    start = gs.all_nodes()

    @gs.node_op
    def take_in(n, p):
        new = n.reach ^ n.seen
        for i in range(PLANES):
            level_bit = ((p.iteration >> i) & 1).ne(0)
            setattr(n, f"hop{i}", getattr(n, f"hop{i}") | gs.where(level_bit, new, 0))
        n.seen = n.reach

    @gs.edge_op
    def offer(e):
        e.dst.reach.reduce_or(e.src.seen)


SPEC = MultiSourceBFS


def batches(sources, n: int, size: int = BATCH) -> Iterator[np.ndarray]:
    """The source ids in consecutive batches of at most ``size`` (the last one shorter)."""
    ids = checked_sources(sources, n)
    for lo in range(0, ids.size, size):
        yield ids[lo: lo + size]


def distances_batches(graph: gs.Graph, sources=None, **run: Any
                      ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Hop distances from ``sources``, 64 sources per traversal, lazily.

    Parameters
    ----------
    graph : Graph
    sources : array of int, optional
        Source node ids (every node by default); repeats are allowed.
    **run
        Passed to :func:`gswitch.run` (``backend``, ``config``).

    Yields
    ------
    ids : ndarray of int64
        The batch's sources.
    dist : ndarray of int32, shape (len(ids), n)
        Hops from each; ``-1`` (:data:`UNREACHED`) where a source does not reach.
    """
    n = graph.n_nodes
    every = np.arange(n) if sources is None else sources
    for ids in batches(every, n):
        uniq, where_in = np.unique(ids, return_inverse=True)
        result = gs.run("msbfs", graph, sources=uniq, **run)
        yield ids, decode(result.fields, uniq.size)[where_in]


def distances(graph: gs.Graph, sources=None, **run: Any) -> np.ndarray:
    """Hop distances from each of ``sources`` (every node by default) to every node.

    Parameters
    ----------
    graph : Graph
    sources : array of int, optional
        Source node ids; ``k`` of them give ``k`` rows.
    **run
        Passed to :func:`gswitch.run` (``backend``, ``config``).

    Returns
    -------
    ndarray of int32, shape (k, n)
        ``dist[j, v]``: hops from ``sources[j]`` to ``v``, ``-1`` where unreachable.

    Raises
    ------
    InvalidInput
        A source id out of range, or a matrix that would not fit in memory (the message
        points to :func:`distances_batches`).
    """
    n = graph.n_nodes
    k = n if sources is None else checked_sources(sources, n).size
    try:
        check_memory(f"a dense {k:,} x {n:,} hop-distance matrix", 4 * k * n,
                     "use gswitch.algorithms.msbfs.distances_batches(graph, sources) to "
                     "get 64 rows at a time")
    except MemoryRefused as exc:
        raise InvalidInput(str(exc)) from None
    out = np.empty((k, n), dtype=np.int32)
    row = 0
    for ids, dist in distances_batches(graph, sources, **run):
        out[row: row + ids.size] = dist
        row += ids.size
    return out


@gs.hookimpl
def gswitch_algorithms():
    return [SPEC]
