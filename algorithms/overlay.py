"""BFS and SSSP over a partition overlay: searches that stay inside parts of
consecutive node ids, a small boundary graph solved exactly, and one last local search.

A level-synchronous traversal pays one device-wide step per level, so a graph of long
diameter (a chain of clusters, a long path of communities) costs tens of thousands of
steps whatever the load balance. The overlay cuts that path into parts:

1. the nodes are split into parts of ``partition_size`` consecutive ids (after the
   ``renumber`` key's reordering, when one is set). A *cut edge* joins two parts; its
   head is an *entry* of its part, its tail an *exit*; entries and exits are the
   boundary nodes;
2. ``source_search``: a search from the source that never crosses a cut edge;
3. ``entry_search``, once per entry rank ``j``: a search from the ``j``-th entry of every
   part at once, again never crossing a cut edge, so each part holds the distances from
   its own ``j``-th entry. The number of rounds is the most entries of any part. These
   distances depend on the graph alone and are kept with it
   (:meth:`gswitch.Graph.cached`): a later call on the same graph skips the rounds (its
   ``plan`` goes straight on to ``solve``);
4. ``solve`` (a host step): the boundary graph has a node per boundary node and a virtual
   source, with the local distances (source to boundary node, entry to boundary node of
   the same part) and the cut edges as its edges. Its exact distances come from
   ``scipy.sparse.csgraph.dijkstra`` on the host; this is the escape hatch of the
   formulation, with a reason: the boundary graph is small (a few nodes per part) and
   sequential by nature, a Dijkstra over it costs well under a millisecond, and a
   device-wide step per boundary node, which is what the operators would take, is what
   the overlay exists to avoid;
5. ``final_search``: a search from every boundary node at once, each starting from its
   exact distance, never crossing a cut edge.

A shortest path to a node ``v`` either stays inside ``v``'s part from the source, or
enters that part for the last time through an entry ``e`` and stays inside from there;
``d(e)`` is exact after step 4, so step 5 gives ``d(v)`` exactly. Every search is an
operator stage over the whole graph, run by the strategies of the run's configuration;
each part is explored by its own threads in the same steps, so the steps a search takes
are the diameter of a part, not of the graph.

When it wins: on graphs that split into parts joined by few edges, where the few
entries per part keep the rounds and the boundary graph small. The 1M-node chain of
32-node cliques is the case in point (parts of 1,024 nodes: two entries a part). It
does not suit graphs whose parts have long boundaries (a road grid in row order has an
entry for nearly every node). When the boundary table does not fit in one value per
node (``boundary nodes x (entry ranks + 1) > nodes``), a run searches the whole graph at
once instead (the same answer, with a warning once per graph), the tuner leaves the
variant out of that graph's search and the selector passes over it (``suited``). The
shipped selector picks it for graphs near its training chains; a plain call on the
chain above took 5.6 ms for BFS and 7.8 ms for SSSP (a first call on the graph 61 and
72 ms) against scipy's 726 and 585 ms (H200,
``benchmarks/results/h200_s46_chain_plain.log``).

On the GPU the boundary's pass over the edges runs on the device (a binary search of
the row offsets per edge, a chunk of edges at a time; only the cut edges come back):
a first overlay call on that chain went from 115-122 ms to 15-20 ms (BFS) and from
103-107 to 28-30 ms (SSSP) of which the host pass over 32.6M edges had been about
100 ms (``h200_s46_overlay_cold_bfs_before.log``, ``h200_s46_overlay_cold_bfs.log``).

References
----------
.. [1] Delling, Goldberg, Pajor, Werneck, "Customizable route planning in road
   networks", Transportation Science 51 (2017): cells, their boundary nodes, and an
   overlay graph of the distances between them.
.. [2] Nasre, Burtscher, Pingali, "Data-driven versus topology-driven irregular
   computations on GPUs", IPDPS 2013: spatial partitions of the graph.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

import gswitch as gs
from gswitch._hints import option
from gswitch._memory import MemoryRefused, check_memory
from gswitch.algorithm import int_inf
from gswitch.arrayops import replace_at_least

__all__ = ["Boundary", "boundary", "suited", "OverlayBFS", "OverlaySSSP",
           "DEFAULT_PARTITION"]

#: Nodes per part by default: a multiple of 32 (a warp's worth of consecutive ids).
DEFAULT_PARTITION = 1024
#: A part size no graph reaches: every node in part 0, so no edge is cut.
_WHOLE = 2**31 - 1


@dataclass(frozen=True)
class Boundary:
    """The boundary of a graph's parts of ``size`` consecutive node ids (host arrays).

    Attributes
    ----------
    size : int
        Nodes per part.
    keys : ndarray of int64
        The boundary nodes (entries and exits), sorted.
    ranked : tuple of ndarray of int64
        ``ranked[j]``: the entry of rank ``j`` of every part that has one (entries of a
        part ranked by id).
    seed : ndarray of int64, shape (keys.size, slots)
        ``seed[k, j]``: the index in ``keys`` of the entry of rank ``j`` of key ``k``'s
        part, ``-1`` where that part has fewer entries.
    cut_u, cut_v : ndarray of int64
        The cut edges as indices in ``keys`` (tail, head), parallel edges merged.
    cut_w : ndarray of float64
        Their weights (the lightest of parallel edges; 1 when unweighted).
    """

    size: int
    keys: np.ndarray
    ranked: tuple[np.ndarray, ...]
    seed: np.ndarray
    cut_u: np.ndarray
    cut_v: np.ndarray
    cut_w: np.ndarray
    #: why the overlay does not fit these parts (a run then searches the whole graph
    #: at once), or ``""``
    unfit: str = ""

    @property
    def slots(self) -> int:
        """The most entries of any part: the rounds of ``entry_search``."""
        return len(self.ranked)


def boundary(graph: gs.Graph, size: int, xp: Any = np) -> Boundary:
    """The boundary of ``graph``'s parts of ``size`` consecutive ids, computed once per
    graph and size (:meth:`gswitch.Graph.cached`).

    Its ``unfit`` says why, when the table of local distances (a value per boundary
    node and entry rank, plus one for the source) would not fit in one value per node:
    the parts have too long a boundary for the overlay. With ``xp`` CuPy the pass over
    the edges runs on the device, on the graph's resident copy (the rest is over the
    cut edges alone); the boundary is the same either way.
    """
    return graph.cached(("overlay.boundary", int(size)),
                        lambda: _boundary(graph, int(size), xp))


def _boundary(graph: gs.Graph, size: int, xp: Any = np) -> Boundary:
    n, m = graph.n_nodes, graph.n_edges
    if xp is np:
        check_memory(f"the partition overlay of a graph of {m:,} edges", 8 * n + 24 * m,
                     "use another variant of the algorithm")
        u, v, cut = _cut_edges(graph, size)
    else:
        u, v, cut = _cut_edges_on_device(graph, size)
    w = (np.ones(cut.size) if graph.weights is None
         else graph.weights[cut].astype(np.float64))
    entries = np.unique(v)
    keys = np.union1d(entries, np.unique(u))
    part = entries // size
    rank = np.arange(entries.size) - np.searchsorted(part, part)
    slots = int(rank.max()) + 1 if entries.size else 0
    if keys.size * (slots + 1) > n:
        empty = np.zeros(0, dtype=np.int64)
        return Boundary(size, empty, (), np.zeros((0, 0), dtype=np.int64), empty, empty,
                        np.zeros(0), unfit=(
            f"variant overlay: parts of {size} nodes have up to {slots} entry nodes "
            f"({keys.size:,} boundary nodes in all), too many for its table of one value "
            f"per node ({n:,})"))
    ranked = tuple(entries[rank == j] for j in range(slots))
    # the entry of each rank of every part, as indices in keys
    parts = np.unique(part)
    table = np.full((parts.size, slots), -1, dtype=np.int64)
    table[np.searchsorted(parts, part), rank] = np.searchsorted(keys, entries)
    kpart = keys // size
    at = np.minimum(np.searchsorted(parts, kpart), max(parts.size - 1, 0))
    seed = (np.where((parts[at] == kpart)[:, None], table[at], -1) if parts.size
            else np.full((keys.size, 0), -1, dtype=np.int64))
    cu, cv = np.searchsorted(keys, u), np.searchsorted(keys, v)
    order = np.lexsort((w, cv, cu))
    cu, cv, w = cu[order], cv[order], w[order]
    first = np.ones(cu.size, dtype=bool)
    first[1:] = (cu[1:] != cu[:-1]) | (cv[1:] != cv[:-1])
    return Boundary(size, keys, ranked, seed.reshape(keys.size, slots), cu[first], cv[first],
                    w[first])


def _cut_edges(graph: gs.Graph, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edges between parts: tails, heads (int64) and positions in CSR order. Only
    the rows whose smallest or largest neighbour lies in another part are expanded
    (a chain of clusters has a few per part), so the pass over every edge is one
    ``min`` and one ``max`` per row.
    """
    indptr, indices = graph.indptr, graph.indices
    deg = np.diff(indptr)
    rows = np.flatnonzero(deg)
    if rows.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    lo = np.minimum.reduceat(indices, indptr[rows]) // size
    hi = np.maximum.reduceat(indices, indptr[rows]) // size
    mixed = rows[(lo != rows // size) | (hi != rows // size)].astype(np.int64)
    count = deg[mixed].astype(np.int64)
    src = np.repeat(mixed, count)
    # the positions of the mixed rows' edges: each row's start plus 0 .. degree - 1
    first = np.repeat(indptr[mixed].astype(np.int64) - np.cumsum(count) + count, count)
    pos = first + np.arange(src.size, dtype=np.int64)
    keep = indices[pos] // size != src // size
    return src[keep], indices[pos[keep]].astype(np.int64), pos[keep]


#: Edges per chunk of the device pass: its scratch arrays stay near 100 MB.
_CHUNK = 1 << 22


def _cut_edges_on_device(graph: gs.Graph, size: int
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_cut_edges` on the device: each edge's row found by a binary search of
    the row offsets, a chunk of edges at a time; only the cut edges come back. A graph
    not on the device yet is uploaded (its copy serves the runs after) where it fits,
    with room for the chunks; else the host pass runs.
    """
    import cupy as cp

    from gswitch.engine.gpu import GpuEngine

    engine = GpuEngine.instance()
    with engine.call_lock:  # the selector's check runs outside a call: one upload
        res = engine._known(graph)
        if res is None:
            n, m = graph.n_nodes, graph.n_edges
            need = (4 * (2 * n + 1) + (8 if graph.weights is not None else 4) * m
                    + 32 * _CHUNK)
            free = int(cp.cuda.runtime.memGetInfo()[0]) + \
                int(cp.get_default_memory_pool().free_bytes())
            if need > 0.9 * free:
                return _cut_edges(graph, size)
            res = engine.resident(graph)
    row, col = res.row, res.col
    parts = []
    for lo in range(0, int(col.size), _CHUNK):
        pos = cp.arange(lo, min(lo + _CHUNK, int(col.size)), dtype=cp.int32)
        src = cp.searchsorted(row, pos, side="right") - 1
        dst = col[lo: lo + pos.size]
        keep = cp.flatnonzero(dst // size != src // size)
        parts.append(cp.stack([src[keep], dst[keep].astype(src.dtype),
                               pos[keep].astype(src.dtype)]))
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    u, v, pos = cp.concatenate(parts, axis=1).get().astype(np.int64)
    return u, v, pos


def _on(graph: gs.Graph, b: Boundary, xp: Any) -> dict[str, Any]:
    """The boundary's node lists as ``xp`` arrays, kept with the graph."""
    def build() -> dict[str, Any]:
        return {"keys": xp.asarray(b.keys), "ranked": [xp.asarray(r) for r in b.ranked]}
    return graph.cached(("overlay.device", b.size, xp.__name__), build)


def _host(a: Any) -> np.ndarray:
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _unreached(dtype: Any) -> float:
    """The value a distance field holds where nothing reached it."""
    return float("inf") if np.dtype(dtype).kind == "f" else float(int_inf(dtype))


def _view(table: Any, b: Boundary) -> Any:
    """The (boundary node, entry rank + source) table inside the per-node field."""
    return table[: b.keys.size * (b.slots + 1)].reshape(b.keys.size, b.slots + 1)


def _restart(fields: dict, name: str, xp: Any, ids: Any, value: Any = 0) -> Any:
    """A fresh distance field: unreached everywhere, ``value`` at ``ids``."""
    dist = xp.full_like(fields[name], _unreached(fields[name].dtype))
    dist[ids] = value
    return dist


def _solve(b: Boundary, local: np.ndarray, dtype: Any, hops: bool) -> np.ndarray:
    """Exact distances of the boundary nodes from the sources: Dijkstra over the
    boundary graph (entry to same-part boundary node, cut edges, and a virtual source
    at index ``keys.size`` with an edge to each boundary node its part's sources reach).
    With ``hops`` every cut edge counts 1 (BFS), whatever the graph's weights.
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import dijkstra

    k = b.keys.size
    d = local.astype(np.float64)
    d[d >= _unreached(dtype)] = np.inf
    rows = np.arange(k)
    us, vs, ws = [b.cut_u], [b.cut_v], [np.ones(b.cut_w.size) if hops else b.cut_w]
    for j in range(b.slots):
        ok = (b.seed[:, j] >= 0) & np.isfinite(d[:, j])
        us.append(b.seed[ok, j])
        vs.append(rows[ok])
        ws.append(d[ok, j])
    ok = np.isfinite(d[:, b.slots])
    us.append(np.full(int(ok.sum()), k))
    vs.append(rows[ok])
    ws.append(d[ok, b.slots])
    g = sp.csr_array((np.concatenate(ws), (np.concatenate(us), np.concatenate(vs))),
                     shape=(k + 1, k + 1))
    return dijkstra(g, indices=k)[:k]


def _remedy(fact: str) -> str:
    """``fact`` with what to change, spelled as the caller writes it."""
    return (f"{fact}; it pays on graphs whose parts are joined by few edges (chains of "
            f"clusters): set another part size ({option('partition_size')}), a "
            f"renumbering ({option('renumber_key')}) or another variant "
            f"({option('variant')})")


def suited(graph: gs.Graph, backend: str = "cpu") -> str | None:
    """Why the overlay does not pay on ``graph`` at the default part size (the tuner
    leaves the variants out of its search there, and the selector passes over a pick of
    them), or ``None``. With ``backend="gpu"`` the pass over the edges runs on the
    device where there is one.
    """
    xp = np
    if backend == "gpu" and gs.gpu_available():
        import cupy as xp
    try:
        b = boundary(graph, DEFAULT_PARTITION, xp)
    except MemoryRefused as exc:  # too large to even find its boundary here
        return f"variant overlay: {exc}"
    if b.unfit:
        return _remedy(b.unfit)
    if b.keys.size == 0:
        return (f"variant overlay: no edge joins two parts of {DEFAULT_PARTITION} nodes, "
                "so it is the plain search with more stages")
    return None


def _plan(fields: dict, params: dict, xp: Any, graph: gs.Graph, name: str) -> dict:
    b = boundary(graph, params["partition_size"], xp)
    if b.unfit:  # one search over the whole graph (a single part) from the sources
        if graph.cached(("overlay.warned", b.size)) is None:  # once per graph and size
            graph.cached(("overlay.warned", b.size), lambda: True)
            warnings.warn(_remedy(b.unfit + ", so it searches the whole graph at once"),
                          RuntimeWarning, stacklevel=2)
        origin = xp.flatnonzero(fields["origin"])
        return {"partition_size": _WHOLE, "start": origin, "repeat": "final_search",
                name: _restart(fields, name, xp, origin)}
    if b.keys.size == 0:  # one part, or none joined: the source's search is the answer
        return {"stop": True}
    dev = _on(graph, b, xp)
    dist = fields[name]
    table = xp.full_like(fields["table"], _unreached(dist.dtype))
    _view(table, b)[:, b.slots] = dist[dev["keys"]]
    known = graph.cached(("overlay.local", b.size, np.dtype(dist.dtype).str, xp.__name__))
    if known is not None:  # the entries' searches of an earlier call: straight to solve
        _view(table, b)[:, : b.slots] = known
        return {"table": table, "round": b.slots, "repeat": "solve"}
    return {"table": table, "round": 0, "start": dev["ranked"][0],
            name: _restart(fields, name, xp, dev["ranked"][0])}


def _collect(fields: dict, params: dict, xp: Any, graph: gs.Graph, name: str) -> dict:
    b = boundary(graph, params["partition_size"], xp)
    dev = _on(graph, b, xp)
    table, dist = fields["table"], fields[name]
    j = int(params["round"])
    key = ("overlay.local", b.size, np.dtype(dist.dtype).str, xp.__name__)
    if j < b.slots:
        _view(table, b)[:, j] = dist[dev["keys"]]
        j += 1
        if j < b.slots:
            return {"table": table, "round": j, "start": dev["ranked"][j], "repeat":
                    "entry_search", name: _restart(fields, name, xp, dev["ranked"][j])}
        kept = _view(table, b)[:, : b.slots].copy()
        graph.cached(key, lambda: kept)
    exact = _solve(b, _host(_view(table, b)), dist.dtype, hops=name == "depth")
    reached = np.flatnonzero(np.isfinite(exact))
    ids = xp.asarray(b.keys[reached])
    values = exact[reached].astype(dist.dtype)
    out = _restart(fields, name, xp, ids, xp.asarray(values))
    origin = xp.flatnonzero(fields["origin"])
    out[origin] = 0
    return {name: out, "start": xp.concatenate([ids, origin.astype(ids.dtype)])}


def _size() -> gs.Param:
    return gs.Param("int32", DEFAULT_PARTITION, low=1, high=2**31 - 1,
                    doc="nodes per part of consecutive ids")


def _round() -> gs.Param:
    return gs.Param("int32", 0, low=0, high=2**31 - 1,
                    doc="entry rank searched (set by the host steps)")


def _origin() -> gs.NodeField:
    return gs.NodeField("int32", init=0, at_source=1, output=False, doc="1 at the sources")


def _table(dtype: str) -> gs.NodeField:
    return gs.NodeField(dtype, init=gs.INF, output=False,
                        doc="local distances: boundary node by entry rank, and the source")


def _hop(e, p):
    e.only_if((e.src.id // p.partition_size).eq(e.dst.id // p.partition_size))
    e.dst.depth.reduce_min(e.src.depth + 1)


def _relax(e, p):
    e.only_if((e.src.id // p.partition_size).eq(e.dst.id // p.partition_size))
    e.dst.dist.reduce_min(e.src.dist + e.weight)


_CONFIG = {"supports": {"direction": ("push",)}}
_DEFAULTS = {"worklist": "bitmap", "load_balance": "twc", "driving": "data",
             "direction": "push", "launch": "persistent"}


def _formulation(name: str, doc: str, field: gs.NodeField, table: str, op: Any,
                 **extra: Any) -> type:
    """The class both overlay formulations declare: the distance ``field`` under
    ``name``, the scratch fields and parameters, and the three searches (each confined
    to a part by ``op``) with the two host steps between them.
    """
    @gs.stage(**_CONFIG)
    class source_search:
        """From the source, inside its part."""

        start = gs.from_source()
        edge = gs.edge_op(op)

    @gs.stage(**_CONFIG)
    class entry_search:
        """From the entry of one rank of every part, each inside its part."""

        start = gs.chosen_nodes()
        edge = gs.edge_op(op)

    @gs.stage(**_CONFIG)
    class final_search:
        """From every boundary node at its exact distance, inside its part."""

        start = gs.chosen_nodes()
        edge = gs.edge_op(op)

    def plan(fields, params, xp, graph):
        return _plan(fields, params, xp, graph, name)

    def solve(fields, params, xp, graph):
        return _collect(fields, params, xp, graph, name)

    body = {"__doc__": doc, name: field, "origin": _origin(), "table": _table(table),
            "partition_size": _size(), "round": _round(),
            "source_search": source_search, "plan": gs.host_step(plan, graph=True),
            "entry_search": entry_search, "solve": gs.host_step(solve, graph=True),
            "final_search": final_search, **extra}
    return type(f"Overlay{name.title()}", (), body)


def _finalize_depth(fields, params):
    fields["depth"] = replace_at_least(fields["depth"], int_inf("int32"), -1)
    return fields


_BFS_DOC = """Breadth-first search over a partition overlay (see :mod:`.overlay`): hop
    distances from the source by searches inside parts of ``partition_size``
    consecutive ids and an exact search over their boundary.

    Parameters
    ----------
    source : int
        Start node (a run argument).
    partition_size : int
        Nodes per part (default 1024). Parts joined by few edges make few rounds and a
        small boundary graph; when their boundary is too long, the run searches the
        whole graph at once (with a warning).

    Returns
    -------
    depth : ndarray of int32
        Hops from the source; ``-1`` for unreachable nodes (as the ``default`` variant).

    References
    ----------
    .. [1] Delling, Goldberg, Pajor, Werneck, "Customizable route planning in road
       networks", Transportation Science 51 (2017).

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges(range(9), range(1, 10)).symmetrize()
    >>> r = gs.run("bfs", g, source=0, backend="cpu",
    ...            config={"variant": "overlay"}, partition_size=5)
    >>> r.fields["depth"].tolist()
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
"""

_SSSP_DOC = """Single-source shortest paths over a partition overlay (see :mod:`.overlay`):
    searches inside parts of ``partition_size`` consecutive ids, and an exact search
    over their boundary.

    Parameters
    ----------
    source : int
        Start node (a run argument).
    partition_size : int
        Nodes per part (default 1024).

    Returns
    -------
    dist : ndarray of float32
        Shortest distance from the source; ``inf`` for unreachable nodes.

    Raises
    ------
    InvalidInput
        If any edge weight is negative or NaN.

    References
    ----------
    .. [1] Delling, Goldberg, Pajor, Werneck, "Customizable route planning in road
       networks", Transportation Science 51 (2017).

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges(range(9), range(1, 10), [2.0] * 9)
    >>> r = gs.run("sssp", g, source=0, backend="cpu",
    ...            config={"variant": "overlay"}, partition_size=5)
    >>> r.fields["dist"].tolist()
    [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0]
"""


OverlayBFS = gs.algorithm(
    _formulation("depth", _BFS_DOC,
                 gs.NodeField("int32", init=gs.INF, at_source=0, doc="hops from the source"),
                 "int32", _hop, finalize=staticmethod(_finalize_depth)),
    name="bfs", variant="overlay", default=False, finalize_on_device=True,
    reference="scipy.sparse.csgraph.shortest_path(unweighted=True)",
    priority=lambda n: n.depth, suited=suited, defaults=_DEFAULTS, **_CONFIG)

OverlaySSSP = gs.algorithm(
    _formulation("dist", _SSSP_DOC,
                 gs.NodeField("float32", init=gs.INF, at_source=0.0,
                              doc="distance from the source"),
                 "float32", _relax),
    name="sssp", variant="overlay", default=False, weights="nonnegative",
    reference="scipy.sparse.csgraph.dijkstra", priority=lambda n: n.dist,
    suited=suited, defaults=_DEFAULTS, **_CONFIG)


@gs.hookimpl
def gswitch_algorithms():
    return [OverlayBFS, OverlaySSSP]
