"""End-to-end time of large GPU calls with ``finalize`` on the device against the host.

BFS (direction-optimizing, host loop) and PageRank (pull, topology-driven) on a
symmetrised RMAT graph (default scale 22, edge factor 16; BFS from the hub), each run
alternately with the engine's device finalisation and with it forced onto the host (the
threshold raised), in the same process on the same resident graph. Every answer is
checked against scipy (BFS) or against the other path (PageRank, float tolerance).
Reports the median end-to-end and device time of each. Usage::

    python benchmarks/bench_finalize.py [--scale 22] [--rounds 7] [--tag NAME]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from _common import require_gpu, write_json

CONFIGS = {
    "bfs": {"worklist": "bitmap", "load_balance": "twc", "driving": "data",
            "direction": "direction_optimizing", "launch": "host_loop"},
    "pagerank": {"worklist": "bitmap", "load_balance": "twc", "driving": "topology",
                 "direction": "pull", "direction.group": 32, "launch": "host_loop"},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    require_gpu("bench_finalize.py")
    import gswitch as gs
    from gswitch.engine import gpu
    from gswitch.generators import rmat
    from gswitch.testing.reference import compare, reference

    g = rmat(args.scale, 16, seed=1).symmetrize()
    hub = int(np.argmax(g.out_degree))
    threshold = gpu._DEVICE_FINALIZE_BYTES
    out = {"device": gpu.GpuEngine.instance().device_name, "scale": args.scale,
           "n_nodes": g.n_nodes, "n_edges": g.n_edges, "cases": {}}
    print(f"RMAT-{args.scale}: {g.n_nodes} nodes, {g.n_edges} edges, on {out['device']}")
    for alg, cfg in CONFIGS.items():
        kw = {"source": hub} if alg == "bfs" else {}
        times: dict[str, list[tuple[float, float]]] = {"device": [], "host": []}
        answers = {}
        for r_ in range(args.rounds + 1):  # round 0 warms up both paths
            for where in ("device", "host") if r_ % 2 else ("host", "device"):
                gpu._DEVICE_FINALIZE_BYTES = threshold if where == "device" else 1 << 62
                t = time.perf_counter()
                r = gs.run(alg, g, backend="gpu", config=cfg, **kw)
                wall = time.perf_counter() - t
                assert r.stats["finalized_on"] == where, r.stats["finalized_on"]
                answers[where] = r.fields
                if r_:
                    times[where].append((wall, r.stats["device_time_s"]))
        gpu._DEVICE_FINALIZE_BYTES = threshold
        field = "depth" if alg == "bfs" else "rank"
        a, b = answers["device"][field], answers["host"][field]
        same = (np.array_equal(a, b) if alg == "bfs"
                else bool(np.allclose(a, b, rtol=1e-5, atol=1e-12)))
        if alg == "bfs":
            same = same and compare("bfs", a, reference("bfs", g, source=hub)) is None
        case = out["cases"][alg] = {"correct": same}
        for where, ts in times.items():
            wall = statistics.median(t for t, _ in ts) * 1e3
            dev = statistics.median(d for _, d in ts) * 1e3
            case[where] = {"wall_ms": wall, "device_ms": dev, "walls_ms": [t * 1e3 for t, _ in ts]}
            print(f"  {alg:9s} finalize on {where:6s}  {wall:8.2f} ms end to end"
                  f"  {dev:7.3f} ms device  correct={same}")
        print(f"  {alg:9s} end to end host/device: "
              f"{case['host']['wall_ms'] / case['device']['wall_ms']:.2f}x")
    write_json(f"bench_finalize{'_' + args.tag if args.tag else ''}", out)


if __name__ == "__main__":
    main()
