"""Host-driven iteration: one launch per phase per step."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import LaunchStrategy


class HostLoopLaunch(LaunchStrategy):
    """Host loop with variable kernel configuration: the host launches each phase of
    each step and sizes its grid from the step's items, then reads the control block,
    which the step's deciding thread writes into page-locked host memory for the host
    to poll (:attr:`~gswitch.strategy.LaunchStrategy.polls_control`).

    Nasre, Burtscher & Pingali, "Atomic-free irregular computations on GPUs"
    (GPGPU 2013, §III-F). Every step costs a launch per phase and the wait for its
    decision (about 10 us on an H100 with the launch, 16 us with a read-back instead of
    the poll), negligible when steps are long (big frontiers, low diameter); loses to the
    persistent kernel when there are thousands of short steps (road networks).
    """

    name = "host_loop"
    polls_control = True

    def drive(self, ctx) -> None:
        while not ctx.done and ctx.it < ctx.max_it:
            it = ctx.it
            ctx.launch_step()
            ctx.sync_state()
            if ctx.overflowed(it):
                ctx.grow(it)
                ctx.sync_state()
            ctx.report()
            ctx.check_deadline()


@hookimpl
def gswitch_strategies():
    return [HostLoopLaunch]
