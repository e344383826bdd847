"""networkx's weighted single-source path lengths from gswitch's SSSP distances.

gswitch computes in float32. Integer weights (networkx's default weight 1 included)
give exact integer sums below 2**24 and come back as Python ints, as networkx's do.
Other weights, and integer lengths past 2**24, are then made exact in float64 (integers
exactly up to 2**53): the float32 distances, raised by their worst rounding error, seed
a float64 relaxation on the host that converges in a few rounds to the float64 path
sums networkx adds up (networkx's algorithms that compare distances, such as the bounds
of ``radius``, need them consistent to the last bit). That bound holds for weights that
float32 holds as normal numbers or 0; :func:`refuse_weights` leaves the others to
networkx. A multigraph keeps its parallel edges, and the relaxation takes the lightest,
as networkx does.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from ._graph import NxGraph
from ._run import run_algorithm

__all__ = ["single_source_dijkstra_path_length", "single_source_bellman_ford_path_length",
           "refuse_weights"]

#: float32 holds every integer up to here exactly
_EXACT_INT = 2**24
#: float64 holds every integer up to here exactly: integer lengths are summed in float64
_EXACT_INT64 = 2**53
#: float32's smallest normal number: a weight between 0 and it is rounded with a large
#: relative error, or to 0, in gswitch's float32 SSSP
_FLOAT32_TINY = float(np.finfo(np.float32).tiny)


def refuse_weights(G: NxGraph, w: np.ndarray | None) -> None:
    """Raise ``NotImplementedError`` (networkx then runs) for weights whose lengths
    gswitch's float32 SSSP, made exact on the host, would not give as networkx does.

    Raises
    ------
    NotImplementedError
        A negative or NaN weight (networkx detects negative cycles and contradictory
        paths), an infinite one (networkx's Dijkstra lists the nodes behind it at
        distance ``inf``), a positive one below float32's smallest normal number
        (float32 rounds it to 0, or with a large relative error, so that its distances
        no longer bound the exact ones from above), or integers whose path sums could
        pass 2**53.

    """
    if w is None or not w.size:
        return
    if not (w >= 0).all():
        raise NotImplementedError("gswitch's SSSP needs non-negative edge weights")
    if w.dtype.kind == "f":
        if np.isinf(w).any():
            raise NotImplementedError("infinite edge weights: networkx lists the nodes "
                                      "behind them at distance inf")
        if ((w > 0) & (w < _FLOAT32_TINY)).any():
            raise NotImplementedError(f"edge weights below {_FLOAT32_TINY:.3g} are not "
                                      "resolved by gswitch's float32 SSSP")
    elif float(w.max()) * max(len(G) - 1, 1) >= _EXACT_INT64:
        raise NotImplementedError("integer path lengths could pass 2**53, past float64's "
                                  "exact integers")


def _distances(G: NxGraph, source: Hashable, weight: str | None, cutoff: float | None,
               missing: type[Exception], message: str) -> dict:
    hash(source)  # networkx first puts it in a set or a dict: unhashable, its TypeError
    if source not in G:
        raise missing(message.format(source))
    w = G.weighted_by(weight)
    refuse_weights(G, w)
    s = G.node_id(source)
    r = run_algorithm("sssp", G.gswitch_graph(weight), source=s)
    dist = np.asarray(r.fields["dist"], dtype=np.float64)
    if w is not None and (w.dtype.kind == "f" or dist[np.isfinite(dist)].max() >= _EXACT_INT):
        # float32 sums of floats, or of integers past 2**24, are not networkx's: seed
        # the exact float64 relaxation with them
        dist = _exact(G, s, dist, w)
    reached = np.isfinite(dist)
    if cutoff is not None:
        reached &= dist <= cutoff
    reached[s] = True  # networkx lists the source whatever the cutoff
    ids = np.flatnonzero(reached)
    ids = ids[np.argsort(dist[ids], kind="stable")]
    values = dist[ids]
    if w is None or w.dtype.kind == "i":
        lengths: list = values.astype(np.int64).tolist()
    else:
        lengths = values.tolist()
    out = dict(zip(G.names[ids].tolist(), lengths))
    out[source] = 0  # networkx's int 0, whatever the weights
    return out


def _exact(G: NxGraph, source: int, dist32: np.ndarray, w: np.ndarray) -> np.ndarray:
    """float64 shortest distances, from float32 ones: every seed is at least the true
    distance (a float32 sum of ``k`` weights, each a normal float32 number or 0 as
    :func:`refuse_weights` ensures, errs by at most ``(k + 1) * 2**-24`` relatively, and
    ``k < n``), so the relaxation's fixpoint is the float64 minimum over paths.
    """
    n = len(G)
    d = dist32 * (1.0 + 4.0 * max(n, 1) * 2.0**-24)
    d[source] = 0.0
    frontier = np.flatnonzero(np.isfinite(d))
    while frontier.size:
        owners, entries = G.out_entries(frontier)
        dst = G.indices[entries]
        cand = d[owners] + w[entries]
        better = cand < d[dst]
        if not better.any():
            break
        dst, cand = dst[better], cand[better]
        np.minimum.at(d, dst, cand)
        frontier = np.unique(dst)
    return d


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
