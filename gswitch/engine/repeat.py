"""A small run replayed: what the last run of a plan set up, reused by the next call.

A call on a small graph spends most of its time on the host: a 4-node BFS runs about
15 us on the device in a call of about 110 us, and most of the rest sets the run up
(a :class:`~gswitch.engine.context.LaunchContext`, buffers bound, the parameter block,
the launch strategy's loop) and reads its statistics. When a run

1. launched its whole loop as one kernel
   (:attr:`~gswitch.strategy.LaunchStrategy.repeat_kernel`),
2. ran on a graph so small that its fields came back with the first read of the
   control block (``_EVERY_READ_BYTES``), with its initial fields written on the host,
3. overflowed nothing, and grew or replaced no buffer and no runtime argument,

then the next run of the same plan differs only in its start ids, initial fields and
parameters, as long as the graph's pooled buffers and both core blocks are still the
ones it used. :class:`Repeat` keeps the rest, in the resident graph's ``repeats`` under
the plan's key (a record never refers back to the resident, so a graph's device arrays
go as soon as the graph does). A replay writes what differs into the
same page-locked staging, issues the same copies, the same seeding and the same launch,
and reads the same bytes back; the worklist's own ``seed`` still runs, on the recorded
context. A replay that overflows gives up: the engine runs the call again from the
start by the usual path, which grows the worklist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .memory import _CTL_ROOM, _D2H, _DONE, _H2D, _IT, _MODE, _PULL, _TRACE_CAP, _slot
from .plan import _EARLY_READ_STEPS

if TYPE_CHECKING:
    from ..result import Result
    from .context import LaunchContext
    from .memory import _Resident
    from .plan import _Plan

__all__ = ["Repeat"]

_U8 = np.dtype(np.uint8)


class Repeat:
    """What a replay of a plan's last run reuses (see the module's text).

    Build it with :meth:`after` once a run is over; :meth:`run` replays it.
    """

    __slots__ = ("ctx", "plan", "core", "host", "n_ids", "start", "pool", "zero", "lead",
                 "nbytes", "mode", "pull", "fptr", "grid")

    def __init__(self, ctx: LaunchContext, plan: _Plan, n_ids: int, start: Any,
                 pool: list[tuple[tuple, Any]], zero: list[tuple[int, int]], lead: int,
                 mode: int, pull: int, fptr: int, grid: int) -> None:
        self.ctx, self.plan, self.n_ids, self.start = ctx, plan, n_ids, start
        self.core, self.host = ctx.core, ctx.core_host
        self.pool, self.zero, self.lead = pool, zero, lead
        #: bytes of the one copy up: start ids, control block and initial fields
        self.nbytes = lead + 4 * _CTL_ROOM + plan.field_bytes
        self.mode, self.pull, self.fptr, self.grid = mode, pull, fptr, grid

    @classmethod
    def after(cls, engine: Any, ctx: LaunchContext, plan: _Plan, n_start: int,
              sources: Any) -> Repeat | None:
        """The record of the run ``ctx`` just ended (``n_start`` start ids, host
        ``sources`` or ``None`` for every node), or ``None`` where a replay could not
        redo it.
        """
        kernel = ctx.strategies["launch"].repeat_kernel
        if (kernel is None or not ctx._early_every or ctx.overflows or ctx.grid_used is None
                or ctx.capped or not ctx.done or ctx.args != plan.args
                or not (sources is None or isinstance(sources, np.ndarray))):
            return None
        pool, zero = [], []
        for axis, name, key, _dt, _size, zeroed, member in plan.buffers:
            arr = ctx.buffers[(axis, name)]
            if ctx.res.pool.get(key) is not arr or plan.bound(member) != arr.data.ptr:
                return None  # grown or replaced during the run
            pool.append((key, arr))
            if zeroed:
                zero.append((arr.data.ptr, arr.nbytes))
        n_ids = 0 if sources is None else n_start
        start = (engine._all_nodes(ctx.res, ctx.n_nodes) if sources is None
                 else ctx.core.start(n_ids))
        mode, pull = engine.initial_state(plan, ctx.n_nodes if sources is None else n_start,
                                          ctx.n_nodes)
        rec = cls(ctx, plan, n_ids, start, pool, zero, 4 * n_ids, mode, pull,
                  ctx._function_ptr(kernel), ctx.grid_used)
        # the resident keeps the record: a context that kept the resident too would make
        # a cycle, and the graph's device arrays would wait for the collector
        ctx.res = None
        return rec

    def usable(self, engine: Any, res: _Resident, n_ids: int) -> bool:
        """Whether the recorded buffers and blocks are still those of the resident graph
        ``res`` and of the engine, for a call with ``n_ids`` start ids on the host (0:
        every node).
        """
        if n_ids != self.n_ids or engine._core_host is not self.host:
            return False
        if res._core is not self.core:
            return False
        pool = res.pool
        for key, arr in self.pool:
            if pool.get(key) is not arr:
                return False
        return True

    def run(self, engine: Any, res: _Resident, params: dict[str, Any],
            sources: np.ndarray | None, n_start: int, max_it: int, stats: dict[str, Any],
            t_start: float) -> Result | None:
        """Replay the run on the resident graph ``res`` for new ``sources`` (``None``:
        every node) and ``params``; its :class:`~gswitch.result.Result`, or ``None``
        (nothing returned, nothing lost) when the records no longer apply or the replay
        overflowed: run the call by the usual path then.
        """
        n_ids = 0 if sources is None else n_start
        if not self.usable(engine, res, n_ids):
            return None
        self.ctx.res = res  # for the worklist's seeding, for this replay only
        try:
            return self._replay(engine, params, sources, n_start, max_it, stats, t_start)
        finally:
            self.ctx.res = None

    def _replay(self, engine: Any, params: dict[str, Any], sources: np.ndarray | None,
                n_start: int, max_it: int, stats: dict[str, Any], t_start: float
                ) -> Result | None:
        n_ids = 0 if sources is None else n_start
        ctx, plan, host = self.ctx, self.plan, self.host
        rt, sp = engine.runtime, engine.stream.ptr
        n = ctx.n_nodes
        # every copy from the staging below was waited for by the last call
        plan.spec.fill_fields(ctx.fields_host, params, sources)
        block, ctx._block_ptr = engine._pinned("core:state", _U8, plan.nbytes)
        block[:] = plan.template_bytes
        put = plan.put
        put(block, "max_it", max_it)
        put(block, "deadline_ns", 0)
        for name, member in plan.params:
            put(block, member, params[name])
        ctx._block = block
        h = host.ctl
        h.fill(0)
        h[_slot(-1)] = n if sources is None else n_start
        h[_MODE] = self.mode
        h[_PULL] = self.pull
        if n_ids:
            host.start(n_ids)[:] = sources
        for ptr, nbytes in self.zero:
            rt.memsetAsync(ptr, 0, nbytes, sp)
        rt.memcpyAsync(self.core.ctl_ptr - self.lead, host.ctl_ptr - self.lead, self.nbytes,
                       _H2D, sp)
        engine.work += 1
        ctx.max_it = max_it
        ctx.start_host = sources
        plan.strategies["worklist"].seed(ctx, self.start, sources is None)
        ctx.write_state()
        fptr, grid, b, drv = self.fptr, self.grid, ctx.block, engine.driver
        if grid == 1:  # one block is always co-resident (LaunchContext.launch_kernel)
            ctx._timed(lambda: drv.launchKernel(fptr, 1, 1, 1, b, 1, 1, 0, sp, 0, 0), "", False)
        else:
            ctx._timed(lambda: drv.launchCooperativeKernel(fptr, grid, 1, 1, b, 1, 1, 0, sp, 0),
                       "", False)
        for dst, src, nbytes in ctx._early:
            rt.memcpyAsync(dst, src, nbytes, _D2H, sp)
        rt.streamSynchronize(sp)
        ctx._state_in_flight = False
        ctx._early_read_at = ctx._ctl_read_at = ctx._synced_at = engine.work
        it = int(h[_IT])
        if it > 0 and h[_slot(it - 1) + 2] & 1:  # overflowed: the usual path grows it
            ctx.device_time_s()  # the events go back to their pool
            return None
        ctx.it, ctx.mode, ctx.pull = it, int(h[_MODE]), int(h[_PULL])
        ctx.done, ctx.capped = bool(h[_DONE]), int(h[_DONE]) == 2
        steps = min(it, _TRACE_CAP)
        if steps <= _EARLY_READ_STEPS:
            trace = ctx._early_trace[: 2 * steps]
        else:
            rt.memcpyAsync(host.trace_ptr, self.core.trace_ptr, 8 * steps, _D2H, sp)
            rt.streamSynchronize(sp)
            trace = host.trace[: 2 * steps]
        out = {name: np.array(v, copy=True) for name, v in ctx.fields_host.items()}
        stats["replayed"] = True
        return engine._finish(ctx, out, trace, stats, t_start)

