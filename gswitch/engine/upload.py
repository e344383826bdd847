"""Large host arrays to the device through page-locked staging that host threads fill.

A copy from ordinary (pageable) memory runs at the speed one host thread copies into the
driver's own staging: 23 ms for the 130 MB of column indices of a 32M-edge graph on an
H200's host (5.6 GB/s), where the bus takes page-locked memory at 50 GB/s (2.6 ms). The
first call on a large graph spends most of its time there. So an array of at least
:data:`PARALLEL_UPLOAD_BYTES` goes up in chunks of :data:`UPLOAD_CHUNK_BYTES`: each host
thread copies its chunks into two page-locked slots of its own in turn, and queues each
slot's transfer on the engine's stream as soon as it is filled, waiting for a slot's
previous transfer (an event) before it fills it again. Smaller arrays, and hosts with
fewer than two threads to spare, take the plain copy.

The slots (``threads * 2 * chunk`` bytes of page-locked memory) are allocated on
the first large upload and kept by the engine. CuPy arrives as an argument, so importing
this module needs no CuPy.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

__all__ = ["PARALLEL_UPLOAD_BYTES", "UPLOAD_CHUNK_BYTES", "Uploader"]

#: Arrays of at least this many bytes go up through the threads' staging.
PARALLEL_UPLOAD_BYTES = 8 << 20
#: Bytes a thread copies into a slot at a time.
UPLOAD_CHUNK_BYTES = 1 << 21
_SLOTS_PER_THREAD = 2
_H2D = 1  # cudaMemcpyHostToDevice


def upload_ranges(nbytes: int, chunk: int, threads: int) -> list[list[tuple[int, int]]]:
    """The byte ranges each thread copies: chunk ``i`` goes to thread ``i % threads``,
    so the threads advance through the array together.

    Parameters
    ----------
    nbytes : int
        Bytes of the array.
    chunk : int
        Bytes of a chunk (the last may be shorter).
    threads : int
        Threads that copy.

    Returns
    -------
    list of list of (int, int)
        For each thread that has work, its ``(start, stop)`` ranges in order; together
        they cover ``0 .. nbytes`` once.
    """
    starts = range(0, nbytes, chunk)
    used = min(threads, len(starts))
    return [[(lo, min(lo + chunk, nbytes)) for lo in starts[t::used]] for t in range(used)]


class Uploader:
    """Copies host arrays to one device on one stream (see the module's notes).

    Parameters
    ----------
    cp : module
        CuPy.
    stream : cupy.cuda.Stream
        The engine's stream; the copies are queued on it, and the caller waits for it.
    device_id : int
        The CUDA device (made current in each copying thread).
    threads : int
        Host threads that copy at most.
    chunk : int, optional
        Bytes a thread copies at a time (default :data:`UPLOAD_CHUNK_BYTES`).
    least : int, optional
        Arrays of fewer bytes take the plain copy (default
        :data:`PARALLEL_UPLOAD_BYTES`).
    """

    def __init__(self, cp: Any, stream: Any, device_id: int, threads: int,
                 chunk: int = UPLOAD_CHUNK_BYTES, least: int = PARALLEL_UPLOAD_BYTES) -> None:
        self.cp = cp
        self.stream = stream
        self.device_id = int(device_id)
        self.threads = int(threads)
        self.chunk = max(1, int(chunk))
        self.least = int(least)
        self._slots: list[tuple[np.ndarray, Any]] = []
        self._memory: Any = None
        self._lock = threading.Lock()  # the slots serve one upload at a time

    def to_device(self, host: np.ndarray, pool: Any) -> Any:
        """A device copy of ``host``, queued on the stream (wait for the stream before
        reading it from another one).

        Parameters
        ----------
        host : numpy.ndarray
            The array (made contiguous where it is not).
        pool : concurrent.futures.Executor or None
            Runs the copying threads (at least :attr:`threads` workers); ``None`` takes
            the plain copy.

        Returns
        -------
        cupy.ndarray
            Same shape and dtype.
        """
        cp = self.cp
        host = np.ascontiguousarray(host)
        dev = cp.empty(host.shape, dtype=host.dtype)
        if pool is None or host.nbytes < self.least or self.threads < 2:
            dev.set(host, stream=self.stream)
            return dev
        src = host.reshape(-1).view(np.uint8)
        plan = upload_ranges(src.size, self.chunk, self.threads)
        rt, sp, base = cp.cuda.runtime, self.stream.ptr, dev.data.ptr

        with self._lock:
            slots = self._staging(len(plan) * _SLOTS_PER_THREAD)

            def copy(t: int) -> None:
                rt.setDevice(self.device_id)  # the stream's device, in this thread
                for j, (lo, hi) in enumerate(plan[t]):
                    buf, event = slots[t * _SLOTS_PER_THREAD + j % _SLOTS_PER_THREAD]
                    rt.eventSynchronize(event.ptr)  # the slot's last transfer is done
                    np.copyto(buf[: hi - lo], src[lo:hi])
                    rt.memcpyAsync(base + lo, buf.ctypes.data, hi - lo, _H2D, sp)
                    rt.eventRecord(event.ptr, sp)

            futures = [pool.submit(copy, t) for t in range(len(plan))]
            for f in futures:  # every thread done with the slots before they serve again
                f.exception()
            for f in futures:
                f.result()
        return dev

    def _staging(self, count: int) -> list[tuple[np.ndarray, Any]]:
        """At least ``count`` page-locked slots with an event each, grown as needed."""
        if len(self._slots) < count or self._slots[0][0].size < self.chunk:
            cp = self.cp
            size = self.chunk
            mem = cp.cuda.alloc_pinned_memory(count * size)
            whole = np.frombuffer(mem, dtype=np.uint8, count=count * size)
            for _buf, event in self._slots:  # the old slots' transfers end first
                event.synchronize()
            self._memory = mem
            self._slots = [(whole[i * size: (i + 1) * size],
                            cp.cuda.Event(disable_timing=True)) for i in range(count)]
        return self._slots
