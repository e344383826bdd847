"""networkx's weighted single-source path lengths from gswitch's SSSP distances.

gswitch computes in float32. Integer weights (networkx's default weight 1 included)
give exact integer sums below 2**24 and come back as Python ints, as networkx's do;
other weights agree with networkx's float64 sums to float32 rounding. A multigraph
keeps its parallel edges, and the relaxation takes the lightest, as networkx does.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from ._graph import NxGraph
from ._run import run_algorithm

__all__ = ["single_source_dijkstra_path_length", "single_source_bellman_ford_path_length"]

#: float32 holds every integer up to here exactly
_EXACT_INT = 2**24


def _distances(G: NxGraph, source: Hashable, weight: str | None, cutoff: float | None,
               missing: type[Exception], message: str) -> dict:
    if source not in G:
        raise missing(message.format(source))
    w = G.weighted_by(weight)
    if w is not None and w.size and not (w >= 0).all():
        # networkx detects negative cycles and contradictory paths; gswitch's SSSP is for
        # non-negative weights
        raise NotImplementedError("gswitch's SSSP needs non-negative edge weights")
    r = run_algorithm("sssp", G.gswitch_graph(weight), source=G.node_id(source))
    dist = np.asarray(r.fields["dist"], dtype=np.float64)
    reached = np.isfinite(dist)
    if cutoff is not None:
        reached &= dist <= cutoff
    ids = np.flatnonzero(reached)
    ids = ids[np.argsort(dist[ids], kind="stable")]
    values = dist[ids]
    if w is None or w.dtype.kind == "i":
        if values.size and values[-1] >= _EXACT_INT:
            raise NotImplementedError("integer path lengths past 2**24 are not exact in "
                                      "gswitch's float32 SSSP")
        lengths: list = values.astype(np.int64).tolist()
    else:
        lengths = values.tolist()
    return dict(zip(G.names[ids].tolist(), lengths))


def single_source_dijkstra_path_length(G: NxGraph, source: Hashable,
                                       cutoff: float | None = None,
                                       weight: Any = "weight") -> dict:
    """Networkx's ``single_source_dijkstra_path_length``: ``{node: distance}``, nearest
    first.
    """
    import networkx as nx

    return _distances(G, source, weight, cutoff, nx.NodeNotFound, "Node {} not found in graph")


def single_source_bellman_ford_path_length(G: NxGraph, source: Hashable,
                                           weight: Any = "weight") -> dict:
    """Networkx's ``single_source_bellman_ford_path_length`` for non-negative weights
    (others fall back to networkx, which finds negative cycles).
    """
    import networkx as nx

    return _distances(G, source, weight, None, nx.NodeNotFound, "Source {} not in G")
