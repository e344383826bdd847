"""networkx's triangle and clustering functions from gswitch's triangle count.

gswitch's ``triangles`` reads the graph as simple and undirected (self loops ignored,
parallel edges once), as networkx counts; a node's degree in the clustering formulas is
likewise its number of distinct neighbours other than itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._graph import NxGraph
from ._run import engine_backend, run_algorithm

__all__ = ["triangles", "transitivity", "clustering", "average_clustering"]


def _undirected(G: NxGraph) -> None:
    if G.is_directed():
        import networkx as nx

        raise nx.NetworkXNotImplemented("not implemented for directed type")


def _no_multigraph(G: NxGraph) -> None:
    """Networkx's per-node triangle routine refuses multigraphs (its whole-graph count
    does not): the functions built on it refuse them here too.
    """
    if G.is_multigraph():
        import networkx as nx

        raise nx.NetworkXNotImplemented("not implemented for multigraph type")


def _counts(G: NxGraph) -> tuple[np.ndarray, np.ndarray]:
    """Triangles through each node and its distinct neighbours other than itself."""
    if len(G) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    graph = G.gswitch_graph()
    # the GPU counts each triangle once on the degree-numbered graph; the CPU engine's
    # default counts the whole graph with two sparse products
    variant = "oriented" if engine_backend() == "gpu" else None
    tri = np.asarray(run_algorithm("triangles", graph, variant=variant).fields["triangles"],
                     dtype=np.int64)
    return tri, graph.symmetrize().simple().out_degree


def triangles(G: NxGraph, nodes: Any = None) -> dict | int:
    """Networkx's ``triangles``: per node, or for one node when ``nodes`` is one."""
    _undirected(G)
    if nodes is not None:
        _no_multigraph(G)
    tri, _ = _counts(G)
    if nodes is not None and nodes in G:
        return int(tri[G.node_id(nodes)])
    if nodes is None:
        return dict(zip(G.nodes, tri.tolist()))
    names, counts = G.names, tri.tolist()
    return {names[i]: counts[i] for i in G.nbunch_ids(nodes)}


def transitivity(G: NxGraph) -> float | int:
    """Networkx's ``transitivity``: three times the triangles over the connected triples."""
    _undirected(G)
    _no_multigraph(G)
    tri, deg = _counts(G)
    if tri.size == 0:
        return 0
    closed = int(2 * tri.sum())
    return 0 if closed == 0 else closed / int((deg * (deg - 1)).sum())


def _local(tri: np.ndarray, deg: np.ndarray) -> np.ndarray:
    pairs = (deg * (deg - 1)).astype(np.float64)
    out = np.zeros(tri.size, dtype=np.float64)
    np.divide(2.0 * tri, pairs, out=out, where=tri > 0)
    return out


def clustering(G: NxGraph, nodes: Any = None, weight: Any = None) -> dict | float:
    """Networkx's unweighted ``clustering`` of an undirected graph (not a multigraph, which
    networkx refuses too).
    """
    _no_multigraph(G)
    tri, deg = _counts(G)
    local = _local(tri, deg)
    if nodes is not None and nodes in G:
        i = G.node_id(nodes)
        return 0 if tri[i] == 0 else float(local[i])
    names = G.names
    ids = range(len(G)) if nodes is None else G.nbunch_ids(nodes)
    return {names[i]: (0 if tri[i] == 0 else float(local[i])) for i in ids}


def average_clustering(G: NxGraph, nodes: Any = None, weight: Any = None,
                       count_zeros: bool = True) -> float:
    """Networkx's unweighted ``average_clustering`` of an undirected graph.

    Raises
    ------
    ZeroDivisionError
        No node to average over, as in networkx.

    """
    values = list(clustering(G, nodes).values())
    if not count_zeros:
        values = [v for v in values if abs(v) > 0]
    return sum(values) / len(values)
