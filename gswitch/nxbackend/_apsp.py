"""networkx's all-pairs path lengths and closeness from gswitch's multi-source BFS and
dense Floyd-Warshall.

Hop counts come from ``msbfs`` (64 sources per traversal,
:mod:`gswitch.algorithms.msbfs`), a batch at a time, so the all-pairs generators stay
lazy: a batch runs when its first node is asked for. ``floyd_warshall`` is the blocked
dense update of :mod:`gswitch.algorithms.apsp` over the float64 edge attribute.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterator
from typing import Any

import numpy as np

from ._graph import NxGraph
from ._run import run_algorithm
from ._sssp import refuse_weights, single_source_dijkstra_path_length

__all__ = [
    "hop_batches",
    "all_pairs_dijkstra_path_length",
    "floyd_warshall",
    "closeness_centrality",
]


def hop_batches(graph: Any, ids: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(sources, hops)`` for consecutive batches of 64 of ``ids`` on a
    :class:`gswitch.Graph`: ``hops[j, v]`` from ``sources[j]``, ``-1`` where unreached.
    """
    from gswitch.algorithms.msbfs import batches, decode

    for part in batches(ids, graph.n_nodes):
        r = run_algorithm("msbfs", graph, sources=part)
        yield part, decode(r.fields, part.size)


def all_pairs_dijkstra_path_length(G: NxGraph, cutoff: float | None = None,
                                   weight: Any = "weight") -> Iterator[tuple[Hashable, dict]]:
    """Networkx's ``all_pairs_dijkstra_path_length``: ``(node, lengths)`` lazily, one
    SSSP per node (the backend's ``single_source_dijkstra_path_length``). Weights that
    gswitch's SSSP refuses (:func:`~._sssp.refuse_weights`) are refused here at the
    call, not at the first item, so that networkx can still run the call itself.
    """
    refuse_weights(G, G.weighted_by(weight))
    return ((node, single_source_dijkstra_path_length(G, node, cutoff=cutoff, weight=weight))
            for node in G.nodes)


def _dense(G: NxGraph, weight: str | None) -> np.ndarray:
    n = len(G)
    w = G.weighted_by(weight)
    src = np.repeat(np.arange(n), np.diff(G.indptr))
    d = np.full((n, n), np.inf)
    np.minimum.at(d, (src, G.indices), np.ones(src.size) if w is None else w)
    # a negative self loop stays, as in networkx
    d[np.arange(n), np.arange(n)] = np.minimum(0.0, d.diagonal())
    return d


def floyd_warshall(G: NxGraph, weight: Any = "weight") -> dict:
    """Networkx's ``floyd_warshall``: ``{u: {v: length}}``, every pair listed, ``inf``
    where unreachable; the inner mappings default to ``inf`` as networkx's do. NaN
    weights and negative cycles, where networkx's values depend on its order of updates,
    are left to networkx (``NotImplementedError``).
    """
    from gswitch.algorithms.apsp import floyd_warshall as blocked

    w = G.weighted_by(weight)
    if w is not None and w.dtype.kind == "f" and np.isnan(w).any():
        # NaN compares false in networkx's updates and spreads through NumPy's minimum
        raise NotImplementedError("NaN edge weights: networkx's answer is its own")
    d = blocked(_dense(G, weight))
    if (d.diagonal() < 0).any():
        # a negative cycle: no shortest lengths, and the values left depend on the order
        # of the updates; networkx's are networkx's
        raise NotImplementedError("a negative cycle: networkx's answer is its own")
    d = d.tolist()
    names = G.nodes
    out = {}
    for u, row in zip(names, d):
        inner = defaultdict(lambda: float("inf"))
        inner.update(zip(names, row))
        out[u] = inner
    return out


def closeness_centrality(G: NxGraph, u: Hashable | None = None, distance: Any = None,
                         wf_improved: bool = True) -> Any:
    """Networkx's ``closeness_centrality`` without ``distance``: incoming hop distances
    (the reverse graph's BFS for a directed graph) from multi-source BFS batches.
    """
    if u is not None and u not in G:
        import networkx as nx

        raise nx.NodeNotFound(f"Source {u} is not in G")  # networkx's path lengths' error
    graph = G.gswitch_graph()
    if G.is_directed():
        graph = graph.reverse
    n = len(G)
    ids = np.arange(n) if u is None else np.array([G.node_id(u)])
    out = {}
    for part, hops in hop_batches(graph, ids):
        reached = hops >= 0
        total = np.where(reached, hops, 0).sum(axis=1, dtype=np.int64)
        found = reached.sum(axis=1) - 1  # the node itself does not count
        for i, tot, k in zip(part.tolist(), total.tolist(), found.tolist()):
            c = 0.0
            if tot > 0 and n > 1:
                c = k / tot
                if wf_improved:
                    c *= k / (n - 1)
            out[G.nodes[i]] = c
    return out if u is None else out[u]
