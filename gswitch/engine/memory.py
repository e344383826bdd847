"""Device memory of the GPU engine: the core block, resident graphs and their pools.

What lives on the device (and in its page-locked mirror) between and during runs: the
layout of the control block the kernels and the host share, the core block that holds
a run's start ids, control block, fields and step trace in one array
(:class:`_CoreBlock`), a graph's resident arrays with the buffer pool and plans of the
runs on it (:class:`_Resident`), the timing events reused across runs
(:class:`_EventPool`), and the estimate of the device bytes a run needs
(:func:`estimate_bytes`). CuPy arrives as an argument (``cp``) or through the arrays
handed in, so importing this module needs no CuPy.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..algorithm import AlgorithmSpec
from ..config import Config
from ..errors import DeviceError
from ..graph import Graph
from ..strategy import Buffer

__all__ = ["estimate_bytes"]

#: The mode word's bits that number the step mode (the rest is the driving's state).
_MODE_ID = 15
_CTL_WORDS = 36
_IT, _MODE, _PULL, _DONE, _DEADLINE, _EDGES = 24, 25, 26, 27, 29, 30  # GS_CTL_*
_TRACE_CAP = 1 << 16
_H2D, _D2H, _D2D = 1, 2, 3  # cudaMemcpyKind
_NP_CTYPES = {"int": np.int32, "gs_vid": np.int32, "unsigned": np.uint32,
              "unsigned char": np.uint8, "float": np.float32, "long long": np.int64,
              "unsigned long long": np.uint64, "gs_eid": np.int32, "double": np.float64}


def _slot(it: int) -> int:
    """First word of the counters step ``it`` writes (mirrors ``GS_CTL_SLOT``)."""
    return (it % 3) * 8


#: Directed graphs of at most this many edges get their reverse built on the host.
HOST_REVERSE_EDGES = 1 << 18

#: Words the control block occupies in a core block: 36 of counters and step state,
#: then the algorithm's step totals (GS_CTL_SUMS: three slots of four doubles, to word
#: 60); at word 64, on a 256-byte line of its own, the persistent kernel's barrier word
#: (GS_CTL_BARRIER); the rest keeps what follows 256-byte aligned. A run zeroes all of it.
_CTL_ROOM = 128


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
        self.ctl = array[start_cap : start_cap + _CTL_ROOM]
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


def _buffer_bytes(b: Buffer) -> int:
    return np.dtype(_NP_CTYPES[b.ctype]).itemsize * max(1, int(b.size))


def estimate_bytes(graph: Graph, spec: AlgorithmSpec, config: Config) -> int:
    """Device bytes a run needs: graph arrays (and reverse), fields, strategy buffers."""
    n, m = graph.n_nodes, graph.n_edges
    total = 4 * (n + 1) + 4 * m + (4 * m if graph.weighted else 0) + 4 * n
    strategies = config.strategies()
    if strategies["direction"].may_pull and graph.directed:
        # the transpose, plus the scratch of building it on the device (sort order, sources)
        total += 4 * (n + 1) + 4 * m + (4 * m if graph.weighted else 0) + 16 * m
    total += sum(np.dtype(f.dtype).itemsize * n for f in spec.fields.values())
    for s in strategies.values():
        total += sum(_buffer_bytes(b) for b in s.buffers(spec, graph, config))
    return total + 4 * (64 + _CTL_ROOM + 2 * _TRACE_CAP)



class _Resident:
    """A graph's device arrays, the buffer pool of runs on it, and their plans."""

    def __init__(self, cp: Any, graph: Graph, upload: Any = None) -> None:
        # upload(host array) -> device array, queued on the caller's stream
        upload = upload or cp.asarray
        self.cp = cp
        self.upload = upload
        # weak: the engine keeps residents in a WeakKeyDictionary keyed by the graph, and a
        # strong reference from the value would keep graph and device arrays alive forever
        self._graph = weakref.ref(graph)
        self.row = upload(graph.indptr.astype(np.int32))
        self.col = upload(graph.indices)
        self.weights = upload(graph.weights) if graph.weights is not None else None
        # counted on the device for a large graph whose host counts were never asked
        # for (a host bincount of 30M edges' targets takes tens of ms); a small one's on
        # the host, where CuPy's bincount would load cupyx on a first call
        known = getattr(graph, "_in_degree", None)
        if known is not None or graph.n_edges <= HOST_REVERSE_EDGES:
            self.in_degree = cp.asarray(graph.in_degree.astype(np.int32))
        else:
            self.in_degree = cp.bincount(self.col, minlength=graph.n_nodes).astype(cp.int32)
        self.reverse: tuple[Any, Any, Any] | None = None
        self.pool: dict[tuple, Any] = {}
        self.plans: dict[tuple, Any] = {}  # the engine's plans (engine.plan._Plan)
        #: the last run of each plan, where a repeated call may replay it (same keys;
        #: engine.repeat.Repeat). Kept here, not on the plan, so that a graph's
        #: device arrays go with it at once, with no reference cycle to collect
        self.repeats: dict[tuple, Any] = {}
        self._core: _CoreBlock | None = None

    def core(self, n_start: int, field_bytes: int) -> _CoreBlock:
        """The device start ids, control block, fields and trace, grown as needed."""
        block = _CoreBlock.grown(
            self._core, lambda words: self.cp.zeros(words, dtype=np.uint32), n_start,
            field_bytes)
        if block is not self._core:
            self._core = block
            self.forget_runs()
        return block

    def forget_runs(self) -> None:
        """Drop the replay records: a record holds the blocks and pooled arrays its run
        used, and must not keep one alive once the graph has replaced it (a grown core
        block or worklist can be tens of megabytes).
        """
        self.repeats.clear()

    @property
    def graph(self) -> Graph:
        """The host graph (alive while any run on it is)."""
        graph = self._graph()
        if graph is None:  # pragma: no cover - a run holds its graph
            raise DeviceError("the graph of this resident copy was freed")
        return graph

    def reverse_arrays(self, on_device: bool | None = None) -> tuple[Any, Any, Any]:
        """In-edges as CSR, built on first use.

        The host graph's transpose is uploaded when it exists already, or when the graph
        has at most :data:`HOST_REVERSE_EDGES` edges (the host builds it in
        milliseconds, where the device's sort, search and counts are a handful of CuPy
        kernels that a first call in a fresh process would compile); otherwise a stable
        device sort of the destinations builds it (the same order as
        :attr:`Graph.reverse <gswitch.graph.Graph.reverse>`: in-edges by source), which
        takes milliseconds where the host sort of a large graph takes seconds.
        ``on_device`` forces one way (``gswitch compile`` warms the device's).
        """
        if self.reverse is None:
            cp, graph = self.cp, self.graph
            if on_device is None:
                on_device = (graph.built_reverse() is None
                             and graph.n_edges > HOST_REVERSE_EDGES)
            if not graph.directed:
                self.reverse = (self.row, self.col, self.weights)
            elif not on_device:
                rev = graph.reverse
                up = self.upload
                self.reverse = (cp.asarray(rev.indptr.astype(np.int32)), up(rev.indices),
                                up(rev.weights) if rev.weights is not None else None)
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
