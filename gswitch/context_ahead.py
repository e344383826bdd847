"""The CUDA context made on a host thread while CuPy imports.

A first GPU call in a fresh process waits for two things that do not depend on each
other: importing CuPy (a few hundred milliseconds of Python) and creating the device's
CUDA context (the driver's work, about as long). :func:`start` begins the second on a
host thread, through the driver's own library and with Python's lock released, before
the first is done. CuPy's runtime then finds device 0's primary context made, the one
it would have made itself.

It starts only where CuPy is not imported yet: once it is, the caller may have chosen
another device. ``GSWITCH_CONTEXT_AHEAD=0`` in the environment turns it off. Any failure
(no driver library, no device, a device in exclusive use) leaves the context to CuPy, as
before: the thread reports nothing and changes nothing.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

__all__ = ["start", "wait"]

_thread: threading.Thread | None = None
_lock = threading.Lock()
#: the driver's status of each step the thread made (for tests and diagnostics)
outcome: dict[str, int] = {}


def _driver() -> ctypes.CDLL | None:
    """The CUDA driver library, or ``None`` where it does not load."""
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def _make() -> None:
    """Initialise the driver and retain device 0's primary context (each call releases
    Python's lock while the driver works).
    """
    lib = _driver()
    if lib is None:
        outcome["driver"] = -1
        return
    outcome["init"] = lib.cuInit(0)
    if outcome["init"]:
        return
    dev = ctypes.c_int()
    outcome["device"] = lib.cuDeviceGet(ctypes.byref(dev), 0)
    if outcome["device"]:
        return
    ctx = ctypes.c_void_p()
    # kept for the life of the process, as CuPy's runtime keeps its own reference
    outcome["context"] = lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)


def start() -> bool:
    """Begin making device 0's CUDA context on a host thread; whether it began (not
    when CuPy is already imported, a thread already ran, or the environment says no).
    """
    global _thread
    if ("cupy" in sys.modules or os.environ.get("GSWITCH_CONTEXT_AHEAD", "1") == "0"
            or _thread is not None):
        return False
    with _lock:
        if _thread is not None:
            return False
        _thread = threading.Thread(target=_make, name="gswitch-cuda-context")
        _thread.start()
    return True


def wait() -> None:
    """Wait for the thread of :func:`start`, where one ran."""
    t = _thread
    if t is not None:
        t.join()
