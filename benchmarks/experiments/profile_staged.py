"""Where a staged algorithm's warm call goes: per stage (runs, steps, device and host-step
time) and the host functions that take the most time under cProfile.

Usage::

    python benchmarks/experiments/profile_staged.py ALG GRAPH_SPEC [--backend gpu]
        [--k 4] [--top 30] [--simple] [--set KEY=VALUE ...]

``GRAPH_SPEC`` is a ``--generate`` spec (``road:2048x2048``, ``rmat:22``); ``--k`` samples
that many betweenness sources.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import pstats
import time

import numpy as np

import gswitch as gs
from gswitch.generators import parse_generator_spec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("alg")
    ap.add_argument("graph")
    ap.add_argument("--backend", default="gpu")
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--simple", action="store_true", help="symmetrise, drop loops/dups")
    ap.add_argument("--first", action="store_true",
                    help="profile a first call: a fresh copy of the graph object")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a configuration value (repeatable): variant=peel_sweep")
    args = ap.parse_args()
    g = parse_generator_spec(args.graph)
    if args.simple:
        g = g.symmetrize().simple()
    kw: dict = {}
    if args.set:
        kw["config"] = dict(item.split("=", 1) for item in args.set)
    if args.alg == "betweenness":
        kw["sources"] = np.random.default_rng(1).choice(g.n_nodes, args.k, replace=False)
    print(f"{args.alg} on {args.graph}: {g.n_nodes:,} nodes, {g.n_edges:,} edges", flush=True)
    gs.run(args.alg, g, backend=args.backend, **kw)
    def sync() -> None:
        if args.backend == "gpu":
            import cupy as cp

            cp.cuda.Device().synchronize()

    sync()
    t = time.perf_counter()
    r = gs.run(args.alg, g, backend=args.backend, **kw)
    sync()
    wall = time.perf_counter() - t
    s = r.stats
    print(f"config {r.config}")
    print(f"wall {wall * 1e3:.1f} ms, device {s.get('device_time_s', 0) * 1e3:.1f} ms, "
          f"host steps {s.get('host_step_s', 0) * 1e3:.1f} ms, steps {s.get('iterations')}")
    agg: dict[str, list] = collections.defaultdict(lambda: [0, 0, 0.0, 0.0])
    for st in s.get("stages", []):
        a = agg[st["stage"]]
        a[0] += 1
        a[1] += st.get("iterations", 0) or 0
        a[2] += st.get("device_time_s") or 0.0
        a[3] += st.get("host_s", 0.0)
    for k, a in agg.items():
        print(f"  {k:22s} runs {a[0]:5d} steps {a[1]:7d} device {a[2] * 1e3:9.2f} ms "
              f"host step {a[3] * 1e3:9.2f} ms")
    if args.first:  # the same arrays in a new Graph: nothing cached on it yet
        g = gs.Graph(g.indptr, g.indices, g.weights, directed=g.directed, validate=False)
        t = time.perf_counter()
    pr = cProfile.Profile()
    pr.enable()
    gs.run(args.alg, g, backend=args.backend, **kw)
    sync()
    pr.disable()
    if args.first:
        print(f"first call on a fresh graph object: {(time.perf_counter() - t) * 1e3:.1f} ms "
              "(under cProfile)")
    st = pstats.Stats(pr)
    st.sort_stats("tottime").print_stats(args.top)
    st.sort_stats("cumtime").print_stats(args.top)


if __name__ == "__main__":
    main()
