"""The graph zoo: small graphs with the shapes that break graph algorithms.

Every algorithm test runs over :data:`ZOO`. Each entry is a zero-argument factory so a
test builds only the graphs it needs, and each graph is small (< 20k stored edges) so the
CPU suite stays fast. The zoo covers the corner cases (no nodes, one node, a lone self
loop, isolated nodes, parallel edges), the power-law shape that stresses load balancing
(RMAT, a star with a hub of degree 2000) and the high-diameter shape that stresses
iteration counts (a long directed path, grids, a road-like grid).

All zoo graphs carry positive float32 weights (seeded integers in ``[1, 64)`` where the
base generator has none), so weighted algorithms such as SSSP run on every one of them,
and every graph's ``name`` is its zoo key.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import InvalidInput
from ..generators import WEIGHT_HIGH, WEIGHT_LOW, grid2d, path, rmat, road, star, uniform_random
from ..graph import Graph

__all__ = ["ZOO", "ZOO_NAMES", "zoo_graph"]


def _weighted(graph: Graph, name: str, seed: int) -> Graph:
    """Give ``graph`` seeded integer weights in [1, 64), equal on both directions if undirected."""
    if graph.weighted:
        out = graph
    elif graph.directed:
        rng = np.random.default_rng(seed)
        w = rng.integers(WEIGHT_LOW, WEIGHT_HIGH, size=graph.n_edges).astype(np.float32)
        out = graph.with_weights(w)
    else:
        # weight each undirected pair once so u->v and v->u agree
        src, dst = graph.edges()
        lo = np.minimum(src, dst).astype(np.int64)
        hi = np.maximum(src, dst).astype(np.int64)
        pair = lo * max(graph.n_nodes, 1) + hi
        uniq, inv = np.unique(pair, return_inverse=True)
        rng = np.random.default_rng(seed)
        per_pair = rng.integers(WEIGHT_LOW, WEIGHT_HIGH, size=uniq.size).astype(np.float32)
        out = graph.with_weights(per_pair[inv])
    out.name = name
    return out


def _edges(name: str, src: list[int], dst: list[int], n: int, *, directed: bool = True,
           seed: int = 0) -> Graph:
    g = Graph.from_edges(src, dst, n_nodes=n, directed=directed)
    return _weighted(g, name, seed)


def _empty() -> Graph:
    return _edges("empty", [], [], 0)


def _single() -> Graph:
    return _edges("single", [], [], 1)


def _single_loop() -> Graph:
    return _edges("single_loop", [0], [0], 1)


def _disconnected() -> Graph:
    # a triangle, a directed 4-cycle, an edge, and isolated nodes 9, 10, 11
    src = [0, 1, 2, 3, 4, 5, 6, 7]
    dst = [1, 2, 0, 4, 5, 6, 3, 8]
    return _edges("disconnected", src, dst, 12, seed=1)


def _self_loops() -> Graph:
    # a directed ring of 50 nodes with a loop on every fifth node, and a node with only a loop
    n = 51
    ring = np.arange(50)
    loops = np.arange(0, 51, 5)
    src = np.concatenate([ring, loops])
    dst = np.concatenate([(ring + 1) % 50, loops])
    return _edges("self_loops", src.tolist(), dst.tolist(), n, seed=2)


def _duplicates() -> Graph:
    # uniform random directed graph plus triple copies of some edges with distinct weights
    rng = np.random.default_rng(3)
    n, m = 200, 1500
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    rep = rng.choice(m, 200, replace=False)
    src = np.concatenate([src, src[rep], src[rep]])
    dst = np.concatenate([dst, dst[rep], dst[rep]])
    return _edges("duplicates", src.tolist(), dst.tolist(), n, seed=3)


def _star() -> Graph:
    return _weighted(star(2001), "star", 4)


def _path() -> Graph:
    return _weighted(path(2000, directed=True), "path", 5)


def _grid() -> Graph:
    return _weighted(grid2d(40, 40, weighted=True, seed=6), "grid", 6)


def _road() -> Graph:
    return _weighted(road(40, 40, seed=7), "road", 7)


def _rmat() -> Graph:
    return _weighted(rmat(10, 16, seed=8, weighted=True), "rmat", 8)


def _uniform() -> Graph:
    return _weighted(uniform_random(1000, 8000, seed=9, weighted=True), "uniform", 9)


def _directed_dag() -> Graph:
    # random DAG: edges only from lower to higher id, so it has sources, sinks and
    # nodes unreachable from node 0
    rng = np.random.default_rng(10)
    n, m = 300, 1500
    a = rng.integers(0, n, m)
    b = rng.integers(0, n, m)
    keep = a != b
    src, dst = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
    return _edges("directed_dag", src.tolist(), dst.tolist(), n, seed=10)


#: Zoo key -> factory returning a fresh weighted graph named after the key.
ZOO: dict[str, Callable[[], Graph]] = {
    "empty": _empty,
    "single": _single,
    "single_loop": _single_loop,
    "disconnected": _disconnected,
    "self_loops": _self_loops,
    "duplicates": _duplicates,
    "star": _star,
    "path": _path,
    "grid": _grid,
    "road": _road,
    "rmat": _rmat,
    "uniform": _uniform,
    "directed_dag": _directed_dag,
}

#: Zoo keys in a stable order (use for ``pytest.mark.parametrize``).
ZOO_NAMES: tuple[str, ...] = tuple(ZOO)


def zoo_graph(name: str) -> Graph:
    """Build the zoo graph called ``name``.

    Parameters
    ----------
    name : str
        One of :data:`ZOO_NAMES`.

    Returns
    -------
    Graph
        A fresh graph with positive float32 weights and ``graph.name == name``.

    Raises
    ------
    InvalidInput
        If ``name`` is not in the zoo; the message lists the valid names.

    """
    try:
        factory = ZOO[name]
    except KeyError:
        raise InvalidInput(
            f"unknown zoo graph {name!r}; choose one of {', '.join(ZOO_NAMES)}"
        ) from None
    return factory()
