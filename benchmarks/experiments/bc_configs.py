"""Sampled betweenness on RMAT by configuration: which strategies its stages want.

Times ``k`` sources under each configuration on one resident graph, checks every
answer against the first configuration's (and a source's dependency sum against
scipy's BFS, as ``bench_scale_targets.py`` does), then times ``--k-best`` sources under
the fastest.

Usage: python benchmarks/experiments/bc_configs.py [--scale 22] [--k 4] [--k-best 64]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_scale_targets import _dependency_sum_ok, _graph  # noqa: E402

import gswitch as gs  # noqa: E402

CONFIGS = [
    {},
    {"launch": "persistent"},
    {"load_balance": "twc", "launch": "persistent"},
    {"load_balance": "virtual_warp", "launch": "persistent"},
    {"worklist": "bitmap", "load_balance": "twc", "launch": "persistent"},
    {"load_balance": "twc", "launch": "cuda_graph"},
    {"worklist": "bitmap", "load_balance": "twc", "launch": "persistent",
     "direction": "direction_optimizing"},
    {"worklist": "bitmap", "load_balance": "twc", "launch": "persistent",
     "direction": "direction_optimizing", "direction.gather": "nodes"},
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--k-best", type=int, default=64)
    ap.add_argument("--backend", default="gpu")
    args = ap.parse_args()
    g = _graph(args.scale)
    rng = np.random.default_rng(1)
    sources = rng.choice(g.n_nodes, args.k, replace=False)
    got, want = _dependency_sum_ok(g, args.backend, int(sources[0]))
    assert abs(got - want) <= 1e-6 * max(1.0, want), (got, want)
    base, times = None, []
    for cfg in CONFIGS:
        gs.run("betweenness", g, sources=sources, backend=args.backend, config=cfg)
        t = time.perf_counter()
        r = gs.run("betweenness", g, sources=sources, backend=args.backend, config=cfg)
        s = time.perf_counter() - t
        bc = np.asarray(r.fields["betweenness"])
        if base is None:
            base = bc
        # float64 sums in another order: the algorithm's own tolerance (compare_betweenness)
        differ = float(np.max(np.abs(bc - base) / np.maximum(1.0, np.abs(base))))
        assert np.allclose(bc, base, rtol=1e-6, atol=1e-6), (cfg, differ)
        got, want = _dependency_sum_ok(g, args.backend, int(sources[0]), cfg)
        assert abs(got - want) <= 1e-6 * max(1.0, want), (cfg, got, want)
        stages = {}
        for st in r.stats["stages"]:
            if st.get("device_time_s") is not None:
                stages[st["stage"]] = stages.get(st["stage"], 0.0) + st["device_time_s"]
        times.append(s)
        print(f"k={args.k} {str(cfg):90s} {s * 1e3:8.1f} ms  (largest relative difference "
              f"from the first {differ:.1e})  " + "  ".join(
            f"{k} {v * 1e3:.1f}" for k, v in stages.items()), flush=True)
    best = CONFIGS[int(np.argmin(times))]
    big = rng.choice(g.n_nodes, args.k_best, replace=False)
    t = time.perf_counter()
    gs.run("betweenness", g, sources=big, backend=args.backend, config=best)
    print(f"k={args.k_best} under {best}: {(time.perf_counter() - t) * 1e3:.1f} ms "
          "(compiled above)", flush=True)


if __name__ == "__main__":
    main()
