"""A user algorithm that declares its own reference and comparison.

``hops_declared`` leaves the integer infinity in unreached nodes; its reference writes
-1 there. Only its own ``compare`` (which maps the infinity to -1) accepts its answers:
the generic comparison would call every unreached node wrong, so a study whose trials
pass was checked by the declared functions.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse.csgraph as csgraph

import gswitch as gs
from gswitch.algorithm import int_inf
from gswitch.verify import exact

#: Every message of :func:`compare_hops` starts with this, so tests can tell it apart.
MARK = "hops_declared:"


def expected_hops(graph, source=None, **params):
    """Hops from ``source`` by scipy; -1 where unreached."""
    d = csgraph.shortest_path(graph.to_scipy(), unweighted=True, indices=int(source))
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def compare_hops(got, expected):
    """Exact, with the engine's integer infinity read as -1 (unreached)."""
    got = np.where(np.asarray(got) >= int_inf("int32"), -1, got)
    problem = exact(got, expected)
    return f"{MARK} {problem}" if problem else None


@gs.algorithm(name="hops_declared", variant="plain",
              reference="scipy shortest_path (test plugin)", expected=expected_hops,
              compare=compare_hops)
class HopsDeclared:
    """Hops from a source; unreached nodes keep the integer infinity."""

    depth = gs.NodeField("int32", init=gs.INF, at_source=0)
    start = gs.from_source()

    @gs.edge_op
    def visit(e):
        e.dst.depth.reduce_min(e.src.depth + 1)


@gs.algorithm(name="hops_declared", variant="inherits", default=False)
class HopsInherits:
    """The same formulation as a second variant that declares no reference of its own."""

    depth = gs.NodeField("int32", init=gs.INF, at_source=0)
    start = gs.from_source()

    @gs.edge_op
    def visit(e):
        e.dst.depth.reduce_min(e.src.depth + 1)


@gs.algorithm(name="hops_undeclared")
class HopsUndeclared:
    """The same formulation without a declared reference: checked against the CPU engine."""

    depth = gs.NodeField("int32", init=gs.INF, at_source=0)
    start = gs.from_source()

    @gs.edge_op
    def visit(e):
        e.dst.depth.reduce_min(e.src.depth + 1)


@gs.hookimpl
def gswitch_algorithms():
    return [HopsDeclared, HopsInherits, HopsUndeclared]
