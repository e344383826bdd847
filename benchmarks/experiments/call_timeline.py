"""Where a warm GPU call's time goes beyond its device time: a host breakdown and the
device's timeline.

Three passes over the same resident graph:

1. plain calls, each ending in a device synchronise (so work left queued by an
   ``arrays="cupy"`` call counts): median wall and device time;
2. the same calls with the engine's steps wrapped in ``perf_counter`` pairs: mean host
   time per step and call;
3. with ``--trace FILE``, a few calls under ``torch.profiler`` (CUPTI sees every kernel,
   copy and fill of the process, CuPy's included), written as a Chrome trace; read it
   with ``timeline_gaps.py``: the device's busy time and idle gaps inside a call.

Usage::

    python benchmarks/experiments/call_timeline.py [--alg cc] [--scale 22] [--tiny]
        [--calls 200] [--arrays cupy] [--trace FILE]
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import statistics
import time

import numpy as np
from _common import require_gpu, symmetric_rmat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--alg", default="cc")
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--tiny", action="store_true", help="a 4-node path instead of RMAT")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--arrays", default="cupy")
    ap.add_argument("--trace", default="", help="write a torch.profiler Chrome trace here")
    ap.add_argument("--cprofile", type=int, default=0,
                    help="also profile this many calls with cProfile (top functions)")
    args = ap.parse_args()
    require_gpu("call_timeline.py")
    import cupy as cp

    import gswitch as gs

    if args.tiny:
        g = gs.Graph.from_edges([0, 1, 2], [1, 2, 3], n_nodes=4).symmetrize()
        name = "path-4"
    else:
        g = symmetric_rmat(args.scale)
        name = f"RMAT-{args.scale}"
    kw = {"source": int(np.argmax(g.out_degree))} if args.alg in ("bfs", "sssp") else {}
    for _ in range(5):
        gs.run(args.alg, g, backend="gpu", arrays=args.arrays, **kw)
    cp.cuda.Device().synchronize()
    call = lambda: gs.run(args.alg, g, backend="gpu", arrays=args.arrays, **kw)  # noqa: E731
    walls, devs, steps = [], [], []
    for _ in range(args.calls):
        t = time.perf_counter()
        r = call()
        cp.cuda.Device().synchronize()
        walls.append(time.perf_counter() - t)
        devs.append(r.stats["device_time_s"])
        steps.append(r.stats.get("host_step_s", 0.0))
    w, d = statistics.median(walls) * 1e3, statistics.median(devs) * 1e3
    print(f"{args.alg} {name} arrays={args.arrays}: wall {w:.3f} ms, device {d:.3f} ms, "
          f"beyond {w - d:.3f} ms; iterations {r.iterations}; source "
          f"{r.stats.get('config_source')}")
    if any(steps):  # counted as device time in the stats; here as host time too
        h = statistics.median(steps) * 1e3
        print(f"  host steps {h:.3f} ms: beyond the stages' device time {w - d + h:.3f} ms")
    print(f"  config {r.config.to_dict() if r.config is not None else None}")
    _breakdown(call, args.calls, cp)
    if args.cprofile:
        _cprofile(call, args.cprofile, cp)
    if args.trace:
        _trace(call, args.trace, cp)


def _breakdown(call, calls: int, cp) -> None:
    """Mean host time per call of the engine's steps (nested: a step's time includes
    the steps it calls)."""
    from call_breakdown import COUNTS as counts
    from call_breakdown import TOTALS as totals
    from call_breakdown import unwrap_all, wrap

    from gswitch import runner, staging
    from gswitch.engine import context, gpu

    wrap(runner, "_plan_call", "plan_call")
    wrap(runner, "prepare_sources", "prepare_sources")
    wrap(runner, "_execute", "execute")
    wrap(staging, "_apply", "  stage: apply host step output")
    wrap(gpu.GpuEngine, "run", "  engine.run")
    wrap(gpu.GpuEngine, "_setup", "    setup")
    wrap(gpu.GpuEngine, "_fill_on_device", "      fill on device")
    wrap(gpu.LaunchContext, "__init__", "    LaunchContext")
    wrap(gpu.LaunchContext, "write_state", "      write_state")
    wrap(context.LaunchContext, "control", "      control (waits)")
    wrap(gpu.GpuEngine, "_device_results", "    device_results")
    wrap(gpu.GpuEngine, "_device_finalize", "      device finalize")
    wrap(gpu.GpuEngine, "_read_back", "    read_back")
    wrap(gpu.GpuEngine, "_finalize_and_read_back", "    finalize_and_read_back")
    wrap(gpu.LaunchContext, "device_time_s", "    device_time_s (event reads)")
    launch_cls = type(call().config.strategies()["launch"])
    wrap(launch_cls, "drive", f"    drive ({launch_cls.name})")
    wrap(gpu.LaunchContext, "launch_kernel", "      launch_kernel")
    wrap(gpu.LaunchContext, "launch_step", "      launch_step")
    wrap(gpu.LaunchContext, "cooperative_grid", "      cooperative_grid")
    wrap(gpu.GpuEngine, "_room_for", "      room_for")
    wrap(gpu.GpuEngine, "_known", "    known (resident lookup)")
    wrap(gpu, "generate_source", "    generate_source")
    from gswitch.engine import repeat

    wrap(repeat.Repeat, "_replay", "    replay")
    wrap(gpu.GpuEngine, "write_inputs", "      write_inputs")
    rt = cp.cuda.runtime
    wrap(rt, "streamSynchronize", "  (streamSynchronize, any)")
    wrap(rt, "eventSynchronize", "  (eventSynchronize, any)")
    for _ in range(3):
        call()
    totals.clear()
    counts.clear()
    t = time.perf_counter()
    for _ in range(calls):
        call()
        cp.cuda.Device().synchronize()
    wall = (time.perf_counter() - t) / calls
    unwrap_all()
    print(f"  wrapped: {wall * 1e6:.1f} us a call (mean); per call, host time of:")
    for k, v in totals.items():
        print(f"    {k:<36} {v / calls * 1e6:8.1f} us  ({counts[k] / calls:.1f} calls)")


def _cprofile(call, calls: int, cp) -> None:
    """The functions of most own host time over ``calls`` calls (cProfile)."""
    import cProfile
    import io
    import pstats

    prof = cProfile.Profile()
    for _ in range(calls):
        prof.enable()
        call()
        prof.disable()
        cp.cuda.Device().synchronize()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(30)
    print(f"  cProfile of {calls} calls (own time, the 30 largest):")
    print(out.getvalue())


def _trace(call, path: str, cp) -> None:
    """A few calls under torch.profiler (CUDA activity), each in a record_function."""
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile, record_function
    except ImportError as exc:
        print(f"  no trace: torch.profiler is not importable ({exc})")
        return
    torch.cuda.init()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(8):
            with record_function(f"call {i}"):
                call()
                cp.cuda.Device().synchronize()
            time.sleep(0.001)
    prof.export_chrome_trace(path)
    print(f"  trace written to {path}")

if __name__ == "__main__":
    main()
