"""networkx's ``pagerank`` by gswitch's power iteration.

The registered ``power_pull`` formulation is networkx's iteration step for step: the
uniform start vector, dangling rank spread uniformly, and a stop once the L1 change of
a step is below ``n * tol``; ``max_iter`` steps without that raise networkx's
``PowerIterationFailedConvergence``. Weighted graphs run :data:`WEIGHTED`, the same
iteration over edge weights divided by their row sums (networkx's transition matrix),
which is not a registered algorithm: it exists for networkx's ``weight=`` semantics.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import gswitch as gs
from gswitch.graph import Graph
from gswitch.runner import run

from ._graph import NxGraph
from ._run import engine_backend, run_algorithm

__all__ = ["pagerank", "WEIGHTED", "FLOAT32_L1_FLOOR"]

#: Smallest ``n * tol`` the float32 ranks can resolve as an L1 change between steps.
FLOAT32_L1_FLOOR = 1e-6


@gs.algorithm(name="pagerank_weighted", max_iterations_param="max_iterations",
              reference="networkx.pagerank(weight=...)", variant="power_pull_weighted",
              node_after_edges=True, converge_below="tolerance",
              supports={"driving": ("topology",)},
              defaults={"driving": "topology", "direction": "pull", "launch": "persistent",
                        "launch.blocks_per_sm": 0})
class WeightedPowerPull:
    """PageRank over a row-stochastic weighted graph, by Jacobi power iteration.

    Parameters
    ----------
    alpha : float
        Damping factor, default 0.85.
    tolerance : float
        The iteration stops after a step whose L1 change of the ranks is below it.
    max_iterations : int
        Upper bound on steps.

    Returns
    -------
    rank : ndarray of float32
        PageRank of every node.

    Notes
    -----
    ``power_pull`` with each in-coming share scaled by the edge's weight; the graph's
    weights must already be divided by their row sums, and nodes without out-edges are
    dangling. Each node gathers ``rank[v] * w(v, u)`` over its in-edges.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 1], [1, 0], [1.0, 1.0])
    >>> r = gs.run(WEIGHTED, g)
    >>> [round(x, 3) for x in r.fields["rank"].tolist()]
    [0.5, 0.5]

    """

    alpha = gs.Param("float32", 0.85, low=0.0, high=0.999, doc="damping factor")
    tolerance = gs.Param("float32", 1e-6, low=1e-12, high=1.0,
                         doc="L1 change of the ranks at which the iteration stops")
    max_iterations = gs.Param("int32", 10000, low=1, high=10**8, doc="step limit")
    rank = gs.NodeField("float32", init=0.0, doc="PageRank")
    contrib = gs.NodeField("float32", init=0.0, output=False,
                           doc="rank of a node with out-edges, as of the previous step")
    acc = gs.NodeField("float64", init=lambda p: 1.0 / max(p["n_nodes"], 1), output=False,
                       doc="weighted sum over in-edges")
    dangling = gs.StepTotal(doc="rank held by nodes without out-edges after a step")
    start = gs.all_nodes()

    @gs.edge_op
    def gather(e):
        e.dst.acc.reduce_add(e.src.contrib * e.weight)

    @gs.node_op
    def update(n, p):
        new = ((1.0 - p.alpha) / p.n_nodes
               + p.alpha * (n.acc + p.dangling / p.n_nodes)).astype("float32")
        n.total(abs(new - n.rank))
        n.total(gs.where(n.out_degree < 1, new, 0.0), into="dangling")
        n.rank = new
        n.contrib = gs.where(n.out_degree > 0, new, 0.0)
        n.acc = 0.0


WEIGHTED = WeightedPowerPull


def _stochastic(G: NxGraph, w: np.ndarray) -> Graph:
    """The graph with each row's weights divided by the row sum; rows summing to 0 lose
    their edges (networkx treats those nodes as dangling).
    """
    w = w.astype(np.float64)
    rows = np.repeat(np.arange(len(G)), np.diff(G.indptr))
    sums = np.bincount(rows, weights=w, minlength=len(G))
    keep = sums[rows] != 0
    indptr = np.zeros(len(G) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[keep], minlength=len(G)), out=indptr[1:])
    return Graph(indptr, G.indices[keep], w[keep] / sums[rows[keep]], directed=True,
                 validate=False)


def pagerank(G: NxGraph, alpha: float = 0.85, personalization: Any = None,
             max_iter: int = 100, tol: float = 1.0e-6, nstart: Any = None,
             weight: Any = "weight", dangling: Any = None) -> dict:
    """Networkx's ``pagerank``: ``{node: rank}`` in graph order.

    ``personalization``, ``nstart`` and ``dangling`` are refused by ``can_run`` (networkx
    runs them).

    Raises
    ------
    networkx.PowerIterationFailedConvergence
        ``max_iter`` steps did not bring the L1 change below ``len(G) * tol``.

    """
    import networkx as nx

    n = len(G)
    if n == 0:
        return {}
    if max_iter < 1:
        raise nx.PowerIterationFailedConvergence(max_iter)
    w = G.weighted_by(weight)
    if w is not None and w.size and not (w >= 0).all():
        raise NotImplementedError("gswitch's PageRank needs non-negative edge weights")
    # the ranks are float32: the tolerance parameter's range ends at 1
    params = {"alpha": float(alpha), "tolerance": min(float(n * tol), 1.0),
              "max_iterations": int(max_iter)}
    if w is None or not w.size or (w == w[0]).all() and w[0] > 0:
        r = run_algorithm("pagerank", G.gswitch_graph(), variant="power_pull", **params)
    else:
        r = run(WEIGHTED, _stochastic(G, w), backend=engine_backend(), **params)
    if not r.stats.get("converged", True):
        raise nx.PowerIterationFailedConvergence(max_iter)
    return dict(zip(G.nodes, np.asarray(r.fields["rank"], dtype=np.float64).tolist()))
