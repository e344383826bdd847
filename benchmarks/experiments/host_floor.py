"""The host's floor for one small GPU call on this machine: an empty CuPy kernel launch
followed by a 4-byte device-to-host copy and a wait, median of many; then the host cost
of each asynchronous runtime call a run makes (copies, memset, event record, launches),
the mean of many without waiting.

Usage::

    python benchmarks/experiments/host_floor.py [--calls 2000]
"""

from __future__ import annotations

import pathlib
import sys

# the maintained benchmarks' helpers live one folder up
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import ctypes
import time

from _common import require_gpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()
    require_gpu("host_floor.py")
    import cupy as cp

    k = cp.RawKernel(r'extern "C" __global__ void noop(int* x) { if (x[0] == 12345) x[0] = 0; }',
                     "noop")
    x = cp.zeros(1, dtype=cp.int32)
    host = cp.cuda.alloc_pinned_memory(4)
    stream = cp.cuda.Stream(non_blocking=True)
    rows = {}
    for name, readback in (("launch + sync", False), ("launch + 4-byte read-back", True)):
        ts = []
        for i in range(args.calls + 50):
            t = time.perf_counter()
            with stream:
                k((1,), (32,), (x,))
            if readback:
                cp.cuda.runtime.memcpyAsync(host.ptr, x.data.ptr, 4, 2, stream.ptr)
            stream.synchronize()
            if i >= 50:
                ts.append(time.perf_counter() - t)
        ts.sort()
        rows[name] = ts[len(ts) // 2] * 1e6
        print(f"{name}: median {rows[name]:.1f} us")
    rt, sp = cp.cuda.runtime, stream.ptr
    y = cp.zeros(1, dtype=cp.int32)
    ev = cp.cuda.Event()
    coop = cp.RawModule(code=r'''
#include <cooperative_groups.h>
extern "C" __global__ void coop(int* x) {
  cooperative_groups::this_grid().sync();
  if (x[0] == 12345) x[0] = 0;
}''', options=("-std=c++17",), enable_cooperative_groups=True).get_function("coop")
    calls = {
        "memcpyAsync H2D 4 B (pinned)": lambda: rt.memcpyAsync(x.data.ptr, host.ptr, 4, 1, sp),
        "memcpyAsync D2H 4 B (pinned)": lambda: rt.memcpyAsync(host.ptr, x.data.ptr, 4, 2, sp),
        "memcpyAsync D2D 4 B": lambda: rt.memcpyAsync(y.data.ptr, x.data.ptr, 4, 3, sp),
        "copy_from_device_async 4 B": lambda: y.data.copy_from_device_async(x.data, 4, stream),
        "memsetAsync 4 B": lambda: rt.memsetAsync(x.data.ptr, 0, 4, sp),
        "Event.record": lambda: ev.record(stream),
        "kernel launch": lambda: k((1,), (32,), (x,), stream=stream),
        "cooperative launch, 1 block": lambda: coop((1,), (32,), (x,), stream=stream),
    }
    # the same work through the runtime and driver entry points, with the kernel's
    # argument array packed once (what a wrapper object does on every call)
    fptr = k.kernel.ptr
    arg = ctypes.c_void_p(x.data.ptr)
    params = (ctypes.c_void_p * 1)(ctypes.addressof(arg))
    pptr = ctypes.addressof(params)
    drv = cp.cuda.driver
    calls["runtime.eventRecord"] = lambda: rt.eventRecord(ev.ptr, sp)
    calls["driver.launchKernel, packed args"] = lambda: drv.launchKernel(
        fptr, 1, 1, 1, 32, 1, 1, 0, sp, pptr, 0)
    for name, call in calls.items():
        for _ in range(50):
            call()
        stream.synchronize()
        reps = min(args.calls, 500)
        t = time.perf_counter()
        for _ in range(reps):
            call()
        per = (time.perf_counter() - t) / reps
        stream.synchronize()
        rows[name] = per * 1e6
        print(f"{name}: {rows[name]:.2f} us host time a call")
    # four host-loop steps (record, launch, record, read back 64 bytes, wait), through the
    # wrappers and through the raw entry points: the floor of a 4-step host-loop call
    ctl = cp.zeros(16, dtype=cp.int32)
    hctl = cp.cuda.alloc_pinned_memory(64)
    ev2 = cp.cuda.Event()

    def steps_wrapped() -> None:
        for _ in range(4):
            ev.record(stream)
            k((1,), (32,), (x,), stream=stream)
            ev2.record(stream)
            rt.memcpyAsync(hctl.ptr, ctl.data.ptr, 64, 2, sp)
            stream.synchronize()

    def steps_raw() -> None:
        for _ in range(4):
            rt.eventRecord(ev.ptr, sp)
            drv.launchKernel(fptr, 1, 1, 1, 32, 1, 1, 0, sp, pptr, 0)
            rt.eventRecord(ev2.ptr, sp)
            rt.memcpyAsync(hctl.ptr, ctl.data.ptr, 64, 2, sp)
            rt.streamSynchronize(sp)

    # the same four steps with the kernel writing its step number into page-locked host
    # memory (reached through unified addressing) behind a system fence, and the host
    # polling that word instead of copying and waiting on the stream
    import numpy as np

    mk = cp.RawKernel(r'''
extern "C" __global__ void mirrored(int* x, volatile int* h) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    const int seq = atomicAdd(x, 1) + 1;
    __threadfence_system();
    h[0] = seq;
  }
}''', "mirrored")
    mirror_mem = cp.cuda.alloc_pinned_memory(64)
    mirror = np.frombuffer(mirror_mem, dtype=np.int32, count=16)
    counter = cp.zeros(1, dtype=cp.int32)
    marg = (ctypes.c_void_p(counter.data.ptr), ctypes.c_void_p(mirror_mem.ptr))
    mparams = (ctypes.c_void_p * 2)(*(ctypes.addressof(a) for a in marg))
    mptr, mfptr = ctypes.addressof(mparams), mk.kernel.ptr
    seq = [0]

    def steps_mirrored() -> None:
        for _ in range(4):
            rt.eventRecord(ev.ptr, sp)
            drv.launchKernel(mfptr, 1, 1, 1, 32, 1, 1, 0, sp, mptr, 0)
            rt.eventRecord(ev2.ptr, sp)
            seq[0] += 1
            want = seq[0]
            while mirror[0] != want:
                pass

    for name, fn in (("4 host-loop steps, wrappers", steps_wrapped),
                     ("4 host-loop steps, raw calls", steps_raw),
                     ("4 host-loop steps, raw calls, mapped mirror", steps_mirrored)):
        ts = []
        for i in range(args.calls + 50):
            t = time.perf_counter()
            fn()
            if i >= 50:
                ts.append(time.perf_counter() - t)
        ts.sort()
        rows[name] = ts[len(ts) // 2] * 1e6
        print(f"{name}: median {rows[name]:.1f} us")


if __name__ == "__main__":
    main()
