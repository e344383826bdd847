"""PageRank with a float64 residual (the registered one) against a float32 residual.

A node of in-degree 10^5 receives 10^5 atomic adds of nearly equal small shares on the
GPU; a float32 accumulator rounds each of them the same way. This script measures both
sides in one run on one device:

- accuracy: the L1 distance to the scipy reference (networkx's definition) on the
  sweep's in-star (10^5 leaves pointing at one hub) and on RMAT at ``--check-scale``;
- speed: device milliseconds per step on RMAT at ``--scale`` (edge factor 16,
  symmetrised, the graph of ``bench_engine.py``) for the default configuration, push
  topology and pull topology, the two variants alternating run by run.

Usage: python benchmarks/experiments/ab_pagerank_residual.py [--scale 22] [--check-scale 18]
    [--rounds 5]
"""

from __future__ import annotations

import pathlib
import sys

# the maintained benchmarks' helpers live one folder up
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import statistics

import numpy as np
from _common import require_gpu, write_json

CONFIGS = {
    "default": {},
    "push topology vw32": {"driving": "topology", "load_balance.size": 32},
    "pull topology g8": {"direction": "pull", "driving": "topology", "direction.group": 8},
    "pull topology g32": {"direction": "pull", "driving": "topology", "direction.group": 32},
}


def _variants():
    from gswitch.algorithms.pagerank import pagerank_spec

    import gswitch as gs

    return {"float64": gs.plugins.get_registry().algorithm("pagerank"),
            "float32": pagerank_spec("float32", name="pagerank_f32")}


def _accuracy(variants, graphs) -> dict:
    import gswitch as gs
    from gswitch.testing.reference import reference

    out = {}
    for gname, g in graphs.items():
        ref = reference("pagerank", g)
        for cname in ("default", "pull topology g8"):
            for vname, spec in variants.items():
                r = gs.run(spec, g, backend="gpu", config=CONFIGS[cname])
                l1 = float(np.abs(r.fields["rank"].astype(np.float64) - ref).sum())
                out[f"{gname} | {cname} | {vname}"] = l1
                print(f"  L1 to reference  {gname:14s} {cname:18s} {vname}: {l1:.3g}")
    return out


def _speed(variants, g, rounds: int) -> dict:
    import gswitch as gs

    out = {}
    for cname, cfg in CONFIGS.items():
        per = {v: [] for v in variants}
        steps = {}
        for spec in variants.values():  # compile and warm up
            gs.run(spec, g, backend="gpu", config=cfg)
        for _ in range(rounds):
            for v, spec in variants.items():
                r = gs.run(spec, g, backend="gpu", config=cfg)
                assert abs(float(r.fields["rank"].sum()) - 1.0) < 1e-3
                per[v].append(r.stats["device_time_s"] / max(1, r.iterations))
                steps[v] = r.iterations
        row = {v: {"ms_per_step": statistics.median(t) * 1e3, "steps": steps[v],
                   "all_ms_per_step": [x * 1e3 for x in t]} for v, t in per.items()}
        out[cname] = row
        print(f"  {cname:20s} float64 {row['float64']['ms_per_step']:7.3f} ms/step "
              f"({steps['float64']} steps)  float32 {row['float32']['ms_per_step']:7.3f} "
              f"ms/step ({steps['float32']} steps)")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--check-scale", type=int, default=18)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    require_gpu("ab_pagerank_residual.py")
    import cupy

    from gswitch.generators import rmat
    from gswitch.testing.zoo import sweep_graph

    variants = _variants()
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"device: {device}")
    graphs = {"in_star": sweep_graph("sweep_in_star")[0],
              f"rmat{args.check_scale}": rmat(args.check_scale, 16, seed=1).symmetrize()}
    out = {"device": device, "accuracy_l1": _accuracy(variants, graphs)}
    g = rmat(args.scale, 16, seed=1).symmetrize()
    print(f"RMAT-{args.scale}: {g.n_nodes} nodes, {g.n_edges} edges")
    out["speed"] = _speed(variants, g, args.rounds)
    write_json("ab_pagerank_residual", out)


if __name__ == "__main__":
    main()
