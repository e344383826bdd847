"""Where the end-to-end time of one small GPU call goes, stage by stage, without a profiler.

Each stage of :func:`gswitch.run` is wrapped in a ``perf_counter`` pair (well under a
microsecond each), many warm calls run, and the mean time of each stage is printed
beside the mean end-to-end time and the host floor of the same run (an empty launch and
a synchronise). Stages nest: ``engine.run`` contains ``setup``, ``drive`` and
``read_back``; ``drive`` contains ``launch`` and ``wait``.

Usage::

    python benchmarks/experiments/call_breakdown.py [--calls 2000] [--launch persistent] [--json F]
        [--grid N | --rmat SCALE] [--config JSON]

``--grid N`` splits a call on the NxN grid instead (BFS from a corner, the persistent
settings of the level-synchronous suggestion, or ``--config``), where copying fields in
and out counts; ``--rmat SCALE`` on a symmetrised RMAT graph (edge factor 16) from its
hub.
"""

from __future__ import annotations

import pathlib
import sys

# the maintained benchmarks' helpers live one folder up
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import json
import time
from collections import defaultdict
from typing import Any

import numpy as np
from _common import TINY_EDGES, launch_floor, require_gpu, tiny_bfs_times

TOTALS: dict[str, float] = defaultdict(float)
#: calls of each wrapped stage since TOTALS was last cleared
COUNTS: dict[str, int] = defaultdict(int)
#: (owner, attr, original) of every wrap, for unwrap_all
SAVED: list[tuple[Any, str, Any]] = []


def wrap(owner: Any, attr: str, label: str) -> None:
    """Replace ``owner.attr`` by a version that adds its time to ``TOTALS[label]`` (and
    a call to ``COUNTS[label]``)."""
    fn = getattr(owner, attr, None)
    if fn is None:  # an older revision without this stage (A/B runs)
        return
    SAVED.append((owner, attr, fn))

    def timed(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            TOTALS[label] += time.perf_counter() - t
            COUNTS[label] += 1

    setattr(owner, attr, timed)


def unwrap_all() -> None:
    """Put back every function :func:`wrap` replaced."""
    while SAVED:
        owner, attr, fn = SAVED.pop()
        setattr(owner, attr, fn)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--launch", default="persistent")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--grid", type=int, default=0, help="BFS on the NxN grid instead")
    ap.add_argument("--rmat", type=int, default=0, help="BFS on RMAT of this scale instead")
    ap.add_argument("--config", default="", help="configuration as JSON (--grid, --rmat)")
    args = ap.parse_args()
    require_gpu("call_breakdown.py")

    import gswitch as gs
    from gswitch import runner
    from gswitch.engine import gpu
    from gswitch.plugins import get_registry

    tiny = gs.Graph.from_edges(*TINY_EDGES)
    conf = gs.Config({"launch": args.launch})
    source = 0
    if args.grid or args.rmat:
        from gswitch.generators import grid2d, rmat

        if args.grid:
            tiny = grid2d(args.grid, args.grid)
            conf = gs.Config({"worklist": "warp_aggregated", "load_balance": "virtual_warp",
                              "load_balance.size": 4, "launch": "persistent",
                              "block_size": 128, "read_before_atomic": False,
                              "l2_prefetch": True})
        else:
            tiny = rmat(args.rmat, 16, seed=1).symmetrize()
            source = int(np.argmax(tiny.out_degree))
            conf = gs.Config({})
        if args.config:
            conf = gs.Config(json.loads(args.config))
        ts = []
        for i in range(args.calls + 2):
            t = time.perf_counter()
            r = gs.run("bfs", tiny, source=source, backend="gpu", config=conf)
            if i >= 2:
                ts.append(time.perf_counter() - t)
        ts.sort()
    else:
        # plain end-to-end time first, with nothing wrapped
        ts, r = tiny_bfs_times(conf, args.calls)
    launch_cls = type(conf.strategies()["launch"])
    median = ts[len(ts) // 2]
    floor = launch_floor(500)
    wrap(runner, "prepare", "runner.prepare")
    wrap(runner, "check_combination", "runner.check_combination")
    wrap(runner, "resolve_backend", "runner.resolve_backend")
    wrap(gpu, "generate_source", "engine.generate_source")
    wrap(gpu.GpuEngine, "run", "engine.run")
    wrap(gpu.GpuEngine, "_setup", "  setup")
    wrap(gpu.GpuEngine, "_read_back", "  read_back")
    wrap(gpu.LaunchContext, "device_time_s", "  device_time_s")
    wrap(launch_cls, "drive", "  drive")
    wrap(gpu.LaunchContext, "launch_kernel", "    launch")
    wrap(gpu.LaunchContext, "launch_step", "    launch")
    wrap(gpu.LaunchContext, "record", "    launch")
    wrap(gpu.LaunchContext, "control", "    wait (control read)")
    wrap(gpu.LaunchContext, "phase_grid", "    phase_grid")
    wrap(gpu.LaunchContext, "report", "    report")
    wrap(gpu.LaunchContext, "check_deadline", "    check_deadline")
    wrap(gpu.GpuEngine, "_pinned", "    _pinned")
    wrap(gpu.GpuEngine, "_known", "  _known (resident lookup)")
    wrap(gpu.GpuEngine, "resident", "  resident (upload)")
    wrap(gpu._Plan, "__init__", "  plan (new)")
    wrap(gpu.LaunchContext, "__init__", "  LaunchContext")
    wrap(gpu.LaunchContext, "grow", "      grow")
    wrap(gpu.GpuEngine, "_fill_on_device", "      fill on device")
    wrap(gpu.LaunchContext, "write_state", "    write_state")
    spec = get_registry().algorithm("bfs")
    wrap(type(spec), "fill_fields", "    fill_fields")
    wrap(spec, "finalize", "runner.finalize")
    TOTALS.clear()
    t0 = time.perf_counter()
    for _ in range(args.calls):
        r = gs.run("bfs", tiny, source=source, backend="gpu", config=conf)
    wall = (time.perf_counter() - t0) / args.calls
    if args.grid and not args.config:
        assert int(r.fields["depth"].max()) == 2 * (args.grid - 1)
    elif args.rmat:
        print("overflows", r.stats["overflows"], "iterations", r.iterations)
    elif not args.grid:
        assert r.fields["depth"].tolist() == [0, 1, 2, 3]
    out = {"launch": args.launch, "device": gpu.GpuEngine.instance().device_name,
           "median_end_to_end_us": median * 1e6, "mean_wrapped_us": wall * 1e6,
           "host_floor_us": floor * 1e6,
           "device_time_us": r.stats["device_time_s"] * 1e6,
           "stages_us": {k: v / args.calls * 1e6 for k, v in TOTALS.items()}}
    print(f"{args.launch} on {out['device']}: median {median * 1e6:.1f} us end to end "
          f"(unwrapped), {wall * 1e6:.1f} us mean wrapped; device {out['device_time_us']:.1f}"
          f" us; host floor (launch + sync) {floor * 1e6:.1f} us")
    for k, v in out["stages_us"].items():
        print(f"  {k:<32} {v:8.1f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
