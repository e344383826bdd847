"""Virtual warps: a group of lanes per active node."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import Categorical, LoadBalanceStrategy


class VirtualWarpLoadBalancer(LoadBalanceStrategy):
    """Virtual-warp mapping: ``size`` consecutive lanes share one active node and stride
    over its edges together.

    From Hong, Kim, Oguntebi & Olukotun, "Accelerating CUDA graph algorithms at
    maximum warp" (PPoPP 2011, §4.1). A size near the typical degree keeps lanes busy:
    large sizes (16, 32) win on power-law graphs with many high-degree nodes, small
    sizes (2, 4) on meshes and road networks where a big group would idle.
    """

    name = "virtual_warp"
    params = {"size": Categorical((2, 4, 8, 16, 32), 8, compile_time=True)}
    cuda_files = ("virtual_warp.cuh",)

    def defines(self) -> dict[str, str]:
        return {"GS_VW_SIZE": str(int(self.options["size"]))}

    def threads_per_item(self) -> int:
        return int(self.options["size"])


@hookimpl
def gswitch_strategies():
    return [VirtualWarpLoadBalancer]
