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
import platform
import struct
import sys
import time
import weakref
from typing import Any

import numpy as np

from ..algorithm import NODE_ID, AlgorithmSpec
from ..codegen import GeneratedModule, generate_source, numbered, state_dtype
from ..config import Config
from ..errors import (
    AlgorithmError,
    DeadlineExceeded,
    DeviceError,
    InvalidConfig,
    KernelCompileError,
)
from ..graph import Graph
from ..plugins import AXES
from ..result import Result
from ..strategy import Buffer, Phase, Strategy

__all__ = ["GpuEngine", "LaunchContext", "estimate_bytes"]

_MODES = {"data": 0, "topology": 1, "transition": 2}
_MODE_NAMES = {v: k for k, v in _MODES.items()}
_CTL_WORDS = 36
_IT, _MODE, _PULL, _DONE, _DEADLINE, _EDGES = 24, 25, 26, 27, 29, 30  # GS_CTL_*
_TRACE_CAP = 1 << 16
_H2D, _D2H = 1, 2  # cudaMemcpyKind
#: Plans kept per resident graph (a tuning study tries many configurations on one graph).
_PLANS_PER_GRAPH = 64
#: Results of at most this many bytes are read back together with the first control
#: read of a launch whose loop runs on the device (``results_with_first_read``).
_EARLY_READ_BYTES = 1 << 20
#: Steps of the trace read with them.
_EARLY_READ_STEPS = 64
#: Fields of more bytes than this start on the device (a fill kernel per field) instead
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
#: Results of more bytes than this come from the device in chunks of
#: ``_COPY_CHUNK_BYTES``, each copied out of page-locked staging into fresh arrays by a
#: host thread as soon as it has landed: one thread copies (and faults in) well under the
#: memory's bandwidth, about 2 to 4 ms for 16 MB on an H100's host.
_PARALLEL_COPY_BYTES = 4 << 20
_COPY_CHUNK_BYTES = 1 << 20
#: Host threads for that copy at most.
_COPY_THREADS = 8
_NP_CTYPES = {"int": np.int32, "gs_vid": np.int32, "unsigned": np.uint32,
              "unsigned char": np.uint8, "float": np.float32, "long long": np.int64,
              "gs_eid": np.int32, "double": np.float64}


def _slot(it: int) -> int:
    """First word of the counters step ``it`` writes (mirrors ``GS_CTL_SLOT``)."""
    return (it % 3) * 8


#: Words the control block occupies in a core block: 36 used, the rest keeps what
#: follows 256-byte aligned.
_CTL_ROOM = 64
#: How long the host polls a step's decision in page-locked memory before it waits on
#: the stream instead (a long step then costs no busy host core)
_POLL_S = 1e-3


def _align(nbytes: int) -> int:
    return -(-nbytes // 256) * 256


def _chunks(sizes: list[tuple[int, int]], chunk: int) -> list[tuple[int, int, int]]:
    """Byte ranges ``(array index, start, stop)`` covering arrays of the given
    ``(bytes, item size)`` in order, each at most ``chunk`` bytes (rounded down to whole
    items, at least one) and cut between items.
    """
    out = []
    for i, (nbytes, item) in enumerate(sizes):
        step = max(item, chunk // item * item)
        out += [(i, lo, min(nbytes, lo + step)) for lo in range(0, nbytes, step)]
    return out


class _CoreBlock:
    """Start ids, control block, fields and step trace in one array, laid out as
    ``[start ids | control block | fields | trace]`` (each part 256-byte aligned).

    One copy then writes the start ids, the control block and the initial fields, and
    one reads the control block and the fields back, with the head of the trace. The
    start ids end where the control block begins, so a run with fewer of them still
    copies one contiguous range. The device copy lives with a resident graph and the
    page-locked copy with the engine; both grow to the largest run they served, and the
    fields of different algorithms share the field region (a run's results are copied
    out before the next run starts).
    """

    def __init__(self, array: Any, start_cap: int, field_bytes: int) -> None:
        self.array = array
        self.cap = start_cap
        self.field_bytes = field_bytes
        base = array.ctypes.data if isinstance(array, np.ndarray) else array.data.ptr
        #: addresses of the control block, the field region and the trace
        self.ctl_ptr = base + 4 * start_cap
        self.fields_ptr = self.ctl_ptr + 4 * _CTL_ROOM
        self.trace_ptr = self.fields_ptr + field_bytes
        self.ctl = array[start_cap : start_cap + _CTL_WORDS]
        self.trace = array[start_cap + _CTL_ROOM + field_bytes // 4 :].view(np.int32)
        self._views: dict[tuple, Any] = {}

    @classmethod
    def new(cls, alloc: Any, n_start: int, field_bytes: int) -> _CoreBlock:
        """A block with room for ``n_start`` ids and ``field_bytes`` of fields, from
        ``alloc(words)`` (a ``uint32`` array of that many words).
        """
        cap = max(64, -(-n_start // 64) * 64)
        fb = _align(field_bytes)
        return cls(alloc(cap + _CTL_ROOM + fb // 4 + 2 * _TRACE_CAP), cap, fb)

    @classmethod
    def grown(cls, old: _CoreBlock | None, alloc: Any, n_start: int,
              field_bytes: int) -> _CoreBlock:
        """``old`` when it has room for ``n_start`` ids and ``field_bytes`` of fields,
        else a new block from ``alloc`` with room for those and for what ``old`` held.
        """
        if old is not None:
            if old.cap >= n_start and old.field_bytes >= field_bytes:
                return old
            n_start, field_bytes = max(n_start, old.cap), max(field_bytes, old.field_bytes)
        return cls.new(alloc, n_start, field_bytes)

    def start(self, n_start: int) -> Any:
        """The last ``n_start`` slots of the start region, as ``int32``."""
        return self._view(("start", n_start), self.cap - n_start, n_start, np.dtype(np.int32))

    def field(self, offset: int, dtype: np.dtype, n: int) -> Any:
        """``n`` items of ``dtype`` at byte ``offset`` of the field region."""
        return self._view(("field", offset, dtype.str, n),
                          self.cap + _CTL_ROOM + offset // 4, n, dtype)

    def _view(self, key: tuple, word: int, n: int, dtype: np.dtype) -> Any:
        view = self._views.get(key)
        if view is None:
            if len(self._views) >= 32:
                self._views.clear()
            words = -(-n * dtype.itemsize // 4)
            view = self._views[key] = self.array[word : word + words].view(dtype)[:n]
        return view


class _PackedInts:
    """``int`` kernel arguments packed once for the driver's launch call (the array of
    argument addresses that ``cuLaunchKernel`` takes), instead of on every launch.
    """

    def __init__(self, values: tuple[int, ...]) -> None:
        self.values = (ctypes.c_int32 * len(values))(*values)
        base = ctypes.addressof(self.values)
        self.pointers = (ctypes.c_void_p * len(values))(*(base + 4 * i
                                                          for i in range(len(values))))
        #: what ``cuLaunchKernel`` takes as ``kernelParams``
        self.ptr = ctypes.addressof(self.pointers)


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
    return total + 4 * (64 + _CTL_ROOM + 2 * _TRACE_CAP)


_I32 = np.dtype(np.int32)
_U8 = np.dtype(np.uint8)
#: struct codes of the parameter block's member types (written by offset, see _Plan.put)
_STRUCT_CODES = {("b", 1): "?", ("i", 1): "b", ("u", 1): "B", ("i", 2): "h", ("u", 2): "H",
                 ("i", 4): "i", ("u", 4): "I", ("i", 8): "q", ("u", 8): "Q", ("f", 4): "f",
                 ("f", 8): "d"}


class _Resident:
    """A graph's device arrays, the buffer pool of runs on it, and their plans."""

    def __init__(self, cp: Any, graph: Graph) -> None:
        self.cp = cp
        # weak: the engine keeps residents in a WeakKeyDictionary keyed by the graph, and a
        # strong reference from the value would keep graph and device arrays alive forever
        self._graph = weakref.ref(graph)
        self.row = cp.asarray(graph.indptr.astype(np.int32))
        self.col = cp.asarray(graph.indices)
        self.weights = cp.asarray(graph.weights) if graph.weights is not None else None
        self.in_degree = cp.asarray(graph.in_degree.astype(np.int32))
        self.reverse: tuple[Any, Any, Any] | None = None
        self.pool: dict[tuple, Any] = {}
        self.plans: dict[tuple, _Plan] = {}
        self._core: _CoreBlock | None = None

    def core(self, n_start: int, field_bytes: int) -> _CoreBlock:
        """The device start ids, control block, fields and trace, grown as needed."""
        self._core = _CoreBlock.grown(
            self._core, lambda words: self.cp.zeros(words, dtype=np.uint32), n_start,
            field_bytes)
        return self._core

    @property
    def graph(self) -> Graph:
        """The host graph (alive while any run on it is)."""
        graph = self._graph()
        if graph is None:  # pragma: no cover - a run holds its graph
            raise DeviceError("the graph of this resident copy was freed")
        return graph

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


class _Plan:
    """What every run of one algorithm and configuration on one resident graph shares.

    Built by the first such run: the compiled module, the address of its parameter
    block, the strategies' buffers and runtime arguments, the phases of each kind of
    step, and a parameter block whose graph-wide members are written once. A repeated
    call then writes only what differs between calls (limits, algorithm parameters,
    and the address of a pooled array that another plan or a growth replaced).
    """

    def __init__(self, engine: GpuEngine, res: _Resident, spec: AlgorithmSpec,
                 config: Config, gen: GeneratedModule, module: Any) -> None:
        graph = res.graph
        n = graph.n_nodes
        self.spec = spec
        self.gen = gen
        self.module = module
        self.strategies: dict[str, Strategy] = config.strategies()
        self.const_ptr = int(module.get_global("gs").ptr)
        #: kernel name -> CuPy kernel, ("ptr", name) -> its driver handle
        self.functions: dict[Any, Any] = {}
        #: ``(mode, pull)`` (or ``None`` for every phase) -> ``[(phase, kernel args, the
        #: same packed for the driver)]``
        self.steps: dict[Any, list[tuple[Phase, tuple, _PackedInts]]] = {}
        #: what strategies keep between runs of this plan (see :attr:`LaunchContext.memo`)
        self.memo: dict[Any, Any] = {}
        self.dtype = engine.state_dtype(gen)
        self.nbytes = self.dtype.itemsize
        self.template = np.zeros(1, dtype=self.dtype)
        self.template_bytes = self.template.view(np.uint8)
        self.st = self.template[0]  # a view: writes land in the template
        # a member written by offset costs a fraction of a structured-array assignment
        self._packers = {name: (struct.Struct("<" + _STRUCT_CODES[(ft.kind, ft.itemsize)]), off)
                         for name, (ft, off, *_r) in self.dtype.fields.items()}
        self._bound: dict[str, int] = {}
        st = self.st
        st["row"], st["col"] = res.row.data.ptr, res.col.data.ptr
        st["weights"] = res.weights.data.ptr if res.weights is not None else 0
        st["in_degree"] = res.in_degree.data.ptr
        if getattr(self.strategies["direction"], "may_pull", False):
            rrow, rcol, rw = res.reverse_arrays()  # before the deadline clock starts
            st["rrow"], st["rcol"] = rrow.data.ptr, rcol.data.ptr
            st["rweights"] = rw.data.ptr if rw is not None else 0
        st["n"], st["m"], st["trace_cap"] = n, graph.n_edges, _TRACE_CAP
        #: ``(name, byte offset in the core block's field region, dtype, member)``
        self.fields: list[tuple[str, int, np.dtype, str]] = []
        offset = 0
        for name, f in spec.fields.items():
            dt = np.dtype(f.dtype)
            self.fields.append((name, offset, dt, f"F_{name}"))
            offset += _align(max(1, n) * dt.itemsize)
        self.field_bytes = offset
        self.params = [(name, f"P_{name}") for name in spec.params]
        self.buffers: list[tuple] = []
        self.args: dict[tuple[str, str], Any] = {}
        for axis in AXES:
            strat = self.strategies[axis]
            for b in strat.buffers(spec, graph, config):
                self.buffers.append((axis, b.name, ("buf", axis, b.name),
                                     np.dtype(_NP_CTYPES[b.ctype]), max(1, int(b.size)),
                                     b.zero, f"{axis}_{b.name}"))
            for name, (_ctype, value) in strat.runtime_args(graph, config).items():
                self.args[(axis, name)] = value
                st[f"{axis}_{name}"] = value
        launch = self.strategies["launch"]
        self.early_read = (bool(getattr(launch, "results_with_first_read", False))
                           and self.field_bytes <= _EARLY_READ_BYTES)
        #: the phase kernel writes its decisions into host memory for the host to poll
        self.polls = bool(getattr(launch, "polls_control", False)) and not gen.cooperative

    def bind(self, member: str, ptr: int) -> None:
        """Point a member of the template at a (pooled) device array."""
        if self._bound.get(member) != ptr:
            self.st[member] = ptr
            self._bound[member] = ptr

    def put(self, block: np.ndarray, member: str, value: Any) -> None:
        """Write one member into ``block``, the bytes of a parameter block."""
        packer, offset = self._packers[member]
        try:
            packer.pack_into(block, offset, value)
        except (struct.error, OverflowError, TypeError):
            block.view(self.dtype)[0][member] = value  # NumPy's casts and range checks


class LaunchContext:
    """What a launch strategy's ``drive`` gets: the engine API of one run.

    Device work goes through these methods (launches, copies, control words, the
    parameter block), so the context knows whether its last read of the control block
    is still current: the engine skips a read-back that would return the same bytes.

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

    def __init__(self, engine: GpuEngine, plan: _Plan, config: Config, res: _Resident,
                 spec: AlgorithmSpec, graph: Graph, max_it: int, deadline_s: float | None,
                 progress: Any, stream: Any) -> None:
        self.cp = engine.cp
        self.engine = engine
        self.plan = plan
        self.gen = plan.gen
        self.module = plan.module
        self.config = config
        self.strategies = plan.strategies
        self.res = res
        self.spec = spec
        self.graph = graph
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
        self.overflows = 0
        self._events: list[tuple[Any, Any]] = []
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
        self._synced_at = -1  # engine.work when the host last waited for the stream
        #: the device address of the start ids and of their page-locked copy
        self._start_dev = 0
        self._start_pinned = 0
        #: copies queued with the first read of the control block, and when they were
        self._early: list[tuple[int, int, int]] | None = None
        self._early_read_at = -1
        self._early_trace: np.ndarray | None = None
        self._early_every = False  # the results come with every read, not the first only
        #: page-locked views of this run's fields (initial values, then results)
        self.fields_host: dict[str, np.ndarray] = {}

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

    def control(self) -> np.ndarray:
        """The control block, read back through pinned memory (synchronises), or, right
        after a step launch of a launch strategy that polls, the copy the step's kernel
        wrote into host memory once its step number shows there.
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
        rt.streamSynchronize(sp)
        self._state_in_flight = False
        self._ctl_read_at = self._synced_at = self.engine.work
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
                dst.data.copy_from_device_async(src.data, nbytes, self.stream)
            self.engine.work += 1

    def set_control(self, word: int, value: int) -> None:
        """Write one control word."""
        self.ctl[word : word + 1].fill(value)
        self.engine.work += 1

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
        self.engine.work += 1

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

    def _function_ptr(self, name: str) -> int:
        """The driver handle (``CUfunction``) of a kernel of the module."""
        key = ("ptr", name)
        ptr = self._functions.get(key)
        if ptr is None:
            ptr = self._functions[key] = int(self.function(name).kernel.ptr)
        return ptr

    def _timed(self, call: Any) -> None:
        start, end = self._ev_pool.take()
        start.record(self.stream)
        call()
        end.record(self.stream)
        self._events.append((start, end))
        self.engine.work += 1

    def launch_kernel(self, name: str, grid: int, args: tuple) -> None:
        """Launch a kernel of the module over ``grid`` blocks (timed).

        Every kernel of a cooperative module is launched cooperatively, so a helper
        kernel's grid (a worklist's compaction after an overflow, say) is capped at the
        blocks that can be co-resident; kernels loop over their items with a grid stride.
        """
        f = self.function(name)
        grid = max(1, grid)
        if self.gen.cooperative:
            grid = min(grid, self.engine.persistent_grid(f, self.block))
        if not args:  # no argument array for the driver: skip CuPy's packing
            drv, b, sp, fp = self.engine.driver, self.block, self._sp, self._function_ptr(name)
            if self.gen.cooperative:
                self._timed(lambda: drv.launchCooperativeKernel(fp, grid, 1, 1, b, 1, 1, 0, sp,
                                                                0))
            else:
                self._timed(lambda: drv.launchKernel(fp, grid, 1, 1, b, 1, 1, 0, sp, 0, 0))
        else:
            self._timed(lambda: f((grid,), (self.block,), args))

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

    def _step_phases(self, every: bool) -> list[tuple[Phase, tuple, _PackedInts]]:
        """The phases of the next step with their kernel arguments, as values and packed
        for the driver (cached per mode and direction in the plan).
        """
        key = None if every else (self.mode, self.pull)
        phases = self.plan.steps.get(key)
        if phases is None:
            listed = list(enumerate(self.gen.phases))
            if not every:
                listed = [(i, p) for i, p in listed if self.phase_enabled(p)]
            if not listed:  # a step must still decide: run the first phase's test only
                listed = [(0, self.gen.phases[0])]
            last = len(listed) - 1
            phases = self.plan.steps[key] = [
                (p, (np.int32(i), np.int32(k == last)), _PackedInts((i, int(k == last))))
                for k, (i, p) in enumerate(listed)]
        return phases

    def launch_step(self, fixed_grid: int | None = None, timed: bool = True) -> None:
        """Launch the phases of the next step, the last one taking the decision.

        With ``fixed_grid`` (CUDA-graph capture) every phase is launched with that many
        blocks and tests on the device whether it applies; otherwise the phases that do
        not apply are skipped and each grid is sized from its items.

        The phase kernel of a module that is not cooperative goes to the driver with
        its arguments packed once (about 3 us less host time a launch than through
        CuPy's kernel call); kernels of a cooperative module go through CuPy, which
        launches them cooperatively.
        """
        f = self.function("gs_phase_kernel")
        raw = not self.gen.cooperative
        launch, sp = self.engine.driver.launchKernel, self._sp
        fptr = self._function_ptr("gs_phase_kernel") if raw else 0
        record = self._rt.eventRecord
        block = self.block
        for p, args, packed in self._step_phases(fixed_grid is not None):
            grid = fixed_grid or self.phase_grid(p)
            if timed:
                start, end = self._ev_pool.take()
                record(start.ptr, sp)
            if raw:
                launch(fptr, grid, 1, 1, block, 1, 1, 0, sp, packed.ptr, 0)
            else:
                f((grid,), (block,), args)
            if timed:
                record(end.ptr, sp)
                self._events.append((start, end))
        self.engine.work += 1
        if self._polls and fixed_grid is None:  # the last phase writes the decision here
            self._poll_at, self._poll_want = self.engine.work, self.it + 1

    def record(self, call: Any) -> None:
        """Run ``call`` (which enqueues device work) between two timing events."""
        self._timed(call)

    def cooperative_grid(self, kernel: str, blocks_per_sm: int = 0) -> int:
        """Blocks for a cooperative launch: all co-resident, else a refusal; never more
        than :meth:`useful_grid`.
        """
        grid = self.engine.persistent_grid(self.function(kernel), self.block, blocks_per_sm)
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
        total = sum(elapsed(a.ptr, b.ptr) for a, b in self._events)
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
        self.runtime = cp.cuda.runtime
        #: CuPy's driver API: launches without its kernel call's argument packing
        self.driver = cp.cuda.driver
        self._core_host = _CoreBlock.new(
            lambda words: cupyx.empty_pinned(words, dtype=np.uint32), 0, 0)
        self.event_pool = _EventPool(cp)
        #: Counts device work enqueued (see :class:`LaunchContext`).
        self.work = 0
        self._pinned_bufs: dict[tuple[str, np.dtype], tuple[np.ndarray, int]] = {}
        #: module constant-memory address -> bytes of the last copy queued there (every
        #: write goes through :meth:`LaunchContext.write_state`, on the engine's stream)
        self.const_written: dict[int, bytes] = {}
        self._grids: dict[tuple, int] = {}
        self._state_dtypes: dict[str, np.dtype] = {}
        self._cupyx = cupyx
        self._copier: Any = None  # thread pool of _bring_back, made on first need
        #: Whether a launch strategy that polls its decisions in host memory
        #: (:attr:`~gswitch.strategy.LaunchStrategy.polls_control`) may: on x86-64 hosts,
        #: whose loads keep their order (the host reads the step number, then the rest of
        #: the block); elsewhere, and when this is set to ``False``, the host copies the
        #: control block back after every step.
        self.poll_control = platform.machine().lower() in ("x86_64", "amd64")
        self._copy_events: list[Any] = []

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

    def core_host(self, n_start: int, field_bytes: int) -> _CoreBlock:
        """The page-locked start ids, control block, fields and trace, grown as needed.
        Whoever fills it must know that no copy from or into it is still in flight.
        """
        self._core_host = _CoreBlock.grown(
            self._core_host, lambda words: self._cupyx.empty_pinned(words, dtype=np.uint32),
            n_start, field_bytes)
        return self._core_host

    def _pinned(self, name: str, dtype: np.dtype, size: int) -> tuple[np.ndarray, int]:
        """A page-locked host array of ``size`` items and its address, one per name and
        dtype, grown as needed (copies from and to it are asynchronous). Whoever fills it
        must know that no copy from or into it is still in flight.
        """
        key = (name, dtype)
        hit = self._pinned_bufs.get(key)
        if hit is None or hit[0].size < size:
            arr = self._cupyx.empty_pinned(max(1, size), dtype=dtype)
            hit = self._pinned_bufs[key] = (arr, arr.ctypes.data)
        return hit[0][:size], hit[1]

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
            device_arrays: bool = False) -> Result:
        """Run ``spec`` on ``graph``; with ``device_arrays`` the output fields stay on the
        device as fresh CuPy arrays (finalised there when the algorithm allows it; else
        they come back for the host's ``finalize``).
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
        if not all_start:
            uniq = np.asarray(sources).ravel()
            if uniq.size > 1:
                uniq = np.unique(uniq)
            uniq = uniq.astype(np.int32, copy=False)
        n_start = n if all_start else int(uniq.size)
        if n == 0 or n_start == 0:
            fields0 = spec.initial_fields(n, params, sources)
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
        with self.stream:
            try:
                if plan is None:
                    plan = _Plan(self, res, spec, config, gen, mod)
                    if len(res.plans) >= _PLANS_PER_GRAPH:
                        res.plans.pop(next(iter(res.plans)))
                    res.plans[key] = plan
                ctx = LaunchContext(self, plan, config, res, spec, graph, max_iterations,
                                    deadline_s, progress, self.stream)
                self._setup(ctx, plan, params, uniq, n_start)
                ctx.strategies["launch"].drive(ctx)
                fbytes = plan.field_bytes
                if device_arrays:
                    finalize = spec.finalize is not None
                    here = not finalize or (spec.finalize_on_device and self._room_for(
                        _FINALIZE_ROOM * fbytes))
                else:
                    finalize = here = (spec.finalize_on_device and fbytes > _DEVICE_FINALIZE_BYTES
                                       and self._room_for(_FINALIZE_ROOM * fbytes))
                if device_arrays and here:
                    out, trace = self._device_results(ctx, plan, params, finalize)
                elif here:
                    out, trace = self._finalize_and_read_back(ctx, plan, params)
                else:  # host arrays; a host finalize follows in the runner
                    out, trace = self._read_back(ctx, plan)
                if finalize and here:
                    stats["finalized_on"] = "device"
            except BaseException:
                # nothing may still be copying into pooled or staging memory that the
                # next run reuses
                self.stream.synchronize()
                raise
        h = ctx.ctl_host
        stats["edges_processed"] = int(h[_EDGES]) | (int(h[_EDGES + 1]) << 32)
        stats["active"] = trace[0::2].tolist()
        modes = trace[1::2].tolist()
        stats["modes"] = [_MODE_NAMES[x & 15] for x in modes]
        stats["directions"] = ["pull" if x >> 4 else "push" for x in modes]
        stats["iterations"] = ctx.it
        stats["converged"] = ctx.done
        stats["overflows"] = ctx.overflows
        stats["polled_reads"] = ctx.polled_reads
        stats["device_time_s"] = ctx.device_time_s()
        stats["kernel_time_s"] = stats["device_time_s"]
        stats["time_s"] = time.perf_counter() - t_start
        return Result(spec.name, out, stats, backend="gpu", config=config)

    def _setup(self, ctx: LaunchContext, plan: _Plan, params: dict[str, Any],
               sources: np.ndarray | None, n_start: int) -> None:
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
        on_device = fbytes > _DEVICE_FILL_BYTES
        if not on_device:
            plan.spec.fill_fields(staged, params, sources)
        for axis, name, key, dt, size, zero, member in plan.buffers:
            arr = res.pool.get(key)
            if arr is None or arr.size < size or arr.dtype != dt:
                arr = res.pool[key] = self.cp.zeros(size, dtype=dt)  # zero when new, always
            elif zero:
                rt.memsetAsync(arr.data.ptr, 0, arr.nbytes, sp)
            ctx.buffers[(axis, name)] = arr
            bind(member, arr.data.ptr)
        ctx.args = dict(plan.args)
        ctx._polls = plan.polls and self.poll_control
        bind("ctl_mirror", host.ctl_ptr if ctx._polls else 0)
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
        ctx.mode = _MODES[ctx.strategies["driving"].initial_mode(start_count, n)]
        ctx.pull = int(bool(ctx.strategies["direction"].initial_pull(start_count, n)))
        h = host.ctl  # the last run waited for every copy into it
        h.fill(0)
        h[_slot(-1)] = start_count
        h[_MODE] = ctx.mode
        h[_PULL] = ctx.pull
        # the start ids end where the control block begins and the fields follow it:
        # one copy takes all three (the first two when the fields start on the device)
        lead = 4 * n_ids
        if sources is None:
            start = self._all_nodes(res, n)
        else:
            host.start(n_ids)[:] = sources
            start = core.start(n_ids)
            ctx._start_dev, ctx._start_pinned = core.ctl_ptr - lead, host.ctl_ptr - lead
        ctx.start_host = sources
        rt.memcpyAsync(core.ctl_ptr - lead, host.ctl_ptr - lead,
                       lead + 4 * _CTL_ROOM + (0 if on_device else fbytes), _H2D, sp)
        self.work += 1
        if on_device:
            self._fill_on_device(ctx, plan, params, None if sources is None else start)
        ctx.strategies["worklist"].seed(ctx, start, sources is None)
        ctx.write_state()
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
        """
        core, n = ctx.core, ctx.n_nodes
        where = {name: (offset, dt) for name, offset, dt, _m in plan.fields}
        for name, value, at_source in plan.spec.initial_values(params, start is not None):
            offset, dt = where[name]
            dev = core.field(offset, dt, n)
            if value is NODE_ID:
                dev[...] = self._all_nodes(ctx.res, n)
            else:
                dev.fill(value)
            if at_source is not None:
                dev[start] = at_source
        self.work += 1

    def _room_for(self, nbytes: int) -> bool:
        """Whether ``nbytes`` more fit on the device: free memory plus what CuPy's pool
        holds unused.
        """
        free, _total = self.runtime.memGetInfo()
        return free + self.cp.get_default_memory_pool().free_bytes() > nbytes

    def _finalize_and_read_back(self, ctx: LaunchContext, plan: _Plan,
                                params: dict[str, Any]
                                ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Run the algorithm's ``finalize`` on the device fields, then read back the
        control block, the trace and the outputs only: each into page-locked staging
        (an output finalised in place into its own staging region), then one wait.
        """
        cp = self.cp
        core, host = ctx.core, ctx.core_host
        dev = self._device_finalize(ctx, plan, params)
        steps = self._queue_control_and_trace(ctx)
        items: list[tuple[str, np.ndarray, int]] = []
        for name in plan.spec.outputs:
            arr = dev.get(name)
            if arr is None:  # finalize dropped it: so does the host path
                continue
            if not isinstance(arr, cp.ndarray):  # finalize gave a host array
                items.append((name, np.asarray(arr), 0))
                continue
            arr = cp.ascontiguousarray(arr)
            mine = ctx.fields_host.get(name)
            if (mine is not None and mine.dtype == arr.dtype and mine.size == arr.size
                    and arr.data.ptr - core.fields_ptr == mine.ctypes.data - host.fields_ptr):
                to = mine  # finalised in place: its own staging region
            else:
                to = self._pinned("final:" + name, arr.dtype, arr.size)[0].reshape(arr.shape)
            items.append((name, to, arr.data.ptr))
        return self._bring_back(ctx, items, True), host.trace[: 2 * steps]

    def _device_fields(self, ctx: LaunchContext, plan: _Plan) -> dict[str, Any]:
        """CuPy views of this run's fields in the device core block."""
        core, n = ctx.core, ctx.n_nodes
        return {name: core.field(offset, dt, n) for name, offset, dt, _m in plan.fields}

    def _device_finalize(self, ctx: LaunchContext, plan: _Plan,
                         params: dict[str, Any]) -> dict[str, Any]:
        """The algorithm's ``finalize`` run on the device fields (CuPy arrays), with a
        failure named: out of memory, or a function that does not dispatch on CuPy.
        """
        cp = self.cp
        dev = self._device_fields(ctx, plan)
        try:
            return plan.spec.finalize(dev, params) or dev
        except cp.cuda.memory.OutOfMemoryError as exc:
            raise DeviceError(
                f"{plan.spec.name}: the GPU ran out of memory in finalize ({exc}); free "
                "device memory, use a smaller graph or --backend cpu") from exc
        except Exception as exc:  # noqa: BLE001 - any failure of user code, named
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise AlgorithmError(
                f"{plan.spec.name}: finalize failed on the device arrays "
                f"({type(exc).__name__}: {first}); it is declared finalize_on_device=True, so "
                "it may call only NumPy functions that dispatch on their arrays (ufuncs with "
                "out=, empty_like, array methods); fix it or drop finalize_on_device"
            ) from exc

    def _queue_control_and_trace(self, ctx: LaunchContext, field_bytes: int = 0) -> int:
        """Queue the copies of the control block (unless the last read is current), of
        the first ``field_bytes`` of the fields that follow it (in the same copy when the
        control block goes too) and of the step trace into page-locked memory; the
        number of steps traced.
        """
        rt, sp = self.runtime, self.stream.ptr
        core, host = ctx.core, ctx.core_host
        if ctx._ctl_read_at != self.work:  # the control block and the fields after it
            rt.memcpyAsync(host.ctl_ptr, core.ctl_ptr, 4 * _CTL_ROOM + field_bytes, _D2H, sp)
        elif field_bytes:
            rt.memcpyAsync(host.fields_ptr, core.fields_ptr, field_bytes, _D2H, sp)
        steps = min(ctx.it, _TRACE_CAP)
        if steps:
            rt.memcpyAsync(host.trace_ptr, core.trace_ptr, 8 * steps, _D2H, sp)
        return steps

    def _device_results(self, ctx: LaunchContext, plan: _Plan, params: dict[str, Any],
                        finalize: bool) -> tuple[dict[str, Any], np.ndarray]:
        """The outputs as fresh CuPy arrays (the core block is reused by the next run),
        finalised on the device first when ``finalize``; only the control block and the
        trace come back to the host.
        """
        cp = self.cp
        dev = (self._device_finalize(ctx, plan, params) if finalize
               else self._device_fields(ctx, plan))
        out = {}
        for name in plan.spec.outputs:
            arr = dev.get(name)
            if arr is not None:  # copied on the engine's stream, waited for below
                out[name] = cp.array(arr, copy=True) if isinstance(arr, cp.ndarray) \
                    else cp.asarray(arr)
        steps = self._queue_control_and_trace(ctx)
        self.runtime.streamSynchronize(self.stream.ptr)
        ctx._synced_at = self.work
        return out, ctx.core_host.trace[: 2 * steps]

    def _read_back(self, ctx: LaunchContext, plan: _Plan
                   ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Fresh host copies of the fields and the step trace (the control block is left in
        ``ctx.ctl_host``): every copy queued into pinned memory, then one wait, or none
        when the last read of the control block brought them already.
        """
        steps = min(ctx.it, _TRACE_CAP)
        core, host = ctx.core, ctx.core_host
        staged = ctx.fields_host
        if ctx._early_read_at == self.work and steps <= _EARLY_READ_STEPS:
            return self._bring_back(ctx, [(k, v, 0) for k, v in staged.items()], False), \
                ctx._early_trace[: 2 * steps]
        if self._pipelined(plan.field_bytes):  # the fields come in chunks, copied out as they land
            items = [(name, staged[name], core.fields_ptr + offset)
                     for name, offset, _dt, _m in plan.fields]
            steps = self._queue_control_and_trace(ctx)
        else:
            items = [(k, v, 0) for k, v in staged.items()]
            steps = self._queue_control_and_trace(ctx, plan.field_bytes)
        return self._bring_back(ctx, items, True), host.trace[: 2 * steps]

    @staticmethod
    def _copy_threads() -> int:
        return min(_COPY_THREADS, (os.cpu_count() or 1) // 2)

    def _pipelined(self, nbytes: int) -> bool:
        """Whether ``nbytes`` of results come back in chunks copied out by threads."""
        return nbytes > _PARALLEL_COPY_BYTES and self._copy_threads() >= 2

    def _bring_back(self, ctx: LaunchContext, items: list[tuple[str, np.ndarray, int]],
                    queued: bool) -> dict[str, np.ndarray]:
        """Fresh host arrays of the results (the page-locked staging is reused by the
        next run). ``items`` are ``(name, staging, device address)``: an address of 0
        means the staging holds the result, or will once the copies already queued on
        the stream (``queued``) are done.

        Large results (:meth:`_pipelined`) are copied from the device in chunks of
        ``_COPY_CHUNK_BYTES``, an event after each, and host threads copy each chunk out
        of the staging once its event has passed, so the host's copy overlaps the
        transfer (16 MB on an H100 host: 1.2 to 1.4 ms against 4 ms for a transfer then
        a one-thread copy; ``benchmarks/readback_floor.py``). Smaller ones are copied
        whole, then waited for, then copied out.
        """
        rt, sp = self.runtime, self.stream.ptr
        moving = sum(v.nbytes for _n, v, ptr in items if ptr)
        if not self._pipelined(moving):
            for _n, v, ptr in items:
                if ptr:
                    rt.memcpyAsync(v.ctypes.data, ptr, v.nbytes, _D2H, sp)
            if queued or moving:
                rt.streamSynchronize(sp)
                ctx._synced_at = self.work
            return {name: np.array(v, copy=True) for name, v, _p in items}
        if self._copier is None:
            from concurrent.futures import ThreadPoolExecutor

            self._copier = ThreadPoolExecutor(self._copy_threads(),
                                              thread_name_prefix="gswitch-copy")
        out = {name: np.empty_like(v) for name, v, _p in items}
        chunks = _chunks([(v.nbytes, v.dtype.itemsize) for _n, v, _p in items],
                         _COPY_CHUNK_BYTES)
        events = self._copy_events
        while len(events) < len(chunks):
            events.append(self.cp.cuda.Event(disable_timing=True))
        record, wait = rt.eventRecord, rt.eventSynchronize
        for k, (i, lo, hi) in enumerate(chunks):
            _n, v, ptr = items[i]
            if ptr:
                rt.memcpyAsync(v.ctypes.data + lo, ptr + lo, hi - lo, _D2H, sp)
            record(events[k].ptr, sp)  # also after a chunk already staged: queued copies
        src = [v.reshape(-1).view(np.uint8) for _n, v, _p in items]
        dst = [out[name].reshape(-1).view(np.uint8) for name, _v, _p in items]

        def take(k: int) -> None:
            i, lo, hi = chunks[k]
            wait(events[k].ptr)
            np.copyto(dst[i][lo:hi], src[i][lo:hi])

        list(self._copier.map(take, range(len(chunks))))
        rt.streamSynchronize(sp)  # every event has passed: returns at once
        ctx._synced_at = self.work
        return out
