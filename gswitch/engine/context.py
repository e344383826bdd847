"""The launch context: the engine API a launch strategy's ``drive`` runs a loop with.

:class:`LaunchContext` is what :meth:`gswitch.strategy.LaunchStrategy.drive` receives
for one run: launch a kernel or the phases of a step, read and write the control
block, copy, grow the worklist, time launches with events, size grids (a cooperative
grid from the occupancy inputs the launch strategy declares), check the deadline and
report progress. The engine (:mod:`gswitch.engine.gpu`) builds it, fills its buffers
and parameter block, and reads the results back after ``drive`` returns. CuPy reaches
it through the engine, so importing this module needs no CuPy.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

import numpy as np

from ..algorithm import AlgorithmSpec
from ..config import Config
from ..errors import DeadlineExceeded
from ..graph import Graph
from ..strategy import Phase, StepMode
from .memory import (
    _CTL_WORDS,
    _D2D,
    _D2H,
    _DEADLINE,
    _DONE,
    _H2D,
    _IT,
    _MODE,
    _MODE_ID,
    _PULL,
    _CoreBlock,
    _EventPool,
    _Resident,
    _slot,
)
from .plan import _PackedInts, _Plan
from .timing import EVERY_PHASE, PhaseTimer

__all__ = ["LaunchContext"]

#: How long the host polls a step's decision in page-locked memory before it waits on
#: the stream instead (a long step then costs no busy host core)
_POLL_S = 1e-3


class EngineHandle(Protocol):
    """What a launch context uses of its engine (:class:`gswitch.engine.gpu.GpuEngine`):
    named here so that this module does not import the engine that builds it.
    """

    cp: Any  #: the CuPy module
    n_sm: int  #: multiprocessors of the device
    runtime: Any  #: ``cupy.cuda.runtime``
    driver: Any  #: ``cupy.cuda.driver``
    event_pool: _EventPool
    work: int  #: counts the engine's device work (reads are current until it moves)
    const_written: dict[int, bytes]  #: the last bytes written to each parameter block

    def core_host(self, n_start: int, field_bytes: int) -> _CoreBlock: ...

    def persistent_grid(self, kernel: Any, block: int, blocks_per_sm: int = 0) -> int: ...


class LaunchContext:
    """What a launch strategy's ``drive`` gets: the engine API of one run.

    Device work goes through these methods (launches, copies, control words, the
    parameter block), so the context knows whether its last read of the control block
    is still current: the engine skips a read-back that would return the same bytes.

    Attributes
    ----------
    it, mode, pull : int
        The next step to run, its mode word (the driving strategy's mode number in the
        low 4 bits, its state above) and direction.
    done : bool
        The run converged.
    n_nodes, max_it : int
        Graph size and iteration limit.
    options : dict
        The launch strategy's own options.
    """

    def __init__(self, engine: EngineHandle, plan: _Plan, config: Config, res: _Resident,
                 spec: AlgorithmSpec, graph: Graph, max_it: int, deadline_s: float | None,
                 progress: Any, stream: Any, timer: PhaseTimer | None = None) -> None:
        self.cp = engine.cp
        self.engine = engine
        self.plan = plan
        self.gen = plan.gen
        self.module = plan.module
        self.config = config
        self.strategies = plan.strategies
        self.res = res
        self.spec = spec
        self.n_nodes = graph.n_nodes
        self.max_it = max_it
        self.block = plan.gen.block_size
        self.stream = stream
        self.deadline_s = deadline_s
        self.progress = progress
        self.t0 = time.perf_counter()
        self.max_grid = engine.n_sm * max(1, 2048 // self.block) * 4
        # this run's parameter block: page-locked bytes, filled by the engine
        self._block: np.ndarray = plan.template_bytes
        self._block_ptr = 0
        self.buffers: dict[tuple[str, str], Any] = {}
        self.args: dict[tuple[str, str], Any] = {}
        self.ctl: Any = None
        #: the device and the page-locked start ids, control block and trace (set up by
        #: the engine before ``drive``)
        self.core: _CoreBlock | None = None
        self.core_host: _CoreBlock = engine.core_host(0, 0)
        self.ctl_host = self.core_host.ctl
        self.it = 0
        self.mode = 0
        self.pull = 0
        self.done = False
        #: the run ended at its step limit, not at its stopping rule (not converged)
        self.capped = False
        self.overflows = 0
        self._events: list[tuple[Any, Any]] = []
        #: with a timer (``gswitch profile``): what each timed launch ran, a
        #: :class:`~gswitch.strategy.Phase` or a kernel's name, beside ``_events``
        self._timer = timer
        self._labels: list[Any] | None = None if timer is None else []
        self._ev_pool = engine.event_pool
        self._functions = plan.functions
        self._rt = engine.runtime
        self._sp = stream.ptr
        #: The start nodes on the host (``None`` when every node starts).
        self.start_host: np.ndarray | None = None
        self._state_in_flight = False  # the staging of the last write_state may be busy
        self._ctl_read_at = -1  # engine.work when the control block was last read
        #: the kernels write the control block into ``ctl_host`` (see
        #: :attr:`~gswitch.strategy.LaunchStrategy.polls_control`); the engine.work of the
        #: last step launch whose decision comes that way, and the step number it writes
        self._polls = False
        self._poll_at = -1
        self._poll_want = 0
        #: reads of the control block answered by polling host memory
        self.polled_reads = 0
        #: blocks of the cooperative grid, where the launch strategy used one
        self.grid_used: int | None = None
        self._synced_at = -1  # engine.work when the host last waited for the stream
        #: the device address of the start ids and of their page-locked copy
        self._start_dev = 0
        self._start_pinned = 0
        #: copies queued with the first read of the control block, and when they were
        self._early: list[tuple[int, int, int]] | None = None
        self._early_read_at = -1
        self._early_trace: np.ndarray | None = None
        self._early_every = False  # the results come with every read, not the first only
        self._early_fields = True  # the fields come with the first read (else the trace)
        #: the copies of the first read as set up (``_early`` is dropped once read)
        self._first_read: list[tuple[int, int, int]] | None = None
        #: page-locked views of this run's fields (initial values, then results)
        self.fields_host: dict[str, np.ndarray] = {}

    @property
    def graph(self) -> Graph:
        """The run's graph, reached through its resident copy, which holds it weakly: a
        plan's replay record (:mod:`gswitch.engine.repeat`) keeps this context, and must
        not keep the graph, and so its device copy, alive.
        """
        return self.res.graph

    @property
    def memo(self) -> dict[Any, Any]:
        """A dictionary kept for every later run of the same algorithm, configuration
        and resident graph: a launch strategy keeps what it built once there (a captured
        CUDA graph, say). Kernel arguments live in the parameter block, which every run
        brings up to date before its first launch, so what is kept must not capture them.
        """
        return self.plan.memo

    # -------------------------------------------------------------- buffers and args
    def buffer(self, axis: str, name: str) -> Any:
        """The device array of a strategy's buffer."""
        return self.buffers[(axis, name)]

    def replace_buffer(self, axis: str, name: str, array: Any) -> None:
        """Swap in a new array for a buffer (after growth) and update the block."""
        self.buffers[(axis, name)] = array
        self.res.pool[("buf", axis, name)] = array
        self.res.forget_runs()  # none may keep the array it replaces
        self._put(f"{axis}_{name}", array.data.ptr)
        self.write_state()

    def arg(self, axis: str, name: str) -> Any:
        """Current value of a strategy's runtime argument."""
        return self.args[(axis, name)]

    def set_arg(self, axis: str, name: str, value: Any) -> None:
        """Change a runtime argument in the parameter block."""
        self.args[(axis, name)] = value
        self._put(f"{axis}_{name}", value)
        self.write_state()

    @property
    def state(self) -> np.ndarray:
        """The parameter block of this run as a one-item structured array. Change it with
        :meth:`set_arg` or :meth:`replace_buffer`; a change made here reaches the device
        at the next :meth:`write_state`.
        """
        self._settle_block()
        return self._block.view(self.plan.dtype)

    def _settle_block(self) -> None:
        if self._state_in_flight:
            # the block's bytes may still feed the last write: wait before changing them
            self.stream.synchronize()
            self._state_in_flight = False

    def _put(self, member: str, value: Any) -> None:
        self._settle_block()
        self.plan.put(self._block, member, value)

    def write_state(self) -> None:
        """Copy the parameter block into the module's constant memory (asynchronously,
        from its page-locked bytes), unless the last copy queued there had the same bytes:
        a repeated call with the same parameters on the same graph copies nothing.
        """
        data = self._block.tobytes()
        written = self.engine.const_written
        const_ptr = self.plan.const_ptr
        if written.get(const_ptr) == data:
            return
        self._rt.memcpyAsync(const_ptr, self._block_ptr, self.plan.nbytes, _H2D, self._sp)
        written[const_ptr] = data
        self._state_in_flight = True
        self.engine.work += 1

    # -------------------------------------------------------------- control block
    @staticmethod
    def slot(it: int) -> int:
        """First control word of the counters step ``it`` writes."""
        return _slot(it)

    def control(self, last: bool = False) -> np.ndarray:
        """The control block, read back through pinned memory (synchronises), or, right
        after a step launch of a launch strategy that polls, the copy the step's kernel
        wrote into host memory once its step number shows there. ``last``: as
        :meth:`sync_state` takes it (the outputs are queued after the copies of the
        block, before the wait).
        """
        if self._poll_at == self.engine.work and self._await_decision():
            self._state_in_flight = False  # the step ran, so every copy before it did
            if self._ctl_read_at != self.engine.work:  # not a repeated read of the same
                self._ctl_read_at = self.engine.work
                self.polled_reads += 1
            return self.ctl_host
        rt, sp = self._rt, self._sp
        early = self._early
        if early is None:
            rt.memcpyAsync(self.core_host.ctl_ptr, self.core.ctl_ptr, 4 * _CTL_WORDS, _D2H, sp)
        else:
            # a loop that runs on the device is usually over by its first read, and any
            # run on a small graph by the read that finds it converged: take the results
            # (and the head of the trace, behind the control block) with it
            if not self._early_every:
                self._early = None
            for dst, src, nbytes in early:
                rt.memcpyAsync(dst, src, nbytes, _D2H, sp)
            self._early_read_at = self.engine.work
        mark = self.engine.outputs_before_wait(self) if last else None
        if mark is None:
            rt.streamSynchronize(sp)
            self._synced_at = self.engine.work
        else:  # the outputs behind the read stay on the device: not waited for here
            rt.eventSynchronize(mark.ptr)
        self._state_in_flight = False
        self._ctl_read_at = self.engine.work
        return self.ctl_host

    def _await_decision(self) -> bool:
        """Wait until the last step's kernel wrote its step number into host memory:
        poll for up to ``_POLL_S``, then wait on the stream. ``False`` when the number
        never came (a kernel that returned before deciding): the caller copies the block.
        """
        h, want = self.ctl_host, self._poll_want
        if h[_IT] == want:
            return True
        clock = time.perf_counter
        give_up = clock() + _POLL_S
        while h[_IT] != want:
            if clock() > give_up:
                self._rt.streamSynchronize(self._sp)
                self._synced_at = self.engine.work
                return bool(h[_IT] == want)
        return True

    def copy(self, dst: Any, src: Any, count: int) -> None:
        """Copy the first ``count`` items of device array ``src`` into ``dst`` (async).

        A copy from the start ids goes up from their page-locked copy instead: the host
        issues a host-to-device copy in half the time of a device-to-device one.
        """
        if count > 0:
            nbytes = count * src.itemsize
            if self._start_pinned and src.data.ptr == self._start_dev:
                self._rt.memcpyAsync(dst.data.ptr, self._start_pinned, nbytes, _H2D, self._sp)
            else:
                self._rt.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, _D2D, self._sp)
            self.engine.work += 1

    def set_control(self, word: int, value: int) -> None:
        """Write one control word."""
        self.ctl[word : word + 1].fill(value)
        self.engine.work += 1

    def sync_state(self, last: bool = False) -> np.ndarray:
        """Read the control block and take the step state from it. ``last``: the launch
        just queued usually ends the run (a persistent loop's); the engine then queues
        the run's device outputs behind it before the host waits
        (:meth:`~gswitch.engine.gpu.GpuEngine.outputs_before_wait`).
        """
        h = self.control(last)
        self.it = int(h[_IT])
        self.mode = int(h[_MODE])
        self.pull = int(h[_PULL])
        self.done = bool(h[_DONE])
        self.capped = int(h[_DONE]) == 2
        return h

    def overflowed(self, it: int) -> bool:
        """Whether step ``it`` reported a worklist overflow (from the last read)."""
        return it >= 0 and bool(self.ctl_host[_slot(it) + 2] & 1)

    def grow(self, it: int) -> None:
        """Let the worklist grow after step ``it`` overflowed."""
        self.strategies["worklist"].grow(self, it)
        self.overflows += 1
        self.engine.work += 1

    def step_mode(self) -> StepMode:
        """The driving strategy's :class:`~gswitch.strategy.StepMode` of the next step."""
        return self.strategies["driving"].modes[self.mode & _MODE_ID]

    def n_items(self) -> int:
        """Items of the next step (from the last read of the control block)."""
        if self.step_mode().items != "worklist":
            return self.n_nodes
        return int(self.ctl_host[_slot(self.it - 1)])

    # -------------------------------------------------------------- launches
    def function(self, name: str) -> Any:
        f = self._functions.get(name)
        if f is None:
            f = self._functions[name] = self.module.get_function(name)
        return f

    def _function_ptr(self, name: str) -> int:
        """The driver handle (``CUfunction``) of a kernel of the module."""
        key = ("ptr", name)
        ptr = self._functions.get(key)
        if ptr is None:
            ptr = self._functions[key] = int(self.function(name).kernel.ptr)
        return ptr

    def _timed(self, call: Any, label: str, every_phase: bool) -> None:
        start, end = self._ev_pool.take()
        start.record(self.stream)
        call()
        end.record(self.stream)
        self._events.append((start, end))
        if self._labels is not None:
            self._labels.append((label, EVERY_PHASE if every_phase else None))
        self.engine.work += 1

    def launch_kernel(self, name: str, grid: int, args: tuple) -> None:
        """Launch a kernel of the module over ``grid`` blocks (timed).

        The kernels without arguments of a cooperative module (the persistent loop with
        its grid barrier) are launched cooperatively, their grid capped at the blocks
        that can be co-resident; kernels loop over their items with a grid stride.
        Kernels with arguments (a worklist's compaction after an overflow, say) have no
        grid barrier and go through CuPy's plain launch. A grid of one block (a small
        graph's) is launched plainly: one block is always co-resident, and the grid
        barrier is the module's own (``gs_grid_sync``), which needs nothing of a
        cooperative launch but that.
        """
        f = self.function(name)
        grid = max(1, grid)
        # the launch strategy's own kernel loops over whole steps (told only to a profile)
        every = self._labels is not None and name in self.strategies["launch"].kernels
        if args:
            self._timed(lambda: f((grid,), (self.block,), args), name, every)
            return
        if self.gen.cooperative:  # every block that fits: the cap is co-residency
            grid = min(grid, self.engine.persistent_grid(f, self.block, 0))
        self.launch_function(self._function_ptr(name), grid, name, every)

    def launch_function(self, fp: int, grid: int, name: str = "", every: bool = False
                        ) -> None:
        """Launch the argument-less kernel at driver handle ``fp`` over ``grid`` blocks
        (timed; ``name`` and ``every`` as :meth:`_timed` takes them), with no argument
        array for the driver, skipping CuPy's packing: cooperatively for a cooperative
        module's grid of more than one block, plainly otherwise (see
        :meth:`launch_kernel`). A replay (:mod:`gswitch.engine.repeat`) launches its
        recorded kernel and grid through it.
        """
        drv, b, sp = self.engine.driver, self.block, self._sp
        if self.gen.cooperative and grid > 1:
            self._timed(lambda: drv.launchCooperativeKernel(fp, grid, 1, 1, b, 1, 1, 0, sp, 0),
                        name, every)
        else:
            self._timed(lambda: drv.launchKernel(fp, grid, 1, 1, b, 1, 1, 0, sp, 0, 0),
                        name, every)

    def nodes_grid(self) -> int:
        """Blocks for a grid-stride loop over all nodes."""
        return max(1, min(-(-self.n_nodes // self.block), self.max_grid))

    def phase_enabled(self, p: Phase) -> bool:
        """Whether phase ``p`` runs in the next step (host-side mirror of the device test)."""
        mode = self.step_mode()
        if p.modes and mode.name not in p.modes:
            return False
        if p.runs_in != "all" and not mode.core_operators:
            return False
        if p.runs_in == "frontier" and mode.items != "worklist":
            return False
        if p.direction == "push" and self.pull:
            return False
        return not (p.direction == "pull" and not self.pull)

    def phase_grid(self, p: Phase) -> int:
        """Blocks the host loop gives phase ``p`` in the next step."""
        items = p.items
        if items == "queued":
            return self.max_grid
        if items == "active":
            count = self.n_items()
        elif items == "nodes":
            count = self.n_nodes
        elif items == "words":
            count = (self.n_nodes + 31) // 32
        else:
            raise ValueError(f"phase {p.name}: items must be active, nodes, words or "
                             f"queued, got {items!r}")
        return max(1, min(-(-(count * p.threads_per_item) // self.block), self.max_grid))

    def _step_phases(self, every: bool) -> list[tuple[Phase, _PackedInts]]:
        """The phases of the next step with their kernel arguments packed for the driver
        (cached per mode and direction in the plan).
        """
        key = None if every else (self.mode & _MODE_ID, self.pull)
        phases = self.plan.steps.get(key)
        if phases is None:
            listed = list(enumerate(self.gen.phases))
            if not every:
                listed = [(i, p) for i, p in listed if self.phase_enabled(p)]
            if not listed:  # a step must still decide: run the first phase's test only
                listed = [(0, self.gen.phases[0])]
            last = len(listed) - 1
            phases = self.plan.steps[key] = [
                (p, _PackedInts((i, int(k == last))))
                for k, (i, p) in enumerate(listed)]
        return phases

    def launch_step(self, fixed_grid: int | None = None, timed: bool = True) -> None:
        """Launch the phases of the next step, the last one taking the decision.

        With ``fixed_grid`` (CUDA-graph capture) every phase is launched with that many
        blocks and tests on the device whether it applies; otherwise the phases that do
        not apply are skipped and each grid is sized from its items.

        The phase kernel goes to the driver with its arguments packed once (about 3 us
        less host time a launch than through CuPy's kernel call). It has no grid
        barrier, so it needs no cooperative launch in any module.
        """
        launch, sp = self.engine.driver.launchKernel, self._sp
        fptr = self._function_ptr("gs_phase_kernel")
        record = self._rt.eventRecord
        block = self.block
        labels = self._labels
        for p, packed in self._step_phases(fixed_grid is not None):
            grid = fixed_grid or self.phase_grid(p)
            if timed:
                start, end = self._ev_pool.take()
                record(start.ptr, sp)
            launch(fptr, grid, 1, 1, block, 1, 1, 0, sp, packed.ptr, 0)
            if timed:
                record(end.ptr, sp)
                self._events.append((start, end))
                if labels is not None:
                    labels.append(p)
        self.engine.work += 1
        if self._polls and fixed_grid is None:  # the last phase writes the decision here
            self._poll_at, self._poll_want = self.engine.work, self.it + 1

    def record(self, call: Any, label: str = "recorded steps") -> None:
        """Run ``call`` (which enqueues whole steps: a CUDA graph's replay) between two
        timing events; ``label`` names it in a profile (``gswitch profile``).
        """
        self._timed(call, label, True)

    def cooperative_grid(self, kernel: str) -> int:
        """Blocks for a cooperative launch of ``kernel``: all co-resident at the module's
        block size and at most the launch strategy's
        :meth:`~gswitch.strategy.LaunchStrategy.cooperative_blocks_per_sm` per
        multiprocessor, else a refusal; never more than :meth:`useful_grid`.
        """
        per_sm = self.strategies["launch"].cooperative_blocks_per_sm()
        grid = self.engine.persistent_grid(self.function(kernel), self.block, per_sm)
        return min(grid, self.useful_grid())

    def useful_grid(self) -> int:
        """Most blocks a fixed-grid launch can keep busy on this graph: a 32-thread group
        per node or a thread per edge, whichever needs more.

        Every phase loops over its items with a grid stride, so a smaller grid is
        correct; on a small graph it makes the grid barrier and the launch cheaper.
        """
        work = max(32 * self.n_nodes, self.graph.n_edges)
        return max(1, -(-work // self.block))

    # -------------------------------------------------------------- deadline, progress
    def check_deadline(self) -> None:
        """Raise :class:`DeadlineExceeded` once the run has passed its deadline."""
        if self.deadline_s is None:
            return
        elapsed = time.perf_counter() - self.t0
        if elapsed > self.deadline_s or (self.ctl_host[_DEADLINE] and not self.done):
            raise DeadlineExceeded(
                f"{self.spec.name} passed its deadline of {self.deadline_s:.3g} s after "
                f"{self.it} steps ({elapsed:.3g} s)", elapsed_s=elapsed, iterations=self.it)

    def deadline_ns(self) -> int:
        """Remaining time budget in nanoseconds for device-side checks (0 = none)."""
        if self.deadline_s is None:
            return 0
        left = self.deadline_s - (time.perf_counter() - self.t0)
        return max(1, int(left * 1e9))

    def report(self) -> None:
        """Tell the progress callback where the run is."""
        if self.progress is not None:
            self.progress(self.it, self.n_items() if not self.done else 0)

    def device_time_s(self) -> float:
        """Sum of the timed launches (events per phase or per replay)."""
        if not self._events:
            return 0.0
        if self._synced_at != self.engine.work:  # else every event has happened
            self._events[-1][1].synchronize()
        elapsed = self._rt.eventElapsedTime
        times = [elapsed(a.ptr, b.ptr) for a, b in self._events]
        if self._labels is not None:
            self._charge(times)
        self._ev_pool.give_back(self._events)
        self._events = []
        return sum(times) / 1000.0

    def _charge(self, times_ms: list[float]) -> None:
        """Give the timer each timed launch's time, under its phase's or kernel's name."""
        timer, labels = self._timer, self._labels
        assert timer is not None and labels is not None
        for label, ms in zip(labels, times_ms, strict=True):
            if isinstance(label, Phase):
                timer.add(label.name, ms / 1000.0, kind="kernel", phase=label)
            else:
                name, phase = label
                timer.add(name, ms / 1000.0, kind="kernel", phase=phase)
        self._labels = []
