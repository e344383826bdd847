"""Thread, warp or block per node by degree, with deferred outliers."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import Buffer, IntRange, LoadBalanceStrategy, Phase


class TwcLoadBalancer(LoadBalanceStrategy):
    """TWC: each block sorts a tile of active nodes by degree into three bins in shared
    memory and expands them with the whole block, one warp, or one thread per node;
    nodes of at least ``outlier_threshold`` edges are deferred to a side queue that the
    whole grid expands in a phase of its own.

    The CTA+Warp+Scan scheme of Merrill, Garland & Grimshaw, "Scalable GPU graph
    traversal" (PPoPP 2012, §4), Gunrock's TWC advance (Wang et al., PPoPP 2016), and
    the deferred outliers of Hong et al. (PPoPP 2011, §4.3). Wins on power-law graphs,
    where one hub would otherwise serialise a warp or a block; on even, small degrees
    the classification is pure overhead. Thresholds are runtime arguments: tuning them
    never recompiles.
    """

    name = "twc"
    params = {
        "warp_threshold": IntRange(2, 256, 16, log=True),
        "block_threshold": IntRange(32, 8192, 256, log=True),
        "outlier_threshold": IntRange(1024, 1 << 24, 32768, log=True),
    }
    cuda_files = ("twc.cuh",)

    def threads_per_item(self) -> int:
        return 1

    def runtime_args(self, graph, config):
        return {k: ("int", int(self.options[k])) for k in self.params}

    def shared_bytes(self, spec, config):
        b = int(config["block_size"])
        warps = b // 32
        return 4 * b + 4 * 32 * warps + 4 + 4 * warps  # bins, counts

    def buffers(self, spec, graph, config):
        n = 0 if graph is None else graph.n_nodes
        # two step counters (by parity) and the blocks that have read the current one
        return [Buffer("side", "gs_vid", n), Buffer("side_count", "unsigned", 3, zero=True)]

    def phases(self, spec, config):
        return super().phases(spec, config) + [Phase("outliers", 25, items="queued",
                                                        runs_in="operators")]


@hookimpl
def gswitch_strategies():
    return [TwcLoadBalancer]
