"""Topology-driven over a fixed set: the start set, every step, until nothing changes."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import DrivingStrategy, StepMode

#: The start set's nodes every step; activations only counted.
SUBSET = StepMode("subset", items="worklist", pushes=False, keeps=True)


class SubsetDriving(DrivingStrategy):
    """Subset: every step runs the operators on the same nodes, the start set, and the
    run ends after a step in which nothing changed.

    Topology-driven execution (Nasre, Burtscher & Pingali, IPDPS 2013, §II) restricted
    to part of the graph: Afforest's finishing phase (Sutton, Ben-Nun & Barak, IPDPS
    2018) skips the nodes of the largest component, whose edges a sampling phase has
    already made redundant, and sweeps the rest to a fixpoint. Wins when a stage knows
    which nodes can still change; a formulation must declare it in ``supports``,
    because a node outside the set never runs again whatever it is offered.
    """

    name = "subset"
    cuda_files = ("subset.cuh",)
    modes = (SUBSET,)

    def check(self, algorithm, graph, config, backend):
        if "subset" not in algorithm.supports.get("driving", ()):
            return (f"driving subset runs only the start set; {algorithm.label} does not "
                    "declare it in supports (its fixpoint needs other nodes too)")
        return None

    def initial_mode(self, n_active, n_nodes):
        return "subset"

    def next_mode(self, mode, n_next, n_nodes):
        return "subset"


@hookimpl
def gswitch_strategies():
    return [SubsetDriving]
