"""The selector's pick against a tuned study of the same graph, on graphs it never saw.

Twenty graphs of 1M to 4M nodes, none of them a training graph of the shipped model
(those are RMAT-22 edge factor 16, uniform 2^22 edge factor 16, road 2048x2048, a star
of 2^20 and a Zipf bipartite graph of 2^20): other sizes, seeds, edge factors and skews
of RMAT, directed RMAT and uniform graphs, sparse uniform graphs, plain grids, road
grids of other shapes, larger stars and bipartite graphs of other exponents.

For each graph, in one process: the plain-CuPy frontier BFS peer, a ``--trials``-trial
study (``gswitch.tuner.tune``, its own SQLite file, so no other graph's study warms it;
the default, the selector's pick and its portfolio are enqueued first as every study
does), then ``--repeats`` calls in rotation of the selector's pick (a plain ``gs.run``
with no config), the study's best and the default; every answer is checked against
scipy. The targets: the geometric mean of selector / tuned within 1.25x, never above
2x, and never slower than the CuPy peer (the frontier BFS, or for ``--alg sssp`` the
frontier Bellman-Ford). SSSP runs on the same graphs with integer weights in [1, 64)
drawn per stored edge (the road grids keep their own). Usage::

    python benchmarks/bench_selector_tuned.py [--alg bfs|sssp] [--graphs 0-19|9,10,13-15]
        [--trials 40] [--tag NAME]
    python benchmarks/bench_selector_tuned.py --table results/a.json results/b.json
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import write_json

SPECS = [
    ("rmat-20-16-s21", lambda: _rmat(20, 16, seed=21)),
    ("rmat-21-8-s22", lambda: _rmat(21, 8, seed=22)),
    ("rmat-22-8-s23", lambda: _rmat(22, 8, seed=23)),
    ("rmat-22-4-s24", lambda: _rmat(22, 4, seed=24)),
    ("rmat-21-16-lowskew", lambda: _rmat(21, 16, a=0.45, b=0.22, c=0.22, seed=25)),
    ("rmat-21-16-highskew", lambda: _rmat(21, 16, a=0.65, b=0.15, c=0.15, seed=26)),
    ("rmat-21-8-directed", lambda: _rmat(21, 8, seed=27, sym=False)),
    ("uniform-1M-16", lambda: _uniform(1 << 20, 1 << 24, 28)),
    ("uniform-2M-2", lambda: _uniform(1 << 21, 1 << 22, 29)),
    ("uniform-3M-8", lambda: _uniform(3_000_000, 24_000_000, 30)),
    ("uniform-2M-8-directed", lambda: _uniform(1 << 21, 1 << 24, 31, sym=False)),
    ("grid-1024x1024", lambda: _gen("grid2d", 1024, 1024)),
    ("grid-2048x1024", lambda: _gen("grid2d", 2048, 1024)),
    ("road-1200x1200", lambda: _gen("road", 1200, 1200, seed=32)),
    ("road-1800x1800", lambda: _gen("road", 1800, 1800, seed=33)),
    ("road-2896x1448", lambda: _gen("road", 2896, 1448, seed=34)),
    ("star-2M", lambda: _gen("star", (1 << 21) + 1, seed=35)),
    ("star-4M", lambda: _gen("star", 4_000_001, seed=36)),
    ("bipartite-2M-0.8", lambda: _bipartite(1 << 21, 1 << 24, 0.8, 37)),
    ("bipartite-1M-1.1", lambda: _bipartite(1 << 20, 1 << 23, 1.1, 38)),
]


def _rmat(scale, ef, a=0.57, b=0.19, c=0.19, seed=0, sym=True):
    from gswitch.generators import rmat

    g = rmat(scale, ef, a, b, c, seed=seed)
    return g.symmetrize() if sym else g


def _uniform(n, m, seed, sym=True):
    from gswitch.generators import uniform_random

    g = uniform_random(n, m, seed=seed)
    return g.symmetrize() if sym else g


def _gen(name, *args, **kw):
    from gswitch import generators

    return getattr(generators, name)(*args, **kw)


def _bipartite(n, m, exponent, seed):
    from bench_formulations import bipartite_zipf

    return bipartite_zipf(n, m, exponent=exponent, seed=seed)


FIELD = {"bfs": "depth", "sssp": "dist"}


def weighted(g, seed: int):
    """``g`` with integer weights in [1, 64) (kept where it has some): a hash of the
    edge's two ends, so both directions of an undirected edge weigh the same."""
    if g.weighted:
        return g
    from gswitch.generators import WEIGHT_HIGH, WEIGHT_LOW

    src, dst = g.edges()
    lo = np.minimum(src, dst).astype(np.uint64)
    hi = np.maximum(src, dst).astype(np.uint64)
    h = (lo * np.uint64(0x9E3779B97F4A7C15) ^ hi * np.uint64(0xC2B2AE3D27D4EB4F)
         ^ np.uint64(seed)) >> np.uint64(40)
    w = (WEIGHT_LOW + h % np.uint64(WEIGHT_HIGH - WEIGHT_LOW)).astype(np.float32)
    out = g.with_weights(w)
    out.name = g.name
    return out


def measure(name: str, g, trials: int, repeats: int, alg: str = "bfs") -> dict:
    from bench_formulations import gpu_peers, primary_peer
    from gswitch.tuner import tune

    import gswitch as gs
    from gswitch.testing.reference import compare

    src = int(np.argmax(g.out_degree))
    peer_args = argparse.Namespace(repeats=repeats, host_repeats=1, backend="gpu")
    peers, refs = gpu_peers(alg, g, src, peer_args)
    ref = refs[FIELD[alg]]
    peer = primary_peer(peers, "gpu")
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        res = tune(alg, g, trials=trials, storage=f"sqlite:///{tmp}/study.db", source=src,
                   backend="gpu", name=f"sel-{name}")
    tune_s = time.perf_counter() - t
    row = {"graph": name, "algorithm": alg, "n_nodes": g.n_nodes, "n_edges": g.n_edges,
           "directed": g.directed, "tune_s": tune_s, "trials": res.new_trials,
           "tuned_config": res.best_config, "peer": peer and peer["name"],
           "peer_ms": peer and peer["wall_ms"]}
    runs = {"selector": None, "tuned": res.best_config, "default": "default"}
    walls: dict[str, list[float]] = {k: [] for k in runs}
    devs: dict[str, list[float]] = {k: [] for k in runs}
    names = list(runs)
    for r_ in range(repeats + 1):
        k = r_ % len(names)
        for label in names[k:] + names[:k]:
            t = time.perf_counter()
            r = gs.run(alg, g, source=src, backend="gpu", config=runs[label])
            wall = time.perf_counter() - t
            bad = compare(alg, r.fields[FIELD[alg]], ref)
            if bad:
                raise AssertionError(f"{alg} on {name}, {label}: wrong answer: {bad}")
            if r_:
                walls[label].append(wall * 1e3)
                devs[label].append(r.stats["device_time_s"] * 1e3)
            if label == "selector":
                row["selector_source"] = r.stats.get("config_source")
                row["selector_config"] = r.config.to_dict()
    for label in names:
        row[label] = {"wall_ms": statistics.median(walls[label]),
                      "device_ms": statistics.median(devs[label])}
    s, tu = row["selector"], row["tuned"]
    row["selector_over_tuned"] = s["wall_ms"] / tu["wall_ms"]
    row["selector_over_tuned_device"] = s["device_ms"] / tu["device_ms"]
    row["selector_over_peer"] = s["wall_ms"] / row["peer_ms"] if row["peer_ms"] else None
    print(f"{alg} {name:24s} {g.n_nodes:>9,} nodes {g.n_edges:>11,} edges  selector "
          f"{s['wall_ms']:9.3f} ms  tuned {tu['wall_ms']:9.3f} ms  default "
          f"{row['default']['wall_ms']:9.3f}  peer {row['peer_ms'] or 0:9.3f}  sel/tuned "
          f"{row['selector_over_tuned']:.2f}x (device {row['selector_over_tuned_device']:.2f}x)"
          f"  sel/peer {row['selector_over_peer'] or 0:.2f}x  tune {tune_s:.0f} s", flush=True)
    return row


def table(rows: list[dict]) -> str:
    lines = ["| graph | nodes | edges | selector ms | tuned ms | default ms | CuPy peer ms | "
             "selector/tuned | selector/peer |", "|---" * 9 + "|"]
    for r in rows:
        lines.append(f"| {r['graph']} | {r['n_nodes']:,} | {r['n_edges']:,} | "
                     f"{r['selector']['wall_ms']:.3f} | {r['tuned']['wall_ms']:.3f} | "
                     f"{r['default']['wall_ms']:.3f} | {r['peer_ms'] or float('nan'):.3f} | "
                     f"{r['selector_over_tuned']:.2f}x | {r['selector_over_peer'] or 0:.2f}x |")
    ratios = [r["selector_over_tuned"] for r in rows]
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    dev = [r["selector_over_tuned_device"] for r in rows]
    geo_dev = math.exp(sum(math.log(x) for x in dev) / len(dev))
    slower = [r["graph"] for r in rows if r["selector_over_peer"] and r["selector_over_peer"] > 1]
    lines.append("")
    lines.append(f"{len(rows)} graphs: geomean selector/tuned {geo:.3f}x end to end "
                 f"({geo_dev:.3f}x device time; target <= 1.25x), worst {max(ratios):.2f}x "
                 f"(target <= 2x), slower than the CuPy peer on {len(slower)} "
                 f"{slower if slower else ''}")
    return "\n".join(lines)


def _indices(text: str) -> list[int]:
    """``"9,10,13-15"`` as ``[9, 10, 13, 14, 15]``."""
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graphs", default=f"0-{len(SPECS) - 1}",
                    help="indices and ranges, e.g. 0-9 or 9,10,13-15")
    ap.add_argument("--alg", choices=sorted(FIELD), default="bfs")
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--tag", default="")
    ap.add_argument("--table", nargs="+", help="print the table of these JSON files")
    args = ap.parse_args()
    if args.table:
        rows = [r for f in args.table for r in json.loads(Path(f).read_text())["rows"]]
        print(table(rows))
        return
    from _common import require_gpu

    require_gpu("bench_selector_tuned.py")
    from gswitch.engine.gpu import GpuEngine

    rows = []
    for name, make in [SPECS[i] for i in _indices(args.graphs)]:
        g = make()
        g.name = name
        if args.alg == "sssp":
            g = weighted(g, seed=len(rows) + 100)
        rows.append(measure(name, g, args.trials, args.repeats, args.alg))
        write_json(f"bench_selector_tuned_{args.alg}{'_' + args.tag if args.tag else ''}",
                   {"device": GpuEngine.instance().device_name, "trials": args.trials,
                    "algorithm": args.alg, "rows": rows})
    print(table(rows))


if __name__ == "__main__":
    main()
