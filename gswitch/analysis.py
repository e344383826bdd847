"""Structural summary of a graph: sizes, degree skew, components, an estimated diameter.

These are the properties that decide which execution strategy wins (degree skew favours
edge-balanced load balancing, a high diameter favours persistent kernels and
topology-driven sweeps), so ``gswitch info`` prints them and the tuner can record them.
Everything is vectorised or runs in scipy's C code, fast on graphs of millions of edges.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from .graph import Graph

__all__ = ["graph_info", "format_info", "gini"]


def gini(values: np.ndarray) -> float:
    """Gini coefficient of non-negative values: 0 when all are equal, near 1 when one dominates.

    Parameters
    ----------
    values : numpy.ndarray
        Non-negative numbers (for example degrees).

    Returns
    -------
    float
        In ``[0, 1)``; 0 for an empty or all-zero input.

    """
    x = np.sort(np.asarray(values, dtype=np.float64).ravel())
    n = x.size
    total = x.sum()
    if n == 0 or total == 0:
        return 0.0
    ranks = np.arange(1, n + 1, dtype=np.float64)
    return float(2.0 * np.dot(ranks, x) / (n * total) - (n + 1) / n)


def _pattern(graph: Graph) -> sp.csr_array:
    ones = np.ones(graph.n_edges, dtype=np.float64)
    return sp.csr_array((ones, graph.indices, graph.indptr), shape=(graph.n_nodes,) * 2)


def _eccentricity(adj: sp.csr_array, source: int) -> tuple[int, int]:
    """Return ``(eccentricity of source, a farthest node)`` within its component."""
    order, pred = csgraph.breadth_first_order(adj, source, directed=False,
                                              return_predecessors=True)
    depth = _tree_depths(order, pred)
    k = int(np.argmax(depth))
    return int(depth[k]), int(order[k])


def _tree_depths(order: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Depth of each node of ``order`` (BFS visit order) in its predecessor tree.

    Pointer jumping: every round each node adds the distance to its current ancestor and
    jumps to that ancestor's ancestor, so ``ceil(log2(depth))`` vectorised rounds suffice
    even on paths and road networks where a level-by-level loop would take thousands.
    """
    k = order.size
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    pos = np.empty(pred.size, dtype=np.int64)
    pos[order] = np.arange(k)
    parent_node = pred[order]
    root = parent_node < 0
    anc = np.where(root, np.arange(k), pos[np.where(root, order, parent_node)])
    dist = (~root).astype(np.int64)
    while True:
        done = anc == anc[anc]
        if done.all():
            break
        dist = dist + np.where(done, 0, dist[anc])
        anc = anc[anc]
    return dist


def graph_info(graph: Graph, *, seed: int = 0) -> dict[str, Any]:
    """Summarise a graph's size, degree distribution, components and diameter.

    Parameters
    ----------
    graph : Graph
        Any graph; degrees are out-degrees of the stored (directed) edges, so an
        undirected graph counts each edge at both ends.
    seed : int
        Breaks ties when choosing the first BFS root (the sweep itself is deterministic).

    Returns
    -------
    dict
        ``name``, ``n_nodes``, ``n_edges`` (stored directed edges), ``directed``,
        ``weighted``, ``degree_min``, ``degree_mean``, ``degree_max`` (out-degree),
        ``degree_max_over_mean`` (skew: 1 for regular graphs, large for power laws),
        ``degree_gini`` (Gini coefficient of the out-degrees, 0 = all equal),
        ``n_self_loops``, ``symmetric`` (every edge has its reverse),
        ``n_duplicate_edges`` (stored edges repeating an earlier ``(src, dst)`` pair),
        ``n_components`` (weakly connected, isolated nodes included),
        ``largest_component`` (its node count), ``diameter_estimate`` and
        ``weight_min`` / ``weight_max`` (``None`` when unweighted).

    Notes
    -----
    ``diameter_estimate`` is the double-sweep lower bound on the diameter of the
    largest weakly connected component, in hops, ignoring edge direction: a BFS from a
    node of that component finds a farthest node ``u``, and a BFS from ``u`` reports
    ``u``'s eccentricity. It is exact on trees (paths, stars) and on grids, and in
    practice close on meshes and road networks. Disconnected graphs give a finite
    value; a graph without nodes gives 0.

    """
    n, m = graph.n_nodes, graph.n_edges
    deg = graph.out_degree
    info: dict[str, Any] = {
        "name": graph.name,
        "n_nodes": n,
        "n_edges": m,
        "directed": graph.directed,
        "weighted": graph.weighted,
        "degree_min": int(deg.min()) if n else 0,
        "degree_mean": float(m / n) if n else 0.0,
        "degree_max": int(deg.max()) if n else 0,
    }
    info["degree_max_over_mean"] = (
        float(info["degree_max"] / info["degree_mean"]) if info["degree_mean"] else 0.0
    )
    info["degree_gini"] = gini(deg)
    src = graph.sources()
    info["n_self_loops"] = int(np.count_nonzero(src == graph.indices))
    info["symmetric"] = graph.is_symmetric()
    key = src.astype(np.int64) * max(n, 1) + graph.indices
    if key.size > 1 and not np.all(key[1:] >= key[:-1]):
        key = np.sort(key)
    info["n_duplicate_edges"] = int(np.count_nonzero(key[1:] == key[:-1])) if key.size else 0

    adj = _pattern(graph)
    if n:
        n_comp, labels = csgraph.connected_components(adj, directed=True, connection="weak")
        sizes = np.bincount(labels)
        biggest = int(np.argmax(sizes))
        members = np.flatnonzero(labels == biggest)
        rng = np.random.default_rng(seed)
        start = int(members[rng.integers(members.size)])
        _, far = _eccentricity(adj, start)
        ecc, _ = _eccentricity(adj, far)
        info["n_components"] = int(n_comp)
        info["largest_component"] = int(sizes[biggest])
        info["diameter_estimate"] = ecc
    else:
        info["n_components"] = 0
        info["largest_component"] = 0
        info["diameter_estimate"] = 0
    w = graph.weights
    info["weight_min"] = float(w.min()) if w is not None and w.size else None
    info["weight_max"] = float(w.max()) if w is not None and w.size else None
    return info


_LABELS = [
    ("name", "name"),
    ("n_nodes", "nodes"),
    ("n_edges", "edges (stored)"),
    ("directed", "directed"),
    ("weighted", "weighted"),
    ("weight_range", "weights"),
    ("degree", "out-degree min/mean/max"),
    ("degree_max_over_mean", "degree skew (max/mean)"),
    ("degree_gini", "degree Gini"),
    ("n_self_loops", "self loops"),
    ("n_duplicate_edges", "duplicate edges"),
    ("symmetric", "symmetric"),
    ("n_components", "weak components"),
    ("largest_component", "largest component"),
    ("diameter_estimate", "diameter (lower bound)"),
]


def format_info(info: dict[str, Any]) -> str:
    """Render :func:`graph_info`'s result as aligned ``label: value`` lines.

    Parameters
    ----------
    info : dict
        As returned by :func:`graph_info`; missing keys are skipped.

    Returns
    -------
    str
        Human-readable text without a trailing newline.

    """
    rows: list[tuple[str, str]] = []
    for key, label in _LABELS:
        if key == "degree":
            if "degree_mean" in info:
                value = (f"{info.get('degree_min', 0)} / {info['degree_mean']:.2f} / "
                         f"{info.get('degree_max', 0)}")
                rows.append((label, value))
            continue
        if key == "weight_range":
            if info.get("weight_min") is not None:
                rows.append((label, f"{info['weight_min']:g} .. {info['weight_max']:g}"))
            continue
        if key not in info:
            continue
        value = info[key]
        if key == "name" and not value:
            continue
        if isinstance(value, bool):
            text = "yes" if value else "no"
        elif isinstance(value, float):
            text = f"{value:.3f}"
        elif isinstance(value, int):
            text = f"{value:,}"
        else:
            text = str(value)
        rows.append((label, text))
    width = max((len(label) for label, _ in rows), default=0)
    return "\n".join(f"{label + ':':<{width + 1}} {text}" for label, text in rows)
