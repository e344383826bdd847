"""Result arrays in page-locked host memory, so that a large result comes back in one
direct copy from the device.

A copy from the device into ordinary (pageable) memory runs at a fraction of the bus's
speed, or goes through page-locked staging and a second copy on the host. A result
array that is itself page-locked takes the transfer directly, at the bus's speed, and
the host copies nothing. Such arrays are ordinary NumPy arrays to the caller. Pinning
memory is slow (milliseconds for megabytes) and takes it from the operating system's
pageable pool, so:

- the arrays come from a pool of this module's own, which keeps a released block for
  the next result of the same size (the same graph's next run);
- the pool holds at most :data:`PINNED_RESULT_CAP` bytes, live results and free blocks
  together; a result that would pass it frees the pool's idle blocks first and, if it
  still does not fit, is not pinned (:meth:`PinnedResults.empty` returns ``None`` and
  the engine takes the staged path).

CuPy arrives as an argument, so importing this module needs no CuPy.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

import numpy as np

__all__ = ["PINNED_RESULT_CAP", "PinnedResults"]


def _default_cap() -> int:
    """An eighth of the machine's memory, at most 2 GiB (1 GiB where it is unknown)."""
    try:
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 30
    return int(min(2 << 30, phys // 8))


#: Bytes of page-locked result memory the pool holds at most, live and idle.
PINNED_RESULT_CAP = _default_cap()
_ROUND = 512  # the pool reuses a block for requests of the same rounded size


class PinnedResults:
    """A capped pool of page-locked result arrays (see the module's notes).

    Parameters
    ----------
    cp : module
        CuPy.
    cap : int, optional
        Bytes the pool may hold (default :data:`PINNED_RESULT_CAP`).
    """

    def __init__(self, cp: Any, cap: int | None = None) -> None:
        self._pool = cp.cuda.PinnedMemoryPool()
        self.cap = PINNED_RESULT_CAP if cap is None else int(cap)
        self._lock = threading.Lock()
        self.held = 0  # bytes the pool holds: live results and idle blocks
        self.live = 0  # bytes of results still referenced
        self._idle: dict[int, int] = {}  # rounded size -> idle blocks of that size

    def empty(self, shape: tuple[int, ...] | int, dtype: Any) -> np.ndarray | None:
        """A page-locked array, or ``None`` where it would pass the cap."""
        dtype = np.dtype(dtype)
        count = int(np.prod(shape))
        size = -(-max(1, count * dtype.itemsize) // _ROUND) * _ROUND
        with self._lock:
            if self._idle.get(size, 0):
                self._idle[size] -= 1
            else:
                if self.held + size > self.cap and any(self._idle.values()):
                    self._pool.free_all_blocks()
                    self.held -= sum(s * k for s, k in self._idle.items())
                    self._idle.clear()
                if self.held + size > self.cap:
                    return None
                self.held += size
            self.live += size
        try:
            mem = self._pool.malloc(size)
        except Exception:  # noqa: BLE001 - the host refused to pin: take the staged path
            with self._lock:
                self.held -= size
                self.live -= size
            return None
        out = np.ndarray(shape, dtype=dtype, buffer=mem)
        weakref.finalize(out, self._released, size)
        return out

    def _released(self, size: int) -> None:
        with self._lock:
            self.live -= size
            self._idle[size] = self._idle.get(size, 0) + 1
