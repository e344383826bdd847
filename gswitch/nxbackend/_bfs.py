"""networkx's breadth-first functions from gswitch's BFS depths.

The depths come from ``gswitch.run("bfs")``. Functions whose answer is ordered (layers,
tree edges) then walk the layers once on the host in networkx's discovery order: layer
``k + 1`` is, for each node of layer ``k`` in order, its neighbours of depth ``k + 1``
in adjacency order, each at its first appearance. That node's parent is the node whose
list showed it first, which is the parent networkx's queue gives it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Any

import numpy as np

from ._graph import NxGraph
from ._run import run_algorithm

__all__ = [
    "single_source_shortest_path_length",
    "all_pairs_shortest_path_length",
    "bfs_layers",
    "descendants_at_distance",
    "bfs_edges",
    "bfs_tree",
]


def _nx() -> Any:
    import networkx as nx

    return nx


def depths(G: NxGraph, sources: list[int]) -> np.ndarray:
    """Hops from the nearest of ``sources`` (node ids) to every node; -1 if unreached."""
    r = run_algorithm("bfs", G.gswitch_graph(), source=sources if len(sources) > 1
                      else int(sources[0]))
    return np.asarray(r.fields["depth"])


def _layers(G: NxGraph, first: np.ndarray, depth: np.ndarray, limit: float
            ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(parents, layer)`` of each layer after ``first`` up to ``limit``, in discovery
    order (``parents[i]`` discovered ``layer[i]``).
    """
    layer, level = first, 0
    while layer.size and level < limit:
        owners, entries = G.out_entries(layer)
        nbrs = G.indices[entries]
        found = depth[nbrs] == level + 1
        nbrs, owners = nbrs[found], owners[found]
        _, first_seen = np.unique(nbrs, return_index=True)
        first_seen.sort()
        layer, level = nbrs[first_seen], level + 1
        if layer.size:
            yield owners[first_seen], layer


def _not_in_graph(node: Hashable) -> Exception:
    return _nx().NetworkXError(f"The node {node} is not in the graph.")


def single_source_shortest_path_length(G: NxGraph, source: Hashable,
                                       cutoff: float | None = None) -> dict:
    """Networkx's ``single_source_shortest_path_length``: ``{node: hops}``.

    Nodes are listed level by level, each level in graph order.
    """
    if source not in G:
        raise _nx().NodeNotFound(f"Source {source} is not in G")
    return _lengths(G, G.node_id(source), cutoff)


def _lengths(G: NxGraph, s: int, cutoff: float | None) -> dict:
    return _ordered(G.names, depths(G, [s]), cutoff)


def _ordered(names: np.ndarray, depth: np.ndarray, cutoff: float | None) -> dict:
    """``{name: hops}`` of the reached nodes, level by level, each level in graph order.

    networkx lists the source, then expands a level while ``cutoff > level``: level
    ``d`` is listed when ``d < cutoff + 1`` (``cutoff=1.5`` lists level 2, a negative
    cutoff the source alone).
    """
    reached = depth >= 0
    if cutoff is not None:
        reached &= (depth < cutoff + 1) | (depth == 0)
    ids = np.flatnonzero(reached)
    ids = ids[np.argsort(depth[ids], kind="stable")]
    return dict(zip(names[ids].tolist(), depth[ids].tolist()))


def all_pairs_shortest_path_length(G: NxGraph, cutoff: float | None = None
                                   ) -> Iterator[tuple[Hashable, dict]]:
    """Networkx's ``all_pairs_shortest_path_length``: yields ``(node, lengths)`` lazily,
    from multi-source BFS batches of 64 nodes (a batch runs when its first node is asked
    for); each dict lists nodes level by level, each level in graph order.
    """
    from ._apsp import hop_batches

    names = G.names
    for part, hops in hop_batches(G.gswitch_graph(), np.arange(len(G))):
        for i, depth in zip(part.tolist(), hops):
            yield G.nodes[i], _ordered(names, depth, cutoff)


def bfs_layers(G: NxGraph, sources: Any) -> Iterator[list]:
    """Networkx's ``bfs_layers``: the layers as lists, in networkx's exact order."""
    if sources in G:
        sources = [sources]
    # networkx starts from list(set(sources)); the same set gives the same order
    first = list(set(sources))
    for node in first:
        if node not in G:
            raise _not_in_graph(node)
    return _bfs_layers(G, first)


def _bfs_layers(G: NxGraph, first: list) -> Iterator[list]:
    if not first:
        return
    yield first
    ids = np.array([G.node_id(x) for x in first], dtype=np.int64)
    depth = depths(G, ids.tolist())
    for _, layer in _layers(G, ids, depth, float("inf")):
        yield G.names[layer].tolist()


def descendants_at_distance(G: NxGraph, source: Hashable, distance: int) -> set:
    """Networkx's ``descendants_at_distance``: the nodes exactly ``distance`` hops away."""
    if source not in G:
        raise _not_in_graph(source)
    if distance < 0:
        return set()
    depth = depths(G, [G.node_id(source)])
    return set(G.names[depth == distance].tolist())


def bfs_edges(G: NxGraph, source: Hashable, reverse: bool = False,
              depth_limit: int | None = None, sort_neighbors: Any = None
              ) -> Iterator[tuple[Hashable, Hashable]]:
    """Networkx's ``bfs_edges``: tree edges in networkx's exact order (a generator).

    ``sort_neighbors`` and ``reverse=True`` on a directed graph are refused by
    :func:`can_run`, so networkx runs them.
    """
    hash(source)  # networkx first puts it in a set: unhashable, its TypeError
    if source not in G:
        raise _not_in_graph(source)
    s = G.node_id(source)
    limit = len(G) if depth_limit is None else depth_limit
    depth = depths(G, [s])
    names = G.names
    for parents, layer in _layers(G, np.array([s], dtype=np.int64), depth, limit):
        yield from zip(names[parents].tolist(), names[layer].tolist())


def bfs_tree(G: NxGraph, source: Hashable, reverse: bool = False,
             depth_limit: int | None = None, sort_neighbors: Any = None) -> Any:
    """Networkx's ``bfs_tree``: a ``networkx.DiGraph`` of the tree edges."""
    T = _nx().DiGraph()
    T.add_node(source)
    T.add_edges_from(bfs_edges(G, source, depth_limit=depth_limit))
    return T
