"""core_number per call on small graphs, by formulation and launch, against networkx:
which configuration a networkx call on a small graph should get (target: 2 ms per call
on a 1,000-node graph). Every answer is checked against networkx.

Usage: python benchmarks/experiments/kcore_small.py [--backend gpu]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import networkx as nx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import median_time  # noqa: E402

import gswitch as gs  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", default="gpu")
    args = ap.parse_args()
    configs = [{}, {"variant": "peel_levels"}, {"variant": "peel_levels", "launch": "persistent"},
               {"variant": "peel_buckets", "launch": "cuda_graph"},
               {"variant": "peel_sweep", "launch": "host_loop"},
               {"variant": "peel_sweep", "launch": "persistent"},
               {"variant": "peel_sweep", "launch": "cuda_graph"}]
    for n, m in ((1_000, 4_000), (10_000, 40_000), (100_000, 400_000)):
        G = nx.gnm_random_graph(n, m, seed=n)
        want = nx.core_number(G)
        g = gs.Graph.from_networkx(G)
        t_nx, _ = median_time(lambda G=G: nx.core_number(G), 5)
        print(f"gnm {n} nodes {m} edges: networkx {t_nx * 1e3:.2f} ms", flush=True)
        for cfg in configs:
            if args.backend == "cpu" and "launch" in cfg and cfg["launch"] != "host_loop":
                continue
            try:
                r = gs.run("core_number", g, backend=args.backend, config=cfg)
            except Exception as exc:  # a refused combination: say so and go on
                print(f"  {cfg}: {type(exc).__name__}: {str(exc)[:120]}")
                continue
            got = np.asarray(r.fields["core"])
            assert all(int(got[i]) == want[i] for i in range(n)), cfg
            t, _ = median_time(lambda cfg=cfg, g=g: gs.run(
                "core_number", g, backend=args.backend, config=cfg), 20 if n < 50_000 else 5)
            print(f"  {str(cfg):60s} {t * 1e3:8.2f} ms "
                  f"({r.stats.get('iterations')} steps)", flush=True)


if __name__ == "__main__":
    main()
