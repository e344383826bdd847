"""Engine targets on the GPU, each measured in the same run as its peer.

- BFS on RMAT (default scale 22, edge factor 16, symmetrised, source = hub):
  direction-optimizing configurations, the best top-down configuration (GTEPS over the
  edges of the reached component), the default configuration, and a plain-CuPy
  frontier BFS as the peer;
- PageRank on the same graph with pull: milliseconds per iteration;
- BFS on the 2048x2048 grid: persistent and cuda_graph launches, and the host loop;
- per call: BFS on a 4-node graph, end to end, median of many warm calls.

Every gswitch answer is checked against scipy before its time counts. Times are device
time from the engine's events (``stats["device_time_s"]``) unless named wall; the
median of ``--repeats`` runs after a warm-up. Usage::

    python benchmarks/bench_engine.py [--scale 22] [--grid 2048] [--repeats 5]
        [--parts bfs,pagerank,grid,call] [--tag NAME]

``--parts`` runs a subset; ``--tag`` names the JSON (``bench_engine_NAME.json``), so two
revisions can be compared in one run on one machine.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from _common import require_gpu, write_json


def cupy_frontier_bfs(indptr, indices, src):  # the peer: a plain CuPy user's BFS
    import cupy as cp

    n = indptr.size - 1
    depth = cp.full(n, -1, dtype=cp.int32)
    depth[src] = 0
    frontier = cp.asarray([src], dtype=cp.int32)
    level = 0
    while frontier.size:
        starts = indptr[frontier]
        degs = indptr[frontier + 1] - starts
        incl = cp.cumsum(degs)
        total = int(incl[-1])
        if total == 0:
            break
        pos = cp.arange(total, dtype=incl.dtype)
        owner = cp.searchsorted(incl, pos, side="right")
        nbrs = indices[starts[owner] + pos - (incl[owner] - degs[owner])]
        nbrs = cp.unique(nbrs[depth[nbrs] == -1])
        level += 1
        depth[nbrs] = level
        frontier = nbrs
    return depth


def _median_device(run, repeats):
    run()
    times, walls, last = [], [], None
    for _ in range(repeats):
        t = time.perf_counter()
        last = run()
        walls.append(time.perf_counter() - t)
        times.append(last.stats["device_time_s"])
    return statistics.median(times), statistics.median(walls), last


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--grid", type=int, default=2048)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--parts", default="bfs,pagerank,grid,call",
                    help="comma-separated subset of bfs,pagerank,grid,call")
    ap.add_argument("--tag", default="", help="suffix of the JSON file name")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    unknown = parts - {"bfs", "pagerank", "grid", "call"}
    if unknown:
        ap.error(f"--parts: unknown part {sorted(unknown)[0]!r}; "
                 "choose from bfs, pagerank, grid, call")
    require_gpu("bench_engine.py")
    from gswitch.engine.gpu import GpuEngine
    from gswitch.generators import rmat

    out: dict = {"device": GpuEngine.instance().device_name, "cases": {}}
    print(f"device: {out['device']}")

    # ---------------------------------------------------------------- RMAT BFS
    g = rmat(args.scale, 16, seed=1).symmetrize() if parts & {"bfs", "pagerank"} else None
    if "bfs" in parts:
        _rmat_bfs(args, g, out)
    if "pagerank" in parts:
        _pagerank(g, out)
    if "grid" in parts:
        _grid(args, out)
    if "call" in parts:
        _per_call(out)
    path = write_json("bench_engine" + (f"_{args.tag}" if args.tag else ""), out)
    print(f"wrote {path}")


def _rmat_bfs(args, g, out: dict) -> None:
    import cupy as cp
    from scipy.sparse.csgraph import breadth_first_order

    import gswitch as gs

    src = int(np.argmax(g.out_degree))
    order = breadth_first_order(g.to_scipy(), src, directed=True, return_predecessors=False)
    reached_edges = int(g.out_degree[order].sum())
    print(f"rmat-{args.scale}: n={g.n_nodes} m={g.n_edges} reached component edges "
          f"{reached_edges}")
    ref = gs.run("bfs", g, source=src, backend="cpu").fields["depth"]
    rmat_cases = {
        "default": {},
        "do bitmap twc": {"direction": "direction_optimizing", "worklist": "bitmap",
                          "load_balance": "twc"},
        "do bitmap twc g8": {"direction": "direction_optimizing", "worklist": "bitmap",
                             "load_balance": "twc", "direction.group": 8},
        "do bitmap vw32": {"direction": "direction_optimizing", "worklist": "bitmap",
                           "load_balance": "virtual_warp", "load_balance.size": 32},
        "do warp_agg twc": {"direction": "direction_optimizing", "load_balance": "twc"},
        "do bitmap twc persistent b672": {"direction": "direction_optimizing",
                                          "worklist": "bitmap", "load_balance": "twc",
                                          "launch": "persistent", "block_size": 672},
        "td vw32": {"load_balance": "virtual_warp", "load_balance.size": 32},
        "td twc": {"load_balance": "twc"},
        "td twc bitmap": {"load_balance": "twc", "worklist": "bitmap"},
        "td twc bitmap l2": {"load_balance": "twc", "worklist": "bitmap", "l2_prefetch": True},
        "td twc atomic": {"load_balance": "twc", "worklist": "atomic"},
    }
    rm = {}
    for name, cfg in rmat_cases.items():
        dev, wall, r = _median_device(
            lambda cfg=cfg: gs.run("bfs", g, source=src, backend="gpu", config=cfg),
            args.repeats)
        ok = np.array_equal(r.fields["depth"], ref)
        rm[name] = {"device_ms": dev * 1e3, "wall_ms": wall * 1e3, "correct": ok,
                    "gteps": reached_edges / dev / 1e9, "iterations": r.iterations,
                    "directions": "".join("P" if d == "pull" else "p"
                                          for d in r.stats["directions"])}
        print(f"  bfs {name:18s} {dev * 1e3:8.3f} ms device  {wall * 1e3:8.3f} ms wall  "
              f"{reached_edges / dev / 1e9:6.2f} GTEPS  steps {r.iterations} "
              f"dirs {rm[name]['directions']}  correct={ok}")
    indptr, indices = cp.asarray(g.indptr.astype(np.int32)), cp.asarray(g.indices)
    peer = cupy_frontier_bfs(indptr, indices, src)
    assert np.array_equal(cp.asnumpy(peer), np.where(ref < 0, -1, ref))
    ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
    pts = []
    for _ in range(args.repeats):
        ev0.record()
        cupy_frontier_bfs(indptr, indices, src)
        ev1.record()
        ev1.synchronize()
        pts.append(cp.cuda.get_elapsed_time(ev0, ev1) / 1e3)
    peer_t = statistics.median(pts)
    rm["plain-cupy peer"] = {"device_ms": peer_t * 1e3, "gteps": reached_edges / peer_t / 1e9,
                             "correct": True}
    print(f"  bfs plain-CuPy peer    {peer_t * 1e3:8.3f} ms  "
          f"{reached_edges / peer_t / 1e9:6.2f} GTEPS")
    out["cases"]["rmat_bfs"] = rm



def _pagerank(g, out: dict) -> None:
    import gswitch as gs

    prs = {}
    ref_pr = gs.run("pagerank", g, backend="cpu", max_iterations=200).fields["rank"] \
        if g.n_nodes <= (1 << 18) else None
    for name, cfg in {
        "pull topology g8": {"direction": "pull", "driving": "topology", "direction.group": 8},
        "pull topology g32": {"direction": "pull", "driving": "topology",
                              "direction.group": 32},
        "push topology vw32": {"driving": "topology", "load_balance.size": 32},
        "default": {},
    }.items():
        dev, wall, r = _median_device(
            lambda cfg=cfg: gs.run("pagerank", g, backend="gpu", config=cfg), 3)
        per = dev / max(1, r.iterations)
        total = float(r.fields["rank"].sum())
        ok = abs(total - 1.0) < 1e-3 and (ref_pr is None or
                                          np.abs(r.fields["rank"] - ref_pr).sum() < 1e-3)
        prs[name] = {"device_ms": dev * 1e3, "iterations": r.iterations,
                     "ms_per_iteration": per * 1e3, "rank_sum": total, "checked": ok}
        print(f"  pagerank {name:20s} {dev * 1e3:9.2f} ms  {r.iterations} steps  "
              f"{per * 1e3:7.3f} ms/step  sum={total:.6f}")
    out["cases"]["rmat_pagerank"] = prs



def _grid(args, out: dict) -> None:
    from scipy.sparse.csgraph import breadth_first_order

    import gswitch as gs
    from gswitch.generators import grid2d

    grid = grid2d(args.grid, args.grid)
    gref = breadth_first_order(grid.to_scipy(), 0, directed=True, return_predecessors=False)
    t = time.perf_counter()
    breadth_first_order(grid.to_scipy(), 0, directed=True, return_predecessors=False)
    scipy_t = time.perf_counter() - t
    del gref
    gdepth = gs.run("bfs", grid, source=0, backend="cpu").fields["depth"] \
        if args.grid <= 512 else None
    gr = {"scipy breadth_first_order wall_ms": scipy_t * 1e3}
    for name, cfg in {
        "persistent vw4": {"launch": "persistent", "load_balance.size": 4},
        "persistent vw4 b128 no-read": {"launch": "persistent", "load_balance.size": 4,
                                        "block_size": 128, "read_before_atomic": False},
        "persistent vw4 b128 no-read l2": {"launch": "persistent", "load_balance.size": 4,
                                           "block_size": 128, "read_before_atomic": False,
                                           "l2_prefetch": True},
        "persistent thread": {"launch": "persistent", "load_balance": "thread"},
        "cuda_graph vw4 dedup": {"launch": "cuda_graph", "load_balance.size": 4,
                                 "worklist.dedup": True},
        "cuda_graph vw4 b64 k64": {"launch": "cuda_graph", "load_balance.size": 4,
                                   "block_size": 64, "launch.steps": 64},
        "cuda_graph vw4 dedup b64 k64": {"launch": "cuda_graph", "load_balance.size": 4,
                                         "worklist.dedup": True, "block_size": 64,
                                         "launch.steps": 64},
        "cuda_graph vw4 b64 k64 no-read": {"launch": "cuda_graph", "load_balance.size": 4,
                                           "block_size": 64, "launch.steps": 64,
                                           "read_before_atomic": False},
        "cuda_graph vw4 b64 k64 no-read l2": {"launch": "cuda_graph", "load_balance.size": 4,
                                              "block_size": 64, "launch.steps": 64,
                                              "read_before_atomic": False, "l2_prefetch": True},
        "host_loop vw4": {"load_balance.size": 4},
    }.items():
        dev, wall, r = _median_device(
            lambda cfg=cfg: gs.run("bfs", grid, source=0, backend="gpu", config=cfg), 3)
        d = r.fields["depth"]
        ok = int(d.max()) == 2 * (args.grid - 1) and (gdepth is None or
                                                      np.array_equal(d, gdepth))
        gr[name] = {"device_ms": dev * 1e3, "wall_ms": wall * 1e3, "iterations": r.iterations,
                    "correct": ok}
        print(f"  grid bfs {name:28s} {dev * 1e3:8.2f} ms device {wall * 1e3:8.2f} ms wall "
              f"steps {r.iterations} correct={ok}")
    out["cases"]["grid_bfs"] = gr



def _per_call(out: dict) -> None:
    import gswitch as gs

    tiny = gs.Graph.from_edges([0, 1, 2], [1, 2, 3])
    pc = {}
    for name, cfg in {"default": {}, "persistent": {"launch": "persistent"}}.items():
        conf = gs.Config(cfg)
        for _ in range(20):
            gs.run("bfs", tiny, source=0, backend="gpu", config=conf)
        ts = []
        for _ in range(200):
            t = time.perf_counter()
            r = gs.run("bfs", tiny, source=0, backend="gpu", config=conf)
            ts.append(time.perf_counter() - t)
        assert r.fields["depth"].tolist() == [0, 1, 2, 3]
        pc[name] = {"median_us": statistics.median(ts) * 1e6,
                    "p90_us": float(np.percentile(ts, 90)) * 1e6,
                    "device_us": r.stats["device_time_s"] * 1e6}
        print(f"  4-node bfs {name:12s} median {pc[name]['median_us']:7.1f} us end to end "
              f"(p90 {pc[name]['p90_us']:.1f}, device {pc[name]['device_us']:.1f})")
    out["cases"]["per_call"] = pc


if __name__ == "__main__":
    main()
