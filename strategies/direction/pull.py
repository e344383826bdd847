"""Pull along in-edges."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import DirectionStrategy


class PullDirection(DirectionStrategy):
    """Pull: every node gathers from its in-neighbours that are active and reduces
    locally, writing its own value once (no atomics on the destination).

    Bottom-up traversal of Beamer, Asanović & Patterson, "Direction-optimizing
    breadth-first search" (SC 2012). Wins when the frontier is a large part of the
    graph, where push would hammer the same destinations with atomics. Implemented on
    the CPU engine; the GPU lowering of pull is not available yet and the strategy
    says so when asked for it there.
    """

    name = "pull"
    backends = ("cpu",)

    def check(self, algorithm, graph, config, backend):
        if backend == "gpu":
            return "pull traversal is implemented on the cpu backend only; use direction=push"
        return None

    def pull(self, step_mode: str, n_active: int, n_nodes: int) -> bool:
        return True


@hookimpl
def gswitch_strategies():
    return [PullDirection]
