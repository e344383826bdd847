"""Ways to bring a large device array back into a fresh NumPy array, timed on this host.

The GPU engine returns fresh host arrays for results: the page-locked staging it copies
into is reused by the next run. This prices the options for one result of ``--mb`` MiB
(default 16, an int32 field of 4M nodes), median of ``--reps``:

- pinned: device to page-locked staging, then one NumPy copy into a new array;
- pinned + threads: the same, the copy split over host threads (the engine's path);
- pageable: CuPy's ``get()`` into a new array (the driver stages it);
- pipelined: device to staging in chunks, each chunk copied out by a thread as soon as
  its event has passed, so the copy overlaps the transfer;
- and, as floors, the transfer alone and a copy between two host arrays.

Usage::

    python benchmarks/experiments/readback_floor.py [--mb 16] [--reps 30] [--threads 8]
"""

from __future__ import annotations

import pathlib
import sys

# the maintained benchmarks' helpers live one folder up
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from _common import interleaved_rates, require_gpu, write_json


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=int, default=16)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--chunk-mb", type=int, default=1)
    args = ap.parse_args()
    require_gpu("readback_floor.py")
    import cupy as cp
    import cupyx

    n = args.mb << 18  # int32 items
    dev = cp.arange(n, dtype=cp.int32)
    stage = cupyx.empty_pinned(n, dtype=np.int32)
    stream = cp.cuda.Stream(non_blocking=True)
    rt, sp = cp.cuda.runtime, stream.ptr
    pool = ThreadPoolExecutor(args.threads)
    chunk = args.chunk_mb << 18
    bounds = [(i, min(n, i + chunk)) for i in range(0, n, chunk)]
    events = [cp.cuda.Event(disable_timing=True) for _ in bounds]
    want = cp.asnumpy(dev)

    def d2h() -> None:
        rt.memcpyAsync(stage.ctypes.data, dev.data.ptr, 4 * n, 2, sp)
        rt.streamSynchronize(sp)

    def pinned() -> np.ndarray:
        d2h()
        return np.array(stage, copy=True)

    def pinned_threads() -> np.ndarray:
        d2h()
        out = np.empty_like(stage)
        list(pool.map(lambda b: np.copyto(out[b[0]:b[1]], stage[b[0]:b[1]]), bounds))
        return out

    def pageable() -> np.ndarray:
        with stream:
            return dev.get(stream=stream)

    def pipelined() -> np.ndarray:
        out = np.empty_like(stage)
        for (a, b), ev in zip(bounds, events):
            rt.memcpyAsync(stage.ctypes.data + 4 * a, dev.data.ptr + 4 * a, 4 * (b - a), 2, sp)
            ev.record(stream)

        def take(k: int) -> None:
            a, b = bounds[k]
            events[k].synchronize()
            np.copyto(out[a:b], stage[a:b])

        list(pool.map(take, range(len(bounds))))
        return out

    host_src = np.array(want)

    def host_copy() -> np.ndarray:
        return np.array(host_src, copy=True)

    ways = {"transfer only (to staging)": d2h, "pinned + one-thread copy": pinned,
            f"pinned + {args.threads} threads": pinned_threads, "pageable get()": pageable,
            f"pipelined, {args.chunk_mb} MiB chunks": pipelined,
            "host to host copy, fresh array": host_copy}
    out = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "mb": args.mb,
           "ms": {}}
    print(f"{args.mb} MiB back into a fresh array on {out['device']}, median of {args.reps}")
    def check(name, got):
        assert np.array_equal(got, want), name

    out["ms"] = interleaved_rates(ways, args.reps, args.mb, check, width=34)
    write_json("readback_floor", out)


if __name__ == "__main__":
    main()
