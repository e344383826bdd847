"""networkx's betweenness centrality and core numbers from gswitch's algorithms."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._graph import NxGraph
from ._run import run_algorithm

__all__ = ["betweenness_centrality", "core_number"]


def betweenness_centrality(G: NxGraph, k: int | None = None, normalized: bool = True,
                           weight: Any = None, endpoints: bool = False,
                           seed: Any = None) -> dict:
    """Networkx's unweighted ``betweenness_centrality``, exact or from ``k`` sources
    sampled exactly as networkx samples them (``seed``), so the values are networkx's.
    """
    import networkx as nx

    from gswitch.algorithms.betweenness import rescale

    n = len(G)
    if n == 0:
        return {}
    if k == n:  # networkx's own shortcut: every node
        k = None
    ids = None
    if k is not None:
        rng = nx.utils.create_py_random_state(seed)
        ids = np.array([G.node_id(v) for v in rng.sample(list(G.nodes), k)], dtype=np.int64)
    kwargs = {} if ids is None else {"sources": ids}
    raw = run_algorithm("betweenness", G.gswitch_graph(), endpoints=int(bool(endpoints)),
                        **kwargs).fields["betweenness"]
    values = rescale(np.asarray(raw), directed=G.is_directed(), normalized=normalized,
                     endpoints=endpoints, sources=ids)
    return dict(zip(G.nodes, values.tolist()))


def core_number(G: NxGraph) -> dict:
    """Networkx's ``core_number``.

    Raises
    ------
    networkx.NetworkXNotImplemented
        The graph is a multigraph.
    networkx.NetworkXNotImplemented
        The graph has self loops (networkx's error).

    """
    import networkx as nx

    if G.is_multigraph():
        raise nx.NetworkXNotImplemented("not implemented for multigraph type")
    if len(G) == 0:
        return {}
    graph = G.gswitch_graph()
    if graph.n_self_loops:
        raise nx.NetworkXNotImplemented(
            "Input graph has self loops which is not permitted; Consider using "
            "G.remove_edges_from(nx.selfloop_edges(G)).")
    core = run_algorithm("core_number", graph).fields["core"]
    return dict(zip(G.nodes, np.asarray(core, dtype=np.int64).tolist()))
