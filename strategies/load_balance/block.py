"""One block per active node."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import LoadBalanceStrategy, Phase


class BlockLoadBalancer(LoadBalanceStrategy):
    """Block mapping: the whole thread block takes one active node and strides over its
    edges; blocks stride over the active nodes.

    The Threadblock scheduler of IrGL (Pai & Pingali, OOPSLA 2016, §5) and the CTA
    expansion of Merrill, Garland & Grimshaw (PPoPP 2012, §4) applied to every node.
    Wins when nearly every active node has hundreds of edges or more (dense graphs,
    the hub-only frontiers of late power-law steps); on sparse graphs most of the block
    idles, so it loses to thread or virtual-warp mappings there.
    """

    name = "block"
    cuda_files = ("block.cuh",)

    def phases(self, spec, config):
        return [Phase("expand", 20, "active", direction="push",
                      threads_per_item=int(config["block_size"]), runs_in="operators")]


@hookimpl
def gswitch_strategies():
    return [BlockLoadBalancer]
