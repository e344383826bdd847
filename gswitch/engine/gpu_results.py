"""How a GPU run's results come back: the read-back half of the engine.

After the launch strategy's ``drive``, :meth:`GpuEngine.run
<gswitch.engine.gpu.GpuEngine.run>` takes the outputs one of three ways, all here:

- as fresh CuPy arrays (``arrays="cupy"``), finalised on the device where the
  algorithm allows it, and only the control block and step trace copied to the host
  (:meth:`ResultsPath._device_results`);
- finalised on the device, then only the outputs copied to the host
  (:meth:`ResultsPath._finalize_and_read_back`);
- every field copied to the host for the host's ``finalize``
  (:meth:`ResultsPath._read_back`).

Each copy goes into page-locked staging (or straight into fresh page-locked arrays for
large results, or in chunks that host threads copy out as they land), then one wait.
:class:`ResultsPath` is a base of :class:`~gswitch.engine.gpu.GpuEngine`: its methods
use the engine's stream, runtime, staging and pools.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from ..errors import AlgorithmError, DeviceError
from .context import LaunchContext
from .memory import _CTL_ROOM, _D2D, _D2H, _TRACE_CAP, _chunks
from .plan import _EARLY_READ_STEPS, _Plan

__all__ = ["ResultsPath"]

#: How long a reading of the device's free memory stands in for a new one (less what
#: the memory pool grew by since): the query costs tens of microseconds a call, and a
#: wrong guess only moves a ``finalize`` to the host or ends in a named DeviceError.
_FREE_MEMORY_TTL_S = 1.0
#: Results of more bytes than this come from the device in chunks of
#: ``_COPY_CHUNK_BYTES``, each copied out of page-locked staging into fresh arrays by a
#: host thread as soon as it has landed: one thread copies (and faults in) well under the
#: memory's bandwidth, about 2 to 4 ms for 16 MB on an H100's host.
_PARALLEL_COPY_BYTES = 4 << 20
_COPY_CHUNK_BYTES = 1 << 20
#: Host threads for that copy at most.
_COPY_THREADS = 8
#: Results of at least this many bytes come back straight into fresh page-locked arrays
#: (:mod:`gswitch.engine.pinned`), one copy each at the bus's speed and none on the host,
#: while the pool's cap allows; else as above.
_PINNED_RESULT_BYTES = 1 << 20


class ResultsPath:
    """The read-back half of :class:`~gswitch.engine.gpu.GpuEngine` (see the module)."""

    def _fresh_copy(self, arr: Any) -> Any:
        """A new device array with the contents of ``arr``, copied on the engine's
        stream (a plain copy of the bytes where ``arr`` is contiguous).
        """
        if not arr.flags.c_contiguous:
            return self.cp.array(arr, copy=True)
        out = self.cp.empty(arr.shape, dtype=arr.dtype)
        if arr.nbytes:
            self.runtime.memcpyAsync(out.data.ptr, arr.data.ptr, arr.nbytes, _D2D,
                                     self.stream.ptr)
        return out

    def _room_for(self, nbytes: int) -> bool:
        """Whether ``nbytes`` more fit on the device: free memory plus what CuPy's pool
        holds unused. The device is asked at most once per ``_FREE_MEMORY_TTL_S``; in
        between, the last answer less what the pool has taken from the device since.
        """
        pool = self.cp.get_default_memory_pool()
        idle = pool.free_bytes()
        if idle > nbytes:  # the pool's idle blocks suffice: no query of the device
            return True
        now, held = time.monotonic(), pool.total_bytes()
        seen = self._free_seen
        if seen is not None and now - seen[0] < _FREE_MEMORY_TTL_S:
            free = seen[1] - (held - seen[2])
        else:
            free = int(self.runtime.memGetInfo()[0])
            self._free_seen = (now, free, held)
        return free + idle > nbytes

    @staticmethod
    def _reordered(plan: _Plan, name: str) -> bool:
        """Whether output ``name`` is a value per node that ``reorder`` moves."""
        f = plan.spec.fields.get(name)
        return f is not None and f.id_kind == ""

    def _outputs(self, ctx: LaunchContext, plan: _Plan, params: dict[str, Any],
                 finalize: bool, reorder: Any) -> dict[str, Any]:
        """The device fields, finalised when ``finalize``, the values per node gathered
        into the caller's order by ``reorder`` (fresh arrays) when given.
        """
        dev = (self._device_finalize(ctx, plan, params) if finalize
               else self._device_fields(ctx, plan))
        if reorder is None:
            return dev
        cp, n = self.cp, ctx.n_nodes
        return {k: v[reorder] if (self._reordered(plan, k) and isinstance(v, cp.ndarray)
                                  and v.ndim == 1 and v.size == n) else v
                for k, v in dev.items()}

    def _finalize_and_read_back(self, ctx: LaunchContext, plan: _Plan,
                                params: dict[str, Any], finalize: bool = True,
                                reorder: Any = None, dev: dict[str, Any] | None = None
                                ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Run the algorithm's ``finalize`` on the device fields (when ``finalize``) and
        the caller's order (``reorder``), then read back the control block, the trace
        and the outputs only: each into page-locked staging (an output finalised in
        place into its own staging region), then one wait. ``dev``: those outputs,
        queued already (:meth:`~gswitch.engine.gpu.GpuEngine.outputs_before_wait`).
        """
        cp = self.cp
        core, host = ctx.core, ctx.core_host
        if dev is None:
            dev = self._outputs(ctx, plan, params, finalize, reorder)
        trace, _queued = self._queue_control_and_trace(ctx)
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
        return self._bring_back(ctx, items, True), trace

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

    def _queue_control_and_trace(self, ctx: LaunchContext, field_bytes: int = 0
                                 ) -> tuple[np.ndarray, bool]:
        """Queue the copies of the control block (unless the last read is current), of
        the first ``field_bytes`` of the fields that follow it (in the same copy when the
        control block goes too) and of the step trace into page-locked memory; the
        trace of the steps run (there once the stream is waited for), and whether
        anything was queued. A trace that came with the last read is not copied again.
        """
        rt, sp = self.runtime, self.stream.ptr
        core, host = ctx.core, ctx.core_host
        steps = min(ctx.it, _TRACE_CAP)
        if (not field_bytes and ctx._early_read_at == self.work
                and steps <= _EARLY_READ_STEPS):
            return ctx._early_trace[: 2 * steps], False
        if ctx._ctl_read_at != self.work:  # the control block and the fields after it
            rt.memcpyAsync(host.ctl_ptr, core.ctl_ptr, 4 * _CTL_ROOM + field_bytes, _D2H, sp)
        elif field_bytes:
            rt.memcpyAsync(host.fields_ptr, core.fields_ptr, field_bytes, _D2H, sp)
        if steps:
            rt.memcpyAsync(host.trace_ptr, core.trace_ptr, 8 * steps, _D2H, sp)
        return host.trace[: 2 * steps], True

    def _device_results(self, ctx: LaunchContext, plan: _Plan, params: dict[str, Any],
                        finalize: bool, reorder: Any = None, caller: Any = None,
                        dev: dict[str, Any] | None = None, in_place: bool = False
                        ) -> tuple[dict[str, Any], np.ndarray]:
        """The outputs as fresh CuPy arrays (the core block is reused by the next run),
        finalised on the device first when ``finalize`` and in the caller's order with
        ``reorder``; only the control block and the trace come back to the host. Where
        they came with the read that found the run over, the host does not wait for the
        copies: ``caller``, the stream current at the call, waits for them on the device.
        ``dev``: the finalised or reordered outputs, queued already
        (:meth:`~gswitch.engine.gpu.GpuEngine.outputs_before_wait`). ``in_place``: the
        run's fields are handed over as the views of the core block they are (see
        :meth:`~gswitch.engine.gpu.GpuEngine.run`).
        """
        cp = self.cp
        if dev is None:
            dev = self._outputs(ctx, plan, params, finalize, reorder)
        out: dict[str, Any] = {}
        core = ctx.core.array
        lo, hi = core.data.ptr, core.data.ptr + core.nbytes
        for name in plan.spec.outputs:
            arr = dev.get(name)
            if arr is None:
                continue
            if not isinstance(arr, cp.ndarray):
                out[name] = cp.asarray(arr)
            elif (arr.base is None and not lo <= arr.data.ptr < hi
                  and all(arr is not o for o in out.values())):
                out[name] = arr  # made by finalize: already the caller's own
            elif in_place:  # for a next stage that reads it there
                out[name] = arr
            else:  # a view of the core block, reused by the next run: copied on the
                out[name] = self._fresh_copy(arr)  # on the engine's stream, waited for below
        trace, queued = self._queue_control_and_trace(ctx)
        rt, sp = self.runtime, self.stream.ptr
        if queued or caller is None:
            rt.streamSynchronize(sp)
            ctx._synced_at = self.work
        else:  # the trace is here: the caller's stream waits for the copies, not the host
            self.hand_over(caller)
        return out, trace

    def hand_over(self, caller: Any) -> None:
        """Make the stream ``caller`` wait, on the device, for what the engine's stream
        has queued so far (results the caller reads there).
        """
        if self._handoff is None:
            self._handoff = self.cp.cuda.Event(disable_timing=True)
        self.runtime.eventRecord(self._handoff.ptr, self.stream.ptr)
        self.runtime.streamWaitEvent(caller.ptr, self._handoff.ptr, 0)

    def fresh_copies(self, arrays: dict[str, Any], blocks: set[int]) -> dict[str, Any]:
        """``arrays`` with those in the device allocations ``blocks`` (the ``id`` of
        their ``data.mem``: core blocks, which the next run reuses) replaced by fresh
        copies, made on the engine's stream; the current stream waits for them.
        """
        cp = self.cp
        out = {k: self._fresh_copy(v) if isinstance(v, cp.ndarray) and id(v.data.mem) in blocks
               else v for k, v in arrays.items()}
        if any(a is not b for a, b in zip(out.values(), arrays.values(), strict=True)):
            self.hand_over(cp.cuda.get_current_stream())
        return out

    def _read_back(self, ctx: LaunchContext, plan: _Plan
                   ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Fresh host copies of the fields and the step trace (the control block is left in
        ``ctx.ctl_host``): every copy queued into pinned memory, then one wait, or none
        when the last read of the control block brought them already.
        """
        steps = min(ctx.it, _TRACE_CAP)
        core = ctx.core
        staged = ctx.fields_host
        if (ctx._early_read_at == self.work and ctx._early_fields
                and steps <= _EARLY_READ_STEPS):  # all here: fresh copies of the staging
            return ({k: np.array(v, copy=True) for k, v in staged.items()},
                    ctx._early_trace[: 2 * steps])
        if (self._pipelined(plan.field_bytes)
                or plan.field_bytes >= _PINNED_RESULT_BYTES):  # each field by its own copy
            items = [(name, staged[name], core.fields_ptr + offset)
                     for name, offset, _dt, _m in plan.fields]
            trace, queued = self._queue_control_and_trace(ctx)
        else:
            items = [(k, v, 0) for k, v in staged.items()]
            trace, queued = self._queue_control_and_trace(ctx, plan.field_bytes)
        return self._bring_back(ctx, items, queued), trace

    def _into_pinned(self, ctx: LaunchContext, items: list[tuple[str, np.ndarray, int]]
                     ) -> dict[str, np.ndarray] | None:
        """The results of :meth:`_bring_back` copied from the device straight into fresh
        page-locked arrays, then one wait; ``None`` (nothing queued) where the pool's cap
        leaves no room for them.
        """
        rt, sp = self.runtime, self.stream.ptr
        fresh = {}
        for name, v, ptr in items:
            if ptr:
                arr = self.results.empty(v.shape, v.dtype)
                if arr is None:
                    return None  # those taken go back to the pool with their arrays
                fresh[name] = arr
        for name, v, ptr in items:
            if ptr:
                rt.memcpyAsync(fresh[name].ctypes.data, ptr, v.nbytes, _D2H, sp)
        rt.streamSynchronize(sp)
        ctx._synced_at = self.work
        return {name: fresh[name] if ptr else np.array(v, copy=True)
                for name, v, ptr in items}

    def copier(self) -> Any:
        """The host threads of large copies to and from the device, made on first use."""
        if self._copier is None:
            from concurrent.futures import ThreadPoolExecutor

            self._copier = ThreadPoolExecutor(self._copy_threads(),
                                              thread_name_prefix="gswitch-copy")
        return self._copier

    def to_device(self, host: np.ndarray) -> Any:
        """A device copy of a host array, queued on the engine's stream; a large one
        through host threads and page-locked staging (:mod:`gswitch.engine.upload`).
        """
        up = self.uploader
        return up.to_device(host, self.copier() if host.nbytes >= up.least and
                            up.threads >= 2 else None)

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
        if moving >= _PINNED_RESULT_BYTES:
            out = self._into_pinned(ctx, items)
            if out is not None:
                return out
        if not self._pipelined(moving):
            for _n, v, ptr in items:
                if ptr:
                    rt.memcpyAsync(v.ctypes.data, ptr, v.nbytes, _D2H, sp)
            if queued or moving:
                rt.streamSynchronize(sp)
                ctx._synced_at = self.work
            return {name: np.array(v, copy=True) for name, v, _p in items}
        copier = self.copier()
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

        list(copier.map(take, range(len(chunks))))
        rt.streamSynchronize(sp)  # every event has passed: returns at once
        ctx._synced_at = self.work
        return out
