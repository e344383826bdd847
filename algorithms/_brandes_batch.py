"""What both sides of batched Brandes share: the batch width, its memory, the run's
sources and the betweenness a batch adds (:mod:`gswitch.algorithms.betweenness_batched`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["BATCH", "MAX_NODES", "batch_bytes", "fits", "fits_hops", "finish", "hop_lengths",
           "hops_problem", "picked_ids"]

#: Sources per traversal: the bits of one ``uint64`` set per node.
BATCH = 64

#: Largest graph whose unweighted betweenness runs batched by default (64 path counts
#: and dependencies per node: 1 KiB a node); larger ones run one source at a time.
MAX_NODES = 8_000_000


def fits(graph: Any, backend: str) -> bool:
    """Whether betweenness on ``graph`` runs batched by default (on either backend): at
    most :data:`MAX_NODES` nodes.
    """
    return graph.n_nodes <= MAX_NODES


def hop_lengths(graph: Any) -> bool:
    """Whether every edge of ``graph`` that betweenness reads is one hop long: no
    weights, or every weight 1 on its simple graph (batched Brandes counts hops, so only
    then is it the weighted answer). Self loops lie on no shortest path and a parallel
    edge counts at its lightest, so their weights do not matter.
    """
    graph = graph.simple()
    w = graph.weights
    if w is None or graph.n_edges == 0:
        return True
    return graph.min_weight == 1 and bool((w == 1).all())


def hops_problem(graph: Any) -> str | None:
    """Why batched edge betweenness refuses ``graph`` (a weight other than 1: hops are
    not its path lengths), or ``None``.
    """
    if hop_lengths(graph):
        return None
    return ("variant batched counts hops, but the graph has weights other than 1; leave "
            "variant at its default or choose variant=per_source (or dag on the CPU), or "
            "drop the weights")


def fits_hops(graph: Any, backend: str) -> bool:
    """Whether edge betweenness on ``graph`` runs batched by default (on either
    backend): hop lengths (:func:`hop_lengths`) and at most :data:`MAX_NODES` nodes.
    """
    return fits(graph, backend) and hop_lengths(graph)


def batch_bytes(n_nodes: int) -> int:
    """Device bytes of one batch beyond the graph: 64 float64 path counts and
    dependencies per node, four 64-bit sets per node and a level's queue and prefix sums.
    """
    return n_nodes * (2 * BATCH * 8 + 4 * 8 + 2 * 4 + 8)


def finish(delta: Any, seen: Any, batch: Any, endpoints: bool, xp: Any) -> Any:
    """A batch's betweenness: each node's dependencies on every source but itself, with
    networkx's path-end counts when ``endpoints`` (``xp``: NumPy or CuPy arrays).
    """
    lanes = xp.arange(batch.size)
    delta[batch, lanes] = 0.0  # a source's own dependency is no betweenness
    bc = delta.sum(axis=1)
    if endpoints:
        reached = _popcount(seen, xp).astype(xp.float64)
        bc += reached
        bc[batch] -= 1.0  # a source is no end of its own paths ...
        counts = _lane_counts(seen, batch.size, xp)
        bc[batch] += counts - 1.0  # ... but starts one to every other node it reaches
    return bc


def _popcount(masks: Any, xp: Any) -> Any:
    """Set bits of each 64-bit word."""
    v = masks.astype(xp.uint64)
    v = v - ((v >> xp.uint64(1)) & xp.uint64(0x5555555555555555))
    v = (v & xp.uint64(0x3333333333333333)) + ((v >> xp.uint64(2))
                                               & xp.uint64(0x3333333333333333))
    v = (v + (v >> xp.uint64(4))) & xp.uint64(0x0F0F0F0F0F0F0F0F)
    return (v * xp.uint64(0x0101010101010101)) >> xp.uint64(56)


def _lane_counts(seen: Any, k: int, xp: Any) -> Any:
    """For each of the ``k`` sources, the nodes it reaches (itself included)."""
    return xp.stack([((seen >> xp.uint64(s)) & xp.uint64(1)).sum(dtype=xp.float64)
                     for s in range(k)])


def picked_ids(graph: Any, params: dict[str, Any]) -> np.ndarray:
    """A run's sources as node ids: the nodes its ``sources`` mask picks, or every node
    (the direct formulations' ``params``).
    """
    mask = params.get("sources")
    if mask is None:
        return np.arange(graph.n_nodes, dtype=np.int64)
    return np.flatnonzero(np.asarray(mask)).astype(np.int64)
