"""networkx's ``maximal_independent_set`` from gswitch's Luby rounds."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._graph import NxGraph
from ._run import run_algorithm

__all__ = ["maximal_independent_set"]


def _random(seed: Any) -> Any:
    """The ``random.Random`` networkx's ``py_random_state`` hands over (or one made from
    an integer or ``None`` the same way, for a direct call).
    """
    import random

    if hasattr(seed, "choice") and hasattr(seed, "getrandbits"):
        return seed
    return random.Random(seed)


def _induced(G: NxGraph, free: np.ndarray, rest: np.ndarray) -> Any:
    """The undirected graph ``G`` induces on the nodes ``rest`` (``free`` marks them),
    numbered in their order: their rows' entries into ``rest``, renumbered (a
    monotone map, so each row stays sorted).
    """
    from gswitch import Graph

    new = np.full(free.size, -1, dtype=np.int64)
    new[rest] = np.arange(rest.size)
    owners, entries = G.out_entries(rest)
    heads = G.indices[entries]
    keep = free[heads]
    counts = np.bincount(new[owners[keep]], minlength=rest.size)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return Graph(indptr, new[heads[keep]].astype(np.int32), None, directed=False,
                 validate=False)


def maximal_independent_set(G: NxGraph, nodes: Any = None, seed: Any = None) -> list:
    """Networkx's ``maximal_independent_set``: a maximal independent set that holds
    ``nodes``, by gswitch's ``maximal_independent_set`` (Luby's rounds, priorities
    hashed from a word drawn from ``seed``) on the nodes that neither are in ``nodes``
    nor neighbour one.

    Without ``nodes``, networkx's own first draw picks the node the set must hold (the
    same node networkx would take, from the same state of ``seed``; one with a self loop
    raises as in networkx). The rest is not networkx's set (it draws on at random), but
    it is independent, maximal and holds ``nodes``, as networkx's is. The list gives
    ``nodes`` first, then the others in the graph's node order.

    Raises
    ------
    networkx.NetworkXNotImplemented
        The graph is directed (networkx's error).
    networkx.NetworkXUnfeasible
        ``nodes`` holds a node outside the graph, or two nodes joined by an edge (or one
        with a self loop), with networkx's messages.

    """
    import networkx as nx

    if G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for directed type")
    rng = _random(seed)
    if not nodes:  # networkx's first draw, from the same state: the same node, which
        nodes = [rng.choice(list(G))]  # the set then holds (IndexError without nodes)
    forced = set(nodes)
    if not forced.issubset(G):
        raise nx.NetworkXUnfeasible(f"{forced} is not a subset of the nodes of G")
    graph = G.gswitch_graph()
    n = graph.n_nodes
    ids = np.fromiter((G.node_id(v) for v in forced), dtype=np.int64, count=len(forced))
    near = G.indices[G.out_entries(ids)[1]]  # the forced nodes' neighbours
    inside = np.zeros(n, dtype=bool)
    inside[ids] = True
    if inside[near].any():
        raise nx.NetworkXUnfeasible(f"{forced} is not an independent set of G")
    free = np.ones(n, dtype=bool)
    free[ids] = False
    free[near] = False
    rest = np.flatnonzero(free)
    if rest.size == n:
        sub = graph
    else:  # the nodes neither forced nor next to a forced one, as a graph of their own
        sub = _induced(G, free, rest)
    chosen = np.zeros(0, dtype=np.int64)
    if rest.size:
        got = run_algorithm("maximal_independent_set", sub, seed=rng.getrandbits(32))
        chosen = rest[np.flatnonzero(np.asarray(got.fields["in_set"]) == 1)]
    names = G.names
    return list(forced) + names[chosen].tolist()
