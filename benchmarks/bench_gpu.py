"""GPU per-step cost and load-balancer throughput.

1. BFS on a 2D grid (default 2048 x 2048, ~4,000 steps): host_loop vs persistent
   launch, total time and time per iteration; plus a long path graph where every step
   has one active node, so time per iteration *is* the per-step overhead.
2. BFS on RMAT (default scale 22, edge factor 16): thread vs virtual_warp:32, GTEPS.

Usage: python benchmarks/bench_gpu.py [--grid 2048] [--rmat-scale 22]
Writes gpu_steps.json (+ a PNG of active nodes per step) to $OUT or ./bench-results.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse.csgraph as csgraph
from _common import require_gpu, try_plot, write_json

import gswitch as gs
from gswitch.generators import grid2d, path, rmat


def _bench(graph, source, cfg, repeats):
    gs.run("bfs", graph, source=source, backend="gpu", config=cfg)  # compile + upload
    runs = [gs.run("bfs", graph, source=source, backend="gpu", config=cfg)
            for _ in range(repeats)]
    kt = sorted(r.stats["kernel_time_s"] for r in runs)[len(runs) // 2]
    wall = sorted(r.stats["time_s"] for r in runs)[len(runs) // 2]
    return runs[0], kt, wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", type=int, default=2048)
    ap.add_argument("--path", type=int, default=100_000)
    ap.add_argument("--rmat-scale", type=int, default=22)
    ap.add_argument("--skip-rmat", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    require_gpu("bench_gpu.py")
    from gswitch.engine.gpu import GpuEngine

    out = {"device": GpuEngine.instance().device_name}
    rows = []

    g = grid2d(args.grid, args.grid)
    ref = csgraph.shortest_path(g.to_scipy(), unweighted=True, indices=0)
    series = {}
    # each launch mode with each mapping; then the persistent grid size, because the
    # grid barrier's cost grows with the number of blocks
    cases = [(launch, lb, {}) for lb in (("thread", {}), ("virtual_warp", {"load_balance.size": 4}))
             for launch in ("host_loop", "persistent")]
    cases += [("persistent", ("thread", {}), {"block_size": b, "launch.blocks_per_sm": k})
              for b, k in ((256, 2), (256, 8), (512, 1), (1024, 1))]
    for launch, (lb, lbopt), extra in cases:
        cfg = {"launch": launch, "load_balance": lb, **lbopt, "driving": "data", **extra}
        r, kt, wall = _bench(g, 0, cfg, args.repeats)
        assert np.array_equal(r.fields["depth"], ref.astype(np.int32)), "grid BFS wrong"
        label = lb + (f":{lbopt['load_balance.size']}" if lbopt else "")
        rows.append({"graph": f"grid {args.grid}x{args.grid}", "launch": launch,
                     "load_balance": label, **extra, "iterations": r.iterations,
                     "kernel_s": kt, "wall_s": wall,
                     "us_per_iteration": kt / r.iterations * 1e6,
                     "grid": r.stats.get("persistent_grid")})
        series.setdefault(launch, r.stats["active"])
    grid_rows = list(rows)
    host = min((x for x in grid_rows if x["launch"] == "host_loop"), key=lambda x: x["kernel_s"])
    best = min((x for x in grid_rows if x["launch"] == "persistent"), key=lambda x: x["kernel_s"])
    out["grid_best_host_loop"] = host
    out["grid_best_persistent"] = best
    out["grid_speedup_persistent_vs_host"] = host["kernel_s"] / best["kernel_s"]

    p = path(args.path, directed=True)
    for launch, extra in (("host_loop", {}), ("persistent", {}),
                          ("persistent", {"launch.blocks_per_sm": 8})):
        cfg = {"launch": launch, "load_balance": "thread", "driving": "data", **extra}
        r, kt, wall = _bench(p, 0, cfg, args.repeats)
        assert int(r.fields["depth"].max()) == args.path - 1, "path BFS wrong"
        rows.append({"graph": f"directed path {args.path}", "launch": launch, **extra,
                     "iterations": r.iterations, "kernel_s": kt, "wall_s": wall,
                     "us_per_iteration": kt / r.iterations * 1e6})

    if args.skip_rmat:
        return _finish(out, rows, series)
    t = time.perf_counter()
    big = rmat(args.rmat_scale, 16, seed=1)
    out["rmat_generate_s"] = time.perf_counter() - t
    src = int(np.argmax(big.out_degree))
    ref = csgraph.breadth_first_order(big.to_scipy(), src, return_predecessors=False)
    for lb in (("thread", {}), ("virtual_warp", {"load_balance.size": 32}),
               ("virtual_warp", {"load_balance.size": 8})):
        for driving in ("data", "temporal"):
            cfg = {"load_balance": lb[0], **lb[1], "driving": driving, "launch": "host_loop"}
            r, kt, wall = _bench(big, src, cfg, args.repeats)
            assert int((r.fields["depth"] >= 0).sum()) == ref.size, "rmat BFS wrong"
            label = lb[0] + (f":{lb[1]['load_balance.size']}" if lb[1] else "")
            rows.append({"graph": f"rmat:{args.rmat_scale}:16", "load_balance": label,
                         "driving": driving, "iterations": r.iterations, "kernel_s": kt,
                         "wall_s": wall, "edges_processed": r.stats["edges_processed"],
                         "gteps": r.stats["edges_processed"] / kt / 1e9})
    _finish(out, rows, series)


def _finish(out, rows, series):
    out["rows"] = rows
    path_json = write_json("gpu_steps", out)
    grid_label = rows[0]["graph"]
    try_plot("grid_active", f"BFS on {grid_label}: active nodes per step",
             {"persistent": series["persistent"]}, "active nodes")
    for row in rows:
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()})
    print(f"best persistent vs best host_loop on {grid_label}: "
          f"{out['grid_speedup_persistent_vs_host']:.2f}x; "
          f"wrote {path_json}")


if __name__ == "__main__":
    main()
