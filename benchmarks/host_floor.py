"""The host's floor for one small GPU call on this machine: an empty CuPy kernel launch
followed by a 4-byte device-to-host copy and a wait, median of many.

Usage::

    python benchmarks/host_floor.py [--calls 2000]
"""

from __future__ import annotations

import argparse
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


if __name__ == "__main__":
    main()
