"""The GPU engine: composed CUDA modules run through CuPy.

The engine is a small driver. It composes and compiles the module (memoised per
process, plus CuPy's on-disk cache keyed by the full source, options, architecture and
NVRTC version), keeps the graph resident on the device, allocates what the chosen
strategies declare (pooled across runs on the same graph, so a call on a tiny graph
costs tens of microseconds), writes the one parameter block every kernel reads from
constant memory, and hands a :class:`LaunchContext` to the launch strategy, whose
``drive`` runs the iteration loop. It names no concrete strategy and reads no strategy
parameter: buffers, runtime arguments, phases, seeding and growth all come from the
strategies' hooks.
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
import weakref
from typing import Any

import numpy as np

from ..algorithm import AlgorithmSpec
from ..codegen import GeneratedModule, generate_source, numbered, state_dtype
from ..config import Config
from ..errors import DeadlineExceeded, DeviceError, InvalidConfig, KernelCompileError
from ..graph import Graph
from ..plugins import AXES
from ..result import Result
from ..strategy import Buffer, Phase

__all__ = ["GpuEngine", "LaunchContext", "estimate_bytes"]

_MODES = {"data": 0, "topology": 1, "transition": 2}
_MODE_NAMES = {v: k for k, v in _MODES.items()}
_CTL_WORDS = 36
_IT, _MODE, _PULL, _DONE, _DEADLINE, _EDGES = 24, 25, 26, 27, 29, 30  # GS_CTL_*
_TRACE_CAP = 1 << 16
_NP_CTYPES = {"int": np.int32, "gs_vid": np.int32, "unsigned": np.uint32,
              "unsigned char": np.uint8, "float": np.float32, "long long": np.int64,
              "gs_eid": np.int32, "double": np.float64}


def _slot(it: int) -> int:
    """First word of the counters step ``it`` writes (mirrors ``GS_CTL_SLOT``)."""
    return (it % 3) * 8


def _buffer_bytes(b: Buffer) -> int:
    return np.dtype(_NP_CTYPES[b.ctype]).itemsize * max(1, int(b.size))


def estimate_bytes(graph: Graph, spec: AlgorithmSpec, config: Config) -> int:
    """Device bytes a run needs: graph arrays (and reverse), fields, strategy buffers."""
    n, m = graph.n_nodes, graph.n_edges
    total = 4 * (n + 1) + 4 * m + (4 * m if graph.weighted else 0) + 4 * n
    strategies = config.strategies()
    if getattr(strategies["direction"], "may_pull", False) and graph.directed:
        # the transpose, plus the scratch of building it on the device (sort order, sources)
        total += 4 * (n + 1) + 4 * m + (4 * m if graph.weighted else 0) + 16 * m
    total += sum(np.dtype(f.dtype).itemsize * n for f in spec.fields.values())
    for s in strategies.values():
        total += sum(_buffer_bytes(b) for b in s.buffers(spec, graph, config))
    return total + 8 * _TRACE_CAP


class _Resident:
    """A graph's device arrays and the buffer pool of runs on it."""

    def __init__(self, cp: Any, graph: Graph) -> None:
        self.cp = cp
        self.graph = graph
        self.row = cp.asarray(graph.indptr.astype(np.int32))
        self.col = cp.asarray(graph.indices)
        self.weights = cp.asarray(graph.weights) if graph.weights is not None else None
        self.in_degree = cp.asarray(graph.in_degree.astype(np.int32))
        self.reverse: tuple[Any, Any, Any] | None = None
        self.pool: dict[tuple, Any] = {}

    def reverse_arrays(self) -> tuple[Any, Any, Any]:
        """In-edges as CSR, built on the device on first use.

        The host graph's transpose is uploaded when it exists already; otherwise a stable
        device sort of the destinations builds it (the same order as
        :attr:`Graph.reverse <gswitch.graph.Graph.reverse>`: in-edges by source), which
        takes milliseconds where the host sort of a large graph takes seconds.
        """
        if self.reverse is None:
            cp, graph = self.cp, self.graph
            if not graph.directed:
                self.reverse = (self.row, self.col, self.weights)
            elif graph._reverse is not None:
                rev = graph._reverse
                self.reverse = (cp.asarray(rev.indptr.astype(np.int32)),
                                cp.asarray(rev.indices),
                                cp.asarray(rev.weights) if rev.weights is not None else None)
            else:
                n, m = graph.n_nodes, graph.n_edges
                order = cp.argsort(self.col)  # stable
                src = cp.searchsorted(self.row, cp.arange(m, dtype=np.int32), side="right")
                src -= 1
                rcol = src[order].astype(np.int32)
                del src
                rrow = cp.zeros(n + 1, dtype=np.int32)
                rrow[1:] = cp.cumsum(cp.bincount(self.col, minlength=n))
                rw = self.weights[order] if self.weights is not None else None
                self.reverse = (rrow, rcol, rw)
        return self.reverse

    def array(self, key: tuple, dtype: Any, size: int) -> Any:
        arr = self.pool.get(key)
        if arr is None or arr.size != size or arr.dtype != np.dtype(dtype):
            arr = self.cp.empty(max(1, size), dtype=dtype)
            self.pool[key] = arr
        return arr


class LaunchContext:
    """What a launch strategy's ``drive`` gets: the engine API of one run.

    Attributes
    ----------
    it, mode, pull : int
        The next step to run, its mode (0 data, 1 topology, 2 transition) and direction.
    done : bool
        The run converged.
    n_nodes, max_it : int
        Graph size and iteration limit.
    options : dict
        The launch strategy's own options.
    """

    def __init__(self, engine: GpuEngine, gen: GeneratedModule, module: Any, config: Config,
                 res: _Resident, spec: AlgorithmSpec, graph: Graph, max_it: int,
                 deadline_s: float | None, progress: Any, stream: Any) -> None:
        cp = engine.cp
        self.cp = cp
        self.engine = engine
        self.gen = gen
        self.module = module
        self.config = config
        self.strategies = config.strategies()
        self.res = res
        self.spec = spec
        self.graph = graph
        self.n_nodes = graph.n_nodes
        self.max_it = max_it
        self.block = gen.block_size
        self.stream = stream
        self.deadline_s = deadline_s
        self.progress = progress
        self.t0 = time.perf_counter()
        self.max_grid = engine.n_sm * max(1, 2048 // self.block) * 4
        self.state = np.zeros(1, dtype=engine.state_dtype(gen))
        self.buffers: dict[tuple[str, str], Any] = {}
        self.args: dict[tuple[str, str], Any] = {}
        self.ctl = res.array(("ctl",), np.uint32, _CTL_WORDS)
        self.ctl_host = engine.pinned_ctl
        self.it = 0
        self.mode = 0
        self.pull = 0
        self.done = False
        self.overflows = 0
        self._events: list[tuple[Any, Any]] = []
        self._ev_pool = engine.event_pool
        self._functions: dict[str, Any] = {}
        #: The start nodes on the host (``None`` when every node starts).
        self.start_host: np.ndarray | None = None

    # -------------------------------------------------------------- buffers and args
    def buffer(self, axis: str, name: str) -> Any:
        """The device array of a strategy's buffer."""
        return self.buffers[(axis, name)]

    def replace_buffer(self, axis: str, name: str, array: Any) -> None:
        """Swap in a new array for a buffer (after growth) and update the block."""
        self.buffers[(axis, name)] = array
        self.res.pool[("buf", axis, name)] = array
        self.state[0][f"{axis}_{name}"] = array.data.ptr
        self.write_state()

    def arg(self, axis: str, name: str) -> Any:
        """Current value of a strategy's runtime argument."""
        return self.args[(axis, name)]

    def set_arg(self, axis: str, name: str, value: Any) -> None:
        """Change a runtime argument in the parameter block."""
        self.args[(axis, name)] = value
        self.state[0][f"{axis}_{name}"] = value
        self.write_state()

    def write_state(self) -> None:
        """Copy the parameter block into the module's constant memory."""
        ptr = self.module.get_global("gs")
        ptr.copy_from_host_async(self.state.ctypes.data_as(ctypes.c_void_p),
                                 self.state.nbytes, self.stream)

    # -------------------------------------------------------------- control block
    @staticmethod
    def slot(it: int) -> int:
        """First control word of the counters step ``it`` writes."""
        return _slot(it)

    def control(self) -> np.ndarray:
        """The control block, read back through pinned memory (synchronises)."""
        self.ctl.get(stream=self.stream, out=self.ctl_host, blocking=True)
        return self.ctl_host

    def copy(self, dst: Any, src: Any, count: int) -> None:
        """Copy the first ``count`` items of device array ``src`` into ``dst`` (async)."""
        if count > 0:
            dst.data.copy_from_device_async(src.data, count * src.itemsize, self.stream)

    def set_control(self, word: int, value: int) -> None:
        """Write one control word."""
        self.ctl[word : word + 1].fill(value)

    def sync_state(self) -> np.ndarray:
        """Read the control block and take the step state from it."""
        h = self.control()
        self.it = int(h[_IT])
        self.mode = int(h[_MODE])
        self.pull = int(h[_PULL])
        self.done = bool(h[_DONE])
        return h

    def overflowed(self, it: int) -> bool:
        """Whether step ``it`` reported a worklist overflow (from the last read)."""
        return it >= 0 and bool(self.ctl_host[_slot(it) + 2] & 1)

    def grow(self, it: int) -> None:
        """Let the worklist grow after step ``it`` overflowed."""
        self.strategies["worklist"].grow(self, it)
        self.overflows += 1

    def n_items(self) -> int:
        """Items of the next step (from the last read of the control block)."""
        if self.mode != _MODES["data"]:
            return self.n_nodes
        return int(self.ctl_host[_slot(self.it - 1)])

    # -------------------------------------------------------------- launches
    def function(self, name: str) -> Any:
        f = self._functions.get(name)
        if f is None:
            f = self._functions[name] = self.module.get_function(name)
        return f

    def _timed(self, call: Any) -> None:
        start, end = self._ev_pool.take()
        start.record(self.stream)
        call()
        end.record(self.stream)
        self._events.append((start, end))

    def launch_kernel(self, name: str, grid: int, args: tuple) -> None:
        """Launch a kernel of the module over ``grid`` blocks (timed)."""
        f = self.function(name)
        self._timed(lambda: f((max(1, grid),), (self.block,), args))

    def nodes_grid(self) -> int:
        """Blocks for a grid-stride loop over all nodes."""
        return max(1, min(-(-self.n_nodes // self.block), self.max_grid))

    def phase_enabled(self, p: Phase) -> bool:
        """Whether phase ``p`` runs in the next step (host-side mirror of the device test)."""
        if p.modes and _MODE_NAMES[self.mode] not in p.modes:
            return False
        if p.direction == "push" and self.pull:
            return False
        return not (p.direction == "pull" and not self.pull)

    def phase_grid(self, p: Phase) -> int:
        """Blocks the host loop gives phase ``p`` in the next step."""
        if p.items == "queued":
            return self.max_grid
        items = {"active": self.n_items(), "nodes": self.n_nodes,
                 "words": (self.n_nodes + 31) // 32}[p.items]
        return max(1, min(-(-(items * p.threads_per_item) // self.block), self.max_grid))

    def launch_step(self, fixed_grid: int | None = None, timed: bool = True) -> None:
        """Launch the phases of the next step, the last one taking the decision.

        With ``fixed_grid`` (CUDA-graph capture) every phase is launched with that many
        blocks and tests on the device whether it applies; otherwise the phases that do
        not apply are skipped and each grid is sized from its items.
        """
        phases = list(enumerate(self.gen.phases))
        if fixed_grid is None:
            phases = [(i, p) for i, p in phases if self.phase_enabled(p)]
        if not phases:  # a step must still decide: run the first phase's test only
            phases = [(0, self.gen.phases[0])]
        f = self.function("gs_phase_kernel")
        for k, (i, p) in enumerate(phases):
            grid = fixed_grid or self.phase_grid(p)
            args = (np.int32(i), np.int32(k == len(phases) - 1))

            def call(f=f, grid=grid, args=args) -> None:
                f((grid,), (self.block,), args)

            if timed:
                self._timed(call)
            else:
                call()

    def record(self, call: Any) -> None:
        """Run ``call`` (which enqueues device work) between two timing events."""
        self._timed(call)

    def cooperative_grid(self, kernel: str, blocks_per_sm: int = 0) -> int:
        """Blocks for a cooperative launch: all co-resident, else a refusal."""
        return self.engine.persistent_grid(self.function(kernel), self.block, blocks_per_sm)

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
        self._events[-1][1].synchronize()
        total = sum(self.cp.cuda.get_elapsed_time(a, b) for a, b in self._events)
        self._ev_pool.give_back(self._events)
        self._events = []
        return total / 1000.0


class _EventPool:
    def __init__(self, cp: Any) -> None:
        self.cp = cp
        self.free: list[tuple[Any, Any]] = []

    def take(self) -> tuple[Any, Any]:
        if self.free:
            return self.free.pop()
        return self.cp.cuda.Event(), self.cp.cuda.Event()

    def give_back(self, pairs: list[tuple[Any, Any]]) -> None:
        self.free.extend(pairs)


class GpuEngine:
    """Runs algorithm specs on the current CUDA device through CuPy."""

    name = "gpu"
    _instance: GpuEngine | None = None

    def __init__(self) -> None:
        try:
            import cupy as cp
        except ImportError as exc:  # pragma: no cover - depends on the machine
            raise DeviceError(
                "the gpu backend needs CuPy: pip install 'gswitch[cuda12]' or 'gswitch[cuda13]'"
            ) from exc
        import cupyx

        self.cp = cp
        self._modules: dict[str, Any] = {}
        self._graphs: weakref.WeakKeyDictionary[Graph, _Resident] = weakref.WeakKeyDictionary()
        dev = cp.cuda.Device()
        self.n_sm = int(dev.attributes["MultiProcessorCount"])
        self.device_name = cp.cuda.runtime.getDeviceProperties(dev.id)["name"].decode()
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.pinned_ctl = cupyx.empty_pinned(_CTL_WORDS, dtype=np.uint32)
        self.event_pool = _EventPool(cp)
        self._pinned: dict[tuple, Any] = {}
        self._grids: dict[tuple, int] = {}
        self._state_dtypes: dict[str, np.dtype] = {}
        self._cupyx = cupyx

    @classmethod
    def instance(cls) -> GpuEngine:
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    # ------------------------------------------------------------------ compilation
    def module(self, gen: GeneratedModule) -> Any:
        """Compiled CuPy ``RawModule`` for a generated source (memoised by source hash)."""
        mod = self._modules.get(gen.key)
        if mod is not None:
            return mod
        cp = self.cp
        try:
            mod = cp.RawModule(code=gen.source, options=("-std=c++17",),
                               enable_cooperative_groups=gen.cooperative)
            for k in gen.kernels:
                mod.get_function(k)  # forces compilation now, not at first launch
        except Exception as exc:
            msg = str(exc).strip().splitlines()
            first = next((ln for ln in msg if "error" in ln), msg[0] if msg else repr(exc))
            detail = f"CUDA compile failed for {gen.description}: {first}"
            if os.environ.get("GSWITCH_DUMP_CUDA_SOURCE_ON_ERROR") == "1":
                print(numbered(gen.source), file=sys.stderr)
                print(str(exc), file=sys.stderr)
            else:
                detail += " (set GSWITCH_DUMP_CUDA_SOURCE_ON_ERROR=1 to print the source)"
            raise KernelCompileError(detail) from None
        self._modules[gen.key] = mod
        return mod

    def resident(self, graph: Graph) -> _Resident:
        """The graph's device arrays, uploaded once per :class:`Graph` object."""
        res = self._graphs.get(graph)
        if res is None:
            # upload on the engine's stream and wait: a copy on the legacy default stream is
            # not ordered before work on a non-blocking stream, and under load (several
            # processes on one GPU) the transpose sort read the arrays before they landed
            with self.stream:
                res = _Resident(self.cp, graph)
            self.stream.synchronize()
            self._graphs[graph] = res
        return res

    def persistent_grid(self, kernel: Any, block: int, blocks_per_sm: int = 0) -> int:
        """Blocks for a cooperative launch: all must be co-resident, else refuse."""
        key = (kernel.kernel.ptr, block, blocks_per_sm)
        grid = self._grids.get(key)
        if grid is None:
            grid = self._grids[key] = self._persistent_grid(kernel, block, blocks_per_sm)
        return grid

    def _persistent_grid(self, kernel: Any, block: int, blocks_per_sm: int) -> int:
        cp = self.cp
        try:
            per_sm = int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                kernel.kernel.ptr, block, 0))
        except Exception as exc:  # pragma: no cover - CuPy API drift
            raise DeviceError(f"cannot query occupancy for the persistent kernel: {exc}") from None
        if per_sm < 1:
            raise InvalidConfig(
                f"launch=persistent cannot run: not even one block of {block} threads fits on "
                f"a multiprocessor ({kernel.num_regs} registers per thread); lower block_size "
                "or use launch=host_loop"
            )
        if blocks_per_sm:
            per_sm = min(per_sm, blocks_per_sm)
        return per_sm * self.n_sm

    def state_dtype(self, gen: GeneratedModule) -> np.dtype:
        """The parameter block's NumPy layout for a module (built once per module)."""
        dt = self._state_dtypes.get(gen.key)
        if dt is None:
            dt = self._state_dtypes[gen.key] = state_dtype(list(gen.members))
        return dt

    def _pinned_like(self, name: str, dtype: Any, size: int) -> Any:
        """A page-locked host array of ``size`` items, one per name and dtype, grown as
        needed (copies from and to it are asynchronous).
        """
        key = (name, np.dtype(dtype).str)
        arr = self._pinned.get(key)
        if arr is None or arr.size < size:
            arr = self._pinned[key] = self._cupyx.empty_pinned(max(1, size), dtype=dtype)
        return arr[:size]

    def upload(self, name: str, dst: Any, host: np.ndarray) -> None:
        """Copy ``host`` into the device array ``dst`` through pinned staging, on the
        engine's stream and without waiting (a pageable copy blocks the host).
        """
        host = np.ascontiguousarray(host, dtype=dst.dtype).ravel()
        stage = self._pinned_like("up:" + name, host.dtype, host.size)
        stage[:] = host
        dst.data.copy_from_host_async(stage.ctypes.data_as(ctypes.c_void_p), host.nbytes,
                                      self.stream)

    # ------------------------------------------------------------------ run
    def run(self, spec: AlgorithmSpec, graph: Graph, params: dict[str, Any],
            sources: np.ndarray | None, config: Config, max_iterations: int,
            progress: Any = None, deadline_s: float | None = None) -> Result:
        cp = self.cp
        t_start = time.perf_counter()
        n, m = graph.n_nodes, graph.n_edges
        if m >= 2**31:
            raise DeviceError(
                f"graph has {m} edges; the gpu backend supports fewer than 2^31 edges until "
                "64-bit edge offsets are supported end to end. Use --backend cpu"
            )
        fields0 = spec.initial_fields(n, params, sources)
        stats: dict[str, Any] = {"active": [], "modes": [], "directions": [],
                                 "edges_processed": 0, "device": self.device_name,
                                 "overflows": 0}
        all_start = spec.start.kind == "all"
        uniq = None if all_start else np.unique(sources).astype(np.int32)
        n_start = n if all_start else int(uniq.size)
        if n == 0 or n_start == 0:
            stats.update(iterations=0, converged=True, time_s=time.perf_counter() - t_start,
                         device_time_s=0.0, kernel_time_s=0.0, compile_time_s=0.0)
            return Result(spec.name, fields0, stats, backend="gpu", config=config)
        res = self._graphs.get(graph)
        if res is None:
            need = estimate_bytes(graph, spec, config)
            free, _total = cp.cuda.runtime.memGetInfo()
            if need > free:
                raise DeviceError(
                    f"graph needs about {need / 2**30:.2f} GiB on the GPU but only "
                    f"{free / 2**30:.2f} GiB are free; use a smaller graph or --backend cpu")
            res = self.resident(graph)
        t_c = time.perf_counter()
        gen = generate_source(spec, config, weighted=graph.weighted)
        mod = self.module(gen)
        stats["compile_time_s"] = time.perf_counter() - t_c
        with self.stream:
            try:
                if getattr(config.strategies()["direction"], "may_pull", False):
                    res.reverse_arrays()  # before the deadline clock starts
                ctx = LaunchContext(self, gen, mod, config, res, spec, graph, max_iterations,
                                    deadline_s, progress, self.stream)
                fields = self._setup(ctx, spec, graph, params, fields0, uniq, all_start, n_start)
                launch = ctx.strategies["launch"]
                launch.drive(ctx)
                # every read-back is queued into pinned memory, then one wait for all of them
                h = ctx.ctl_host
                ctx.ctl.get(stream=self.stream, out=h, blocking=False)
                steps = min(ctx.it, _TRACE_CAP)
                trace = self._pinned_like("core:trace", np.int32, 2 * steps)
                if steps:
                    ctx.buffers[("core", "trace")][: 2 * steps].get(
                        stream=self.stream, out=trace, blocking=False)
                staged = {}
                for name, arr in fields.items():
                    staged[name] = self._pinned_like("field:" + name, arr.dtype, arr.size)
                    arr.get(stream=self.stream, out=staged[name], blocking=False)
                self.stream.synchronize()
                stats["edges_processed"] = int(h[_EDGES]) | (int(h[_EDGES + 1]) << 32)
                trace_a, trace_m = trace[0::2], trace[1::2]
                out = {name: np.array(host, copy=True) for name, host in staged.items()}
            except BaseException:
                # nothing may still be copying into pooled or staging memory that the
                # next run reuses
                self.stream.synchronize()
                raise
        stats["active"] = trace_a.tolist()
        stats["modes"] = [_MODE_NAMES[x & 15] for x in trace_m.tolist()]
        stats["directions"] = ["pull" if x >> 4 else "push" for x in trace_m.tolist()]
        stats["iterations"] = ctx.it
        stats["converged"] = ctx.done
        stats["overflows"] = ctx.overflows
        stats["device_time_s"] = ctx.device_time_s()
        stats["kernel_time_s"] = stats["device_time_s"]
        stats["time_s"] = time.perf_counter() - t_start
        return Result(spec.name, out, stats, backend="gpu", config=config)

    def _setup(self, ctx: LaunchContext, spec: AlgorithmSpec, graph: Graph,
               params: dict[str, Any], fields0: dict[str, np.ndarray],
               sources: np.ndarray | None, all_start: bool, n_start: int) -> dict[str, Any]:
        """Pooled fields and buffers, seeded worklist, control block and parameter block."""
        cp = self.cp
        res = ctx.res
        n, m = graph.n_nodes, graph.n_edges
        st = ctx.state[0]
        st["row"], st["col"] = res.row.data.ptr, res.col.data.ptr
        st["weights"] = res.weights.data.ptr if res.weights is not None else 0
        st["in_degree"] = res.in_degree.data.ptr
        st["ctl"] = ctx.ctl.data.ptr
        if getattr(ctx.strategies["direction"], "may_pull", False):
            rrow, rcol, rw = res.reverse_arrays()
            st["rrow"], st["rcol"] = rrow.data.ptr, rcol.data.ptr
            st["rweights"] = rw.data.ptr if rw is not None else 0
        trace = res.array(("core", "trace"), np.int32, 2 * _TRACE_CAP)
        ctx.buffers[("core", "trace")] = trace
        st["trace"] = trace.data.ptr
        st["n"], st["m"], st["trace_cap"] = n, m, _TRACE_CAP
        st["max_it"] = ctx.max_it
        st["deadline_ns"] = ctx.deadline_ns()
        fields = {}
        for name, host in fields0.items():
            arr = res.array(("field", name), host.dtype, n)
            self.upload("F_" + name, arr, host)
            fields[name] = arr
            st[f"F_{name}"] = arr.data.ptr
        for name in spec.params:
            st[f"P_{name}"] = params[name]
        for axis in AXES:
            strat = ctx.strategies[axis]
            for b in strat.buffers(spec, graph, ctx.config):
                arr = res.pool.get(("buf", axis, b.name))
                dt = _NP_CTYPES[b.ctype]
                if arr is None or arr.size < max(1, b.size) or arr.dtype != np.dtype(dt):
                    arr = cp.zeros(max(1, b.size), dtype=dt)  # zero when new, always
                    res.pool[("buf", axis, b.name)] = arr
                elif b.zero:
                    arr.fill(0)
                ctx.buffers[(axis, b.name)] = arr
                st[f"{axis}_{b.name}"] = arr.data.ptr
            for name, (_ctype, value) in strat.runtime_args(graph, ctx.config).items():
                ctx.args[(axis, name)] = value
                st[f"{axis}_{name}"] = value
        driving = ctx.strategies["driving"]
        direction = ctx.strategies["direction"]
        ctx.mode = _MODES[driving.initial_mode(n_start, n)]
        ctx.pull = int(bool(direction.initial_pull(n_start, n)))
        ctl_host = np.zeros(_CTL_WORDS, dtype=np.uint32)
        ctl_host[_slot(-1)] = n_start
        ctl_host[_MODE] = ctx.mode
        ctl_host[_PULL] = ctx.pull
        self.upload("ctl", ctx.ctl, ctl_host)
        ctx.ctl_host[:] = ctl_host
        if all_start:
            start = res.pool.get(("core", "all_nodes"))
            if start is None:
                start = res.pool[("core", "all_nodes")] = cp.arange(n, dtype=np.int32)
            ctx.start_host = None
        else:
            start = res.array(("core", "start"), np.int32, n_start)
            self.upload("start", start, sources)
            ctx.start_host = sources
        ctx.strategies["worklist"].seed(ctx, start, all_start)
        ctx.write_state()
        return fields
