"""What every run of one algorithm and configuration on one resident graph shares (the
GPU engine's plan): the compiled module, the parameter block's layout and graph-wide
members, the strategies' buffers and runtime arguments, and each step's kernels with
their arguments packed once for the driver.

Built on the host from arrays already on the device, so importing this module needs
no CuPy.
"""

from __future__ import annotations

import ctypes
import struct
from typing import TYPE_CHECKING, Any

import numpy as np

from ..strategy import AXES, Phase, Strategy
from .memory import _NP_CTYPES, _TRACE_CAP, _align

if TYPE_CHECKING:
    from ..algorithm import AlgorithmSpec
    from ..codegen import GeneratedModule
    from ..config import Config
    from .memory import _Resident

#: Results of at most this many bytes are read back together with the first control
#: read of a launch whose loop runs on the device (``results_with_first_read``).
_EARLY_READ_BYTES = 1 << 20
#: Steps of the trace read with them.
_EARLY_READ_STEPS = 64


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


#: struct codes of the parameter block's member types (written by offset, see _Plan.put)
_STRUCT_CODES = {("b", 1): "?", ("i", 1): "b", ("u", 1): "B", ("i", 2): "h", ("u", 2): "H",
                 ("i", 4): "i", ("u", 4): "I", ("i", 8): "q", ("u", 8): "Q", ("f", 4): "f",
                 ("f", 8): "d"}


class _Plan:
    """What every run of one algorithm and configuration on one resident graph shares.

    Built by the first such run: the compiled module, the address of its parameter
    block, the strategies' buffers and runtime arguments, the phases of each kind of
    step, and a parameter block whose graph-wide members are written once. A repeated
    call then writes only what differs between calls (limits, algorithm parameters,
    and the address of a pooled array that another plan or a growth replaced).
    """

    def __init__(self, dtype: np.dtype, res: _Resident, spec: AlgorithmSpec,
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
        #: the last device fill's key (addresses, source, initial values), its launches
        #: and what they left (GpuEngine._fill_on_device): the same key launches them again
        self.fill: tuple | None = None
        self.dtype = dtype  # the parameter block's (GpuEngine.state_dtype)
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
        if self.strategies["direction"].may_pull:
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
        #: the driving's step modes in mode-number order (the trace's mode words)
        self.mode_names = self.strategies["driving"].mode_names()
        #: start-set size -> (mode word, pull) of step 0 (GpuEngine.initial_state)
        self.initial_states: dict[int, tuple[int, int]] = {}
        launch = self.strategies["launch"]
        self.early_read = (launch.results_with_first_read
                           and self.field_bytes <= _EARLY_READ_BYTES)
        #: larger fields stay, but the trace's head still comes with the first read
        self.trace_early = launch.results_with_first_read
        #: the phase kernel writes its decisions into host memory for the host to poll
        self.polls = launch.polls_control and not gen.cooperative

    def bind(self, member: str, ptr: int) -> None:
        """Point a member of the template at a (pooled) device array."""
        if self._bound.get(member) != ptr:
            self.st[member] = ptr
            self._bound[member] = ptr

    def bound(self, member: str) -> int | None:
        """The device address the template's ``member`` points at, if bound."""
        return self._bound.get(member)

    def put(self, block: np.ndarray, member: str, value: Any) -> None:
        """Write one member into ``block``, the bytes of a parameter block."""
        packer, offset = self._packers[member]
        try:
            packer.pack_into(block, offset, value)
        except (struct.error, OverflowError, TypeError):
            block.view(self.dtype)[0][member] = value  # NumPy's casts and range checks
