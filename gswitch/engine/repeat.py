"""A run replayed: what the last run of a plan set up, reused by the next call.

Much of a call on a resident graph is host work around one kernel: a 4-node BFS runs
about 15 us on the device in a call of about 110 us, and each stage of a staged
algorithm on a large graph (Afforest's two) pays a few hundred microseconds to build
its :class:`~gswitch.engine.context.LaunchContext`, bind its buffers, write the
parameter block and go through the launch strategy's loop. When a run

1. launched its whole loop as one kernel
   (:attr:`~gswitch.strategy.LaunchStrategy.repeat_kernel`) and read the control
   block once, with the head of its trace (and its fields, where they are small),
2. overflowed nothing, and grew or replaced no buffer and no runtime argument,
3. had no timer, progress callback or deadline,

then the next run of the same plan differs only in its start ids (on the host, on
the device, or every node), initial fields and parameters, as long as the graph's
pooled buffers and both core blocks are still the ones it used and hold its start
ids. :class:`Repeat` keeps the rest, in the
resident graph's ``repeats`` under the plan's key (a record never refers back to the
resident, so a graph's device arrays go as soon as the graph does). A replay writes
what differs with the engine's own :meth:`~gswitch.engine.gpu.GpuEngine.write_inputs`
on the recorded context, issues the same launch and the same first read, and hands the
context back: the results come back as for any run. A replay that overflows gives up:
the engine runs the call again from the start by the usual path, which grows the
worklist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .memory import _D2H, _DONE, _IT, _MODE, _PULL, _slot

if TYPE_CHECKING:
    from .context import LaunchContext
    from .memory import _Resident
    from .plan import _Plan

__all__ = ["Repeat"]


class Repeat:
    """What a replay of a plan's last run reuses (see the module's text).

    Build it with :meth:`after` once a run is over; :meth:`run` replays it.
    """

    __slots__ = ("ctx", "plan", "core", "host", "pool", "zero", "fptr", "grid")

    def __init__(self, ctx: LaunchContext, plan: _Plan, pool: list[tuple[tuple, Any]],
                 zero: list[tuple[int, int]], fptr: int, grid: int) -> None:
        self.ctx, self.plan = ctx, plan
        self.core, self.host = ctx.core, ctx.core_host
        #: the pooled buffers bound, and the (address, bytes) of those zeroed every run
        self.pool, self.zero = pool, zero
        #: the launch strategy's kernel (driver handle) and its grid
        self.fptr, self.grid = fptr, grid

    @classmethod
    def after(cls, ctx: LaunchContext, plan: _Plan) -> Repeat | None:
        """The record of the run ``ctx`` of ``plan`` that just ended, or ``None`` where a
        replay could not redo it.
        """
        kernel = ctx.strategies["launch"].repeat_kernel
        if (kernel is None or ctx._first_read is None or ctx.overflows
                or ctx.grid_used is None or ctx.capped or not ctx.done
                or ctx.args != plan.args or ctx.progress is not None
                or ctx.deadline_s is not None or ctx._labels is not None):
            return None
        pool, zero = [], []
        for axis, name, key, _dt, _size, zeroed, member in plan.buffers:
            arr = ctx.buffers[(axis, name)]
            if ctx.res.pool.get(key) is not arr or plan.bound(member) != arr.data.ptr:
                return None  # grown or replaced during the run
            pool.append((key, arr))
            if zeroed:
                zero.append((arr.data.ptr, arr.nbytes))
        rec = cls(ctx, plan, pool, zero, ctx._function_ptr(kernel), ctx.grid_used)
        # the resident keeps the record: a context that kept the resident too would make
        # a cycle, and the graph's device arrays would wait for the collector
        ctx.res = None
        return rec

    def usable(self, engine: Any, res: _Resident, n_ids: int) -> bool:
        """Whether the recorded buffers and blocks are still those of the resident graph
        ``res`` and of the engine, and hold ``n_ids`` start ids (0: every node).
        """
        if (engine._core_host is not self.host or res._core is not self.core
                or self.core.cap < n_ids or self.host.cap < n_ids):
            return False
        pool = res.pool
        for key, arr in self.pool:
            if pool.get(key) is not arr:
                return False
        return True

    def run(self, engine: Any, res: _Resident, params: dict[str, Any], sources: Any,
            n_start: int, max_it: int, fields_in: dict[str, Any] | None = None
            ) -> LaunchContext | None:
        """Replay the run on the resident graph ``res`` for new ``sources`` (``n_start``
        ids on the host or the device, or ``None``: every node), ``params`` and
        ``fields_in``;
        the context, its control block and first read in, ready for its results to be
        taken; or ``None`` (nothing lost) when the record no longer applies or the
        replay overflowed: run the call by the usual path then.
        """
        if not self.usable(engine, res, 0 if sources is None else n_start):
            return None
        ctx = self.ctx
        ctx.res = res  # for the seeding and the fill, for this replay only
        try:
            return self._replay(engine, params, sources, n_start, max_it, fields_in)
        finally:
            ctx.res = None

    def _replay(self, engine: Any, params: dict[str, Any], sources: Any, n_start: int,
                max_it: int, fields_in: dict[str, Any] | None) -> LaunchContext | None:
        ctx, plan = self.ctx, self.plan
        rt, sp = engine.runtime, engine.stream.ptr
        ctx.max_it = max_it
        ctx.it = ctx.overflows = ctx.polled_reads = 0
        ctx.args = dict(plan.args)  # a seeding may change them (a larger start set)
        for ptr, nbytes in self.zero:
            rt.memsetAsync(ptr, 0, nbytes, sp)
        engine.write_inputs(ctx, plan, params, sources, n_start, fields_in)
        ctx.launch_function(self.fptr, self.grid)
        assert ctx._first_read is not None
        ctx._early = ctx._first_read
        for dst, src, nbytes in ctx._first_read:
            rt.memcpyAsync(dst, src, nbytes, _D2H, sp)
        # the run's device outputs, behind its launch; where they stay on the device the
        # host waits for the read only
        mark = engine.outputs_before_wait(ctx)
        if mark is None:
            rt.streamSynchronize(sp)
            ctx._synced_at = engine.work
        else:
            rt.eventSynchronize(mark.ptr)
        ctx._state_in_flight = False
        ctx._early_read_at = ctx._ctl_read_at = engine.work
        h = ctx.ctl_host
        it = int(h[_IT])
        if it > 0 and h[_slot(it - 1) + 2] & 1:  # overflowed: the usual path grows it
            ctx.device_time_s()  # the events go back to their pool
            return None
        ctx.it, ctx.mode, ctx.pull = it, int(h[_MODE]), int(h[_PULL])
        ctx.done, ctx.capped = bool(h[_DONE]), int(h[_DONE]) == 2
        return ctx

