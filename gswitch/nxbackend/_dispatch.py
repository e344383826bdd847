"""``can_run`` and ``should_run``: which calls the backend takes, and which it leaves.

``can_run`` refuses, with a reason string (networkx >= 3.4 logs it; a string is falsy
to it), the options gswitch does not implement; networkx then runs the call itself.
``should_run`` leaves graphs below :data:`SMALL_GRAPH` nodes plus edges to networkx,
where a ``gswitch.run`` call's fixed cost (about 0.3 ms on the CPU engine) is more than
networkx's whole answer.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ._pagerank import FLOAT32_L1_FLOOR, MAX_ALPHA, MAX_STEPS

__all__ = ["can_run", "should_run", "SMALL_GRAPH"]

#: Per function, the nodes plus edges below which networkx answers faster than a gswitch
#: call on an already converted graph: where the CPU engine stopped losing on random
#: graphs of mean degree 6 (benchmarks/results/cpu_nx_should_run.txt). A converted graph
#: passed in always runs.
SMALL_GRAPH: dict[str, int] = {
    "single_source_shortest_path_length": 15_000,
    "all_pairs_shortest_path_length": 15_000,
    "bfs_layers": 15_000,
    "descendants_at_distance": 15_000,
    "bfs_edges": 15_000,
    "bfs_tree": 15_000,
    "connected_components": 12_000,
    "number_connected_components": 12_000,
    "node_connected_component": 12_000,
    "is_connected": 12_000,
    "strongly_connected_components": 12_000,
    "number_strongly_connected_components": 12_000,
    "is_strongly_connected": 12_000,
    "single_source_dijkstra_path_length": 4_000,
    "single_source_bellman_ford_path_length": 4_000,
    "pagerank": 1_500,
    # networkx intersects Python sets per edge; a gswitch call costs a few milliseconds
    "betweenness_centrality": 300,
    "edge_betweenness_centrality": 300,
    "core_number": 5_000,
    "k_core": 5_000,
    "label_propagation_communities": 2_000,
    "asyn_lpa_communities": 2_000,
    # networkx's Kruskal in Python against a few Boruvka rounds; the tree's cost beyond
    # the edges is networkx's own graph building on both sides
    # (benchmarks/results/cpu_nx_should_run_msf.txt)
    "minimum_spanning_edges": 5_000,
    "maximum_spanning_edges": 5_000,
    "minimum_spanning_tree": 8_000,
    "maximum_spanning_tree": 8_000,
    # networkx draws from a list of the available nodes each step (quadratic); the two
    # tied at 4,000 nodes plus edges, gswitch won from 12,000
    # (benchmarks/results/cpu_nx_should_run_mis.txt)
    "maximal_independent_set": 5_000,
    "triangles": 2_000,
    "transitivity": 2_000,
    "clustering": 2_000,
    "average_clustering": 2_000,
}


def _callable_weight(args: Mapping[str, Any]) -> str | bool:
    if callable(args.get("weight")):
        return "a callable weight is evaluated per edge in Python; gswitch reads an edge " \
               "attribute"
    return True


def _bfs_edges(args: Mapping[str, Any]) -> str | bool:
    if args.get("sort_neighbors") is not None:
        return "sort_neighbors is not supported by gswitch"
    G = args["G"]
    if args.get("reverse") and G.is_directed():
        return "reverse=True on a directed graph (predecessors) is not supported by gswitch"
    return True


def _pagerank(args: Mapping[str, Any]) -> str | bool:
    for name in ("nstart", "dangling"):
        if args.get(name) is not None:
            return f"pagerank's {name} is not supported by gswitch"
    ok = _callable_weight(args)
    if ok is not True:
        return ok
    alpha = args.get("alpha")
    if isinstance(alpha, (int, float)) and not 0.0 <= alpha <= MAX_ALPHA:
        return (f"pagerank with alpha={alpha:g}: gswitch's damping factor is in "
                f"[0, {MAX_ALPHA:g}]")
    max_iter = args.get("max_iter")
    if isinstance(max_iter, int) and max_iter >= MAX_STEPS:
        return (f"pagerank with max_iter={max_iter}: gswitch takes at most {MAX_STEPS - 1} "
                "iterations")
    n = len(args["G"])
    if n and n * args["tol"] < FLOAT32_L1_FLOOR:
        return (f"len(G) * tol = {n * args['tol']:.3g} is below what gswitch's float32 ranks "
                f"resolve ({FLOAT32_L1_FLOOR:g})")
    return True


def _transitivity(args: Mapping[str, Any]) -> str | bool:
    if args["G"].is_directed():
        return "transitivity of a directed graph is networkx's"
    return True


def _clustering(args: Mapping[str, Any]) -> str | bool:
    if args["G"].is_directed():
        return "clustering of a directed graph is not supported by gswitch"
    if args.get("weight") is not None:
        return "weighted clustering is not supported by gswitch"
    return True


def _betweenness(args: Mapping[str, Any]) -> str | bool:
    return _callable_weight(args)




def _closeness(args: Mapping[str, Any]) -> str | bool:
    if args.get("distance") is not None:
        return "weighted closeness (distance=...) is not supported by gswitch"
    return True


def _core_number(args: Mapping[str, Any]) -> str | bool:
    if args["G"].is_directed():
        return "core numbers of a directed graph (in plus out degree) are networkx's"
    return True


def _asyn_lpa(args: Mapping[str, Any]) -> str | bool:
    if args.get("weight") is not None:
        return "weighted label propagation is not supported by gswitch"
    if args["G"].is_directed():
        return "label propagation over successors (a directed graph) is networkx's"
    if args["G"].is_multigraph():
        return "label propagation on a multigraph (distinct neighbours) is networkx's"
    return True


def _lpa(args: Mapping[str, Any]) -> str | bool:
    G = args["G"]
    if G.is_directed():
        return "label_propagation_communities is not implemented for directed graphs"
    if G.is_multigraph():
        # networkx colours by degree with multiplicity but counts distinct neighbours
        return "label propagation on a multigraph (degrees with multiplicity) is networkx's"
    return True


_CHECKS: dict[str, Callable[[Mapping[str, Any]], str | bool]] = {
    "asyn_lpa_communities": _asyn_lpa,
    "label_propagation_communities": _lpa,
    "k_core": _core_number,
    "betweenness_centrality": _betweenness,
    "edge_betweenness_centrality": _betweenness,
    "core_number": _core_number,
    "clustering": _clustering,
    "average_clustering": _clustering,
    "transitivity": _transitivity,
    "bfs_edges": _bfs_edges,
    "bfs_tree": _bfs_edges,
    "single_source_dijkstra_path_length": _callable_weight,
    "single_source_bellman_ford_path_length": _callable_weight,
    "pagerank": _pagerank,
    "minimum_spanning_edges": _callable_weight,
    "maximum_spanning_edges": _callable_weight,
    "minimum_spanning_tree": _callable_weight,
    "maximum_spanning_tree": _callable_weight,
    "all_pairs_dijkstra_path_length": _callable_weight,
    "floyd_warshall": _callable_weight,
    "closeness_centrality": _closeness,
}


def _bound(func: Callable, args: tuple, kwargs: dict) -> Mapping[str, Any] | None:
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return bound.arguments


def _nonstandard_graph(bound: Mapping[str, Any]) -> str | None:
    """Why a graph argument cannot be converted as it stands: a subclass of networkx's
    four graph classes may redefine what its adjacency means (networkx's ``_AntiGraph``
    stores the complement of the graph it stands for), which the conversion would not
    see.
    """
    import networkx as nx

    standard = (nx.Graph, nx.DiGraph, nx.MultiGraph, nx.MultiDiGraph)
    for value in bound.values():
        if isinstance(value, nx.Graph) and type(value) not in standard:
            return (f"{type(value).__name__} subclasses networkx's graph classes and may "
                    "redefine its adjacency; networkx runs it")
    return None


def can_run(functions: Mapping[str, Callable], name: str, args: tuple, kwargs: dict
            ) -> str | bool:
    """Whether the backend implements ``name`` for these arguments (else a reason)."""
    func = functions.get(name)
    if func is None:
        return f"gswitch does not implement {name}"
    bound = _bound(func, args, kwargs)
    if bound is None:
        return "the arguments do not match networkx's signature"
    odd = _nonstandard_graph(bound)
    if odd is not None:
        return odd
    check = _CHECKS.get(name)
    return True if check is None else check(bound)


def should_run(name: str, args: tuple, kwargs: dict) -> str | bool:
    """Whether running on gswitch pays off: not for small networkx graphs."""
    G = args[0] if args else kwargs.get("G")
    if G is None or getattr(G, "__networkx_backend__", "networkx") == "gswitch":
        return True
    size = len(G) + G.number_of_edges()
    if size < SMALL_GRAPH.get(name, 0):
        return f"a graph of {size} nodes plus edges runs faster in networkx"
    return True
