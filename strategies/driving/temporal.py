"""Temporal hybrid: switch between data- and topology-driven steps by frontier size."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import DrivingStrategy, FloatRange

from ._modes import DATA, TOPOLOGY, TRANSITION


class TemporalHybridDriving(DrivingStrategy):
    """Temporal hybrid: run data-driven while the worklist is small and topology-driven
    while more than ``threshold * n_nodes`` nodes are active, switching both ways.

    Nasre, Burtscher & Pingali (IPDPS 2013, §V-A, "hybrid"). Leaving topology mode
    needs a worklist again, so the first step after it is a *transition* sweep that
    visits every node and pushes what it activates. Wins on graphs whose frontier
    grows to a large fraction of the nodes for a few steps (power-law BFS, components)
    and is small otherwise.
    """

    name = "temporal"
    params = {"threshold": FloatRange(0.0005, 1.0, 0.05, log=True)}
    cuda_files = ("temporal.cuh",)
    modes = (DATA, TOPOLOGY, TRANSITION)

    def runtime_args(self, graph, config):
        return {"threshold": ("float", float(self.options["threshold"]))}

    def _limit(self, n_nodes: int) -> float:
        return float(self.options["threshold"]) * n_nodes

    def initial_mode(self, n_active: int, n_nodes: int) -> str:
        return "topology" if n_active > self._limit(n_nodes) else "data"

    def next_mode(self, mode: str, n_next: int, n_nodes: int) -> str:
        if mode == "topology":
            return "transition" if n_next < self._limit(n_nodes) else "topology"
        return "topology" if n_next > self._limit(n_nodes) else "data"


@hookimpl
def gswitch_strategies():
    return [TemporalHybridDriving]
