"""Data-driven execution: only worklist nodes are active."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import DrivingStrategy

from ._modes import DATA


class DataDriving(DrivingStrategy):
    """Data-driven: a step processes exactly the nodes activated by the previous step;
    the run ends when the worklist is empty.

    Nasre, Burtscher & Pingali, "Data-driven versus topology-driven irregular
    computations on GPUs" (IPDPS 2013, §II). Work-efficient: wins whenever the
    active set is a small fraction of the graph (BFS/SSSP on high-diameter graphs),
    at the cost of maintaining a worklist.
    """

    name = "data"
    cuda_files = ("data.cuh",)
    modes = (DATA,)

    def initial_mode(self, n_active: int, n_nodes: int) -> str:
        return "data"

    def next_mode(self, mode: str, n_next: int, n_nodes: int) -> str:
        return "data"


@hookimpl
def gswitch_strategies():
    return [DataDriving]
