"""networkx's strongly-connected-component functions from gswitch's ``scc``."""

from __future__ import annotations

import heapq
from collections.abc import Iterator

import numpy as np

from ._graph import NxGraph
from ._run import run_algorithm

__all__ = ["strongly_connected_components", "number_strongly_connected_components",
           "is_strongly_connected"]


def _directed(G: NxGraph) -> None:
    """Raise networkx's own error for an undirected graph, as its decorator does."""
    if not G.is_directed():
        import networkx as nx

        raise nx.NetworkXNotImplemented("not implemented for undirected type")


def _labels(G: NxGraph) -> np.ndarray:
    if len(G) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(run_algorithm("scc", G.gswitch_graph()).fields["scc"], dtype=np.int64)


def strongly_connected_components(G: NxGraph) -> Iterator[set]:
    """Networkx's ``strongly_connected_components``: a generator of node sets.

    Components come in a reverse topological order of the condensation, as networkx's
    depth-first search closes them (a component after every component it reaches, which
    ``condensation`` numbering relies on); among those ready, the one whose first node
    comes first in graph order.
    """
    _directed(G)
    return _components(G)


def _components(G: NxGraph) -> Iterator[set]:
    label = _labels(G)  # the smallest id of each component: its first node
    order = np.argsort(label, kind="stable")
    cuts = np.flatnonzero(np.diff(label[order])) + 1
    groups = np.split(order, cuts) if order.size else []
    yield from G.member_sets([groups[c] for c in _sinks_first(G, label, len(groups))])


def _sinks_first(G: NxGraph, label: np.ndarray, count: int) -> list[int]:
    """Component numbers (by first node) in a reverse topological order of the
    condensation: Kahn's algorithm from the sinks, the smallest number first.
    """
    if count < 2:
        return list(range(count))
    comp = np.searchsorted(np.unique(label), label)
    src, dst = G.gswitch_graph().edges()
    a, b = comp[src], comp[dst]
    cross = a != b
    pairs = np.unique(a[cross].astype(np.int64) * count + b[cross])
    a, b = pairs // count, pairs % count
    waiting = np.bincount(a, minlength=count).tolist()  # successors not yet yielded
    by_dst = np.argsort(b, kind="stable")
    preds = a[by_dst].tolist()
    starts = np.searchsorted(b[by_dst], np.arange(count + 1)).tolist()
    ready = [c for c in range(count) if waiting[c] == 0]  # sorted: a heap already
    out = []
    while ready:
        c = heapq.heappop(ready)
        out.append(c)
        for p in preds[starts[c]:starts[c + 1]]:
            waiting[p] -= 1
            if waiting[p] == 0:
                heapq.heappush(ready, p)
    return out


def number_strongly_connected_components(G: NxGraph) -> int:
    """Networkx's ``number_strongly_connected_components``."""
    _directed(G)
    return int(np.unique(_labels(G)).size)


def is_strongly_connected(G: NxGraph) -> bool:
    """Networkx's ``is_strongly_connected``.

    Raises
    ------
    networkx.NetworkXPointlessConcept
        The graph has no nodes.
    networkx.NetworkXNotImplemented
        The graph is undirected.

    """
    _directed(G)
    if len(G) == 0:
        import networkx as nx

        raise nx.NetworkXPointlessConcept(
            "Connectivity is undefined for the null graph.")
    label = _labels(G)
    return bool((label == label[0]).all())
