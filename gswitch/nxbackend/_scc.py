"""networkx's strongly-connected-component functions from gswitch's ``scc``."""

from __future__ import annotations

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

    Components come by their first node in graph order (networkx yields them in the
    order its depth-first search closes them; both are valid, and networkx documents no
    order).
    """
    _directed(G)
    return _components(G)


def _components(G: NxGraph) -> Iterator[set]:
    label = _labels(G)  # the smallest id of each component: its first node
    order = np.argsort(label, kind="stable")
    cuts = np.flatnonzero(np.diff(label[order])) + 1
    names = G.names
    for members in np.split(order, cuts) if order.size else ():
        yield set(names[members].tolist())


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
