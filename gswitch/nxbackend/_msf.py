"""networkx's minimum and maximum spanning edges and trees from gswitch's Boruvka.

Kruskal's answer is the minimum spanning forest under one total order of the edges:
by weight, then by position in ``G.edges`` (its sort is stable). Giving every edge its
rank in that order as its weight makes the forest unique, so gswitch's
``minimum_spanning_forest`` returns exactly Kruskal's edges whatever ``algorithm`` is
asked for (every one of networkx's gives a forest of the same weight). Ranks are exact
in gswitch's float32 weights below 2**24 edges; past that the call falls back. The
forest's ranks, sorted, are also Kruskal's order of yielding the edges.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any

import numpy as np

from gswitch.graph import Graph

from ._graph import NxGraph, from_networkx, to_networkx
from ._run import run_algorithm

__all__ = ["minimum_spanning_edges", "maximum_spanning_edges", "minimum_spanning_tree",
           "maximum_spanning_tree"]

#: networkx's ``algorithm`` names (its ``ALGORITHMS`` keys)
_ALGORITHMS = ("boruvka", "borůvka", "kruskal", "prim")
#: float32 holds every integer below this exactly: the most edges ranks can number
_EXACT_RANKS = 2**24


def _check_algorithm(algorithm: Any) -> None:
    if algorithm not in _ALGORITHMS:
        raise ValueError(f"{algorithm} is not a valid choice for an algorithm.")


def _not_implemented(kind: str) -> None:
    import networkx as nx

    raise nx.NetworkXNotImplemented(f"not implemented for {kind} type")


def _weights(G: NxGraph, weight: Any) -> np.ndarray | None:
    """One weight per CSR entry (``None``: every edge weighs 1, networkx's default)."""
    if weight is None:
        return None
    if weight in G.weights:
        return G.weights[weight]
    if G.source is not None:
        # converted for its structure only (every attribute kept in the networkx graph):
        # read the weight from it, 1 where an edge has none, as networkx does, and keep it
        # with the conversion (networkx drops a cached conversion when G changes)
        w = from_networkx(G.source, {weight: 1}, preserve_graph_attrs=False).weights[weight]
        G.weights[weight] = w
        return w
    return G.weighted_by(weight)


def _rows(G: NxGraph) -> np.ndarray:
    return np.repeat(np.arange(len(G), dtype=np.int32), np.diff(G.indptr))


def _forest(G: NxGraph, w: np.ndarray | None, minimum: bool, ignore_nan: bool
            ) -> np.ndarray:
    """The CSR entries of Kruskal's forest under the weights ``w`` (one per CSR entry,
    ``None``: every edge weighs 1), in the order Kruskal yields them.

    Raises
    ------
    ValueError
        A weight is NaN and ``ignore_nan`` is false (networkx's error).

    """
    rows = _rows(G)
    # each edge once, at the entry networkx's G.edges lists it: in the row of its end
    # that comes first in the graph
    pos = np.flatnonzero(G.indices >= rows)
    vals = np.ones(pos.size) if w is None else w[pos]
    if vals.dtype.kind == "f":
        nan = np.isnan(vals)
        if nan.any():
            if not ignore_nan:
                p = int(pos[np.argmax(nan)])
                edge = (G.nodes[rows[p]], G.nodes[G.indices[p]])
                raise ValueError(f"NaN found as an edge weight. Edge {edge}")
            pos, vals = pos[~nan], vals[~nan]
    loop = G.indices[pos] == rows[pos]
    pos, vals = pos[~loop], vals[~loop]
    if pos.size == 0:
        return pos
    order = np.argsort(vals if minimum else -vals, kind="stable")
    rank = np.empty(pos.size, dtype=np.float32)
    rank[order] = np.arange(pos.size, dtype=np.float32)
    graph = Graph.from_edges(rows[pos], G.indices[pos], rank, n_nodes=len(G), directed=False)
    tree_w = np.asarray(run_algorithm("minimum_spanning_forest", graph).fields["tree_w"])
    chosen = np.sort(tree_w[~np.isnan(tree_w)].astype(np.int64))
    return pos[order[chosen]]


def _parallel_index(G: NxGraph, entries: np.ndarray) -> np.ndarray:
    """Which of its parallel edges each entry is (a multigraph lists them side by side)."""
    starts = np.ones(G.indices.size, dtype=bool)
    starts[1:] = G.indices[1:] != G.indices[:-1]
    starts[G.indptr[:-1][np.diff(G.indptr) > 0]] = True
    first = np.maximum.accumulate(np.where(starts, np.arange(starts.size), 0))
    return entries - first[entries]


def _edges(G: NxGraph, entries: np.ndarray, keys: bool, data: bool) -> Iterator[tuple]:
    """The networkx tuples of the forest's edges: ``(u, v[, key][, data])``."""
    rows = np.searchsorted(G.indptr, entries, side="right") - 1
    us = G.names[rows].tolist()
    vs = G.names[G.indices[entries]].tolist()
    multi = G.is_multigraph()
    if not (data or (multi and keys)):
        yield from zip(us, vs)
        return
    # the networkx graph holds the attribute dicts and keys; a graph converted without
    # it (passed in as a gswitch graph) gives back what the conversion kept
    source = G.source if G.source is not None else to_networkx(G)
    adj = source._adj
    nth = _parallel_index(G, entries).tolist() if multi else None
    for i, (u, v) in enumerate(zip(us, vs)):
        d = adj[u][v]
        if not multi:
            yield (u, v, d) if data else (u, v)
            continue
        k = next(islice(iter(d), nth[i], None))
        head = (u, v, k) if keys else (u, v)
        yield (*head, d[k]) if data else head


def _spanning_edges(G: NxGraph, algorithm: str, weight: Any, keys: bool, data: bool,
                    ignore_nan: bool, minimum: bool) -> Iterator[tuple]:
    if G.is_directed():  # networkx's decorator refuses before the name is looked up
        _not_implemented("directed")
    _check_algorithm(algorithm)
    if algorithm in ("boruvka", "borůvka") and G.is_multigraph():
        _not_implemented("multigraph")
    edges = int(np.count_nonzero(G.indices > _rows(G)))  # each once, self loops aside
    if edges >= _EXACT_RANKS:
        # refused at the call: raised from the generator, networkx could not run it
        raise NotImplementedError(f"{edges:,} edges: gswitch's float32 weights rank at "
                                  f"most {_EXACT_RANKS - 1:,} edges exactly")
    # read at the call: a weight that is not a number is refused (NonNumericWeight)
    # while networkx can still run the call itself
    w = _weights(G, weight)
    return _lazy(G, w, keys, data, ignore_nan, minimum)


def _lazy(G: NxGraph, w: np.ndarray | None, keys: bool, data: bool, ignore_nan: bool,
          minimum: bool) -> Iterator[tuple]:
    # a generator, as networkx's are: a NaN weight raises when the edges are read
    yield from _edges(G, _forest(G, w, minimum, ignore_nan), keys, data)


def minimum_spanning_edges(G: NxGraph, algorithm: str = "kruskal", weight: Any = "weight",
                           keys: bool = True, data: bool = True,
                           ignore_nan: bool = False) -> Iterator[tuple]:
    """Networkx's ``minimum_spanning_edges``: a generator of the forest's edges.

    Every ``algorithm`` yields Kruskal's forest in Kruskal's order: the lightest edges
    first, ties by their order in ``G.edges`` (Prim's and Boruvka's forests in networkx
    weigh the same and differ only where weights tie). Edges without ``weight`` weigh 1.

    Raises
    ------
    ValueError
        ``algorithm`` is not one of networkx's, or (when read) a weight is NaN and
        ``ignore_nan`` is false.
    networkx.NetworkXNotImplemented
        ``G`` is directed, or a multigraph with ``algorithm="boruvka"``.

    """
    return _spanning_edges(G, algorithm, weight, keys, data, ignore_nan, True)


def maximum_spanning_edges(G: NxGraph, algorithm: str = "kruskal", weight: Any = "weight",
                           keys: bool = True, data: bool = True,
                           ignore_nan: bool = False) -> Iterator[tuple]:
    """Networkx's ``maximum_spanning_edges``: the heaviest edges first (Kruskal's
    forest under the reversed order, ties by ``G.edges`` order); see
    :func:`minimum_spanning_edges`.
    """
    return _spanning_edges(G, algorithm, weight, keys, data, ignore_nan, False)


def _tree(G: NxGraph, weight: Any, algorithm: str, ignore_nan: bool, minimum: bool) -> Any:
    edges = _spanning_edges(G, algorithm, weight, True, True, ignore_nan, minimum)
    source = G.source if G.source is not None else to_networkx(G)
    T = source.__class__()
    T.graph.update(source.graph)
    T.add_nodes_from(source.nodes.items())
    T.add_edges_from(edges)
    return T


def minimum_spanning_tree(G: NxGraph, weight: Any = "weight", algorithm: str = "kruskal",
                          ignore_nan: bool = False) -> Any:
    """Networkx's ``minimum_spanning_tree``: a graph of ``G``'s class with every node,
    the forest's edges and all their attributes (Kruskal's forest, see
    :func:`minimum_spanning_edges`).

    Raises
    ------
    ValueError
        ``algorithm`` is not one of networkx's, or a weight is NaN and ``ignore_nan``
        is false.
    networkx.NetworkXNotImplemented
        ``G`` is directed, or a multigraph with ``algorithm="boruvka"``.

    """
    return _tree(G, weight, algorithm, ignore_nan, True)


def maximum_spanning_tree(G: NxGraph, weight: Any = "weight", algorithm: str = "kruskal",
                          ignore_nan: bool = False) -> Any:
    """Networkx's ``maximum_spanning_tree``; see :func:`minimum_spanning_tree`."""
    return _tree(G, weight, algorithm, ignore_nan, False)
