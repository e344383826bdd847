"""Single-source shortest paths for non-negative weights."""

from __future__ import annotations

import gswitch as gs


@gs.algorithm(name="sssp", weights="nonnegative", variant="bellman_ford",
              reference="scipy.sparse.csgraph.dijkstra")
class SSSP:
    """Single-source shortest paths (Bellman-Ford style relaxation to a fixpoint).

    Parameters
    ----------
    source : int
        Start node (a run argument).

    Returns
    -------
    dist : ndarray of float32
        Shortest distance from the source; ``inf`` for unreachable nodes. An unweighted
        graph counts every edge as 1.

    Raises
    ------
    InvalidInput
        If any edge weight is negative or NaN.

    Notes
    -----
    Every active node offers ``dist + weight`` with an atomic ``min`` (a float min,
    done on the GPU with a compare-and-swap loop). Distances are float32, so results
    agree with a float64 reference to float32 rounding.

    References
    ----------
    .. [1] Davidson, Baxter, Garland, Owens, "Work-efficient parallel GPU methods for
       single-source shortest paths", IPDPS 2014.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 1, 0], [1, 2, 2], [1.0, 1.0, 5.0])
    >>> gs.run("sssp", g, source=0).fields["dist"].tolist()
    [0.0, 1.0, 2.0]

    """

    dist = gs.NodeField("float32", init=gs.INF, at_source=0.0, doc="distance from the source")
    start = gs.from_source()

    @gs.edge_op
    def relax(e):
        e.dst.dist.reduce_min(e.src.dist + e.weight)


SPEC = SSSP


@gs.hookimpl
def gswitch_algorithms():
    return [SPEC]
