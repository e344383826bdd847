"""Virtual warps whose width follows the frontier, chosen on the device every step."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import IntRange, LoadBalanceStrategy


class DynamicVirtualWarpLoadBalancer(LoadBalanceStrategy):
    """Dynamic virtual warps: every step, each active node gets a group of ``w`` lanes,
    ``w`` the largest power of two up to ``2 ** max_log2`` with ``n_items * w`` no more
    than the grid's threads; small frontiers get wide groups, large ones narrow groups.

    The dynamic virtual-warp mapping of the GPU graph survey's semi-dynamic mappings
    (Busato & Bombieri, "BFS-4K", IEEE TPDS 2015) after Hong et al.'s virtual
    warps (PPoPP 2011, §4.1). The width is computed on the device from the step's
    item count, so it changes without recompiling or a host round trip. Wins over a
    fixed virtual warp when frontier sizes swing by orders of magnitude (BFS on
    power-law graphs); loses a little to the right fixed width on steady frontiers.
    ``max_log2`` is a runtime argument.
    """

    name = "dynamic_virtual_warp"
    params = {"max_log2": IntRange(0, 5, 5)}
    cuda_files = ("dynamic_virtual_warp.cuh",)

    def runtime_args(self, graph, config):
        return {"max_log2": ("int", int(self.options["max_log2"]))}

    def threads_per_item(self) -> int:
        # the host loop offers the widest group; the device narrows it when capped
        return 1 << int(self.options["max_log2"])


@hookimpl
def gswitch_strategies():
    return [DynamicVirtualWarpLoadBalancer]
