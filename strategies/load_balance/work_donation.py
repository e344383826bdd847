"""Threads with long edge lists donate chunks of edges to idle lanes of their block."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import IntRange, LoadBalanceStrategy


class WorkDonationLoadBalancer(LoadBalanceStrategy):
    """Work donation: each thread takes one active node, keeps its first ``chunk``
    edges and donates the rest, ``chunk`` edges at a time, to a donation box in shared
    memory; every thread walks its own edges and then takes donated chunks until the
    box is empty, so lanes with short lists pick up the work of long ones.

    The work donation of Tzeng, Patney & Owens, "Task management for irregular-parallel
    workloads on the GPU" (HPG 2010) and Nasre, Burtscher & Pingali's work chunking
    and donation (GPGPU 2013), with the per-block scope of Hong et al.'s dynamic
    workload distribution (PPoPP 2011). Wins on skewed degrees within a block's tile
    (a few hubs among many small nodes) without TWC's classification pass; a box that
    fills up leaves the rest to its owner, so one giant hub still serialises its block.
    ``chunk`` is a runtime argument.
    """

    name = "work_donation"
    params = {"chunk": IntRange(4, 4096, 32, log=True)}
    cuda_files = ("work_donation.cuh",)

    def shared_bytes(self, spec, config):
        return 8 * int(config["block_size"]) + 8  # the box's nodes and starts, two counters

    def runtime_args(self, graph, config):
        return {"chunk": ("int", int(self.options["chunk"]))}


@hookimpl
def gswitch_strategies():
    return [WorkDonationLoadBalancer]
