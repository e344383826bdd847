"""networkx's ``pagerank`` by gswitch's power iteration.

The registered ``power_pull`` formulation is networkx's iteration step for step: the
uniform start vector, dangling rank spread uniformly, and a stop once the L1 change of
a step is below ``n * tol``; ``max_iter`` steps without that raise networkx's
``PowerIterationFailedConvergence``. Weighted graphs run :data:`WEIGHTED`, the same
iteration over edge weights divided by their row sums (networkx's transition matrix),
(``gswitch.algorithms.pagerank.WEIGHTED``), which is not a registered algorithm: it
exists for networkx's ``weight=`` semantics.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from gswitch.graph import Graph
from gswitch.runner import run

from ._graph import NxGraph
from ._run import engine_backend, run_algorithm

__all__ = ["pagerank", "FLOAT32_L1_FLOOR", "MAX_ALPHA", "MAX_STEPS"]

#: Smallest ``n * tol`` the float32 ranks can resolve as an L1 change between steps.
FLOAT32_L1_FLOOR = 1e-6
#: The largest damping factor gswitch's PageRank takes (its ``alpha`` parameter's upper
#: bound); ``can_run`` leaves larger ones to networkx.
MAX_ALPHA = 0.999
#: The most steps gswitch's PageRank takes (its ``max_iterations`` parameter's upper
#: bound): a larger ``max_iter`` (one step more, the start vector's) is networkx's.
MAX_STEPS = 10**8


def _stochastic(G: NxGraph, weight: str, w: np.ndarray) -> Graph:
    """The graph with each row's weights divided by the row sum; rows summing to 0 lose
    their edges (networkx treats those nodes as dangling). Made once per weight
    attribute and kept on ``G`` with its other gswitch graphs, so that a second call
    reuses it, its reverse and its device copy.
    """
    return G.derived_graph(("stochastic", weight), lambda: _stochastic_graph(G, w))


def _stochastic_graph(G: NxGraph, w: np.ndarray) -> Graph:
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

    ``personalization`` (unweighted graphs) runs gswitch's ``personalized_pagerank``,
    whose jumps and dangling rank land by it (networkx's default ``dangling``), from the
    uniform vector as networkx's iteration (``uniform_start``). ``nstart`` and
    ``dangling`` are refused by ``can_run`` (networkx runs them).

    Raises
    ------
    networkx.PowerIterationFailedConvergence
        ``max_iter`` steps did not bring the L1 change below ``len(G) * tol``.

    """
    import networkx as nx

    n = len(G)
    if n == 0:
        return {}
    w = G.weighted_by(weight)
    if w is not None and w.size and not (w >= 0).all():
        raise NotImplementedError("gswitch's PageRank needs non-negative edge weights")
    if w is not None and w.dtype.kind == "f" and np.isinf(w).any():
        # a row of inf / inf shares is NaN; networkx's sparse products give numbers
        raise NotImplementedError("gswitch's PageRank needs finite edge weights")
    # the ranks are float32: the tolerance parameter's range ends at 1
    params = {"alpha": float(alpha), "tolerance": min(float(n * tol), 1.0)}
    uniform = w is None or not w.size or (w == w[0]).all() and w[0] > 0
    p = None
    if personalization is not None:
        if not uniform:
            raise NotImplementedError("gswitch's personalised PageRank is unweighted")
        p = np.array([float(personalization.get(v, 0)) for v in G.nodes])
        if p.sum() == 0:
            raise ZeroDivisionError  # as networkx does, before it iterates
        if (p < 0).any():
            raise NotImplementedError("gswitch needs non-negative personalization weights")
    if operator.index(max_iter) < 1:  # networkx's range(max_iter) takes integers only
        raise nx.PowerIterationFailedConvergence(max_iter)
    # gswitch's first step only sets the start vector: networkx's iteration k is its
    # step k + 1
    params["max_iterations"] = operator.index(max_iter) + 1
    if p is not None:
        r = run_algorithm("personalized_pagerank", G.gswitch_graph(), variant="power_pull",
                          personalization=p, uniform_start=1, **params)
    elif uniform:
        r = run_algorithm("pagerank", G.gswitch_graph(), variant="power_pull", **params)
    else:
        from gswitch.algorithms.pagerank import WEIGHTED

        r = run(WEIGHTED, _stochastic(G, weight, w), backend=engine_backend(), **params)
    if not r.stats.get("converged", True):
        raise nx.PowerIterationFailedConvergence(max_iter)
    return dict(zip(G.nodes, np.asarray(r.fields["rank"], dtype=np.float64).tolist()))
