"""The initial fields of a large run, written on the device by one launch.

Every composed module holds ``gs_fill_fields`` (``cuda/fill.cuh``): it writes up to
:data:`FILL_MAX` node fields at once, each a constant or the node's id, with the value
at one source folded in. Before it, a fill cost a CuPy launch per field: 20 to 60 us of
host time each, before the run's kernel could start (PageRank's three fields on a 4M-node
graph: 120 to 170 us on an H200's host). What the kernel cannot write (a per-node input
from the host, an id in a float field) is left to the caller, field by field.

The argument is a C struct passed by value, packed here (:func:`plan_fill` decides
what goes into which launch); importing this module needs no CuPy.
"""

from __future__ import annotations

import ctypes
from typing import Any, NamedTuple

import numpy as np

from ..algorithm import NODE_ID

__all__ = ["FILL_MAX", "FieldFill", "Rest", "pattern", "plan_fill", "writes"]

#: Fields one launch writes (``GS_FILL_MAX`` in ``fill.cuh``).
FILL_MAX = 8
#: Threads per block of the launch, and its most blocks (a grid-stride loop does the rest).
_BLOCK = 256
_MOST_BLOCKS = 4096
#: ``flags`` bits.
NODE_ID_FLAG = 1
SOURCE_FLAG = 2


class _FillArgs(ctypes.Structure):
    """``gs_fill_args`` of ``fill.cuh``, member for member (the same natural alignment)."""

    _fields_ = [("ptr", ctypes.c_uint64 * FILL_MAX), ("bits", ctypes.c_uint64 * FILL_MAX),
                ("at_src", ctypes.c_uint64 * FILL_MAX), ("width", ctypes.c_int32 * FILL_MAX),
                ("flags", ctypes.c_int32 * FILL_MAX), ("n", ctypes.c_int64),
                ("source", ctypes.c_int64), ("k", ctypes.c_int32)]


def pattern(value: Any, dtype: np.dtype) -> int:
    """The bits of ``value`` stored as ``dtype`` (NumPy's cast, as ``ndarray.fill``
    makes it), as an unsigned integer of ``dtype.itemsize`` bytes.
    """
    return int.from_bytes(np.asarray(value, dtype=dtype).tobytes(), "little")


def writes(value: Any, dtype: np.dtype, node_id: bool) -> bool:
    """Whether the kernel writes a field of ``dtype`` starting at ``value`` (the node's
    id where ``node_id``), a field of 4 or 8 bytes (every dtype a node field may have):
    a scalar, or an id into an integer field; not a per-node array.
    """
    if dtype.itemsize not in (4, 8):
        return False
    if node_id:
        return dtype.kind in "iu"
    return np.ndim(value) == 0


class Rest(NamedTuple):
    """What :func:`plan_fill` leaves to the caller for one field."""

    name: str
    ptr: int
    dtype: np.dtype
    #: whether the launches write every node's value
    written: bool
    #: every node's value: a scalar, an array of one per node, or NODE_ID (written by
    #: the caller where ``written`` is ``False``)
    value: Any
    #: the value at the sources, ``None`` where there is none to write
    at_source: Any


def plan_fill(fields: list[tuple[str, int, np.dtype]], values: list[tuple[str, Any, Any]],
              n: int, source: int = -1) -> tuple[list[FieldFill], list[Rest]]:
    """The launches that write the initial ``values`` (``(name, every node's value or
    NODE_ID, value at the sources or None)``, as
    :meth:`~gswitch.algorithm.AlgorithmSpec.initial_values` gives them) into
    ``fields`` (``(name, device address, dtype)``, in the same order), and what is left:
    the fields the kernel cannot write, and the values at the sources unless the run
    has the one ``source`` (``-1``: several, on the device, or none).
    """
    launches = [FieldFill(n, source)]
    rest = []
    for (name, ptr, dt), (_name, value, at_source) in zip(fields, values, strict=True):
        node_id = value is NODE_ID
        if writes(value, dt, node_id):
            if launches[-1].count == FILL_MAX:
                launches.append(FieldFill(n, source))
            folded = source >= 0 and at_source is not None
            launches[-1].add(ptr, dt, value, node_id, at_source if folded else None)
            if folded or at_source is None:
                continue
            rest.append(Rest(name, ptr, dt, True, value, at_source))
        else:
            rest.append(Rest(name, ptr, dt, False, value, at_source))
    return [b for b in launches if b.count], rest


class FieldFill:
    """One launch's argument, reused: :meth:`add` a field at a time, then :meth:`launch`.

    Parameters
    ----------
    n : int
        Items per field (the graph's nodes).
    source : int
        The one source whose value :meth:`add` may set (``-1``: none).
    """

    def __init__(self, n: int, source: int = -1) -> None:
        self.args = _FillArgs()
        self.args.n = n
        self.args.source = source
        self._params = (ctypes.c_void_p * 1)(ctypes.addressof(self.args))

    @property
    def count(self) -> int:
        """Fields added so far."""
        return self.args.k

    def add(self, ptr: int, dtype: np.dtype, value: Any, node_id: bool = False,
            at_source: Any = None) -> None:
        """Write ``value`` (or the node's id, ``node_id``) into every item of the field at
        device address ``ptr``, and ``at_source`` (when not ``None``) at the source.
        """
        a = self.args
        k = a.k
        if k >= FILL_MAX:
            raise ValueError(f"a fill launch writes at most {FILL_MAX} fields")
        a.ptr[k] = ptr
        a.width[k] = dtype.itemsize
        a.bits[k] = 0 if node_id else pattern(value, dtype)
        flags = NODE_ID_FLAG if node_id else 0
        if at_source is not None:
            if a.source < 0:
                raise ValueError("a value at the source needs the source")
            a.at_src[k] = pattern(at_source, dtype)
            flags |= SOURCE_FLAG
        a.flags[k] = flags
        a.k = k + 1

    def launch(self, driver: Any, function: int, stream: int) -> None:
        """Queue the kernel (driver handle ``function``) on ``stream``; nothing where no
        field was added.
        """
        if not self.args.k or not self.args.n:
            return
        grid = min(_MOST_BLOCKS, -(-self.args.n // _BLOCK))
        driver.launchKernel(function, grid, 1, 1, _BLOCK, 1, 1, 0, stream,
                            ctypes.addressof(self._params), 0)

    def emulate(self, memory: dict[int, np.ndarray]) -> None:
        """What the kernel does, in NumPy, on ``memory`` (address -> array of that
        field's dtype): for tests of the packing on a machine without a GPU.
        """
        a = self.args
        ids = np.arange(a.n, dtype=np.uint64)
        for k in range(a.k):
            arr = memory[a.ptr[k]]
            raw = arr.view(np.dtype(f"<u{a.width[k]}"))
            mask = (1 << (8 * a.width[k])) - 1
            raw[:] = (ids & np.uint64(mask)) if a.flags[k] & NODE_ID_FLAG else a.bits[k]
            if a.flags[k] & SOURCE_FLAG:
                raw[a.source] = a.at_src[k]
