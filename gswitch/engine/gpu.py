"""The GPU engine: composed CUDA modules run through CuPy.

The engine is a small driver. It composes and compiles the module (memoised per
process, plus CuPy's on-disk cache keyed by the full source, options, architecture and
NVRTC version), keeps the graph resident on the device, allocates what the chosen
strategies declare (pooled across runs on the same graph, so a call on a tiny graph
costs tens of microseconds), writes the one parameter block every kernel reads from
constant memory, and hands a :class:`LaunchContext` to the launch strategy, whose
``drive`` runs the iteration loop. It names no concrete strategy and reads no strategy
parameter: buffers, runtime arguments, phases, seeding and growth all come from the
strategies' hooks. A later run of the same plan whose last run was one kernel replays
that run (:mod:`gswitch.engine.repeat`): it writes only what differs and relaunches.

Device memory (the core block, resident graphs, pools) lives in
:mod:`gswitch.engine.memory`, the launch context in :mod:`gswitch.engine.context` and
the way results come back (finalised on the device, copied to the host or handed over
as CuPy arrays) in :mod:`gswitch.engine.gpu_results`; this module keeps the driver:
:class:`GpuEngine`, its inputs and the per-configuration plan.
"""

from __future__ import annotations

import os
import platform
import sys
import threading
import time
import weakref
from typing import Any

import numpy as np

from ..algorithm import NODE_ID, AlgorithmSpec
from ..codegen import GeneratedModule, generate_source, numbered, state_dtype
from ..config import Config
from ..errors import (
    DeviceError,
    InvalidConfig,
    InvalidInput,
    KernelCompileError,
)
from ..graph import Graph
from ..result import Result
from .context import LaunchContext
from .fill import plan_fill
from .gpu_results import ResultsPath
from .memory import (
    _CTL_ROOM,
    _D2D,
    _EDGES,
    _H2D,
    _MODE,
    _MODE_ID,
    _PULL,
    _CoreBlock,
    _EventPool,
    _Resident,
    _slot,
    estimate_bytes,
)
from .pinned import PinnedResults
from .plan import _EARLY_READ_BYTES, _EARLY_READ_STEPS, _Plan
from .repeat import Repeat
from .timing import PhaseTimer
from .upload import Uploader

__all__ = ["GpuEngine", "LaunchContext", "estimate_bytes"]

#: Plans kept per resident graph (a tuning study tries many configurations on one graph).
_PLANS_PER_GRAPH = 64
#: Fields of more bytes than this start on the device (one fill launch for them all) instead
#: of being written on the host and copied up with the control block: for a graph of 4M
#: nodes that saves filling 16 MB of page-locked memory and copying it (about 2 ms).
_DEVICE_FILL_BYTES = 1 << 16
#: Results of at most this many bytes come back with every read of the control block,
#: whatever the launch: the read that finds the run over brought them, so reading them
#: costs no extra round trip (a few hundred bytes more a step).
_EVERY_READ_BYTES = 4096
#: Fields of more bytes than this are finalised on the device when the algorithm allows
#: it (``finalize_on_device``): a few kernels instead of host passes over every field,
#: and only the outputs come back.
_DEVICE_FINALIZE_BYTES = 1 << 20
#: ... when the device has this many times the fields' bytes free for the temporaries of
#: ``finalize`` (else it runs on the host, as for a small graph).
_FINALIZE_ROOM = 3
#: Writes of at most this many values into a device array go by one small copy each
#: (:meth:`GpuEngine.put_values`).
FEW_VALUES = 16

_I32 = np.dtype(np.int32)
_U8 = np.dtype(np.uint8)

_INSTANCE_LOCK = threading.Lock()
#: NVRTC options of the engine's modules. ``-minimal`` leaves out the declarations of
#: textures, surfaces and the device runtime's functions, which no module uses;
#: ``--split-compile=0`` runs the optimizer on every host core. Together they took the
#: compile of BFS's first module from 1.36 to 0.83 s on an H200, with the same register
#: counts (``benchmarks/experiments/nvrtc_options.py``). An NVRTC that refuses them
#: gets :data:`BASE_NVRTC_OPTIONS` (:meth:`GpuEngine.module`).
NVRTC_OPTIONS: tuple[str, ...] = ("-std=c++17", "-minimal", "--split-compile=0")
BASE_NVRTC_OPTIONS: tuple[str, ...] = ("-std=c++17",)
_RUNTIME: Any = None  # cupy.cuda.runtime, once GpuEngine.instance first needed it


class GpuEngine(ResultsPath):
    """Runs algorithm specs on the current CUDA device through CuPy."""

    name = "gpu"
    #: one engine per CUDA device, made on first use (:meth:`instance`)
    _instances: dict[int, GpuEngine] = {}

    def __init__(self, device: int | None = None) -> None:
        try:
            import cupy as cp
        except ImportError as exc:  # pragma: no cover - depends on the machine
            raise DeviceError(
                "the gpu backend needs CuPy: pip install 'gswitch[cuda12]' or 'gswitch[cuda13]'"
            ) from exc
        from ..context_ahead import wait

        wait()  # a context begun while CuPy imported: made before CuPy's runtime asks
        self.cp = cp
        self._modules: dict[str, Any] = {}
        self._graphs: weakref.WeakKeyDictionary[Graph, _Resident] = weakref.WeakKeyDictionary()
        dev = cp.cuda.Device() if device is None else cp.cuda.Device(device)
        #: the CUDA device this engine's stream, modules, pools and graphs belong to
        self.device_id = int(dev.id)
        with dev:
            self._init_on_device(cp, dev)

    def _init_on_device(self, cp: Any, dev: Any) -> None:
        self.n_sm = int(dev.attributes["MultiProcessorCount"])
        self.device_name = cp.cuda.runtime.getDeviceProperties(dev.id)["name"].decode()
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.runtime = cp.cuda.runtime
        #: CuPy's driver API: launches without its kernel call's argument packing
        self.driver = cp.cuda.driver
        self._core_host = _CoreBlock.new(self._pinned_words, 0, 0)
        self.event_pool = _EventPool(cp)
        #: Counts device work enqueued (see :class:`LaunchContext`).
        self.work = 0
        self._pinned_bufs: dict[tuple[str, np.dtype], tuple[np.ndarray, int]] = {}
        #: module constant-memory address -> bytes of the last copy queued there (every
        #: write goes through :meth:`LaunchContext.write_state`, on the engine's stream)
        self.const_written: dict[int, bytes] = {}
        self._grids: dict[tuple, int] = {}
        self._state_dtypes: dict[str, np.dtype] = {}
        self._copier: Any = None  # host threads of large copies (copier()), on first need
        #: large host arrays go up through page-locked slots that host threads fill
        self.uploader = Uploader(cp, self.stream, self.device_id, self._copy_threads())
        #: Whether a launch strategy that polls its decisions in host memory
        #: (:attr:`~gswitch.strategy.LaunchStrategy.polls_control`) may: on x86-64 hosts,
        #: whose loads keep their order (the host reads the step number, then the rest of
        #: the block); elsewhere, and when this is set to ``False``, the host copies the
        #: control block back after every step.
        self.poll_control = platform.machine().lower() in ("x86_64", "amd64")
        self._copy_events: list[Any] = []
        #: recorded after a run's copies of device results, for the caller's stream
        self._handoff: Any = None
        #: recorded after a run's read of its control block, before its device outputs
        #: (outputs_before_wait): the host waits for it, not for the outputs
        self._read_mark: Any = None
        #: (when, free bytes, the pool's bytes) of the last free-memory query (_room_for)
        self._free_seen: tuple[float, int, int] | None = None
        #: the running call's choice of results for :meth:`outputs_before_wait`, and
        #: what that queued (outputs taken on the device): (context, ``work`` then,
        #: finalize, device outputs)
        self._before_wait: Any = None
        self._early: tuple[Any, ...] | None = None
        #: page-locked result arrays (``_PINNED_RESULT_BYTES``)
        self.results = PinnedResults(cp)
        #: held by ``gswitch.run`` around each call: the pinned staging, the pools of
        #: resident graphs and the stream serve one call at a time, so calls from
        #: several threads queue here (every result is a fresh array, copied out first)
        self.call_lock = threading.RLock()

    @classmethod
    def instance(cls, device: int | None = None) -> GpuEngine:
        """The engine of CUDA device ``device`` (default: the current one): one stream
        and one set of pools and resident graphs per device, made on first use.
        """
        if device is None:
            device = cls._cp_runtime().getDevice()
        engine = cls._instances.get(device)
        if engine is None:
            with _INSTANCE_LOCK:
                engine = cls._instances.get(device)
                if engine is None:
                    engine = cls._instances[device] = cls(device)
        return engine

    @staticmethod
    def _cp_runtime() -> Any:
        """CuPy's runtime module (imported once: an import statement costs microseconds
        on every call).
        """
        global _RUNTIME
        if _RUNTIME is None:
            from cupy.cuda import runtime

            _RUNTIME = runtime
        return _RUNTIME

    def on_device(self) -> Any:
        """Context manager making this engine's device the current one (every launch,
        allocation and copy of a call runs inside it).
        """
        return self.cp.cuda.Device(self.device_id)

    def resident_elsewhere(self, graph: Graph) -> int | None:
        """The other device on which this very ``graph`` object has its device copy."""
        for device, engine in list(GpuEngine._instances.items()):
            if engine is self:
                continue
            res = engine._graphs.get(graph)
            if res is not None and res._graph() is graph:
                return device
        return None

    def release(self, graph: Graph) -> bool:
        """Drop the device copy of this very ``graph`` object; whether there was one."""
        with self.call_lock:
            res = self._graphs.get(graph)
            if res is None or res._graph() is not graph:
                return False
            del self._graphs[graph]
            return True

    # ------------------------------------------------------------------ compilation
    def module(self, gen: GeneratedModule) -> Any:
        """Compiled CuPy ``RawModule`` for a generated source (memoised by source hash)."""
        mod = self._modules.get(gen.key)
        if mod is not None:
            return mod
        try:
            # never CuPy's cooperative-groups mode: it compiles relocatable code and links
            # the device runtime library, seconds per module; the persistent kernel's
            # grid barrier is the module's own, and its launch is cooperative
            # (``LaunchContext.launch_kernel``)
            mod = self._compiled(gen)
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

    def _compiled(self, gen: GeneratedModule) -> Any:
        """``gen``'s module, compiled (or loaded from CuPy's cache) with
        :data:`NVRTC_OPTIONS`. Where that fails and :data:`BASE_NVRTC_OPTIONS` succeed,
        this NVRTC refused an option (an older toolkit; its wording of the refusal
        varies): the base options serve the rest of the process. Where both fail, the
        source is at fault, and the base options' error is raised.
        """
        global NVRTC_OPTIONS
        opts = NVRTC_OPTIONS
        try:
            return self._build(gen, opts)
        except Exception:
            if opts == BASE_NVRTC_OPTIONS:
                raise
        mod = self._build(gen, BASE_NVRTC_OPTIONS)
        NVRTC_OPTIONS = BASE_NVRTC_OPTIONS
        return mod

    def _build(self, gen: GeneratedModule, options: tuple[str, ...]) -> Any:
        mod = self.cp.RawModule(code=gen.source, options=options)
        for k in gen.kernels:
            mod.get_function(k)  # forces compilation now, not at first launch
        return mod

    def _known(self, graph: Graph) -> _Resident | None:
        """The resident copy of ``graph`` or of an equal graph (graphs compare by content),
        tied to ``graph`` from now on.

        A copy uploaded for an equal graph that is unreachable but not yet collected (held
        by a reference cycle, say) would otherwise lose its graph, and its dictionary entry,
        when the collector frees that graph in the middle of this run.
        """
        res = self._graphs.get(graph)
        if res is not None and res._graph() is not graph:
            del self._graphs[graph]
            res._graph = weakref.ref(graph)
            self._graphs[graph] = res
        return res

    def resident(self, graph: Graph) -> _Resident:
        """The graph's device arrays, uploaded once per :class:`Graph` object (or for an
        equal one that is still alive).
        """
        res = self._known(graph)
        if res is None:
            other = self.resident_elsewhere(graph)
            if other is not None:
                raise InvalidInput(
                    f"this graph is resident on GPU {other}, and gswitch never copies a graph "
                    f"to another GPU (here GPU {self.device_id}) on its own: run it with "
                    f"device={other}, or free that copy first with gswitch.release(graph)")
            # upload on the engine's stream and wait: a copy on the legacy default stream is
            # not ordered before work on a non-blocking stream, and under load (several
            # processes on one GPU) the transpose sort read the arrays before they landed
            with self.stream:
                res = _Resident(self.cp, graph, self.to_device)
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

    def core_host(self, n_start: int, field_bytes: int) -> _CoreBlock:
        """The page-locked start ids, control block, fields and trace, grown as needed.
        Whoever fills it must know that no copy from or into it is still in flight.
        """
        block = _CoreBlock.grown(self._core_host, self._pinned_words, n_start, field_bytes)
        if block is not self._core_host:
            self._core_host = block
            for res in list(self._graphs.values()):  # no record may keep the old block
                res.forget_runs()
        return block

    def empty_pinned(self, size: int, dtype: Any) -> np.ndarray:
        """A page-locked host array of ``size`` items from CuPy's pinned allocator (the
        array holds the allocation). ``cupyx.empty_pinned`` does the same, but importing
        ``cupyx`` loads its SciPy, linear-algebra and optimizer modules: a first call
        pays 0.3 to 1 s for them.
        """
        dtype = np.dtype(dtype)
        mem = self.cp.cuda.alloc_pinned_memory(max(1, size) * dtype.itemsize)
        return np.ndarray((size,), dtype=dtype, buffer=mem)

    def _pinned_words(self, words: int) -> np.ndarray:
        return self.empty_pinned(words, np.uint32)

    def _pinned(self, name: str, dtype: np.dtype, size: int) -> tuple[np.ndarray, int]:
        """A page-locked host array of ``size`` items and its address, one per name and
        dtype, grown as needed (copies from and to it are asynchronous). Whoever fills it
        must know that no copy from or into it is still in flight.
        """
        key = (name, dtype)
        hit = self._pinned_bufs.get(key)
        if hit is None or hit[0].size < size:
            arr = self.empty_pinned(max(1, size), dtype)
            hit = self._pinned_bufs[key] = (arr, arr.ctypes.data)
        return hit[0][:size], hit[1]

    def put_values(self, name: str, dst: Any, at: list[int], values: np.ndarray) -> None:
        """Write ``values[k]`` into the device array ``dst`` at ``at[k]``, by one copy of
        one item each from page-locked staging (named ``name``), on the engine's stream
        and without waiting: for a few values, a scatter through CuPy's indexing costs
        about 100 us of host time, and each copy 3 us.
        """
        vals, ptr = self._pinned("put:" + name, dst.dtype, len(at))
        vals[:] = values
        size, base, sp = dst.dtype.itemsize, dst.data.ptr, self.stream.ptr
        for k, i in enumerate(at):
            self.runtime.memcpyAsync(base + i * size, ptr + k * size, size, _H2D, sp)
        self.work += 1

    def upload(self, name: str, dst: Any, host: np.ndarray) -> None:
        """Copy ``host`` into the device array ``dst`` through pinned staging, on the
        engine's stream and without waiting (a pageable copy blocks the host).
        """
        host = np.ascontiguousarray(host, dtype=dst.dtype).ravel()
        stage, ptr = self._pinned("up:" + name, host.dtype, host.size)
        stage[:] = host
        self.runtime.memcpyAsync(dst.data.ptr, ptr, host.nbytes, _H2D, self.stream.ptr)
        self.work += 1

    # ------------------------------------------------------------------ run
    def run(self, spec: AlgorithmSpec, graph: Graph, params: dict[str, Any],
            sources: np.ndarray | None, config: Config, max_iterations: int,
            progress: Any = None, deadline_s: float | None = None,
            device_arrays: bool = False, fields_in: dict[str, Any] | None = None,
            timer: PhaseTimer | None = None, reorder: Any = None,
            in_place: bool = False) -> Result:
        """Run ``spec`` on ``graph``; with ``device_arrays`` the output fields stay on the
        device as fresh CuPy arrays (finalised there when the algorithm allows it; else
        they come back for the host's ``finalize``). With ``timer`` every timed launch's
        event time is charged to its phase (:mod:`gswitch.engine.timing`).

        ``in_place`` (with ``device_arrays``): outputs that are the run's own fields are
        handed over as views of the graph's core block instead of fresh copies; they hold
        the values until the next run on the graph starts. A staged run passes them to its
        next stage as ``fields_in``, which then finds them where it reads them: no copy
        out and back (:func:`gswitch.staging.run_stages`).

        ``reorder`` (a device index array, ``out[i] = field[reorder[i]]``) puts the
        outputs that hold a value per node back in the caller's order on the device,
        before they are read back, where ``graph`` is a renumbered copy
        (:func:`gswitch.locality.inverse_on_device`); ``stats["in_caller_ids"]`` names
        them. It is left to the host when a host ``finalize`` must see the run's own
        order.
        """
        cp = self.cp
        t_start = time.perf_counter()
        n, m = graph.n_nodes, graph.n_edges
        if m >= 2**31:
            raise DeviceError(
                f"graph has {m} edges; the gpu backend supports fewer than 2^31 edges until "
                "64-bit edge offsets are supported end to end. Use --backend cpu"
            )
        stats: dict[str, Any] = {"active": [], "modes": [], "directions": [],
                                 "edges_processed": 0, "device": self.device_name,
                                 "overflows": 0, "polled_reads": 0}
        all_start = spec.start.kind == "all"
        uniq = None
        if not all_start and hasattr(sources, "__cuda_array_interface__"):
            # a stage's start set chosen on the device: sorted, unique, stays there
            uniq = sources
            if not (isinstance(uniq, cp.ndarray) and uniq.dtype == _I32 and uniq.ndim == 1
                    and uniq.flags.c_contiguous):
                uniq = cp.ascontiguousarray(sources, dtype=np.int32).ravel()
        elif not all_start:
            uniq = np.asarray(sources).ravel()
            if uniq.size > 1:
                uniq = np.unique(uniq)
            uniq = uniq.astype(np.int32, copy=False)
        n_start = n if all_start else int(uniq.size)
        if n == 0 or n_start == 0:
            fields0 = spec.initial_fields(n, params, sources) if fields_in is None \
                else dict(fields_in)
            stats.update(iterations=0, converged=True, time_s=time.perf_counter() - t_start,
                         device_time_s=0.0, kernel_time_s=0.0, compile_time_s=0.0)
            return Result(spec.name, fields0, stats, backend="gpu", config=config)
        res = self._known(graph)
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
        key = (gen.key, config.key(), id(spec))
        plan = res.plans.get(key)
        if plan is not None and plan.spec is not spec:
            plan = None
        mod = self.module(gen) if plan is None else plan.module
        stats["compile_time_s"] = time.perf_counter() - t_c
        rep = None if plan is None else res.repeats.get(key)
        if rep is not None and (rep.plan is not plan or timer is not None
                                or progress is not None or deadline_s is not None):
            rep = None
        caller = cp.cuda.get_current_stream() if device_arrays else None
        self._before_wait = (spec, params, device_arrays, reorder)
        self._early = None
        with self.stream:
            try:
                ctx = None
                if rep is not None:
                    ctx = rep.run(self, res, params, uniq, n_start, max_iterations, fields_in)
                    if ctx is None:  # stale or overflowed: run it again the usual way
                        res.repeats.pop(key, None)
                        rep = None
                    else:
                        stats["replayed"] = True
                if ctx is None:
                    if plan is None:
                        plan = _Plan(self.state_dtype(gen), res, spec, config, gen, mod)
                        if len(res.plans) >= _PLANS_PER_GRAPH:
                            oldest = next(iter(res.plans))
                            del res.plans[oldest]
                            res.repeats.pop(oldest, None)
                        res.plans[key] = plan
                        res.repeats.pop(key, None)  # another spec's plan had this key
                    ctx = LaunchContext(self, plan, config, res, spec, graph, max_iterations,
                                        deadline_s, progress, self.stream, timer)
                    self._setup(ctx, plan, params, uniq, n_start, fields_in)
                    ctx.strategies["launch"].drive(ctx)
                early = self._early
                if early is not None and early[0] is ctx and early[1] == self.work:
                    finalize, here, dev = early[2], True, early[3]  # taken on the device
                else:  # nothing queued, or a launch since (an overflow's)
                    finalize, here = self._results_choice(plan, spec, device_arrays, reorder)
                    dev = None
                if not here:
                    reorder = None  # a host finalize reads the fields in the run's order
                if device_arrays and here:
                    out, trace = self._device_results(ctx, plan, params, finalize, reorder,
                                                      caller, dev, in_place)
                elif here:
                    out, trace = self._finalize_and_read_back(ctx, plan, params, finalize,
                                                              reorder, dev)
                else:  # host arrays; a host finalize follows in the runner
                    out, trace = self._read_back(ctx, plan)
                if finalize and here:
                    stats["finalized_on"] = "device"
                if reorder is not None:
                    stats["in_caller_ids"] = [k for k in out if self._reordered(plan, k)]
            except BaseException:
                # nothing may still be copying into pooled or staging memory that the
                # next run reuses
                self.stream.synchronize()
                raise
            finally:
                self._before_wait = self._early = None
        result = self._finish(ctx, out, trace, stats, t_start, timer)
        if rep is None:
            rec = Repeat.after(ctx, plan)
            if rec is not None:
                res.repeats[key] = rec
        return result

    def _results_choice(self, plan: _Plan, spec: AlgorithmSpec, device_arrays: bool,
                        reorder: Any) -> tuple[bool, bool]:
        """Whether the run's ``finalize`` runs on the device, and whether its outputs are
        taken on the device (finalised, in the caller's order, or handed over as CuPy
        arrays) rather than read back for the host's ``finalize``.
        """
        fbytes = plan.field_bytes
        has_finalize = spec.finalize is not None
        may = has_finalize and spec.finalize_on_device
        if device_arrays:
            finalize = has_finalize
            return finalize, not finalize or (may and self._room_for(_FINALIZE_ROOM * fbytes))
        # the free memory is asked last: a small run's finalize stays on the host
        finalize = (may and (fbytes > _DEVICE_FINALIZE_BYTES or reorder is not None)
                    and self._room_for(_FINALIZE_ROOM * fbytes))
        here = finalize or (reorder is not None and not has_finalize
                            and self._room_for(fbytes))
        return finalize, here

    def outputs_before_wait(self, ctx: LaunchContext) -> Any:
        """Queue the running call's device outputs (its ``finalize`` on the device, the
        gather into the caller's order) behind the launch just queued, before the host
        waits for it: a launch path whose launch usually ends the run (a persistent loop,
        a replay) calls this, so that the host's part of that work overlaps the run
        instead of following it. Nothing is queued where the outputs need no device work;
        a later launch (an overflow's) makes what was queued stale, and the outputs are
        then taken again after the run (``GpuEngine.run`` checks ``work``).

        Gives the event the host waits for instead of the stream, or ``None`` (wait for
        the stream): where the outputs stay on the device, the host needs only what was
        queued before them (the read of the control block), and the caller's stream, not
        the host, waits for the outputs.
        """
        call = self._before_wait
        if call is None:
            return None
        spec, params, device_arrays, reorder = call
        plan = ctx.plan
        finalize, here = self._results_choice(plan, spec, device_arrays, reorder)
        if not here:
            reorder = None
        if not (here and (finalize or reorder is not None)):
            return None
        mark = None
        if device_arrays:
            mark = self._read_mark
            if mark is None:
                mark = self._read_mark = self.cp.cuda.Event(disable_timing=True)
            self.runtime.eventRecord(mark.ptr, self.stream.ptr)
        dev = self._outputs(ctx, plan, params, finalize, reorder)
        self._early = (ctx, self.work, finalize, dev)
        return mark

    @staticmethod
    def _finish(ctx: LaunchContext, out: dict[str, Any], trace: np.ndarray,
                stats: dict[str, Any], t_start: float, timer: PhaseTimer | None = None
                ) -> Result:
        """The run's :class:`Result`: its outputs and the statistics read from the
        control block and the step trace.
        """
        h = ctx.ctl_host
        stats["edges_processed"] = int(h[_EDGES]) | (int(h[_EDGES + 1]) << 32)
        stats["active"] = trace[0::2].tolist()
        modes = trace[1::2].tolist()
        names = ctx.plan.mode_names
        stats["modes"] = [names[x & _MODE_ID] for x in modes]
        stats["directions"] = ["pull" if (x >> 4) & 1 else "push" for x in modes]
        stats["iterations"] = ctx.it
        # a run stopped by its step limit did not converge (the CPU engine says the same)
        stats["converged"] = ctx.done and not ctx.capped
        stats["overflows"] = ctx.overflows
        stats["polled_reads"] = ctx.polled_reads
        if ctx.grid_used is not None:
            stats["grid_blocks"] = ctx.grid_used
        stats["device_time_s"] = ctx.device_time_s()
        stats["kernel_time_s"] = stats["device_time_s"]
        stats["time_s"] = time.perf_counter() - t_start
        if timer is not None:
            timer.note_run(ctx.spec, stats)
        return Result(ctx.spec.name, out, stats, backend="gpu", config=ctx.config)

    def _setup(self, ctx: LaunchContext, plan: _Plan, params: dict[str, Any],
               sources: np.ndarray | None, n_start: int,
               fields_in: dict[str, Any] | None = None) -> None:
        """Fields, pooled buffers, seeded worklist, control block and parameter block.

        Every host-to-device copy goes from page-locked staging on the engine's stream,
        so nothing here waits for the device: the start ids, the control block and the
        initial fields in one copy (see :class:`_CoreBlock`), the parameter block in
        another.
        """
        res = ctx.res
        n = ctx.n_nodes
        rt, sp = self.runtime, self.stream.ptr
        bind = plan.bind
        n_ids = 0 if sources is None else n_start
        fbytes = plan.field_bytes
        core = ctx.core = res.core(n_ids, fbytes)
        host = ctx.core_host = self.core_host(n_ids, fbytes)
        ctx.ctl, ctx.ctl_host = core.ctl, host.ctl
        bind("ctl", core.ctl_ptr)
        bind("trace", core.trace_ptr)
        staged = {}
        for name, offset, dt, member in plan.fields:
            staged[name] = host.field(offset, dt, n)
            bind(member, core.fields_ptr + offset)
        ctx.fields_host = staged
        for axis, name, key, dt, size, zero, member in plan.buffers:
            arr = res.pool.get(key)
            if arr is None or arr.size < size or arr.dtype != dt:
                if arr is not None:
                    res.forget_runs()  # none may keep the array replaced here
                arr = res.pool[key] = self.cp.zeros(size, dtype=dt)  # zero when new, always
            elif zero:
                rt.memsetAsync(arr.data.ptr, 0, arr.nbytes, sp)
            ctx.buffers[(axis, name)] = arr
            bind(member, arr.data.ptr)
        ctx.args = dict(plan.args)
        ctx._polls = plan.polls and self.poll_control
        bind("ctl_mirror", host.ctl_ptr if ctx._polls else 0)
        self.write_inputs(ctx, plan, params, sources, n_start, fields_in)
        small = core.field_bytes <= _EVERY_READ_BYTES
        if (plan.early_read or small) and core.field_bytes <= _EARLY_READ_BYTES:
            # one copy: the control block, the field region and the head of the trace
            # behind it; the host block's field region may be longer than the device's
            # (it served larger graphs), so the trace lands inside it
            ctx._early = [(host.ctl_ptr, core.ctl_ptr,
                           4 * _CTL_ROOM + core.field_bytes + 8 * _EARLY_READ_STEPS)]
            word = host.cap + _CTL_ROOM + core.field_bytes // 4
            ctx._early_trace = host.array[word : word + 2 * _EARLY_READ_STEPS].view(_I32)
            ctx._early_every = small
        elif plan.trace_early:
            # fields too large to come with it: the control block and the head of the
            # trace, two copies before the one wait, so the results need no round trip
            ctx._early = [(host.ctl_ptr, core.ctl_ptr, 4 * _CTL_ROOM),
                          (host.trace_ptr, core.trace_ptr, 8 * _EARLY_READ_STEPS)]
            ctx._early_trace = host.trace[: 2 * _EARLY_READ_STEPS]
            ctx._early_fields = False
        ctx._first_read = ctx._early

    def write_inputs(self, ctx: LaunchContext, plan: _Plan, params: dict[str, Any],
                     sources: Any, n_start: int, fields_in: dict[str, Any] | None) -> None:
        """What differs between runs of a plan whose buffers are bound: the initial
        fields (on the host, or on the device for large ones or ``fields_in``, a stage's
        fields from the stage before), the parameter block, the control block, the start
        ids (host ``sources``, device ones, or ``None`` for every node), the seeded
        worklist. Used by every run and by a replay (:mod:`gswitch.engine.repeat`).
        """
        core, host, n = ctx.core, ctx.core_host, ctx.n_nodes
        rt, sp = self.runtime, self.stream.ptr
        fbytes = plan.field_bytes
        n_ids = 0 if sources is None else n_start
        on_device = fields_in is not None or fbytes > _DEVICE_FILL_BYTES
        if not on_device:  # the last run waited for every copy out of this staging
            plan.spec.fill_fields(ctx.fields_host, params, sources)
        # the engine-wide staging of the block is free: the last run waited for its copy
        block, ctx._block_ptr = self._pinned("core:state", _U8, plan.nbytes)
        block[:] = plan.template_bytes
        ctx._block = block
        put = plan.put
        put(block, "max_it", ctx.max_it)
        put(block, "deadline_ns", ctx.deadline_ns())
        for name, member in plan.params:
            put(block, member, params[name])
        start_count = n if sources is None else n_start
        ctx.mode, ctx.pull = self.initial_state(plan, start_count, n)
        h = host.ctl  # the last run waited for every copy into it
        h.fill(0)
        h[_slot(-1)] = start_count
        h[_MODE] = ctx.mode
        h[_PULL] = ctx.pull
        # the start ids end where the control block begins and the fields follow it:
        # one copy takes all three (the first two when the fields start on the device;
        # not the ids when they are on the device already: a later copy puts them there)
        on_host = isinstance(sources, np.ndarray)
        lead = 4 * n_ids if on_host else 0
        if sources is None:
            start = self._all_nodes(ctx.res, n)
        else:
            start = core.start(n_ids)
        if on_host:
            host.start(n_ids)[:] = sources
            ctx._start_dev, ctx._start_pinned = core.ctl_ptr - lead, host.ctl_ptr - lead
        else:  # a replayed context may hold a host run's
            ctx._start_dev = ctx._start_pinned = 0
        ctx.start_host = sources if on_host else None
        rt.memcpyAsync(core.ctl_ptr - lead, host.ctl_ptr - lead,
                       lead + 4 * _CTL_ROOM + (0 if on_device else fbytes), _H2D, sp)
        self.work += 1
        if sources is not None and not on_host:  # after the control block's copy
            self._copy_on_device(start, sources)
        if on_device:
            if fields_in is not None:
                self._fields_in(core, plan, fields_in, n)
            else:
                self._fill_on_device(ctx, plan, params, None if sources is None else start)
        ctx.strategies["worklist"].seed(ctx, start, sources is None)
        ctx.write_state()

    @staticmethod
    def initial_state(plan: _Plan, start_count: int, n: int) -> tuple[int, int]:
        """The mode word and direction of step 0, from the size of the start set (kept
        on the plan for the sizes seen).
        """
        known = plan.initial_states.get(start_count)
        if known is None:
            driving = plan.strategies["driving"]
            mode = plan.mode_names.index(driving.initial_mode(start_count, n))
            known = (mode, int(bool(plan.strategies["direction"].initial_pull(start_count, n))))
            if len(plan.initial_states) >= 64:
                plan.initial_states.clear()
            plan.initial_states[start_count] = known
        return known

    def _all_nodes(self, res: _Resident, n: int) -> Any:
        """Every node id in order, on the device (kept with the resident graph)."""
        ids = res.pool.get(("core", "all_nodes"))
        if ids is None:
            ids = res.pool[("core", "all_nodes")] = self.cp.arange(n, dtype=np.int32)
        return ids

    def _fill_on_device(self, ctx: LaunchContext, plan: _Plan, params: dict[str, Any],
                        start: Any) -> None:
        """Write the initial fields on the device, as :meth:`AlgorithmSpec.fill_fields`
        does on the host: every node's value, then the sources' (``start``, the device
        start ids, or ``None``), on the engine's stream after the start ids' copy.

        Constants and node ids go in one launch of the module's ``gs_fill_fields``
        (:mod:`gswitch.engine.fill`), with the value at a single host source folded in;
        a per-node input is copied up, and the values at several sources are written
        after it.
        """
        core, n = ctx.core, ctx.n_nodes
        few, base = ctx.start_host, core.fields_ptr
        values = plan.spec.initial_values(params, start is not None)
        source = int(few[0]) if few is not None and few.size == 1 else -1
        # scalars only (no per-node input): their repr tells -0.0 from 0.0, as == does not
        key = (None if any(isinstance(v, np.ndarray) for _f, v, _s in values)
               else (base, n, source >= 0, repr(values)))
        last = plan.fill
        if key is not None and last is not None and last[0] == key:
            launches, rest = last[1], last[2]  # packed already: launched as they are
            for batch in launches:
                batch.args.source = source
        else:
            launches, rest = plan_fill(
                [(name, base + offset, dt) for name, offset, dt, _m in plan.fields],
                values, n, source)
            plan.fill = None if key is None else (key, launches, rest)
        if launches:
            fp, sp = ctx._function_ptr("gs_fill_fields"), self.stream.ptr
            for batch in launches:
                batch.launch(self.driver, fp, sp)
        for name, ptr, dt, written, value, at_source in rest:  # after the launches
            dev = core.field(ptr - base, dt, n)
            if not written:
                if value is NODE_ID:
                    self._copy_on_device(dev, self._all_nodes(ctx.res, n))
                else:  # a per-node input: one copy up
                    dev.set(np.ascontiguousarray(value, dtype=dt), stream=self.stream)
            if at_source is None:
                continue
            if few is not None and few.size <= FEW_VALUES:
                self.put_values("at_source:" + name, dev, few.tolist(),
                                np.full(few.size, at_source, dtype=dt))
            else:
                dev[start] = at_source
        self.work += 1

    def _fields_in(self, core: Any, plan: _Plan, fields_in: dict[str, Any], n: int) -> None:
        """Copy a stage's ``fields_in`` into this run's fields in ``core``. One already in
        its place (the last stage left it there, :meth:`run`'s ``in_place``) is not
        copied; one elsewhere in the field region (a host step moved it) is copied out
        first, since the copies into the region could overwrite it before it is read.
        """
        cp = self.cp
        lo = core.fields_ptr
        hi = lo + plan.field_bytes
        pairs = []
        for name, offset, dt, _m in plan.fields:
            dst, src = core.field(offset, dt, n), fields_in[name]
            if (isinstance(src, cp.ndarray) and lo <= src.data.ptr < hi
                    and not (src.data.ptr == dst.data.ptr and src.dtype == dst.dtype
                             and src.size == dst.size and src.flags.c_contiguous)):
                src = self._fresh_copy(src)
            pairs.append((dst, src))
        for dst, src in pairs:
            self._copy_on_device(dst, src)

    def _copy_on_device(self, dst: Any, src: Any) -> None:
        """``dst[...] = src`` on the engine's stream: one device-to-device copy where
        ``src`` is a contiguous device array of ``dst``'s dtype and size (a CuPy
        assignment costs a kernel and tens of microseconds of host time more), nothing
        where it is ``dst`` itself (a stage's field left where the next stage reads it).
        """
        cp = self.cp
        if (isinstance(src, cp.ndarray) and src.dtype == dst.dtype and src.size == dst.size
                and src.flags.c_contiguous and dst.flags.c_contiguous):
            if src.data.ptr != dst.data.ptr and src.nbytes:
                self.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes, _D2D,
                                         self.stream.ptr)
            return
        dst[...] = cp.asarray(src, dtype=dst.dtype)
