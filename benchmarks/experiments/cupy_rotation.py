"""Why a large ``arrays="cupy"`` call costs more beyond its device time when it follows
calls with host arrays (``bench_end_to_end.py``'s rotation) than in a row of its own
(``call_timeline.py``): the same timed call after different predecessors, with the host
steps of the timed call wrapped in ``perf_counter`` pairs.

Usage::

    python benchmarks/experiments/cupy_rotation.py [--alg pagerank] [--scale 22] [--cycles 12]
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import statistics
import time

import numpy as np
from _common import require_gpu

NEVER = 1 << 62


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--alg", default="pagerank")
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--cycles", type=int, default=12)
    args = ap.parse_args()
    require_gpu("cupy_rotation.py")
    import cupy as cp
    from call_breakdown import COUNTS, TOTALS, unwrap_all, wrap

    import gswitch as gs
    from gswitch import runner
    from gswitch.engine import gpu, gpu_results
    from gswitch.generators import rmat

    g = rmat(args.scale, 16, seed=1).symmetrize()
    kw = {"source": int(np.argmax(g.out_degree))} if args.alg == "bfs" else {}
    pinned = gpu_results._PINNED_RESULT_BYTES
    keep = []

    def call(setting: str, hold: bool) -> tuple[float, float]:
        gpu_results._PINNED_RESULT_BYTES = NEVER if setting == "staged" else pinned
        arrays = "cupy" if setting == "cupy" else "numpy"
        t = time.perf_counter()
        r = gs.run(args.alg, g, backend="gpu", arrays=arrays, **kw)
        wall = time.perf_counter() - t
        if hold:  # as bench_end_to_end: the result stays referenced, a host copy made
            keep[:] = [r, r.fields[next(iter(r.fields))]]
            a = keep[1]
            keep.append(a.get() if isinstance(a, cp.ndarray) else a)
        return wall, r.stats["device_time_s"]

    modes = {
        "cupy alone, synced": (["cupy"], True, False),
        "cupy alone, not synced": (["cupy"], False, False),
        "cupy alone, held + get": (["cupy"], False, True),
        "after numpy": (["numpy", "cupy"], False, True),
        "after staged": (["staged", "cupy"], False, True),
        "bench rotation": (["numpy", "staged", "cupy"], False, True),
    }
    for _ in range(3):
        for s in ("numpy", "staged", "cupy"):
            call(s, True)
    stages = [
        (runner, "_plan_call", "plan_call"), (runner, "_execute", "execute"),
        (gpu.GpuEngine, "run", "  engine.run"), (gpu.GpuEngine, "_setup", "    setup"),
        (gpu.GpuEngine, "_fill_on_device", "      fill on device"),
        (gpu.GpuEngine, "outputs_before_wait", "      outputs before wait"),
        (gpu.GpuEngine, "_device_results", "    device_results"),
        (gpu.GpuEngine, "_device_finalize", "      device finalize"),
        (gpu.GpuEngine, "_room_for", "      room_for"),
        (cp.cuda.runtime, "streamSynchronize", "  (streamSynchronize)"),
        (cp.cuda.runtime, "memGetInfo", "  (memGetInfo)"),
        (cp.cuda.runtime, "malloc", "  (cudaMalloc)"),
    ]
    for label, (seq, sync, hold) in modes.items():
        walls, devs = [], []
        totals: dict[str, float] = {}
        counts: dict[str, int] = {}
        for c in range(args.cycles + 1):
            for s in seq[:-1]:
                call(s, hold)
            cp.cuda.Device().synchronize()
            for owner, attr, name in stages:
                wrap(owner, attr, name)
            TOTALS.clear()
            COUNTS.clear()
            t = time.perf_counter()
            w, d = call(seq[-1], hold)
            if sync:
                cp.cuda.Device().synchronize()
                w = time.perf_counter() - t
            unwrap_all()
            if c:
                walls.append(w)
                devs.append(d)
                for k, v in TOTALS.items():
                    totals[k] = totals.get(k, 0.0) + v
                    counts[k] = counts.get(k, 0) + COUNTS[k]
            cp.cuda.Device().synchronize()
        w, d = statistics.median(walls) * 1e3, statistics.median(devs) * 1e3
        beyond = sorted(round((a - b) * 1e3, 3) for a, b in zip(walls, devs))
        print(f"{args.alg} [{label}]: wall {w:.3f} ms, device {d:.3f} ms, beyond {w - d:.3f} "
              f"ms; beyond each: {beyond}", flush=True)
        n = len(walls)
        for k, v in totals.items():
            print(f"    {k:<32} {v / n * 1e6:9.1f} us  ({counts[k] / n:.1f} calls)")


if __name__ == "__main__":
    main()
