"""What the ``gswitch`` networkx backend offers, for networkx's ``networkx.backend_info``.

networkx calls :func:`get_info` when it is imported, so this module imports nothing but
the standard library: no NumPy work, no CuPy, no gswitch engine.
"""

from __future__ import annotations

from typing import Any

__all__ = ["get_info", "FUNCTIONS", "DEFAULT_CONFIG", "SUBGRAPH_FUNCTIONS"]

_BFS = ("Hop distances come from gswitch's BFS (``gswitch.run('bfs')``) on the GPU when "
        "CuPy sees one, else on the CPU engine.")
_SSSP = ("Distances come from gswitch's SSSP (float32): integer weights give networkx's "
         "exact integer lengths below 2**24; other weights, and integer lengths past it, "
         "are made exact float64 sums by a host relaxation seeded with gswitch's distances. "
         "A multigraph uses the lightest of parallel edges. Negative, NaN and infinite "
         "weights, positive weights below float32's smallest normal number (1.2e-38), "
         "integer weights whose sums could pass 2**53, and callable weights fall back to "
         "networkx.")
_CC = ("Components come from gswitch's connected components; components and the nodes "
       "they hold are yielded in networkx's order.")

_SCC = ("Components come from gswitch's ``scc`` (trimming, then colouring by the smallest "
        "id that reaches a node and a backward search from each colour's root, or "
        "forward-backward searches). Directed graphs only, as in networkx; components are "
        "yielded in a reverse topological order of the condensation, as networkx's are "
        "(where several orders are valid, not always networkx's one).")

_MSF = ("The forest comes from gswitch's ``minimum_spanning_forest`` (Boruvka: each "
        "component's lightest leaving edge by indirect ``min`` into its root, hooking and "
        "pointer jumping), each edge weighted by its rank in Kruskal's order (weight, then "
        "``G.edges`` order): exactly Kruskal's forest, edges and order, whatever "
        "``algorithm`` names (networkx's Prim and Boruvka give one of the same weight). "
        "``ignore_nan=True`` leaves NaN-weighted edges out; otherwise a NaN raises "
        "networkx's ValueError. Edge data and multigraph keys come from the networkx graph. "
        "Graphs of 2**24 edges or more and callable weights fall back to networkx.")

_TRI = ("Triangles come from gswitch's ``triangles`` (one sweep of the "
        "``common_neighbours()`` intrinsic; on the CPU engine two sparse products over the "
        "degree-oriented graph). Self loops are ignored and parallel edges count once, as "
        "in networkx.")

#: Every function the backend implements: networkx's ``functions`` entry.
FUNCTIONS: dict[str, dict[str, Any]] = {
    "single_source_shortest_path_length": {
        "additional_docs": _BFS + " The dict lists nodes level by level, each level in "
                                  "graph order (networkx lists a level in discovery order).",
    },
    "all_pairs_shortest_path_length": {
        "additional_docs": "Hop counts from gswitch's ``msbfs``: one traversal carries 64 "
                           "sources, one bit each. Yielded lazily like networkx, a batch "
                           "of 64 nodes at a time; each dict lists nodes level by level, "
                           "each level in graph order.",
    },
    "all_pairs_dijkstra_path_length": {
        "additional_docs": _SSSP + " One SSSP per node, yielded lazily like networkx.",
    },
    "floyd_warshall": {
        "additional_docs": "Blocked Floyd-Warshall over the dense float64 matrix "
                           "(``gswitch.algorithms.apsp``): array code on the host, not a "
                           "graph operator. Every pair is listed; the inner mappings "
                           "default to ``inf`` as networkx's do. NaN weights and "
                           "negative cycles fall back to networkx.",
    },
    "closeness_centrality": {
        "additional_docs": "Incoming hop distances from gswitch's ``msbfs`` (64 nodes per "
                           "traversal; the reverse graph for a directed one); "
                           "``wf_improved`` as networkx. ``distance`` (weighted closeness) "
                           "falls back to networkx.",
    },
    "bfs_layers": {
        "additional_docs": _BFS + " Layers are listed in networkx's exact discovery order.",
    },
    "descendants_at_distance": {"additional_docs": _BFS},
    "bfs_edges": {
        "additional_docs": _BFS + " Edges come in networkx's exact order: each node's "
                                  "parent is the first node of the previous layer, in "
                                  "discovery order, that lists it. ``sort_neighbors`` and "
                                  "``reverse=True`` on a directed graph fall back to "
                                  "networkx.",
    },
    "bfs_tree": {
        "additional_docs": _BFS + " Built from the backend's ``bfs_edges``; the same "
                                  "arguments fall back to networkx.",
    },
    "single_source_dijkstra_path_length": {"additional_docs": _SSSP},
    "single_source_bellman_ford_path_length": {"additional_docs": _SSSP},
    "connected_components": {"additional_docs": _CC},
    "number_connected_components": {"additional_docs": _CC},
    "node_connected_component": {"additional_docs": _CC},
    "is_connected": {"additional_docs": _CC},
    "maximal_independent_set": {
        "additional_docs": "The set comes from gswitch's ``maximal_independent_set`` (Luby's "
                           "rounds, priorities hashed from a 32-bit word drawn from "
                           "``seed``) on the nodes that neither are in ``nodes`` nor "
                           "neighbour one. It is independent, maximal and holds ``nodes``, "
                           "like networkx's, but another such set: both draw at random.",
    },
    "triangles": {"additional_docs": _TRI},
    "transitivity": {"additional_docs": _TRI},
    "clustering": {"additional_docs": _TRI + " Undirected and unweighted only; a directed "
                                              "graph or a weight falls back to networkx."},
    "average_clustering": {"additional_docs": _TRI + " Undirected and unweighted only; a "
                                                      "directed graph or a weight falls back "
                                                      "to networkx."},
    "betweenness_centrality": {
        "additional_docs": (
            "Brandes' algorithm by gswitch's ``betweenness`` (a BFS, level-synchronous path "
            "counts and per-level dependency accumulation per source), exact or from ``k`` "
            "sources sampled as networkx samples them with ``seed``, then networkx's own "
            "rescaling: the same values. With ``weight``, gswitch's "
            "``weighted_betweenness`` (on the CPU for a batch of sources at once: "
            "Dijkstra, then path counts and dependencies as two sparse triangular solves "
            "over the shortest-path DAGs; on the GPU level by level over each source's "
            "DAG); weights must be positive and exact in "
            "float32 (integers below 2**24, say), else the call falls back to networkx; a "
            "multigraph uses the lightest of parallel edges."),
    },
    "edge_betweenness_centrality": {
        "additional_docs": (
            "By gswitch's ``edge_betweenness`` (unweighted: batched Brandes, 64 sources "
            "per traversal; weighted: the formulations of weighted betweenness, each "
            "edge's dependency summed), exact or sampled as networkx "
            "samples, networkx's rescaling. Weights as for betweenness_centrality; a "
            "multigraph's value is split over the lightest parallel edges, as networkx "
            "splits it."),
    },
    "core_number": {
        "additional_docs": (
            "Peeling by levels, by gswitch's ``core_number``. Undirected graphs only (a "
            "directed graph falls back to networkx, whose degrees count both directions); "
            "self loops and multigraphs raise networkx's error."),
    },
    "strongly_connected_components": {"additional_docs": _SCC},
    "number_strongly_connected_components": {"additional_docs": _SCC},
    "is_strongly_connected": {"additional_docs": _SCC},
    "minimum_spanning_edges": {"additional_docs": _MSF},
    "maximum_spanning_edges": {"additional_docs": _MSF + " The heaviest edges first."},
    "minimum_spanning_tree": {"additional_docs": _MSF},
    "maximum_spanning_tree": {"additional_docs": _MSF + " The heaviest edges first."},
    "k_core": {
        "additional_docs": (
            "Core numbers by gswitch's ``core_number`` (unless ``core_number`` is given), "
            "then networkx's own subgraph of the networkx graph, every attribute kept. "
            "Undirected graphs only (a directed graph falls back to networkx); self loops "
            "and multigraphs raise networkx's error."),
    },
    "label_propagation_communities": {
        "additional_docs": (
            "gswitch's semi-synchronous ``label_propagation``: networkx's greedy "
            "largest-first colouring (Jones-Plassmann in that order), colour classes "
            "updated in turn with the ``label_frequency`` intrinsic and networkx's "
            "Prec-Max ties: the same partition as networkx."),
    },
    "asyn_lpa_communities": {
        "additional_docs": (
            "gswitch's seeded ``asynchronous`` label propagation, its seed drawn from "
            "``seed``: a fixpoint of label propagation like networkx's, from gswitch's own "
            "random draws (another partition than networkx's for the same seed). "
            "``weight`` and directed graphs fall back to networkx."),
    },
    "pagerank": {
        "additional_docs": (
            "Power iteration by gswitch's ``power_pull`` PageRank, networkx's iteration step "
            "for step (same start vector, dangling rule and stopping test ``L1 change < "
            "n * tol``), ranks held in float32: ``n * tol`` below 1e-6 falls back. "
            "Weights must be uniform per graph (the unweighted ranks) or the call falls "
            "back. ``personalization`` runs gswitch's ``personalized_pagerank`` on unweighted "
            "graphs, from networkx's uniform start vector, step for step too; ``nstart`` "
            "and ``dangling`` fall back to networkx. "
            "Parallel edges count with multiplicity, as in networkx."),
    },
}

#: Functions whose answer is a subgraph of their networkx input with every attribute:
#: their conversion keeps the networkx graph instead of refusing to copy all attributes
#: (and keeps it beside the converted weights, for multigraph keys).
SUBGRAPH_FUNCTIONS = frozenset({"k_core", "minimum_spanning_edges", "maximum_spanning_edges",
                                "minimum_spanning_tree", "maximum_spanning_tree"})

#: ``nx.config.backends.gswitch``'s keys and their defaults.
DEFAULT_CONFIG: dict[str, Any] = {
    # "auto": the GPU when CuPy sees one, else the CPU engine; or "gpu", "cpu"
    "backend": "auto",
    # an Optuna storage URL of gswitch tuning studies (gswitch tune), or None
    "storage": None,
    # with a storage: run the configuration tuned for the graph, or its nearest neighbour's
    "tune": False,
}


def get_info() -> dict[str, Any]:
    """The backend's description in networkx's ``backend_info`` format.

    Returns
    -------
    dict
        ``backend_name``, ``project``, ``package``, ``url``, ``short_summary``,
        ``default_config`` and ``functions`` (each with ``additional_docs`` and, where
        the backend adds any, ``additional_parameters``).

    """
    return {
        "backend_name": "gswitch",
        "project": "gswitch",
        "package": "gswitch",
        "url": "https://github.com/gswitch/gswitch",
        "short_summary": "Graph algorithms on NVIDIA GPUs (CuPy) or a NumPy/SciPy engine, "
                         "with execution strategies tuned per graph.",
        "default_config": dict(DEFAULT_CONFIG),
        "functions": {name: dict(entry) for name, entry in FUNCTIONS.items()},
    }
