"""Data-driven execution: only worklist nodes are active."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import DrivingStrategy

from ._local import UNROLL_PARAMS, unroll_defines, unroll_problem
from ._modes import DATA


class DataDriving(DrivingStrategy):
    """Data-driven: a step processes exactly the nodes activated by the previous step;
    the run ends when the worklist is empty.

    Nasre, Burtscher & Pingali, "Data-driven versus topology-driven irregular
    computations on GPUs" (IPDPS 2013, §II). Work-efficient: wins whenever the
    active set is a small fraction of the graph (BFS/SSSP on high-diameter graphs),
    at the cost of maintaining a worklist.

    Kernel unrolling (``unroll`` k > 0, compile-time; Nasre et al. §IV, as topology
    driving has it): a thread that activates a node keeps it in a per-thread queue of k
    slots instead of pushing it, and after its share of the step processes the queued
    nodes, last queued first, and what they activate, at most k nodes; what is left is
    pushed for the next step. A wave then runs up to k + 1 hops ahead per step, and a
    step costs a grid barrier (persistent) or a launch (host loop), so high-diameter
    graphs need fewer steps. The price is serial work per thread and, where a wave runs
    ahead along a path that is not the shortest, updates that are later improved (the
    operator is order-free, so the answer is the same). ``check`` refuses it as topology
    does: push only, min/max/or reductions into ``e.dst``, no node operator. The CPU
    engine honours it as k passes inside the step over what the previous pass activated,
    so answers and the drop in steps are testable there. ``2 ** unroll_lanes_log2`` lanes of a
    warp walk a queued node's edges together (0: a thread alone, as Nasre et al.).

    Where it wins: where a step is dear. BFS on the 2048x2048 road grid with the host
    loop took 101.4 ms a call (52.5 ms device, 4,095 steps) and 19.4 ms (14.6 ms, 313
    steps) with ``unroll=16, unroll_lanes_log2=2``. Under the persistent launch, whose step is a
    1 us grid barrier, it does not: the tuned configuration took 11.05 ms device, with
    ``unroll=4, unroll_lanes_log2=2`` 10.97 ms (858 steps), with k = 8 or 16 11.4 and 13.2 ms;
    a thread walking alone (``unroll_lanes_log2=0``) 13.7 to 15.0 ms, since a queued node's
    edges are then a chain of dependent loads. On the clique chain (31 activations per
    node) it is far slower than spatial (1,258 ms against 87 ms). H200,
    ``benchmarks/results/h200_s38_road_unroll_lanes.log`` and ``..._thread.log``.
    """

    name = "data"
    params = UNROLL_PARAMS
    # the GPU suite has not run them yet: the tuner's GPU search leaves them out
    unvalidated_params = ("unroll", "unroll_lanes_log2")
    cuda_files = ("data.cuh",)
    modes = (DATA,)

    def check(self, algorithm, graph, config, backend):
        if int(self.options.get("unroll", 0)):
            return unroll_problem(algorithm, config, "data")
        return None

    def pushes_only(self) -> bool:
        # unrolling queues the targets of pushes (unroll_problem)
        return int(self.options.get("unroll", 0)) > 0

    def initial_mode(self, n_active: int, n_nodes: int) -> str:
        return "data"

    def next_mode(self, mode: str, n_next: int, n_nodes: int) -> str:
        return "data"

    def local_rounds(self, graph, mode):
        k = int(self.options.get("unroll", 0))
        return (None, k) if k else None

    def defines(self) -> dict[str, str]:
        return unroll_defines(self.options)


@hookimpl
def gswitch_strategies():
    return [DataDriving]
