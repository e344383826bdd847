"""The frontier's edges split evenly over the grid by a degree prefix sum."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import Buffer, IntRange, LoadBalanceStrategy, Phase


class EdgeBalancedLoadBalancer(LoadBalanceStrategy):
    """Edge-balanced mapping: a phase scans the degrees of the active nodes (a block
    scan per tile, then a scan of the tile sums), and each thread binary-searches the
    node holding its first edge and walks an equal share of the frontier's edges,
    crossing node boundaries as it goes.

    The two-phase / merge-path search of the GPU graph survey's dynamic mappings
    (Merrill, Garland & Grimshaw, PPoPP 2012, §4; Davidson et al., "Work-efficient
    parallel GPU methods for single-source shortest paths", IPDPS 2014; Gunrock's
    load-balanced partitioning, Wang et al., PPoPP 2016). Every thread gets the same
    number of edges whatever the degree distribution, so it wins on highly skewed
    graphs; the two scan phases (two barriers per step) cost more than they save on
    even, small degrees and tiny frontiers.

    The partition holds the step's first ``n`` items (``n`` nodes); a worklist that
    queues duplicates may hold more, and those are expanded one thread per node.
    ``threads_per_item`` sizes the host loop's grid (more threads, shorter shares).
    """

    name = "edge_balanced"
    params = {"threads_per_item": IntRange(1, 32, 1, log=True)}
    cuda_files = ("edge_balanced.cuh",)

    @staticmethod
    def _capacity(graph) -> int:
        return max(1, 0 if graph is None else graph.n_nodes)

    def threads_per_item(self) -> int:
        return int(self.options["threads_per_item"])

    def runtime_args(self, graph, config):
        return {"cap": ("unsigned", self._capacity(graph))}

    def buffers(self, spec, graph, config):
        cap = self._capacity(graph)
        tiles = -(-cap // int(config["block_size"]))
        return [Buffer("offs", "unsigned long long", cap),
                Buffer("tiles", "unsigned long long", tiles),
                Buffer("total", "unsigned long long", 1)]

    def phases(self, spec, config):
        return [Phase("eb_degrees", 16, "active", direction="push", runs_in="operators"),
                Phase("eb_tiles", 17, "active", direction="push", runs_in="operators"),
                *super().phases(spec, config)]


@hookimpl
def gswitch_strategies():
    return [EdgeBalancedLoadBalancer]
