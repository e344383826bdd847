"""One thread per active node."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import LoadBalanceStrategy


class ThreadLoadBalancer(LoadBalanceStrategy):
    """Thread mapping: each thread takes one active node and walks its edges serially.

    The static "thread-per-vertex" mapping of Harish & Narayanan (HiPC 2007) and the
    Serial scheduler of IrGL (Pai & Pingali 2016, §5). Best on graphs of small, even
    degree (road networks, meshes) where the serial loop is short; on power-law
    graphs one hub stalls its whole warp (the imbalance virtual warps address).
    """

    name = "thread"
    cuda_files = ("thread.cuh",)


@hookimpl
def gswitch_strategies():
    return [ThreadLoadBalancer]
