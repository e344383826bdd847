"""networkx's betweenness centrality and core numbers from gswitch's algorithms."""

from __future__ import annotations

from typing import Any

import numpy as np

from gswitch.algorithms._brandes_batch import MAX_NODES

from ._graph import NxGraph
from ._run import engine_backend, run_algorithm

__all__ = ["betweenness_centrality", "edge_betweenness_centrality", "core_number"]


def _weighted(G: NxGraph, weight: Any):
    """The graph a weighted Brandes run takes: weights ``weight`` (``None``: unweighted),
    a multigraph's parallel edges merged to the lightest (networkx's rule).

    Raises
    ------
    NotImplementedError
        A weight that is not positive, infinite, or not exact in float32 (the engine's
        weights: networkx's float64 sums would tie other paths), or weights so far apart
        that float64 path sums lose the lightest; networkx then runs.

    """
    graph = G.gswitch_graph(weight)
    w = G.weighted_by(weight)
    if w is None:
        return graph
    if w.size and not bool((w > 0).all()):
        raise NotImplementedError("gswitch's weighted betweenness needs positive weights")
    if w.dtype.kind == "f" and np.isinf(w).any():
        # networkx reaches the nodes behind an infinite weight, at distance inf
        raise NotImplementedError("gswitch's weighted betweenness needs finite weights")
    if not np.array_equal(w.astype(np.float32).astype(np.float64), w.astype(np.float64)):
        raise NotImplementedError("weights not exact in float32 would change which paths "
                                  "tie in gswitch's weighted betweenness")
    if w.size and float(w.min()) * 2.0**52 <= float(w.max()) * max(len(G) - 1, 1):
        # a path may grow longer than the lightest weight can lengthen in float64 (gswitch
        # refuses that as a zero-length cycle; networkx adds Python ints exactly)
        raise NotImplementedError("weights spanning more than float64 resolves along a "
                                  "path: gswitch's weighted betweenness would tie "
                                  "different lengths")
    if G.is_multigraph():
        graph = graph.remove_self_loops().deduplicate("min")
    return graph


#: Largest graph whose unweighted betweenness runs batched (64 path counts and
#: dependencies per node: 1 KiB a node); larger ones run one source at a time.
BATCHED_MAX_NODES = MAX_NODES


def _batched_fits(n: int) -> bool:
    """Whether unweighted betweenness on ``n`` nodes runs the batched formulation."""
    return n <= BATCHED_MAX_NODES


def _sample(G: NxGraph, k: int | None, seed: Any) -> np.ndarray | None:
    """The ids of ``k`` nodes sampled exactly as networkx samples them, or ``None``."""
    import networkx as nx

    if k is None:
        return None
    rng = nx.utils.create_py_random_state(seed)
    return np.array([G.node_id(v) for v in rng.sample(list(G.nodes), k)], dtype=np.int64)


def betweenness_centrality(G: NxGraph, k: int | None = None, normalized: bool = True,
                           weight: Any = None, endpoints: bool = False,
                           seed: Any = None) -> dict:
    """Networkx's ``betweenness_centrality``, exact or from ``k`` sources sampled exactly
    as networkx samples them (``seed``), so the values are networkx's. Unweighted by
    batched Brandes (:mod:`gswitch.algorithms.betweenness_batched`, 64 sources per
    traversal; one source at a time by ``betweenness`` above
    :data:`BATCHED_MAX_NODES`); with ``weight`` by ``weighted_betweenness``.
    """
    from gswitch.algorithms.betweenness import rescale

    n = len(G)
    if k == n:  # networkx's own shortcut: every node
        k = None
    # the weights may be refused, and networkx then runs with the same random state:
    # nothing may be drawn from it before
    graph = G.gswitch_graph() if weight is None else _weighted(G, weight)
    ids = _sample(G, k, seed)
    if n == 0:
        return {}
    kwargs = {} if ids is None else {"sources": ids}
    if weight is None and _batched_fits(n):
        from gswitch.algorithms.betweenness_batched import betweenness

        raw = betweenness(graph, ids, endpoints=bool(endpoints), backend=engine_backend())
    else:
        name = "betweenness" if weight is None else "weighted_betweenness"
        raw = run_algorithm(name, graph, endpoints=int(bool(endpoints)),
                            **kwargs).fields["betweenness"]
    values = rescale(np.asarray(raw), directed=G.is_directed(), normalized=normalized,
                     endpoints=endpoints, sources=ids)
    return dict(zip(G.nodes, values.tolist()))


def edge_betweenness_centrality(G: NxGraph, k: int | None = None, normalized: bool = True,
                                weight: Any = None, seed: Any = None) -> dict:
    """Networkx's ``edge_betweenness_centrality`` by gswitch's ``edge_betweenness``
    (unweighted: batched Brandes, 64 sources per traversal, up to
    :data:`BATCHED_MAX_NODES`): exact or from ``k`` sources sampled as networkx samples
    them, keyed by ``G.edges`` in networkx's order.

    Raises
    ------
    NotImplementedError
        A multigraph converted without its edge keys; networkx then runs.

    """
    if G.is_multigraph() and G.edge_keys is None:
        raise NotImplementedError("this multigraph was converted without its edge keys")
    from gswitch.algorithms.betweenness_weighted import rescale_edges

    n = len(G)
    # refused weights leave the call to networkx with the same random state: drawn after
    graph = G.gswitch_graph() if weight is None else _weighted(G, weight)
    ids = _sample(G, k, seed)
    if n == 0:
        return {}
    kwargs = {} if ids is None else {"sources": ids}
    if weight is None and _batched_fits(n):
        from gswitch.algorithms.betweenness_batched import edge_betweenness

        raw = edge_betweenness(graph, ids, backend=engine_backend())
    else:
        raw = np.asarray(run_algorithm("edge_betweenness", graph, **kwargs)
                         .fields["edge_betweenness"])
    simple = graph.simple()
    src, dst = simple.edges()
    if not G.is_directed():  # an undirected edge: both directions, once
        lo, hi = np.minimum(src, dst), np.maximum(src, dst)
        src, dst = lo, hi
    pair = src.astype(np.int64) * n + dst
    keys, where = np.unique(pair, return_inverse=True)
    summed = np.zeros(keys.size)
    np.add.at(summed, where, raw)
    summed = rescale_edges(summed, n, directed=G.is_directed(), normalized=normalized,
                           k=None if ids is None else len(ids))
    value = dict(zip(keys.tolist(), summed.tolist()))
    # networkx's G.edges: every CSR entry in order, an undirected edge from its first
    # node only (a self loop once); a self loop is on no shortest path
    a, b = G.gswitch_graph().edges()
    a, b = a.astype(np.int64), b.astype(np.int64)
    first = slice(None) if G.is_directed() else a <= b
    a, b = a[first], b[first]
    names = G.nodes
    if not G.is_multigraph():
        return {(names[u], names[v]): value.get(u * n + v, 0.0)
                for u, v in zip(a.tolist(), b.tolist())}
    return _split_over_keys(G, a, b, first, value, weight)


def _split_over_keys(G: NxGraph, a: np.ndarray, b: np.ndarray, first: Any, value: dict,
                     weight: Any) -> dict:
    """A multigraph's answer per ``(u, v, key)``, as networkx's ``_add_edge_keys``: each
    node pair's value split evenly over its lightest parallel edges, 0 for the others.
    """
    n = len(G)
    keys = np.asarray(G.edge_keys, dtype=object)[first]
    w = G.weighted_by(weight)
    w = np.ones(len(G.edge_keys)) if w is None else np.asarray(w, dtype=np.float64)
    w = w[first]
    pair = a * n + b
    lightest: dict = {}
    ties: dict = {}
    for p, x in zip(pair.tolist(), w.tolist()):
        if x < lightest.get(p, np.inf):
            lightest[p], ties[p] = x, 0
        ties[p] += x == lightest[p]
    names = G.nodes
    return {(names[u], names[v], k): (value.get(p, 0.0) / ties[p] if x == lightest[p]
                                      else 0.0)
            for u, v, k, p, x in zip(a.tolist(), b.tolist(), keys.tolist(), pair.tolist(),
                                     w.tolist())}


def _small_core_config(graph: Any) -> dict | None:
    """The configuration of a GPU ``core_number`` call on a small graph (the algorithm
    module's measured ``SMALL_GRAPH_CONFIG``), else ``None``.
    """
    from gswitch.algorithms.kcore import SMALL_GRAPH_CONFIG, SMALL_GRAPH_EDGES

    if engine_backend() != "gpu" or graph.n_edges > SMALL_GRAPH_EDGES:
        return None
    return dict(SMALL_GRAPH_CONFIG)


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
    core = run_algorithm("core_number", graph, config=_small_core_config(graph)).fields["core"]
    return dict(zip(G.nodes, np.asarray(core, dtype=np.int64).tolist()))
