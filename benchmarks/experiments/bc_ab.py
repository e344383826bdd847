"""Sampled betweenness on RMAT, one tree: for same-run A/B of two trees (stage_ab.sh).

Times one call with ``--k`` sources (after a 2-source call that compiles its modules),
prints the call and its per-stage device times, and saves the result to ``--save`` so
that the two trees' answers can be compared.

Usage: PYTHONPATH=/tmp/st-old python benchmarks/experiments/bc_ab.py --save old.npy
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_scale_targets import _graph  # noqa: E402

import gswitch as gs  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--k", type=int, default=64)
    ap.add_argument("--config", type=json.loads, default=None)
    ap.add_argument("--save", required=True)
    args = ap.parse_args()
    g = _graph(args.scale)
    sources = np.random.default_rng(1).choice(g.n_nodes, args.k, replace=False)
    gs.run("betweenness", g, sources=sources[:2], backend="gpu", config=args.config)
    t = time.perf_counter()
    r = gs.run("betweenness", g, sources=sources, backend="gpu", config=args.config)
    s = time.perf_counter() - t
    stages: dict[str, float] = {}
    for st in r.stats["stages"]:
        if st.get("device_time_s") is not None:
            stages[st["stage"]] = stages.get(st["stage"], 0.0) + st["device_time_s"]
    print(f"{gs.__file__}: k={args.k} {args.config or 'default'} {s * 1e3:.1f} ms; device "
          + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in stages.items()), flush=True)
    np.save(args.save, np.asarray(r.fields["betweenness"]))


if __name__ == "__main__":
    main()
