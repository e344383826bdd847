"""End-to-end time of large GPU calls: where the host's share goes, A/B in one run.

BFS (direction-optimizing, host loop) and PageRank (pull, topology-driven), which
declare ``finalize_on_device``, and connected components (bitmap, persistent), which has
no ``finalize``, on a symmetrised RMAT graph (default scale 22, edge factor 16; BFS from
the hub). Each is run in rotation under four settings, in the same process on
the same resident graph:

- ``new``: ``finalize`` on the device, results brought back in chunks, each copied out
  of the staging by a host thread once it has landed;
- ``whole copy``: the same with the results copied back whole, then out in one thread;
- ``previous``: ``finalize`` on the host and the whole copy, as before both;
- ``cupy arrays``: ``run(..., arrays="cupy")``, the outputs left on the device.

Every answer is checked (BFS and components against scipy, PageRank across the
settings within a float tolerance). Prints the median end-to-end and device time of
each. Usage::

    python benchmarks/bench_end_to_end.py [--scale 22] [--rounds 7] [--tag NAME]
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
    "cc": {"worklist": "bitmap", "load_balance": "twc", "driving": "data",
           "direction": "push", "launch": "persistent", "block_size": 544},
}
OUTPUT = {"bfs": "depth", "pagerank": "rank", "cc": "comp"}
NEVER = 1 << 62


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    require_gpu("bench_end_to_end.py")
    import gswitch as gs
    from gswitch.engine import gpu
    from gswitch.generators import rmat
    from gswitch.testing.reference import compare, reference

    settings = {  # name -> (_DEVICE_FINALIZE_BYTES, _PARALLEL_COPY_BYTES, arrays)
        "new": (gpu._DEVICE_FINALIZE_BYTES, gpu._PARALLEL_COPY_BYTES, "numpy"),
        "whole copy": (gpu._DEVICE_FINALIZE_BYTES, NEVER, "numpy"),
        "previous": (NEVER, NEVER, "numpy"),
        "cupy arrays": (gpu._DEVICE_FINALIZE_BYTES, gpu._PARALLEL_COPY_BYTES, "cupy"),
    }
    g = rmat(args.scale, 16, seed=1).symmetrize()
    hub = int(np.argmax(g.out_degree))
    out = {"device": gpu.GpuEngine.instance().device_name, "scale": args.scale,
           "n_nodes": g.n_nodes, "n_edges": g.n_edges, "cases": {}}
    print(f"RMAT-{args.scale}: {g.n_nodes} nodes, {g.n_edges} edges, on {out['device']}")
    names = list(settings)
    for alg, cfg in CONFIGS.items():
        kw = {"source": hub} if alg == "bfs" else {}
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in names}
        answers = {}
        for r_ in range(args.rounds + 1):  # round 0 warms every setting up
            k = r_ % len(names)
            for name in names[k:] + names[:k]:
                gpu._DEVICE_FINALIZE_BYTES, gpu._PARALLEL_COPY_BYTES, arrays = settings[name]
                t = time.perf_counter()
                r = gs.run(alg, g, backend="gpu", config=cfg, arrays=arrays, **kw)
                wall = time.perf_counter() - t
                a = r.fields[OUTPUT[alg]]
                answers[name] = a if isinstance(a, np.ndarray) else a.get()
                if r_:
                    times[name].append((wall, r.stats["device_time_s"]))
        gpu._DEVICE_FINALIZE_BYTES, gpu._PARALLEL_COPY_BYTES, _a = settings["new"]
        if alg == "pagerank":
            base = answers["previous"]
            same = all(np.allclose(a, base, rtol=1e-5, atol=1e-12) for a in answers.values())
        else:
            want = reference(alg, g, source=hub) if alg == "bfs" else reference(alg, g)
            same = all(compare(alg, a, want) is None for a in answers.values())
        case = out["cases"][alg] = {"correct": same}
        for name, ts in times.items():
            wall = statistics.median(t for t, _ in ts) * 1e3
            dev = statistics.median(d for _, d in ts) * 1e3
            case[name] = {"wall_ms": wall, "device_ms": dev, "walls_ms": [t * 1e3 for t, _ in ts]}
            print(f"  {alg:9s} {name:16s} {wall:8.2f} ms end to end  {dev:7.3f} ms device"
                  f"  correct={same}")
        print(f"  {alg:9s} previous/new end to end: "
              f"{case['previous']['wall_ms'] / case['new']['wall_ms']:.2f}x")
    write_json(f"bench_end_to_end{'_' + args.tag if args.tag else ''}", out)


if __name__ == "__main__":
    main()
