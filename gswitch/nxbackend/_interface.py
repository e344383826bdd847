"""The backend object networkx loads: its protocol methods and the supported functions."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

from . import (
    _apsp,
    _bfs,
    _cc,
    _centrality,
    _dispatch,
    _lpa,
    _mis,
    _msf,
    _pagerank,
    _scc,
    _sssp,
    _triangles,
)
from ._graph import NxGraph, ViewWatch, from_networkx, to_networkx
from ._info import FUNCTIONS, SUBGRAPH_FUNCTIONS

__all__ = ["BackendInterface"]

_FUNCTIONS = {
    name: getattr(module, name)
    for module in (_apsp, _bfs, _cc, _centrality, _lpa, _mis, _msf, _pagerank, _scc,
                   _sssp, _triangles)
    for name in module.__all__
    if name in FUNCTIONS
}


class BackendInterface:
    """The object networkx loads from the ``networkx.backends`` entry point.

    Each supported networkx function is an attribute of the same name taking networkx's
    arguments with :class:`NxGraph` graphs; the rest is networkx's backend protocol.
    """

    @staticmethod
    def convert_from_nx(G: Any, edge_attrs: Any = None, node_attrs: Any = None,
                        preserve_edge_attrs: bool = False, preserve_node_attrs: bool = False,
                        preserve_graph_attrs: bool = False, name: str | None = None,
                        graph_name: str | None = None) -> NxGraph:
        """A networkx graph as an :class:`NxGraph`, with the edge attributes asked for.

        A view's conversion carries a :class:`ViewWatch`, so that a call converts it
        again once the graph the view shows has changed.

        Raises
        ------
        NotImplementedError
            All edge attributes were asked for (a callable weight); networkx then runs.

        """
        if isinstance(G, NxGraph):
            return G
        out = _convert(G, edge_attrs, preserve_edge_attrs, preserve_graph_attrs, name)
        out.watch = ViewWatch.of(G, lambda: BackendInterface.convert_from_nx(
            G, edge_attrs, node_attrs, preserve_edge_attrs, preserve_node_attrs,
            preserve_graph_attrs, name, graph_name))
        return out

    @staticmethod
    def convert_to_nx(obj: Any, *, name: str | None = None) -> Any:
        """An :class:`NxGraph` as a networkx graph; any other result as it is."""
        if isinstance(obj, NxGraph):
            return to_networkx(obj)
        return obj

    @staticmethod
    def can_run(name: str, args: tuple, kwargs: dict) -> str | bool:
        """Whether the backend implements ``name`` with these arguments (else why not)."""
        return _dispatch.can_run(_FUNCTIONS, name, args, kwargs)

    @staticmethod
    def should_run(name: str, args: tuple, kwargs: dict) -> str | bool:
        """Whether the call is worth running on gswitch (else why not)."""
        return _dispatch.should_run(name, args, kwargs)

    @staticmethod
    def on_start_tests(items: list) -> None:
        """Mark networkx's tests whose valid answer differs from gswitch's (networkx's
        own test suite run with ``NETWORKX_TEST_BACKEND=gswitch``).
        """
        from ._tests import mark_known_differences

        mark_known_differences(items)


def _convert(G: Any, edge_attrs: Any, preserve_edge_attrs: Any, preserve_graph_attrs: bool,
             name: str | None) -> NxGraph:
    if preserve_edge_attrs is True or isinstance(preserve_edge_attrs, dict):
        if name in SUBGRAPH_FUNCTIONS:
            # the answer is cut from G itself, attributes and all: convert the structure
            # and keep G
            out = from_networkx(G, None, preserve_graph_attrs=True)
            out.source = G
            return out
        raise NotImplementedError("gswitch converts named numeric edge attributes only")
    attrs = edge_attrs if isinstance(edge_attrs, dict) else (
        {edge_attrs: 1} if isinstance(edge_attrs, str) else None)
    out = from_networkx(G, attrs, preserve_graph_attrs=bool(preserve_graph_attrs))
    if name in SUBGRAPH_FUNCTIONS:
        out.source = G
    return out


def _refreshing(func: Callable) -> Callable:
    """``func`` that first converts again any view argument whose graph has changed
    (:meth:`NxGraph.refresh`): networkx's cache of a view outlives such a change.
    """

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        for value in itertools.chain(args, kwargs.values()):
            if isinstance(value, NxGraph):
                value.refresh()
        return func(*args, **kwargs)

    return call


for _name, _func in _FUNCTIONS.items():
    setattr(BackendInterface, _name, staticmethod(_refreshing(_func)))
del _name, _func
