"""Where a first (cold) overlay call on the clique chain spends its time: calls that
drop what the graph keeps (:meth:`gswitch.Graph.cached`) before each, warm calls, plain
calls (the selector's pick), and cProfile of a plain first call on a new graph object.

Usage::

    python benchmarks/experiments/overlay_cold_profile.py [--cliques 32768] [--backend gpu]
        [--alg bfs] [--calls 3] [--top 30]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cliques", type=int, default=32768)
    ap.add_argument("--backend", default="gpu")
    ap.add_argument("--alg", default="bfs")
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    import gswitch as gs
    from gswitch.generators import clique_chain

    g = clique_chain(args.cliques, 32, weighted=True, seed=1)
    conf = {"variant": "overlay"}
    if args.backend == "gpu":
        conf |= {"driving": "spatial", "driving.partition_size": 1024, "block_size": 1024,
                 "launch": "persistent"}
    kw = dict(source=0, backend=args.backend, config=conf, partition_size=1024)

    def call():
        g._derived = None
        t = time.perf_counter()
        r = gs.run(args.alg, g, **kw)
        return time.perf_counter() - t, r

    call()  # compile
    for _ in range(args.calls):
        t, r = call()
        print(f"cold {args.alg}: {t * 1e3:.1f} ms, device "
              f"{r.stats.get('device_time_s', 0) * 1e3:.2f} ms")
        for k in ("stages", "stage_times", "steps"):
            if k in r.stats:
                print(f"  {k}: {r.stats[k]}")
    call()
    for _ in range(3):
        t2 = time.perf_counter()
        r = gs.run(args.alg, g, **kw)
        took = [(s["stage"], s.get("device_time_s") or s.get("host_s") or 0.0)
                for s in r.stats.get("stages", [])]
        print(f"warm after cold: {(time.perf_counter() - t2) * 1e3:.1f} ms, stages "
              + ", ".join(f"{name} {1e3 * t:.2f}" for name, t in took))
    plain = {"source": 0, "backend": args.backend}
    for label in ("plain, cold", "plain, warm", "plain, warm"):
        if label.endswith("cold"):
            g._derived = None
        t2 = time.perf_counter()
        r = gs.run(args.alg, g, **plain) if args.backend == "gpu" else r
        print(f"{label}: {(time.perf_counter() - t2) * 1e3:.1f} ms, {r.stats['config_source']}")
    # a first plain call on a graph object never seen (kernels compiled above)
    fresh = clique_chain(args.cliques, 32, weighted=True, seed=1)
    t2 = time.perf_counter()
    prof = cProfile.Profile()
    prof.enable()
    r = gs.run(args.alg, fresh, **plain)
    prof.disable()
    print(f"plain, first call on a new graph object (profiled): "
          f"{(time.perf_counter() - t2) * 1e3:.1f} ms, {r.stats['config_source']}")
    st = pstats.Stats(prof)
    st.sort_stats("cumulative").print_stats(args.top)
    st.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
