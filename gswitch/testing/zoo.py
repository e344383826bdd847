"""The graph zoo: small graphs with the shapes that break graph algorithms.

Every algorithm test runs over :data:`ZOO`. Each entry is a zero-argument factory so a
test builds only the graphs it needs, and each graph is small (< 20k stored edges) so the
CPU suite stays fast. The zoo covers the corner cases (no nodes, one node, a lone self
loop, isolated nodes, parallel edges), the power-law shape that stresses load balancing
(RMAT, a star with a hub of degree 2000) and the high-diameter shape that stresses
iteration counts (a long directed path, grids, a road-like grid). The GPU sweep
(``tests/test_gpu_sweep.py``) runs over :data:`SWEEP` instead: graphs of 10^5 to 10^6
edges with shapes the zoo has only small.

All zoo graphs carry positive float32 weights (seeded integers in ``[1, 64)`` where the
base generator has none), so weighted algorithms such as SSSP run on every one of them,
and every graph's ``name`` is its zoo key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import InvalidInput
from ..generators import WEIGHT_HIGH, WEIGHT_LOW, grid2d, path, rmat, road, star, uniform_random
from ..graph import Graph

__all__ = ["ZOO", "ZOO_NAMES", "zoo_graph", "SWEEP", "SWEEP_NAMES", "sweep_graph",
           "sweep_configs"]


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


def _entry(table: dict[str, Any], name: str, what: str) -> Any:
    try:
        return table[name]
    except KeyError:
        raise InvalidInput(
            f"unknown {what} {name!r}; choose one of {', '.join(table)}"
        ) from None


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
    return _entry(ZOO, name, "zoo graph")()


# --------------------------------------------------------------------------- the sweep
# Larger graphs (10^5 to 10^6 stored edges) for the GPU sweep, with shapes the zoo lacks
# at scale: a hub of degree 10^5 both as an out-hub and as an in-hub (pull), a sparse
# graph of mostly tiny components, a path that runs into a dense clique (frontiers that
# jump from one node to thousands: direction and temporal switches), a directed
# power-law graph, a road-like grid of 65k nodes, zero-weight edges with many ties, and
# 10^5 nodes almost all isolated. Apart from the RMAT graphs no node count is a
# multiple of 32 (bitmap words and warps end part-full).


def _sweep_rmat() -> Graph:
    return _weighted(rmat(15, 16, seed=21, weighted=True, directed=False), "sweep_rmat", 21)


def _sweep_rmat_directed() -> Graph:
    return _weighted(rmat(14, 8, seed=22, weighted=True), "sweep_rmat_directed", 22)


def _sweep_road() -> Graph:
    return _weighted(road(255, 257, seed=23), "sweep_road", 23)


def _sweep_wide_star() -> Graph:
    return _weighted(star(100_003), "sweep_wide_star", 24)


def _sweep_in_star() -> Graph:
    # every leaf points at the hub, the hub points back at leaf 1 only
    n = 100_003
    leaves = np.arange(1, n)
    src = np.concatenate([leaves, [0]])
    dst = np.concatenate([np.zeros(n - 1, dtype=np.int64), [1]])
    return _edges("sweep_in_star", src, dst, n, seed=25)


def _sweep_sparse() -> Graph:
    return _weighted(uniform_random(200_003, 150_000, seed=26, weighted=True), "sweep_sparse", 26)


def _sweep_broom() -> Graph:
    # an undirected path of 3,000 nodes whose end joins a clique of 400 nodes
    tail, k = 3000, 400
    a = np.arange(tail - 1)
    ci, cj = np.triu_indices(k, 1)
    src = np.concatenate([a, ci + tail - 1])
    dst = np.concatenate([a + 1, cj + tail - 1])
    return _edges("sweep_broom", src, dst, tail - 1 + k, directed=False, seed=27)


def _sweep_zero_weights() -> Graph:
    # directed power-law graph whose weights are 0, 1 or 2: zero-weight edges and ties
    g = rmat(13, 8, seed=28)
    w = np.random.default_rng(28).integers(0, 3, size=g.n_edges).astype(np.float32)
    out = g.with_weights(w)
    out.name = "sweep_zero_weights"
    return out


def _sweep_isolated() -> Graph:
    # 100,003 nodes, all but 64 of them isolated: a directed ring of 64 with chords
    ring = np.arange(64)
    src = np.concatenate([ring, ring[::4]])
    dst = np.concatenate([(ring + 1) % 64, (ring[::4] + 17) % 64])
    return _edges("sweep_isolated", src, dst, 100_003, seed=29)


#: Sweep key -> (factory, source node for BFS and SSSP).
SWEEP: dict[str, tuple[Callable[[], Graph], int]] = {
    "sweep_rmat": (_sweep_rmat, -1),
    "sweep_rmat_directed": (_sweep_rmat_directed, -1),
    "sweep_road": (_sweep_road, 0),
    "sweep_wide_star": (_sweep_wide_star, 5),
    "sweep_in_star": (_sweep_in_star, 1),
    "sweep_sparse": (_sweep_sparse, -1),
    "sweep_broom": (_sweep_broom, 0),
    "sweep_zero_weights": (_sweep_zero_weights, -1),
    "sweep_isolated": (_sweep_isolated, 3),
}

#: Sweep keys in a stable order.
SWEEP_NAMES: tuple[str, ...] = tuple(SWEEP)


def sweep_graph(name: str) -> tuple[Graph, int]:
    """Build the sweep graph called ``name`` and its source node.

    Parameters
    ----------
    name : str
        One of :data:`SWEEP_NAMES`.

    Returns
    -------
    tuple[Graph, int]
        The graph (nonnegative float32 weights, ``graph.name == name``) and the source for
        source-based algorithms: the node of highest out-degree where the entry says
        ``-1``.

    Raises
    ------
    InvalidInput
        If ``name`` is not a sweep graph; the message lists the valid names.

    """
    factory, source = _entry(SWEEP, name, "sweep graph")
    graph = factory()
    if source < 0:
        source = int(np.argmax(np.diff(graph.indptr)))
    return graph, source


#: Configurations the GPU sweep draws per algorithm (the compile suite compiles them too).
SWEEP_CONFIGS = 32
#: Seed of the sweep's draw.
SWEEP_SEED = 2026


def sweep_configs(spec: Any) -> list[Any]:
    """The sweep's configurations for ``spec``: :data:`SWEEP_CONFIGS` valid ones drawn with
    every parameter by :func:`gswitch.combinations.sampled_configs`.

    Parameters
    ----------
    spec : AlgorithmSpec
        The algorithm.

    Returns
    -------
    list[Config]
        The same list for the same installed strategies, in CI and on the device.

    """
    from ..combinations import sampled_configs

    return sampled_configs(spec, SWEEP_CONFIGS, seed=SWEEP_SEED)
