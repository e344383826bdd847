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
    With ``gather=edges`` (the default) steps that sweep every node are cut into
    merge-path tiles of ``ipt`` items a thread instead (Merrill & Garland, SC 2016): the
    pull phase of PageRank power_pull on an H100 took 600 instead of 672 us a step on
    RMAT-22 and 623 instead of 853 us on uniform 2^22, about one cuSPARSE SpMV
    (``benchmarks/results/h100_s23pull_r1_pull_gather.log``). The tiles read the values
    their in-edges offer through L1 where the operator never updates them during the
    sweep, so a hub's value costs one L2 request per multiprocessor instead of one per
    warp on a single L2 slice: on a Zipf bipartite graph of 2^20 nodes the step's pull
    took 151 instead of 243 us on an H200, where cuSPARSE's SpMV took 133 us
    (``benchmarks/RESULTS.md``).
    """

    name = "pull"
    cuda_files = ("pull.cuh", "pull_phase.cuh", "pull_edges.cuh")

    def initial_pull(self, n_active: int, n_nodes: int) -> bool:
        return True

    def pull(self, step_mode: str, n_active: int, n_nodes: int) -> bool:
        return True


@hookimpl
def gswitch_strategies():
    return [PullDirection]
