"""What the CPU engine derives from a graph once and keeps while the graph lives."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..graph import Graph

_DERIVED: dict[tuple[int, str], Any] = {}


def derived(graph: Graph, what: str, build: Callable[[Graph], Any]) -> Any:
    """``build(graph)``, built once and kept while ``graph`` lives (graphs are
    immutable), so repeated runs on one graph do not rebuild it.

    Parameters
    ----------
    graph : Graph
        The graph the value is derived from.
    what : str
        Names the value among those derived from ``graph``.
    build : callable
        Builds the value from ``graph`` the first time it is asked for.

    Returns
    -------
    object
        The value ``build`` returned for this graph.
    """
    key = (id(graph), what)
    hit = _DERIVED.get(key, _DERIVED)
    if hit is _DERIVED:  # not built yet (the dict itself is never a value)
        hit = _DERIVED[key] = build(graph)
        weakref.finalize(graph, _DERIVED.pop, key, None)
    return hit


def all_sources(graph: Graph) -> np.ndarray:
    """Every edge's source id (int32, read-only), once per graph (the engine's key, so
    every module that asks shares one array).
    """
    def build(g: Graph) -> np.ndarray:
        out = g.sources()
        out.flags.writeable = False
        return out

    return derived(graph, "sources32", build)
