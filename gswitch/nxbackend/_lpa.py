"""networkx's label-propagation communities and ``k_core`` from gswitch's algorithms."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._centrality import core_number as _core_number
from ._graph import NxGraph, to_networkx
from ._run import run_algorithm

__all__ = ["label_propagation_communities", "asyn_lpa_communities", "k_core"]


def _groups(G: NxGraph, labels: np.ndarray) -> dict:
    """Node sets by label, labels in the order their first node comes in ``G``."""
    clusters: dict[int, set] = {}
    for node, label in zip(G.nodes, np.asarray(labels).tolist()):
        clusters.setdefault(label, set()).add(node)
    return clusters


def label_propagation_communities(G: NxGraph) -> Any:
    """Networkx's ``label_propagation_communities``: the same partition, by gswitch's
    semi-synchronous ``label_propagation`` (networkx's colouring, update order and
    Prec-Max ties), as a ``dict_values`` of node sets like networkx's.

    Raises
    ------
    networkx.NetworkXNotImplemented
        The graph is directed (networkx's error).

    """
    import networkx as nx

    if G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for directed type")
    if len(G) == 0:
        return {}.values()
    labels = run_algorithm("label_propagation", G.gswitch_graph(),
                           variant="semi_synchronous").fields["label"]
    return _groups(G, labels).values()


def asyn_lpa_communities(G: NxGraph, weight: Any = None, seed: Any = None) -> Any:
    """Networkx's ``asyn_lpa_communities`` in its spirit: gswitch's seeded
    ``asynchronous`` label propagation, whose 32-bit seed is drawn from ``seed`` (the
    random state networkx made of it). Every community it yields is a fixpoint of label
    propagation, as networkx's; the draws are gswitch's, so a seed gives another
    partition than networkx's. Unweighted, undirected graphs only (the dispatch sends
    the others to networkx).
    """
    import random

    if len(G) == 0:
        return iter(())
    draw = seed if hasattr(seed, "getrandbits") else random.Random(seed)
    labels = run_algorithm("label_propagation", G.gswitch_graph(), variant="asynchronous",
                           seed=draw.getrandbits(32)).fields["label"]
    return iter(list(_groups(G, labels).values()))


def k_core(G: NxGraph, k: int | None = None, core_number: dict | None = None) -> Any:
    """Networkx's ``k_core``: the subgraph of the nodes of core number at least ``k``
    (the largest core number when ``k`` is None), core numbers by gswitch's
    ``core_number`` unless given, cut from the networkx graph the call was given with
    every attribute (a networkx graph, as networkx returns).

    Raises
    ------
    networkx.NetworkXNotImplemented
        The graph is a multigraph or has self loops and no ``core_number`` is given
        (networkx's errors).

    """
    core = _core_number(G) if core_number is None else core_number
    if k is None:
        k = max(core.values())
    source = G.source if G.source is not None else to_networkx(G)
    return source.subgraph([v for v in core if core[v] >= k]).copy()
