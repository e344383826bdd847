"""Beamer's direction-optimizing switch between push and pull."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import FloatRange

from ._pull import PullCapable


class DirectionOptimizing(PullCapable):
    """Direction-optimizing: push while the frontier is small, pull once its out-edges
    exceed the unvisited edges divided by ``alpha``, push again once it shrinks below
    ``n / beta`` nodes; decided on the device after every step from counters that
    the activations reduce.

    Beamer, Asanović & Patterson, "Direction-optimizing breadth-first search" (SC
    2012, §3, alpha = 15 and beta = 18 there). With a level-synchronous algorithm
    (``first_hit_final``, e.g. BFS) and data-driven steps, a pull step checks only
    unvisited nodes and stops at the first active parent, which skips most edges of
    the big middle steps of a low-diameter graph. ``alpha`` and ``beta`` are runtime
    arguments.
    """

    name = "direction_optimizing"
    cuda_files = ("direction_optimizing.cuh", "pull_phase.cuh", "pull_edges.cuh")
    params = {
        **PullCapable.params,
        "alpha": FloatRange(0.5, 200.0, 15.0, log=True),
        "beta": FloatRange(1.0, 500.0, 18.0, log=True),
    }
    counts_frontier_edges = True

    def runtime_args(self, graph, config):
        return {"alpha": ("float", float(self.options["alpha"])),
                "beta": ("float", float(self.options["beta"]))}

    def pull(self, step_mode: str, n_active: int, n_nodes: int) -> bool:
        # the CPU engine has no edge counters; the node-count rule of the second switch
        return n_active * float(self.options["beta"]) >= n_nodes


@hookimpl
def gswitch_strategies():
    return [DirectionOptimizing]
