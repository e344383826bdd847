"""The CPU engine per call: fixed cost and BFS/SSSP on small real and generated graphs.

Targets (issue 24 §2, the CPU engine's fixed cost):
- fixed cost under 50 µs: a call on a one-node graph (one step, nothing to relax), for
  every algorithm;
- BFS at most 3x scipy's ``breadth_first_order`` on graphs of tens of thousands of
  nodes. SSSP is timed against ``dijkstra`` beside it.

Graphs: the METIS examples shipped by Debian's libmetis-doc (4elt, copter2, mdual;
fetched with apt-get download, skipped with a note where that cannot run) and generated
graphs of 34k to 40k nodes (road, grid, RMAT, uniform random). Every answer is checked
against scipy before its time counts; the peer runs in the same process, alternating.
``--steps`` also times the super-step loop (``GSWITCH_CPU_STEPS=1``), the previous
formulation, in the same run.

The fixed cost is also timed with the node operators' scalar programs set aside (the
array plans, the previous formulation), alternating in the same run.

Usage: python benchmarks/bench_cpu_calls.py [--repeats 9] [--steps] [--fixed-only]
[--tag NAME]
Writes cpu_calls[_NAME].json to $OUT (or ./bench-results).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import numpy as np
import scipy.sparse.csgraph as csgraph
from _common import write_json

import gswitch as gs
from gswitch.generators import grid2d, rmat, road, uniform_random
from gswitch.testing.reference import compare, reference


def _median(fn, repeats: int) -> float:
    fn()
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def _graphs() -> list[tuple[str, gs.Graph]]:
    out = [("road 190x190", road(190, 190, seed=1)),
           ("grid 190x190", grid2d(190, 190)),
           ("rmat 15 ef8 sym", rmat(15, 8, seed=2).symmetrize()),
           ("uniform 2^15 d8", uniform_random(1 << 15, 8, seed=3))]
    try:
        from gswitch.io import load_graph
        from gswitch.testing.datasets import METIS_GRAPHS, metis_graph_path

        out = [(name, load_graph(metis_graph_path(name))) for name in METIS_GRAPHS] + out
    except Exception as exc:  # noqa: BLE001 - report and go on with the generated ones
        print(f"METIS graphs unavailable ({exc}); generated graphs only")
    return out


def fixed_costs(repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """Each algorithm's call on a one-node graph: the lowest of ``repeats`` medians of
    200 calls, the algorithms in rotation, each warmed up by 200 calls first (the
    first algorithm timed otherwise pays the process's warm-up).

    Gives the figures and, as the peer in the same run, those of the previous
    formulation: the node operators' steps over one node by the array plans, with their
    scalar programs (:mod:`gswitch.engine.cpu_one`) set aside, alternating with them.
    """
    from gswitch.engine import cpu

    one = gs.Graph.from_edges([], [], n_nodes=1)
    calls = {}
    for alg in ("bfs", "sssp", "cc", "pagerank"):
        kw = {"source": 0} if alg in ("bfs", "sssp") else {}
        calls[alg] = lambda alg=alg, kw=kw: gs.run(alg, one, backend="cpu", **kw)
        for _ in range(200):
            calls[alg]()
    programs = [p for _, p in cpu._NodeProgram._kept.values()]
    scalar = [p.one for p in programs]

    def use_scalar(on: bool) -> None:
        for p, s in zip(programs, scalar):
            p.one = s if on else None

    medians: dict[str, list[float]] = {alg: [] for alg in calls}
    peers: dict[str, list[float]] = {alg: [] for alg in calls}
    for _ in range(repeats):
        for alg, call in calls.items():
            use_scalar(True)
            medians[alg].append(_median(call, 200))
            use_scalar(False)
            peers[alg].append(_median(call, 200))
    use_scalar(True)
    return ({alg: min(m) for alg, m in medians.items()},
            {alg: min(m) for alg, m in peers.items()})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--steps", action="store_true",
                    help="also time the super-step loop (GSWITCH_CPU_STEPS=1)")
    ap.add_argument("--tag", default="")
    ap.add_argument("--fixed-only", action="store_true",
                    help="only the fixed cost (no graphs against scipy)")
    args = ap.parse_args()
    fixed, array_plans = fixed_costs(args.repeats)
    for alg, s in fixed.items():
        print(f"fixed cost {alg:9s} {s * 1e6:7.1f} us  (target < 50 us); array plans "
              f"{array_plans[alg] * 1e6:7.1f} us")
    if args.fixed_only:
        path = write_json(f"cpu_calls{'_' + args.tag if args.tag else ''}",
                          {"fixed_cost_s": fixed, "array_plans_fixed_cost_s": array_plans})
        print(f"wrote {path}")
        return
    rows = []
    for label, g in _graphs():
        source = int(np.argmax(g.out_degree))
        a = g.to_scipy()
        for alg, out, peer_name, peer in (
                ("bfs", "depth", "scipy breadth_first_order",
                 lambda a=a, s=source: csgraph.breadth_first_order(a, s,
                                                                   return_predecessors=False)),
                ("sssp", "dist", "scipy dijkstra",
                 lambda a=a, s=source: csgraph.dijkstra(a, indices=s))):
            r = gs.run(alg, g, source=source, backend="cpu")
            bad = compare(alg, r.fields[out], reference(alg, g, source=source))
            assert bad is None, (label, alg, bad)
            ours = _median(lambda alg=alg, g=g, s=source: gs.run(alg, g, source=s,
                                                                  backend="cpu"), args.repeats)
            theirs = _median(peer, args.repeats)
            row = {"graph": label, "n": g.n_nodes, "m": g.n_edges, "algorithm": alg,
                   "gswitch_s": ours, "peer": peer_name, "peer_s": theirs,
                   "ratio": ours / theirs, "formulation": r.stats.get("formulation", "steps")}
            if args.steps:
                os.environ["GSWITCH_CPU_STEPS"] = "1"
                try:
                    row["steps_s"] = _median(lambda alg=alg, g=g, s=source: gs.run(
                        alg, g, source=s, backend="cpu"), args.repeats)
                finally:
                    del os.environ["GSWITCH_CPU_STEPS"]
                row["steps_ratio"] = row["steps_s"] / theirs
            rows.append(row)
            extra = f"  steps {row['steps_ratio']:.2f}x" if args.steps else ""
            print(f"{label:16s} {alg:5s} {ours * 1e3:8.3f} ms  {peer_name} "
                  f"{theirs * 1e3:8.3f} ms  {row['ratio']:.2f}x{extra}")
    geo = {alg: math.exp(statistics.fmean(math.log(r["ratio"]) for r in rows
                                          if r["algorithm"] == alg)) for alg in ("bfs", "sssp")}
    print("geomean ratio to scipy: " + ", ".join(f"{k} {v:.2f}x" for k, v in geo.items()))
    path = write_json(f"cpu_calls{'_' + args.tag if args.tag else ''}",
                      {"fixed_cost_s": fixed, "array_plans_fixed_cost_s": array_plans,
                       "rows": rows, "geomean_ratio": geo})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
