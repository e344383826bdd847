"""Line-by-line host time of warm GPU calls (line_profiler, carried as a wheel): the
4-node BFS as a plain call, and a large call on symmetrised RMAT with device arrays.

Usage::

    python benchmarks/experiments/line_profile_call.py [--tiny 3000] [--alg cc]
        [--scale 22] [--calls 50]
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import io

from _common import TINY_EDGES, require_gpu, symmetric_rmat


def _profiler():
    from gswitch.strategies.launch import persistent
    from line_profiler import LineProfiler

    from gswitch import runner, staging
    from gswitch.engine import context, gpu

    lp = LineProfiler()
    for fn in (runner.run, runner._execute, runner._plan_call, gpu.GpuEngine.run,
               gpu.GpuEngine._setup, gpu.GpuEngine._read_back, gpu.GpuEngine._device_results,
               persistent.PersistentLaunch.drive, context.LaunchContext.__init__,
               staging.run_stages, staging._gpu_results, staging._apply,
               gpu.GpuEngine._fill_on_device, gpu.GpuEngine._finish,
               context.LaunchContext.control):
        lp.add_function(fn)
    for name in ("write_inputs", "_copy_on_device", "_fresh_copy",  # newer engines only
                 "_device_finalize", "_outputs"):
        if hasattr(gpu.GpuEngine, name):
            lp.add_function(getattr(gpu.GpuEngine, name))
    from gswitch import arrayops

    for name in ("divide_by_sum", "_divide_on_device"):  # PageRank's finalize
        if hasattr(arrayops, name):
            lp.add_function(getattr(arrayops, name))
    from gswitch.engine import repeat

    lp.add_function(repeat.Repeat._replay)
    from gswitch.plugins import get_registry

    for st in get_registry().algorithm("cc").stages:  # the default CC's host steps
        if hasattr(st, "func"):
            lp.add_function(st.func)
    return lp


def _show(lp, title: str) -> None:
    buf = io.StringIO()
    lp.print_stats(stream=buf, output_unit=1e-6, stripzeros=True)
    print(f"===== {title}")
    print(buf.getvalue())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiny", type=int, default=3000)
    ap.add_argument("--alg", default="cc")
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--calls", type=int, default=50)
    args = ap.parse_args()
    require_gpu("line_profile_call.py")
    import gswitch as gs

    if args.tiny:
        tiny = gs.Graph.from_edges(*TINY_EDGES)
        for _ in range(100):
            gs.run("bfs", tiny, source=0, backend="gpu")
        lp = _profiler()
        for _ in range(args.tiny):
            lp.runcall(gs.run, "bfs", tiny, source=0, backend="gpu")
        _show(lp, f"4-node BFS, plain call, {args.tiny} calls (times are totals)")
    if args.calls:
        g = symmetric_rmat(args.scale)
        for _ in range(3):
            gs.run(args.alg, g, backend="gpu", arrays="cupy")
        lp = _profiler()
        for _ in range(args.calls):
            lp.runcall(gs.run, args.alg, g, backend="gpu", arrays="cupy")
        _show(lp, f"{args.alg} RMAT-{args.scale}, arrays=cupy, {args.calls} calls")


if __name__ == "__main__":
    main()
