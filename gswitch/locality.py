"""Locality-aware renumbering: the ``renumber`` configuration key.

A run may take place on a copy of its graph whose nodes are renumbered so that
neighbours get nearby ids: the rows a step reads then share cache lines, and a
partition of contiguous ids (spatial driving) holds nodes that are near each other.
Every result is returned in the caller's node ids (see :func:`to_caller`).

Orders (``new id -> caller id`` permutations, computed once per graph and kept while the
graph lives, since graphs are immutable):

``rcm``
    Reverse Cuthill-McKee (:func:`scipy.sparse.csgraph.reverse_cuthill_mckee`) of the
    symmetrised structure: small bandwidth, so a node's neighbours are close in id.
``bfs``
    Breadth-first order from the highest-degree node of each weakly connected component,
    the components one after another (largest root degree first).
``degree``
    Descending degree (ties by caller id): the hubs together at the front.
``hilbert``
    Compact regions: each node gets two coordinates, its hop distances from two
    landmarks of its component chosen far apart and across each other, and nodes
    follow the Hilbert curve over those coordinates (components one after another).
    Any run of consecutive ids then covers a region of few hops across, whatever its
    length: on a mesh or a road network a partition of spatial driving is a
    diamond-shaped patch that a traversal's wave crosses in a few dozen levels,
    where the bands of ``rcm`` and ``bfs`` are crossed in two or three. On the
    2048x2048 road grid, 6% of the edges leave a run of 1,024 ids (97% under ``rcm``),
    and spatial BFS takes 83 steps instead of 2,049 and 30 ms instead of 399 ms, still
    2.5x the tuned level-synchronous BFS (H200,
    ``benchmarks/results/h200_s42_road_bfs_hilbert.log``). Five breadth-first
    searches build it: 3.6 s for 4M nodes on two CPU cores (``rcm``: 0.7 s).
``none``
    The caller's ids (the default).
"""

from __future__ import annotations

import contextlib
import os
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ._memory import check_memory
from .errors import InvalidConfig

__all__ = ["METHODS", "order", "renumbered", "share_renumbered", "build_renumbered",
           "inverse", "inverse_on_device", "hilbert_index",
           "shared_copy", "write_shared_copy", "to_caller", "edges_to_caller", "ID_KINDS"]

#: The values of the ``renumber`` key.
METHODS = ("none", "rcm", "bfs", "degree", "hilbert")
#: What a node field may hold, for :func:`to_caller` (``NodeField(ids=...)``).
ID_KINDS = ("", "node", "min_label")

_ORDERS: dict[tuple[int, str], Any] = {}


def _kept(graph: Any, method: str, build) -> Any:
    key = (id(graph), method)
    if key not in _ORDERS:
        _ORDERS[key] = build()
        weakref.finalize(graph, _ORDERS.pop, key, None)
    return _ORDERS[key]


def _structure(graph: Any):
    import scipy.sparse as sp

    n = graph.n_nodes
    a = sp.csr_array((np.ones(graph.n_edges, dtype=np.int8), graph.indices, graph.indptr),
                     shape=(n, n))
    return a if not graph.directed else (a + a.T).tocsr()


def _rcm(graph: Any) -> np.ndarray:
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    a = _structure(graph)
    a.sort_indices()
    return np.asarray(reverse_cuthill_mckee(a, symmetric_mode=True), dtype=np.int64)


def _degree(graph: Any) -> np.ndarray:
    deg = np.diff(graph.indptr).astype(np.int64)
    return np.argsort(-deg, kind="stable").astype(np.int64)


def _bfs(graph: Any) -> np.ndarray:
    from scipy.sparse.csgraph import breadth_first_order, connected_components

    n = graph.n_nodes
    a = _structure(graph)
    n_comp, comp = connected_components(a, directed=False)
    deg = np.diff(a.indptr).astype(np.int64)
    # each component's root: its highest-degree node (lowest id among equals)
    by_degree = np.lexsort((np.arange(n), -deg))
    first = np.empty(n_comp, dtype=np.int64)
    comps_in_order = comp[by_degree]
    _, pos = np.unique(comps_in_order, return_index=True)
    first[comps_in_order[pos]] = by_degree[pos]
    # one BFS from a virtual node joined to every root: restricted to one component, the
    # global FIFO order is that component's BFS order from its root
    roots = first[np.argsort(-deg[first], kind="stable")]
    rank = np.empty(n_comp, dtype=np.int64)
    rank[comp[roots]] = np.arange(n_comp)
    visit = np.asarray(breadth_first_order(_joined(_padded(a), roots), n, directed=True,
                                           return_predecessors=False))[1:]
    return visit[np.argsort(rank[comp[visit]], kind="stable")].astype(np.int64)


def _padded(a: Any) -> Any:
    """``a`` (n x n) with an empty last column, for :func:`_joined`."""
    import scipy.sparse as sp

    return sp.hstack([a, sp.csr_array((a.shape[0], 1), dtype=a.dtype)]).tocsr()


def _joined(padded: Any, sources: np.ndarray) -> Any:
    """The graph of ``padded`` (:func:`_padded`) with one more node, the last, joined to
    each of ``sources``: a breadth-first search from it visits the components of
    ``sources`` one level at a time, each from its own source.
    """
    import scipy.sparse as sp

    n, k = padded.shape[0], sources.size
    hub = sp.csr_array((np.ones(k, dtype=padded.dtype), sources, [0, k]), shape=(1, n + 1))
    return sp.vstack([padded, hub], format="csr")


def _hops(padded: Any, sources: np.ndarray) -> np.ndarray:
    """Hop distance of every node of ``padded`` (:func:`_padded`) from the nearest of
    ``sources`` (-1: unreachable).

    One breadth-first search from a node joined to every source. Along its visit order
    a node comes after its parent and the parents' positions never decrease, so each
    level is the run of positions whose parents lie in the level before.
    """
    from scipy.sparse.csgraph import breadth_first_order

    n = padded.shape[0]
    sources = np.unique(np.asarray(sources, dtype=np.int64))
    visit, pred = breadth_first_order(_joined(padded, sources), n, directed=True,
                                      return_predecessors=True)
    pos = np.empty(n + 1, dtype=np.int64)
    pos[visit] = np.arange(visit.size)
    parent = np.empty(visit.size, dtype=np.int64)
    parent[0] = -1
    parent[1:] = pos[pred[visit[1:]]]
    starts = [1]  # where each level begins along the visit order
    hi = 1 + sources.size
    while hi > starts[-1]:
        starts.append(hi)
        hi = int(np.searchsorted(parent, hi, side="left"))
    hops = np.full(n, -1, dtype=np.int64)
    hops[visit[1:]] = np.searchsorted(np.asarray(starts), np.arange(1, visit.size),
                                      side="right") - 1
    return hops


def _per_component(comp: np.ndarray, n_comp: int, score: np.ndarray) -> np.ndarray:
    """Each component's node of highest ``score`` (its lowest id among equals)."""
    best = np.full(n_comp, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(best, comp, score)
    tied = np.flatnonzero(score == best[comp])
    first = np.full(n_comp, comp.size, dtype=np.int64)
    np.minimum.at(first, comp[tied], tied)
    return first


def hilbert_index(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Position of each point ``(x, y)`` (non-negative integers) along the Hilbert curve
    that fills the smallest power-of-two square holding them.
    """
    top = int(max(np.max(x, initial=0), np.max(y, initial=0)))
    small = np.int32 if top < 2**31 else np.int64  # halves the traffic of each pass
    x = np.array(x, dtype=small)
    y = np.array(y, dtype=small)
    d = np.zeros(x.shape, dtype=np.int64)
    s = 1 << max(top.bit_length() - 1, 0)
    while s > 0:
        rx = (x & s) > 0
        ry = (y & s) > 0
        d += (s * s) * ((3 * rx) ^ ry).astype(np.int64)
        # rotate the quadrant so that the curve's next level starts where this one ends
        flip = ~ry & rx
        x = np.where(flip, s - 1 - x, x)
        y = np.where(flip, s - 1 - y, y)
        swap = ~ry
        x, y = np.where(swap, y, x), np.where(swap, x, y)
        x &= s - 1
        y &= s - 1
        s >>= 1
    return d


def _hilbert(graph: Any) -> np.ndarray:
    from scipy.sparse.csgraph import connected_components

    a = _structure(graph)
    n_comp, comp = connected_components(a, directed=False)
    comp = comp.astype(np.int64)
    a = _padded(a)
    start = _per_component(comp, n_comp, np.zeros(comp.size, dtype=np.int64))
    # a peripheral node of each component, and the node farthest from it
    d_a = _hops(a, _per_component(comp, n_comp, _hops(a, start)))
    d_c = _hops(a, _per_component(comp, n_comp, d_a))
    # the second axis: from the middle of the first, the node farthest from the middle
    # and from both ends (on a grid: the other pair of corners)
    middle = _per_component(comp, n_comp, -np.abs(d_a - d_c))
    d_b = _hops(a, _per_component(comp, n_comp, _hops(a, middle) + np.minimum(d_a, d_c)))
    # lexsort is stable: equal positions keep the caller's order
    return np.lexsort((hilbert_index(d_a, d_b), comp)).astype(np.int64)


_BUILDERS = {"rcm": _rcm, "bfs": _bfs, "degree": _degree, "hilbert": _hilbert}


def order(graph: Any, method: str) -> np.ndarray | None:
    """The permutation ``perm`` (``perm[new id] = caller id``) of ``method``, kept per
    graph; ``None`` for ``none``.

    Raises
    ------
    InvalidConfig
        An unknown method.

    """
    if method == "none":
        return None
    if method not in _BUILDERS:
        raise InvalidConfig(f"renumber must be one of {', '.join(METHODS)}; got {method!r}")
    return _kept(graph, method, lambda: _BUILDERS[method](graph))


def inverse(graph: Any, method: str, perm: np.ndarray) -> np.ndarray:
    """``inv[caller id] = new id`` of ``perm`` (``method``'s order of ``graph``), kept
    per graph like the order itself.
    """
    def build() -> np.ndarray:
        inv = np.empty(perm.size, dtype=np.int64)
        inv[perm] = np.arange(perm.size)
        return inv

    return _kept(graph, method + "/inverse", build)


def inverse_on_device(graph: Any, method: str, perm: np.ndarray) -> Any:
    """:func:`inverse` as a CuPy array on the current device (32-bit where the ids fit),
    kept per graph and device, so that a renumbered GPU run puts its results back in
    the caller's order without sending the permutation each call.
    """
    import cupy

    def build() -> Any:
        inv = inverse(graph, method, perm)
        return cupy.asarray(inv, dtype=np.int32 if inv.size < 2**31 else np.int64)

    return _kept(graph, f"{method}/inverse/gpu{cupy.cuda.Device().id}", build)


def edge_pick(graph: Any, method: str, perm: np.ndarray) -> np.ndarray:
    """The caller's edge of each edge of ``graph`` renumbered by ``method``, kept per
    graph (see :func:`_edge_pick`).
    """
    return _kept(graph, method + "/pick", lambda: _edge_pick(graph, perm)[1])


def _edge_pick(graph: Any, perm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The renumbered graph's row offsets, and ``pick``: its edge ``i`` is the caller's
    edge ``pick[i]`` (rows move whole, each row's edges keep their order).
    """
    indptr = np.asarray(graph.indptr, dtype=np.int64)
    deg = np.diff(indptr)[perm]
    new_ptr = np.zeros(perm.size + 1, dtype=np.int64)
    np.cumsum(deg, out=new_ptr[1:])
    pick = np.arange(int(new_ptr[-1]), dtype=np.int64) - np.repeat(new_ptr[:-1] - indptr[perm],
                                                                   deg)
    return new_ptr, pick


def renumbered(graph: Any, method: str) -> tuple[Any, np.ndarray | None, float]:
    """``graph`` with its nodes renumbered by ``method``, the permutation, and the seconds
    this call spent building them (0 when both were kept from an earlier call).

    The renumbered graph keeps each row's edges in their order; weights follow their
    edges. It is built once per graph and method and kept while ``graph`` lives.
    """
    if method == "none" or graph.n_nodes == 0:
        return graph, None, 0.0
    key = (id(graph), method + "/graph")
    if key in _ORDERS:
        return _ORDERS[key], order(graph, method), 0.0
    t0 = time.perf_counter()
    n, m = graph.n_nodes, graph.n_edges
    check_memory(f"a copy of the graph renumbered by {method} ({n:,} nodes, {m:,} edges)",
                 16 * (n + 1) + 12 * m + (8 * m if graph.weights is not None else 0),
                 "run with renumber=none, or renumber the graph once and save it")

    out, perm = _shared(graph, method, lambda: build_renumbered(graph, method))
    _kept(graph, method, lambda: perm)
    _kept(graph, method + "/graph", lambda: out)
    return out, perm, time.perf_counter() - t0


def build_renumbered(graph: Any, method: str) -> tuple[Any, np.ndarray]:
    """Build ``graph`` renumbered by ``method`` (no caching) and the permutation."""
    perm = order(graph, method)
    n = graph.n_nodes
    inv = np.empty(n, dtype=np.int64)
    inv[perm] = np.arange(n)
    new_ptr, pick = _edge_pick(graph, perm)
    weights = None if graph.weights is None else np.asarray(graph.weights)[pick]
    from .graph import Graph

    out = Graph(new_ptr, inv[np.asarray(graph.indices)[pick]].astype(np.int32), weights,
                directed=graph.directed, validate=False,
                name=f"{graph.name or 'graph'} ({method} order)")
    return out, perm


#: Folder where renumbered copies of large graphs are shared between processes (the
#: tuner's workers of one study); ``None``: each process builds its own.
_SHARED_DIR: Path | None = None
#: Graphs with fewer edges renumber faster than a file round trip.
SHARED_MIN_EDGES = 1 << 20


def share_renumbered(folder: str | os.PathLike[str] | None) -> None:
    """Share the renumbered copies of large graphs through ``folder``: the first process
    that needs one builds it and writes it there (under a file lock), the others read it.

    The tuner's workers call this with their study's folder, so that a renumbering of a
    4M-node graph (tens of seconds) is built once per study, not once per GPU. ``None``
    turns it off.
    """
    global _SHARED_DIR
    _SHARED_DIR = None if folder is None else Path(folder)


@contextlib.contextmanager
def shared_copy(folder: Path, fingerprint: str, method: str
                ) -> Iterator[tuple[Any, np.ndarray] | None]:
    """Hold the lock of one shared renumbered copy (see :func:`share_renumbered`); give
    the copy and its permutation when it is there, else ``None`` (then write it with
    :func:`write_shared_copy` before leaving the block).
    """
    import fcntl

    stem = folder / f"renumbered-{fingerprint}-{method}"
    with open(f"{stem}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        graph_file, perm_file = Path(f"{stem}.npz"), Path(f"{stem}.perm.npy")
        if graph_file.exists() and perm_file.exists():
            from .io.npz import _load_npz

            yield _load_npz(graph_file), np.load(perm_file, allow_pickle=False)
        else:
            yield None


def write_shared_copy(folder: Path, fingerprint: str, method: str, graph: Any,
                      perm: np.ndarray) -> None:
    """Write a renumbered copy and its permutation, each file whole or not at all."""
    from .io.npz import save_npz

    stem = folder / f"renumbered-{fingerprint}-{method}"
    perm_file = Path(f"{stem}.perm.npy")
    tmp = Path(f"{stem}.perm.tmp.npy")
    np.save(tmp, perm, allow_pickle=False)
    save_npz(graph, Path(f"{stem}.npz"))
    os.replace(tmp, perm_file)  # last: the pair counts as written once both are there


def _shared(graph: Any, method: str, build: Any) -> tuple[Any, np.ndarray]:
    folder = _SHARED_DIR
    if folder is None or graph.n_edges < SHARED_MIN_EDGES or os.name != "posix":
        return build()
    with shared_copy(folder, graph.fingerprint, method) as found:
        if found is not None:
            return found
        out, perm = build()
        write_shared_copy(folder, graph.fingerprint, method, out, perm)
        return out, perm


def to_caller(fields: dict[str, Any], perm: np.ndarray, kinds: dict[str, str],
              inv: np.ndarray | None = None, inv_dev: Any = None,
              done: tuple[str, ...] | list[str] = ()) -> dict:
    """Result fields of a renumbered run in the caller's node ids.

    Parameters
    ----------
    fields : dict
        Node arrays in the renumbered ids (NumPy or CuPy; CuPy arrays come back as CuPy).
    perm : ndarray
        ``perm[new id] = caller id``.
    kinds : dict
        Field name -> what it holds (:data:`ID_KINDS`): ``""`` a value per node,
        ``"node"`` a node id (mapped; values outside ``[0, n)`` mean none and are kept),
        ``"min_label"`` the smallest id of a group of nodes (mapped, then made the
        smallest caller id of the group again).
    inv : ndarray, optional
        The inverse of ``perm`` (:func:`inverse`), computed here when not given.
    inv_dev : cupy.ndarray, optional
        The same on the device (:func:`inverse_on_device`), for CuPy fields; sent up
        here when not given.
    done : sequence of str
        Fields already in the caller's order (the GPU engine's ``in_caller_ids``).

    """
    n = perm.size
    if inv is None:
        inv = np.empty(n, dtype=np.int64)
        inv[perm] = np.arange(n)
    out = {}
    for name, arr in fields.items():
        if name in done:
            out[name] = arr
            continue
        on_device = type(arr).__module__.split(".")[0] == "cupy"
        kind = kinds.get(name, "")
        if on_device and kind == "" and arr.ndim == 1 and arr.shape[0] == n:
            import cupy  # a value per node: gathered on the device, no round trip

            inv_dev = cupy.asarray(inv) if inv_dev is None else inv_dev
            out[name] = arr[inv_dev]
            continue
        host = arr.get() if on_device else np.asarray(arr)
        if host.ndim != 1 or host.shape[0] != n:
            out[name] = arr
            continue
        host = host[inv]
        if kind in ("node", "min_label") and host.size and int(host.min()) >= 0 \
                and int(host.max()) < n:  # every node holds an id: no masks (2.4x)
            mapped = perm[host]
            if kind == "min_label":
                smallest = np.full(n, n, dtype=np.int64)
                np.minimum.at(smallest, mapped, np.arange(n, dtype=np.int64))
                mapped = smallest[mapped]
            host = mapped.astype(arr.dtype)
        elif kind in ("node", "min_label"):
            ok = (host >= 0) & (host < n)
            mapped = host.copy()
            mapped[ok] = perm[host[ok].astype(np.int64)]
            if kind == "min_label":
                smallest = np.full(n, n, dtype=np.int64)
                labels = mapped[ok].astype(np.int64)
                np.minimum.at(smallest, labels, np.flatnonzero(ok))
                mapped[ok] = smallest[labels]
            host = mapped.astype(arr.dtype)
        if on_device:
            import cupy

            out[name] = cupy.asarray(host)
        else:
            out[name] = host
    return out


def edges_to_caller(fields: dict[str, Any], graph: Any, perm: np.ndarray,
                    kinds: dict[str, str], pick: np.ndarray | None = None) -> dict:
    """Per-edge result fields (:class:`~gswitch.declare.EdgeField`) of a run on
    ``graph`` renumbered by ``perm``, in ``graph``'s edge order and node ids.

    Parameters
    ----------
    fields : dict
        Edge arrays in the renumbered graph's CSR order (NumPy or CuPy).
    graph : Graph
        The graph before renumbering.
    perm : ndarray
        ``perm[new id] = caller id``.
    kinds : dict
        Field name -> ``""`` (a value) or ``"node"`` (a node id, mapped).
    pick : ndarray, optional
        :func:`edge_pick` of the renumbering, computed here when not given.

    """
    if not fields:
        return {}
    if pick is None:
        _, pick = _edge_pick(graph, perm)
    out = {}
    for name, arr in fields.items():
        on_device = type(arr).__module__.split(".")[0] == "cupy"
        host = arr.get() if on_device else np.asarray(arr)
        back = np.empty_like(host)
        back[pick] = host
        if kinds.get(name, "") == "node":
            back = perm[back.astype(np.int64)].astype(host.dtype)
        if on_device:
            import cupy

            back = cupy.asarray(back)
        out[name] = back
    return out
