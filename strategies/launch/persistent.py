"""Outlined iteration loop: one cooperative kernel with grid-wide barriers."""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import IntRange, LaunchStrategy


class PersistentLaunch(LaunchStrategy):
    """Persistent kernel: the whole iteration loop runs inside one cooperative launch,
    the phases of a step separated by grid-wide barriers.

    Iteration outlining from Pai & Pingali, IrGL (OOPSLA 2016, §4.1). The grid is sized
    from the occupancy API so that every block is resident (``blocks_per_sm`` caps it;
    0 = as many as fit); a configuration that cannot be co-resident is refused, never
    launched. The default is one block per multiprocessor: the grid barrier's cost
    grows with the number of blocks, and the tuner may raise it for heavy steps. Fewer
    blocks than multiprocessors do not pay even where every step is a thin frontier:
    on the 2048x2048 road grid (4,095 BFS levels of at most 2,048 nodes) a grid capped
    at 64 blocks tied the uncapped one (12.5 against 12.6 ms) and 16 blocks took 20.7 ms;
    SSSP by priority went from 40.6 to 55.5 ms at 64 blocks (H200, same run,
    ``benchmarks/results/h200_s42_road_bfs_cap.log``, ``..._sssp_cap.log``).
    Removes the per-step launch and read-back, so it wins on high-diameter graphs with
    many tiny steps; a fixed grid can underuse the GPU on huge frontiers. The deadline
    is checked against the device clock every step.
    """

    name = "persistent"
    params = {"blocks_per_sm": IntRange(0, 32, 1)}
    cooperative = True
    #: The first read of the control block comes once the whole loop ran on the device,
    #: so the engine reads small results back with it (one round trip instead of two).
    results_with_first_read = True
    #: drive launches this once and reads the control block (a small run may be replayed)
    repeat_kernel = "gs_persistent_kernel"
    cuda_files = ("persistent.cuh",)
    kernels = ("gs_persistent_kernel",)

    def cooperative_blocks_per_sm(self) -> int:
        return int(self.options["blocks_per_sm"])

    def drive(self, ctx) -> None:
        grid = ctx.cooperative_grid("gs_persistent_kernel")
        ctx.grid_used = grid
        while True:
            ctx.launch_kernel("gs_persistent_kernel", grid, ())
            ctx.sync_state(last=True)  # the loop is usually over by its first read
            ctx.report()
            if ctx.overflowed(ctx.it - 1):
                # an overflowing step always pushed something, so it never ends a run
                ctx.grow(ctx.it - 1)
                if not ctx.done and ctx.it < ctx.max_it:
                    ctx.check_deadline()
                    continue
            ctx.check_deadline()
            return


@hookimpl
def gswitch_strategies():
    return [PersistentLaunch]
