"""Single-source shortest paths for non-negative weights."""

from __future__ import annotations

import numpy as np

import gswitch as gs
from gswitch.verify import close


def expected_distances(graph: gs.Graph, source: int | None = None, **params) -> np.ndarray:
    """Distances from ``source`` by ``scipy.sparse.csgraph.dijkstra`` (an unweighted
    graph counts every edge as 1); ``inf`` where unreached.
    """
    import scipy.sparse.csgraph as csgraph  # imported on first use: 0.17 s

    g = graph if graph.weighted else graph.with_weights(np.ones(graph.n_edges, np.float32))
    # parallel edges: the shortest one counts (scipy would sum them)
    return csgraph.dijkstra(g.deduplicate("min").to_scipy(), indices=int(source))


def compare_distances(got: np.ndarray, expected: np.ndarray) -> str | None:
    """Float32 distances against the float64 reference: ``rtol=1e-5, atol=1e-4``, and
    the same nodes unreached.
    """
    return close(got, expected, rtol=1e-5, atol=1e-4, what="distance")


def relax(e):
    e.dst.dist.reduce_min(e.src.dist + e.weight)


@gs.algorithm(name="sssp", weights="nonnegative", variant="bellman_ford",
              reference="scipy.sparse.csgraph.dijkstra", expected=expected_distances,
              compare=compare_distances,
              # the default on the GPU: fastest geomean over RMAT-22, uniform 2^22 and road
              # 2048^2 among the candidates that never lose to a plain-CuPy Bellman-Ford on
              # a star or a Zipf bipartite graph, on an H100
              # (benchmarks/results/h100_s24chooseA_default_choice.md)
              defaults={"worklist": "bitmap", "load_balance": "twc", "driving": "data",
                        "direction": "push", "launch": "persistent",
                        "launch.blocks_per_sm": 0, "block_size": 960,
                        "read_before_atomic": False})
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
    relax = gs.edge_op(relax)


@gs.algorithm(name="sssp", weights="nonnegative", variant="delta_stepping",
              reference="scipy.sparse.csgraph.dijkstra", expected=expected_distances,
              compare=compare_distances, priority=lambda n: n.dist,
              supports={"driving": ("priority", "spatial")}, default=False,
              default_on=("cpu",),
              # its best on the GPU among the candidates of
              # benchmarks/results/h100_s23choose_default_choice.md
              defaults={"driving": "priority", "driving.width_scale": 16.0,
                        "load_balance": "twc", "launch": "cuda_graph", "worklist": "bitmap"},
              # the CPU engine pays per relaxed edge, not per step: narrower buckets
              # (road 512x512: 2.8x Dijkstra at 1.0, 3.5x at 4.0)
              backend_defaults={"cpu": {"driving.width_scale": 1.0}})
class DeltaStepping:
    """Single-source shortest paths by delta-stepping: relaxation in order of distance.

    Parameters
    ----------
    source : int
        Start node (a run argument).

    Returns
    -------
    dist : ndarray of float32
        Shortest distance from the source; ``inf`` for unreachable nodes.

    Notes
    -----
    The relaxation of ``bellman_ford``, with the node's distance as the priority key of
    each activation: driving ``priority`` processes the nodes of distance below
    ``(b + 1) * delta`` first and keeps the others back until that bucket is settled
    (near-far piles or delta-stepping buckets, a strategy option). Far fewer nodes are
    relaxed more than once than in a frontier Bellman-Ford on high-diameter weighted
    graphs; the fixpoint, and so the answer, is the same. The width ``delta`` comes from
    the graph (``driving.width_scale`` scales it).

    References
    ----------
    .. [1] Meyer, Sanders, "Delta-stepping: a parallelizable shortest path algorithm",
       J. Algorithms 49 (2003).
    .. [2] Davidson, Baxter, Garland, Owens, "Work-efficient parallel GPU methods for
       single-source shortest paths", IPDPS 2014.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 1, 0], [1, 2, 2], [1.0, 1.0, 5.0])
    >>> r = gs.run("sssp", g, source=0, config={"variant": "delta_stepping"})
    >>> r.fields["dist"].tolist()
    [0.0, 1.0, 2.0]

    """

    dist = gs.NodeField("float32", init=gs.INF, at_source=0.0, doc="distance from the source")
    start = gs.from_source()
    relax = gs.edge_op(relax)


SPEC = DeltaStepping
VARIANTS = [DeltaStepping, SSSP]


@gs.hookimpl
def gswitch_algorithms():
    return VARIANTS
