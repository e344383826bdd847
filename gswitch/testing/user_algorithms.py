"""User-defined algorithms that exercise the operator language on every backend.

The compile suite builds them and the GPU suite runs them against the CPU engine: the
README's widest path, int64 / uint32 / float64 fields, ``reduce_or`` and
``reduce_max``, ``where`` and casts, ``INF`` inside integer expressions, and a
non-idempotent node operator that shows the worklist's duplicate rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import gswitch as gs
from gswitch.algorithm import int_inf

__all__ = ["USER_ALGORITHMS", "USER_CONFIGS", "NODE_RUNS", "HALF_HOPS", "hop_count"]


@gs.algorithm(name="widest", reference="gswitch cpu engine")
class WidestPath:
    """Maximum bottleneck capacity from a source (float32 max of min)."""

    width = gs.NodeField("float32", init=0.0, at_source=gs.INF)
    start = gs.from_source()

    @gs.edge_op
    def relax(e):
        e.dst.width.reduce_max(gs.minimum(e.src.width, e.weight))


@gs.algorithm(name="hops64", reference="gswitch cpu engine")
class Hops64:
    """BFS depth in an int64 field, INF kept integer inside minimum()."""

    depth = gs.NodeField("int64", init=gs.INF, at_source=0)
    start = gs.from_source()

    @gs.edge_op
    def visit(e):
        e.dst.depth.reduce_min(gs.minimum(e.src.depth + 1, gs.INF))


@gs.algorithm(name="reach_bits", reference="gswitch cpu engine")
class ReachBits:
    """Which of the low 5 node ids reach each node: uint32 bit sets with reduce_or."""

    bits = gs.NodeField("uint32", init=0)
    start = gs.all_nodes()

    @gs.node_op
    def seed(n):
        n.bits.reduce_or(gs.where(n.id < 5, n.id + 1, 0).astype("uint32"))

    @gs.edge_op
    def spread(e):
        e.dst.bits.reduce_or(e.src.bits)


@gs.algorithm(name="dist64", weights="nonnegative", reference="gswitch cpu engine")
class Dist64:
    """Shortest paths in float64 with the weight cast up."""

    dist = gs.NodeField("float64", init=gs.INF, at_source=0.0)
    start = gs.from_source()

    @gs.edge_op
    def relax(e):
        e.dst.dist.reduce_min(e.src.dist + e.weight.astype("float64"))


@gs.algorithm(name="max_label", symmetric=True, reference="gswitch cpu engine")
class MaxLabel:
    """Components by the largest id (int32 reduce_max)."""

    label = gs.NodeField("int32", init=gs.NODE_ID)
    start = gs.all_nodes()

    @gs.edge_op
    def spread(e):
        e.dst.label.reduce_max(e.src.label)


@gs.algorithm(name="node_runs", max_iterations_param="steps", reference="gswitch cpu engine")
class NodeRuns:
    """Counts node-operator runs; every nonzero add activates (duplicates possible)."""

    steps = gs.Param("int32", 2, low=1, high=100)
    runs = gs.NodeField("int32", init=0)
    mass = gs.NodeField("float32", init=0.0)
    start = gs.from_source()

    @gs.node_op
    def count(n):
        n.runs.reduce_add(1)

    @gs.edge_op
    def send(e):
        e.dst.mass.reduce_add(1.0)


def _visit(e):
    e.dst.depth.reduce_min(e.src.depth + 1)


def hop_count(name: str, finalize: Callable | None = None, *,
              finalize_on_device: bool = False, depth_output: bool = True,
              extra: dict[str, gs.NodeField] | None = None) -> gs.AlgorithmSpec:
    """A hop-count algorithm (int32 ``depth`` from the sources, ``INF`` unreached) with
    the given ``finalize``: the test algorithms of finalisation are built from it.

    Parameters
    ----------
    name : str
        Algorithm name.
    finalize : callable, optional
        ``finalize(fields, params)``.
    finalize_on_device : bool
        Passed to :func:`gswitch.algorithm`.
    depth_output : bool
        Whether ``depth`` is an output.
    extra : dict, optional
        More node fields, by name.
    """
    body: dict[str, Any] = {
        "__doc__": f"Hop count from the sources ({name}).",
        "depth": gs.NodeField("int32", init=gs.INF, at_source=0, output=depth_output),
        "start": gs.from_source(), "visit": gs.edge_op(_visit), **(extra or {})}
    if finalize is not None:
        body["finalize"] = staticmethod(finalize)
    return gs.algorithm(type(name, (), body), name=name, reference="gswitch cpu engine",
                        finalize_on_device=finalize_on_device)


def _half(fields: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    d = fields["depth"]
    half = np.empty_like(d, dtype=np.float64)
    np.multiply(d, 0.5, out=half)
    np.copyto(half, np.nan, where=d >= int_inf("int32"))
    fields["half"] = half
    return fields


#: Half the hop count as float64, NaN where unreached: a ``finalize`` that the GPU engine
#: may run on the device, reading a field that is not an output and replacing the output
#: by a new array of another dtype.
HalfHops = hop_count("half_hops", _half, finalize_on_device=True, depth_output=False,
                     extra={"half": gs.NodeField("float32", init=0.0)})


USER_ALGORITHMS = [WidestPath, Hops64, ReachBits, Dist64, MaxLabel]
NODE_RUNS = NodeRuns
HALF_HOPS = HalfHops

#: The configurations the compile and GPU suites run the user algorithms under: one per
#: launch mode and direction.
USER_CONFIGS = [
    {},
    {"launch": "persistent", "load_balance": "twc", "worklist": "bitmap"},
    {"direction": "pull", "direction.group": 8, "driving": "topology"},
    {"direction": "direction_optimizing", "worklist": "atomic", "worklist.dedup": True,
     "launch": "cuda_graph"},
    {"driving": "temporal", "load_balance": "thread", "worklist": "atomic"},
]
