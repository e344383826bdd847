"""networkx's connected-component functions from gswitch's component labels.

Node ids follow the graph's node order, so listing components by their smallest node
id lists them in the order networkx finds them (by the first node of each in graph
order).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator

import numpy as np

from ._graph import NxGraph
from ._run import run_algorithm

__all__ = ["connected_components", "number_connected_components",
           "node_connected_component", "is_connected"]


def _undirected(G: NxGraph) -> None:
    """Raise networkx's own error for a directed graph, as its decorator does."""
    if G.is_directed():
        import networkx as nx

        raise nx.NetworkXNotImplemented("not implemented for directed type")


def labels(G: NxGraph) -> np.ndarray:
    """A component label of every node (equal labels, same component)."""
    if len(G) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(run_algorithm("cc", G.gswitch_graph()).fields["comp"], dtype=np.int64)


def connected_components(G: NxGraph) -> Iterator[set]:
    """Networkx's ``connected_components``: a generator of node sets, in networkx's order."""
    _undirected(G)
    return _components(G)


def _components(G: NxGraph) -> Iterator[set]:
    comp = labels(G)
    if _labelled_by_least_member(comp):
        key = comp  # ranking by label ranks by first node already
    else:
        _, first, inverse = np.unique(comp, return_index=True, return_inverse=True)
        key = np.argsort(np.argsort(first))[inverse]
    # components ranked by their first node, then each component's nodes in graph order
    order = np.argsort(key, kind="stable")
    cuts = np.flatnonzero(np.diff(key[order])) + 1
    yield from G.member_sets(np.split(order, cuts) if order.size else [])


def _labelled_by_least_member(comp: np.ndarray) -> bool:
    """Whether every label is its component's smallest node id: each label names a node
    of the same component (``comp[comp] == comp``) that is no larger than the node
    (``comp <= id``). Two passes over the labels, instead of a sort to rank them.
    """
    return bool((comp <= np.arange(comp.size)).all()) and bool((comp[comp] == comp).all())


def number_connected_components(G: NxGraph) -> int:
    """Networkx's ``number_connected_components``."""
    _undirected(G)
    return int(np.unique(labels(G)).size)


def node_connected_component(G: NxGraph, n: Hashable) -> set:
    """Networkx's ``node_connected_component``: the set of nodes in ``n``'s component."""
    _undirected(G)
    hash(n)  # networkx looks n up in its adjacency: unhashable, its TypeError
    if n not in G:
        raise KeyError(n)  # as networkx's adjacency lookup does
    comp = labels(G)
    return set(G.names[comp == comp[G.node_id(n)]].tolist())


def is_connected(G: NxGraph) -> bool:
    """Networkx's ``is_connected``.

    Raises
    ------
    networkx.NetworkXPointlessConcept
        The graph has no nodes.
    networkx.NetworkXNotImplemented
        The graph is directed.

    """
    _undirected(G)
    if len(G) == 0:
        import networkx as nx

        raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    comp = labels(G)
    return bool((comp == comp[0]).all())
