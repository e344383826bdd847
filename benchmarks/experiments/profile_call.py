"""Where the host time of one small GPU call goes: cProfile over many warm calls.

Usage::

    python benchmarks/experiments/profile_call.py [--calls 300] [--launch host_loop] [--top 35]
        [--no-profile] [--mapping]
"""

from __future__ import annotations

import pathlib
import sys

# the maintained benchmarks' helpers live one folder up
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import cProfile
import pstats
import time

from _common import TINY_EDGES, require_gpu, tiny_bfs_times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--launch", default="host_loop",
                    help="the launch strategy, or 'plain' for no configuration (the "
                         "selector's pick, as a plain call gets)")
    ap.add_argument("--top", type=int, default=35)
    ap.add_argument("--no-profile", action="store_true",
                    help="only time the calls: median and p90 end to end")
    ap.add_argument("--mapping", action="store_true",
                    help="pass the configuration as a dict, as most callers do, instead "
                         "of a Config built once")
    args = ap.parse_args()
    require_gpu("profile_call.py")
    import gswitch as gs

    if args.launch == "plain":
        conf = None
    else:
        conf = {"launch": args.launch} if args.mapping else gs.Config({"launch": args.launch})
    label = args.launch + (" (dict)" if args.mapping else "")
    if args.no_profile:
        ts, r = tiny_bfs_times(conf, args.calls)
        print(f"{label}: median {ts[len(ts) // 2] * 1e6:.1f} us, p90 "
              f"{ts[int(len(ts) * 0.9)] * 1e6:.1f} us end to end, device "
              f"{r.stats['device_time_s'] * 1e6:.1f} us")
        return
    tiny = gs.Graph.from_edges(*TINY_EDGES)
    tiny_bfs_times(conf, 0)  # warm up
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    for _ in range(args.calls):
        r = gs.run("bfs", tiny, source=0, backend="gpu", config=conf)
    prof.disable()
    per = (time.perf_counter() - t) / args.calls
    assert r.fields["depth"].tolist() == [0, 1, 2, 3]
    print(f"{label}: {per * 1e6:.1f} us per call under the profiler")
    st = pstats.Stats(prof)
    st.sort_stats("tottime").print_stats(args.top)
    st.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
