"""Breadth-first search: hop distance from a source."""

from __future__ import annotations

import numpy as np

import gswitch as gs
from gswitch.algorithm import int_inf
from gswitch.arrayops import replace_at_least
from gswitch.verify import exact


def expected_depth(graph: gs.Graph, source: int | None = None, **params) -> np.ndarray:
    """Hops from ``source`` by ``scipy.sparse.csgraph.shortest_path``; -1 where unreached."""
    import scipy.sparse.csgraph as csgraph  # imported on first use: 0.17 s

    d = csgraph.shortest_path(graph.to_scipy(), unweighted=True, indices=int(source))
    return np.where(np.isinf(d), -1, d).astype(np.int64)


@gs.algorithm(name="bfs", reference="scipy.sparse.csgraph.shortest_path(unweighted=True)",
              first_hit_final=True, finalize_on_device=True, expected=expected_depth,
              compare=exact,
              # the default: fastest geomean over RMAT-22, uniform 2^22 and road 2048^2
              # among the candidates that never lose to a plain-CuPy BFS on a star or a
              # Zipf bipartite graph, on an H100
              # (benchmarks/results/h100_s24chooseA_default_choice.md)
              defaults={"worklist": "warp_aggregated", "load_balance": "twc",
                        "driving": "data", "direction": "direction_optimizing",
                        "launch": "persistent", "block_size": 256},
              # the CPU engine keeps pushing: its bottom-up steps scan every unvisited node
              backend_defaults={"cpu": {"direction": "push"}})
class BFS:
    """Breadth-first search: number of hops from the source to every node.

    Parameters
    ----------
    source : int
        Start node (a run argument).

    Returns
    -------
    depth : ndarray of int32
        Hops from the source; ``-1`` for unreachable nodes.

    Notes
    -----
    Each active node offers ``depth + 1`` to its out-neighbours with an atomic
    ``min``; a neighbour whose depth drops becomes active. ``min`` is commutative,
    idempotent and monotone, so every driving style, direction and worklist policy
    reaches the same fixpoint. Unreached nodes hold an integer infinity with headroom
    (see :func:`gswitch.algorithm.int_inf`) that ``+ 1`` cannot wrap.

    References
    ----------
    .. [1] Merrill, Garland, Grimshaw, "Scalable GPU graph traversal", PPoPP 2012.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 1], [1, 2])
    >>> gs.run("bfs", g, source=0).fields["depth"].tolist()
    [0, 1, 2]

    """

    depth = gs.NodeField("int32", init=gs.INF, at_source=0, doc="hops from the source")
    start = gs.from_source()

    @gs.edge_op
    def visit(e):
        e.dst.depth.reduce_min(e.src.depth + 1)

    @staticmethod
    def finalize(fields, params):
        # unreached (INF) -> -1 in one pass into a fresh array: on the device it is then
        # the caller's own, and the field it came from needs no copy (a boolean-mask
        # assignment costs about 10 ns per unreached node; three NumPy passes cost three
        # launches on the device)
        m = replace_at_least(fields["depth"], int_inf("int32"), -1)
        fields["depth"] = m
        return fields


SPEC = BFS


@gs.hookimpl
def gswitch_algorithms():
    return [SPEC]


