"""Topology-driven execution: every node, every step."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import Categorical, DrivingStrategy

from ._local import UNROLL_PARAMS, unroll_defines, unroll_problem
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

    Kernel unrolling (§IV, ``unroll`` k > 0, compile-time): a thread that activates a
    node keeps it in a bounded per-thread queue of k slots and, after its share of the
    sweep, processes the queued nodes and what they activate in turn, at most k nodes,
    within the same step; an activation that finds the queue full, or is left when the
    k are spent, is counted for the next sweep as without unrolling. A wave then moves
    up to k + 1 hops a sweep instead of one, which cuts the sweeps of high-diameter
    graphs (roads, meshes) at the price of serial work per thread. It needs a fixed
    point that does not depend on the order of updates (``check`` refuses otherwise:
    min/max/or reductions into ``e.dst``, no node operator), push, and atomic updates
    (``atomic_free`` could lose an update the queue already consumed). The CPU engine
    honours it as k passes inside the sweep over what the previous pass activated
    (bounded in depth, not per thread), so answers and the drop in sweeps are testable
    there. The GPU queue passes the GPU suite (``tests/test_spatial.py``), and the tuner's
    GPU search offers ``unroll``.
    """

    name = "topology"
    params = {"atomic_free": Categorical((False, True), False, compile_time=True),
              **UNROLL_PARAMS}
    # the GPU suite has not run it yet: the tuner's GPU search leaves it out
    unvalidated_params = ("unroll_lanes_log2",)
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
        if int(self.options.get("unroll", 0)):
            if self.options.get("atomic_free"):
                return ("unroll needs atomic updates (a plain store may lose an update "
                        "its queue already consumed); set driving.atomic_free=false")
            return unroll_problem(algorithm, config, "topology")
        return None

    def pushes_only(self) -> bool:
        # unrolling queues the targets of pushes (unroll_problem)
        return int(self.options.get("unroll", 0)) > 0

    def initial_mode(self, n_active: int, n_nodes: int) -> str:
        return "topology"

    def next_mode(self, mode: str, n_next: int, n_nodes: int) -> str:
        return "topology"

    def local_rounds(self, graph, mode):
        k = int(self.options.get("unroll", 0))
        return (None, k) if k else None

    def atomic_free(self) -> bool:
        return bool(self.options.get("atomic_free"))

    def defines(self) -> dict[str, str]:
        return {"GS_ATOMIC_FREE": "1" if self.atomic_free() else "0",
                **unroll_defines(self.options)}


@hookimpl
def gswitch_strategies():
    return [TopologyDriving]
