"""CPU engine vs scipy.sparse.csgraph on RMAT (BFS and connected components) and on a
road-like grid (BFS and SSSP: thousands of small steps), every answer checked.

Usage: python benchmarks/bench_cpu.py [--scale 20] [--edge-factor 16] [--road 1024]
Writes cpu_engine.json to $OUT (or ./bench-results).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse.csgraph as csgraph
from _common import median_time, write_json

import gswitch as gs
from gswitch.generators import grid2d, rmat
from gswitch.testing.reference import compare, reference


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--road", type=int, default=1024, help="grid side (0: no grid cases)")
    args = ap.parse_args()
    t = time.perf_counter()
    g = rmat(args.scale, args.edge_factor, seed=1)
    gen_s = time.perf_counter() - t
    a = g.to_scipy()
    source = int(np.argmax(g.out_degree))
    sym = g.symmetrize()
    a_sym = sym.to_scipy()
    out = {"graph": f"rmat:{args.scale}:{args.edge_factor}", "n": g.n_nodes, "m": g.n_edges,
           "generate_s": gen_s}
    rows = []
    for label, cfg in [("bfs data/push", {"driving": "data"}),
                       ("bfs temporal", {"driving": "temporal"})]:
        ours, _ = median_time(lambda cfg=cfg: gs.run("bfs", g, source=source, backend="cpu",
                                                     config=cfg), args.repeats)
        ref, _ = median_time(lambda: csgraph.breadth_first_order(a, source,
                                                                 return_predecessors=False),
                             args.repeats)
        rows.append({"case": label, "gswitch_s": ours, "scipy_s": ref, "ratio": ours / ref})
    got = gs.run("bfs", g, source=source, backend="cpu").fields["depth"]
    assert (got >= 0).sum() == csgraph.breadth_first_order(a, source,
                                                          return_predecessors=False).size
    for label, cfg in [("cc data", {"driving": "data"}), ("cc topology", {"driving": "topology"}),
                       ("cc temporal", {"driving": "temporal"})]:
        ours, _ = median_time(lambda cfg=cfg: gs.run("cc", sym, backend="cpu", config=cfg),
                              args.repeats)
        ref, _ = median_time(lambda: csgraph.connected_components(a_sym, directed=False),
                             args.repeats)
        rows.append({"case": label, "gswitch_s": ours, "scipy_s": ref, "ratio": ours / ref})
    if args.road:
        road = grid2d(args.road, args.road)
        a_road = road.to_scipy()
        for alg, out_field, peer in (
                ("bfs", "depth", lambda: csgraph.breadth_first_order(
                    a_road, 0, return_predecessors=False)),
                ("sssp", "dist", lambda: csgraph.dijkstra(a_road, indices=0))):
            ours, _ = median_time(lambda alg=alg: gs.run(alg, road, source=0, backend="cpu"),
                                  args.repeats)
            ref, _ = median_time(peer, args.repeats)
            got = gs.run(alg, road, source=0, backend="cpu").fields[out_field]
            assert compare(alg, got, reference(alg, road, source=0)) is None
            rows.append({"case": f"{alg} grid{args.road}", "gswitch_s": ours, "scipy_s": ref,
                         "ratio": ours / ref})
    out["rows"] = rows
    path = write_json("cpu_engine", out)
    for r in rows:
        print(f"{r['case']:16s} gswitch {r['gswitch_s']:.3f} s  scipy {r['scipy_s']:.3f} s  "
              f"ratio {r['ratio']:.2f}x")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
