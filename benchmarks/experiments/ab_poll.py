"""The host loop with its step decisions polled in host memory against the same loop
copying the control block back after every step, in one process and interleaved round
by round (``GpuEngine.poll_control`` switches between them); every answer checked.

Cases: BFS on the 4-node path (end to end, median of many calls in batches of 25,
polled and copied in turn), and the default
configuration (a host loop) of BFS, SSSP and connected components on a road-like grid
(thousands of short steps) and of BFS and PageRank on RMAT (few long steps).

Usage::

    python benchmarks/experiments/ab_poll.py [--grid 2048] [--scale 22] [--rounds 3] [--calls 500]
"""

from __future__ import annotations

import pathlib
import sys

# the maintained benchmarks' helpers live one folder up
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import statistics
import time

from _common import require_gpu, tiny_bfs_times, write_json


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", type=int, default=2048)
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    require_gpu("ab_poll.py")
    import gswitch as gs
    from gswitch.engine.gpu import GpuEngine
    from gswitch.generators import grid2d, rmat
    from gswitch.testing.reference import compare, reference

    engine = GpuEngine.instance()
    out: dict = {"device": engine.device_name, "args": vars(args), "rounds": []}
    print(f"device: {engine.device_name}; host loop, decisions polled vs copied back")
    grid = grid2d(args.grid, args.grid)
    power = rmat(args.scale, 16, seed=1).symmetrize()
    output = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}
    cases = [(f"{a} grid-{args.grid}", a, grid) for a in ("bfs", "sssp", "cc")]
    cases += [(f"{a} rmat-{args.scale}", a, power) for a in ("bfs", "pagerank")]
    refs = {}
    for label, alg, g in cases:
        kwargs = {"source": 0} if alg in ("bfs", "sssp") else {}
        refs[label] = reference(alg, g, **kwargs)
    # the 4-node path: batches of 25 calls, polled and copied in turn (host noise drifts)
    tiny: dict[bool, list[float]] = {True: [], False: []}
    polled_reads = {}
    for batch in range(max(1, args.calls * args.rounds // 25)):
        for poll in (batch % 2 == 0, batch % 2 != 0):
            engine.poll_control = poll
            ts, r = tiny_bfs_times({}, 25, warmup=5)
            tiny[poll] += ts
            polled_reads[poll] = r.stats["polled_reads"]
    for poll in (True, False):
        ts = sorted(tiny[poll])
        tag = "polled" if poll else "copied"
        out[f"tiny {tag}"] = {"median_us": ts[len(ts) // 2] * 1e6,
                              "p10_us": ts[len(ts) // 10] * 1e6,
                              "p90_us": ts[9 * len(ts) // 10] * 1e6, "calls": len(ts),
                              "polled_reads": polled_reads[poll]}
        print(f"4-node bfs {tag}: median {ts[len(ts) // 2] * 1e6:.1f} us end to end "
              f"(p10 {ts[len(ts) // 10] * 1e6:.1f}, p90 {ts[9 * len(ts) // 10] * 1e6:.1f}; "
              f"{len(ts)} calls; {polled_reads[poll]} polled reads)", flush=True)
    for rnd in range(args.rounds):
        row: dict = {}
        for poll in (rnd % 2 == 0, rnd % 2 != 0):  # alternate which goes first
            engine.poll_control = poll
            tag = "polled" if poll else "copied"
            for label, alg, g in cases:
                kwargs = {"source": 0} if alg in ("bfs", "sssp") else {}
                walls, r = [], None
                for _ in range(args.repeats + 1):  # the first compiles and uploads
                    t = time.perf_counter()
                    r = gs.run(alg, g, backend="gpu", **kwargs)
                    walls.append(time.perf_counter() - t)
                problem = compare(alg, r.fields[output[alg]], refs[label])
                assert problem is None, f"{label} {tag}: {problem}"
                wall = statistics.median(walls[1:])
                row[f"{label} {tag}"] = {"wall_ms": wall * 1e3, "steps": r.iterations,
                                         "device_ms": r.stats["device_time_s"] * 1e3,
                                         "polled_reads": r.stats["polled_reads"]}
                print(f"round {rnd} {label:16s} {tag}: {wall * 1e3:8.2f} ms end to end, "
                      f"{r.iterations} steps, {r.stats['polled_reads']} polled reads, "
                      f"correct", flush=True)
        out["rounds"].append(row)
    print("summary (median over rounds, polled / copied):")
    summary = {}
    on, off = out["tiny polled"]["median_us"], out["tiny copied"]["median_us"]
    summary["tiny"] = {"polled": on, "copied": off, "unit": "median_us"}
    print(f"  {'4-node bfs':18s} polled {on:9.2f}  copied {off:9.2f} median_us  "
          f"({off / on:.2f}x)")
    for key in [label for label, _a, _g in cases]:
        unit = "wall_ms"
        on = statistics.median(r[f"{key} polled"][unit] for r in out["rounds"])
        off = statistics.median(r[f"{key} copied"][unit] for r in out["rounds"])
        summary[key] = {"polled": on, "copied": off, "unit": unit}
        print(f"  {key:18s} polled {on:9.2f}  copied {off:9.2f} {unit}  ({off / on:.2f}x)")
    out["summary"] = summary
    write_json("ab_poll", out)


if __name__ == "__main__":
    main()
