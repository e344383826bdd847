"""Topology-driven execution: every node, every step."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import Categorical, DrivingStrategy

from ._modes import TOPOLOGY


class TopologyDriving(DrivingStrategy):
    """Topology-driven: every node runs the operator in every step; the run ends after
    a step in which nothing changed.

    Nasre, Burtscher & Pingali (IPDPS 2013, §II and §IV-A). No worklist at all, perfect
    coalescing of the node loop; wins when most nodes are active anyway (components
    and PageRank early on, low-diameter graphs). With ``atomic_free`` a monotone
    reduction (min/max/or) is applied with a plain read-compare-store: a lost update
    is repaired by the next sweep, which offers the value again (§IV-A), so the
    atomics disappear at the price of possibly one more sweep.
    """

    name = "topology"
    params = {"atomic_free": Categorical((False, True), False, compile_time=True)}
    cuda_files = ("topology.cuh",)
    modes = (TOPOLOGY,)

    def check(self, algorithm, graph, config, backend):
        if self.options.get("atomic_free"):
            bad = [k.name for k in algorithm.edge.activating if not k.monotone]
            if bad:
                return (f"atomic_free needs monotone reductions, but {algorithm.name} uses "
                        f"reduce_{bad[0]}; set driving.atomic_free=false")
            if algorithm.edge.raw is not None:
                return ("atomic_free cannot rewrite a raw CUDA operator; "
                        "set driving.atomic_free=false")
        return None

    def initial_mode(self, n_active: int, n_nodes: int) -> str:
        return "topology"

    def next_mode(self, mode: str, n_next: int, n_nodes: int) -> str:
        return "topology"

    def atomic_free(self) -> bool:
        return bool(self.options.get("atomic_free"))

    def defines(self) -> dict[str, str]:
        return {"GS_ATOMIC_FREE": "1" if self.atomic_free() else "0"}


@hookimpl
def gswitch_strategies():
    return [TopologyDriving]
