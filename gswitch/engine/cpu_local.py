"""Passes inside one CPU super-step: spatial partitions and topology unrolling.

A driving strategy may ask (:meth:`gswitch.strategy.DrivingStrategy.local_rounds`) that
a node activated along an edge inside its group be processed again within the same step,
as a GPU block loops over its partition or a thread drains its bounded queue. Each pass
applies the edge operator to the out-edges of the pass's nodes; an edge between groups
reports to the next step's activations, an edge inside a group to the next pass. The
reductions this serves are monotone min/max/or (the strategies check it), so applying a
pass's edges between groups and inside groups one after the other reaches the fixed point
of applying them at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["near_split", "ordered_passes", "run_rounds"]

#: Largest priority bucket (the GPU's ``GS_PRIO_MAX_BUCKET``).
MAX_BUCKET = (1 << 22) - 1


def run_rounds(graph: Any, nodes: np.ndarray, size: int | None, rounds: int,
               first_ok: np.ndarray | None, apply: Callable[..., None],
               expand: Callable[..., tuple[np.ndarray, np.ndarray]],
               activated: Any, fresh: Callable[[], Any],
               order: Callable[[np.ndarray], np.ndarray] | None = None) -> int:
    """Process ``nodes``, then up to ``rounds`` passes over what they activate inside
    their groups; returns the number of edges processed.

    Parameters
    ----------
    graph : Graph
        The graph (host CSR).
    nodes : numpy.ndarray
        The step's items (sorted node ids).
    size : int or None
        Nodes of ids ``[k * size, (k + 1) * size)`` form group ``k``; ``None``: one group.
    rounds : int
        Passes after the first.
    first_ok : numpy.ndarray or None
        Mask of the edges the edge operator expands (``edge_op(first=...)``).
    apply : callable
        ``apply(src, dst, weights, activations)`` runs the edge operator on those edges.
    expand : callable
        ``expand(indptr, nodes)`` gives the edge ids and source ids of ``nodes``.
    activated : object
        The next step's activations (``add(ids)``).
    fresh : callable
        Makes an empty activation set (``add``, ``add_mask``, ``take``).
    order : callable or None
        ``order(ids)`` gives the priority bucket of each node (ordered passes, see
        :func:`near_split`); ``None``: every pass takes all its nodes.

    Returns
    -------
    int

    """
    inside = fresh()
    edges = 0
    cur = nodes
    bucket = -1
    for k in range(rounds + 1):
        held = None
        if order is not None and 0 < k < rounds:
            cur, held, bucket = near_split(cur, order(cur), bucket)
        eidx, src = expand(graph.indptr, cur)
        if first_ok is not None:
            keep = first_ok[eidx]
            eidx, src = eidx[keep], src[keep]
        dst = graph.indices[eidx].astype(np.intp)
        w = None if graph.weights is None else graph.weights[eidx]
        edges += int(src.size)
        if size is None:
            apply(src, dst, w, inside)
        else:
            same = (src // size) == (dst // size)
            cross = ~same
            apply(src[cross], dst[cross], None if w is None else w[cross], activated)
            apply(src[same], dst[same], None if w is None else w[same], inside)
        if held is not None and held.size:
            inside.add(held)
        cur = inside.take()
        if cur.size == 0:
            break
    else:
        activated.add(cur)  # still active after the last pass: the next step's
    return edges


def near_split(nodes: np.ndarray, buckets: np.ndarray, bucket: int
               ) -> tuple[np.ndarray, np.ndarray, int]:
    """An ordered pass's nodes: those of priority bucket at most ``max(bucket, lowest
    bucket of nodes)``, the rest held for a later pass, and that bucket.

    Within a step that iterates inside its groups, an order-free relaxation (SSSP) that
    takes every queued node in each pass lets a node pass on a value that a later pass
    improves, and everything downstream is done again. Taking the nearest bucket first,
    as delta-stepping does across steps, keeps most nodes to one relaxation. The first
    pass and the last one take every node (the GPU's passes do the same), and the fixed
    point does not depend on the order, so the answer is the same.
    """
    if nodes.size == 0:
        return nodes, nodes, bucket
    bucket = max(bucket, int(buckets.min()))
    near = buckets <= bucket
    return nodes[near], nodes[~near], bucket


def ordered_passes(driving: Any, spec: Any, graph: Any,
                   keys: Callable[[np.ndarray], np.ndarray]
                   ) -> Callable[[np.ndarray], np.ndarray] | None:
    """The priority buckets that order a step's inner passes (``run_rounds``'s
    ``order``), or ``None``: where the algorithm declares a priority key (``keys(ids)``
    evaluates it) and the driving strategy a width
    (:meth:`~gswitch.strategy.DrivingStrategy.local_width`), the key times the width's
    float32 inverse, floored and clipped, as the GPU computes it.
    """
    width = None if spec.priority is None else driving.local_width(graph, spec.priority_width)
    if width is None:
        return None
    inv = float(np.float32(1.0 / width))

    def buckets(ids: np.ndarray) -> np.ndarray:
        k = np.asarray(keys(ids), dtype=np.float64) * inv
        k = np.where(np.isnan(k), 0.0, k)
        return np.clip(np.floor(k), 0, MAX_BUCKET).astype(np.int64)

    return buckets
