"""Host-driven iteration: one launch per phase per step."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import LaunchStrategy


class HostLoopLaunch(LaunchStrategy):
    """Host loop with variable kernel configuration: the host launches each step and
    sizes its grid from the current worklist size.

    Nasre, Burtscher & Pingali, "Atomic-free irregular computations on GPUs"
    (GPGPU 2013, §III-F). Every step costs a launch and a 4-byte read-back (about
    20 us), negligible when steps are long (big frontiers, low diameter); loses to the
    persistent kernel when there are thousands of short steps (road networks, grids).
    """

    name = "host_loop"
    cuda_files = ("host_loop.cuh",)


@hookimpl
def gswitch_strategies():
    return [HostLoopLaunch]
