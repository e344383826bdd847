"""Warps fetch chunks of active nodes from a global counter."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import Buffer, IntRange, LoadBalanceStrategy


class DynamicChunksLoadBalancer(LoadBalanceStrategy):
    """Dynamic chunk fetching: each warp takes the next ``chunk`` active nodes from a
    global counter until none are left, and expands them cooperatively (the whole warp
    walks a node of 32 edges or more, a lane walks a smaller one).

    The dynamic workload distribution of Hong, Oguntebi & Olukotun, "Efficient parallel
    graph exploration on multi-core CPU and GPU" (PACT 2011) and the work chunking
    of Nasre, Burtscher & Pingali (GPGPU 2013). Wins when the cost of nodes is
    uneven in ways a static mapping cannot foresee (power-law graphs under a fixed,
    persistent grid): a warp that drew cheap nodes simply fetches more. Costs one
    atomic per chunk; tiny chunks contend on the counter, huge ones leave warps idle.
    ``chunk`` is a runtime argument.

    The counter resets itself: the last warp to leave a step's expansion (a second
    counter tells) zeroes both, so a step that skips the expansion (a pull step, a
    refill) leaves nothing stale behind.
    """

    name = "dynamic_chunks"
    params = {"chunk": IntRange(1, 4096, 128, log=True)}
    cuda_files = ("dynamic_chunks.cuh",)

    def runtime_args(self, graph, config):
        return {"chunk": ("int", int(self.options["chunk"]))}

    def buffers(self, spec, graph, config):
        return [Buffer("counters", "unsigned", 2, zero=True)]


@hookimpl
def gswitch_strategies():
    return [DynamicChunksLoadBalancer]
