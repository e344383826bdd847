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

__all__ = ["run_rounds"]


def run_rounds(graph: Any, nodes: np.ndarray, size: int | None, rounds: int,
               first_ok: np.ndarray | None, apply: Callable[..., None],
               expand: Callable[..., tuple[np.ndarray, np.ndarray]],
               activated: Any, fresh: Callable[[], Any]) -> int:
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

    Returns
    -------
    int

    """
    inside = fresh()
    edges = 0
    cur = nodes
    for _ in range(rounds + 1):
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
        cur = inside.take()
        if cur.size == 0:
            break
    else:
        activated.add(cur)  # still active after the last pass: the next step's
    return edges
