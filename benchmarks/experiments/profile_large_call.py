"""Where the host time of a large GPU call goes: wall, device time and a cProfile of warm
calls on a symmetrised RMAT graph, for one configuration (or the selector's pick).

Usage::

    python benchmarks/experiments/profile_large_call.py [--scale 22] [--alg bfs]
        [--config JSON|none|default] [--arrays cupy] [--calls 30] [--top 30]
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import cProfile
import json
import pstats
import statistics
import time

import numpy as np
from _common import require_gpu, symmetric_rmat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--alg", default="bfs")
    ap.add_argument("--config", default="none")
    ap.add_argument("--arrays", default="cupy")
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    require_gpu("profile_large_call.py")
    import gswitch as gs

    g = symmetric_rmat(args.scale)
    kw = {"source": int(np.argmax(g.out_degree))} if args.alg in ("bfs", "sssp") else {}
    config = None if args.config == "none" else (
        "default" if args.config == "default" else json.loads(args.config))
    for _ in range(3):
        r = gs.run(args.alg, g, backend="gpu", config=config, arrays=args.arrays, **kw)
    walls, devs = [], []
    for _ in range(args.calls):
        t = time.perf_counter()
        r = gs.run(args.alg, g, backend="gpu", config=config, arrays=args.arrays, **kw)
        walls.append(time.perf_counter() - t)
        devs.append(r.stats["device_time_s"])
    print(f"{args.alg} RMAT-{args.scale} config={args.config} arrays={args.arrays}: "
          f"wall {statistics.median(walls) * 1e3:.3f} ms, device "
          f"{statistics.median(devs) * 1e3:.3f} ms, iterations {r.iterations}, "
          f"config {r.config.to_dict() if r.config is not None else None}, "
          f"source {r.stats.get('config_source')}")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.calls):
        gs.run(args.alg, g, backend="gpu", config=config, arrays=args.arrays, **kw)
    prof.disable()
    st = pstats.Stats(prof)
    st.sort_stats("tottime").print_stats(args.top)
    st.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
