"""Pull along in-edges."""

from __future__ import annotations

from gswitch import hookimpl

from ._pull import PullCapable


class PullDirection(PullCapable):
    """Pull: every node gathers from its in-neighbours that are active, combines their
    values locally and applies the result to itself once (one atomic per node instead
    of one per edge).

    Bottom-up traversal of Beamer, Asanović & Patterson, "Direction-optimizing
    breadth-first search" (SC 2012). On the GPU it walks a lazily uploaded reverse CSR
    with ``group`` lanes per node and asks the worklist whether an in-neighbour is
    active (a bitmap worklist answers directly; for a queue the items are marked in a
    bitmap first). Wins when the frontier is a large part of the graph (PageRank,
    components early on), where push would hammer the same destinations with atomics.
    Needs an operator with a pull form: one min/max/add/or reduction into ``e.dst``.
    """

    name = "pull"
    cuda_files = ("pull.cuh", "pull_phase.cuh")

    def initial_pull(self, n_active: int, n_nodes: int) -> bool:
        return True

    def pull(self, step_mode: str, n_active: int, n_nodes: int) -> bool:
        return True


@hookimpl
def gswitch_strategies():
    return [PullDirection]
