"""Push along out-edges."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import DirectionStrategy


class PushDirection(DirectionStrategy):
    """Push: each active node updates its out-neighbours with atomic reductions.

    The default of every data-driven system (Gunrock "advance", IrGL). Work is
    proportional to the active nodes' out-degrees; wins whenever the frontier is a
    small part of the graph.
    """

    name = "push"
    cuda_files = ("push.cuh",)


@hookimpl
def gswitch_strategies():
    return [PushDirection]
