"""gswitch as a networkx dispatch backend named ``gswitch``.

Installed with gswitch (entry points ``networkx.backends`` and
``networkx.backend_info``), so any networkx >= 3.3 script can run supported functions
on gswitch without changing a line::

    nx.pagerank(G, backend="gswitch")          # this call
    nx.config.backend_priority = ["gswitch"]   # every supported call from now on

Calls run on the GPU when CuPy sees one and on the CPU engine otherwise (see
``nx.config.backends.gswitch``: ``backend``, ``storage``, ``tune``). networkx converts a
graph once and keeps the result in ``G.__networkx_cache__`` until the graph changes.

networkx imports :mod:`gswitch.nxbackend._info` when it starts, which imports this
package: the backend itself loads on first use (``BackendInterface``, ``NxGraph``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["BackendInterface", "NxGraph"]


def __getattr__(name: str) -> Any:
    if name == "BackendInterface":
        from ._interface import BackendInterface

        return BackendInterface
    if name == "NxGraph":
        from ._graph import NxGraph

        return NxGraph
    raise AttributeError(f"module 'gswitch.nxbackend' has no attribute {name!r}")
