"""The selector's pick against the default configuration and the plain-CuPy peer, on
graphs the selector was not trained on.

For each graph (other sizes and seeds of the training families, plus families it never
saw) and each algorithm the selector models, one process times, after a warm-up, the
median of ``--repeats`` calls of ``gs.run`` with the selector's pick (no config) and with
``config="default"``, and the peer of ``bench_formulations.py`` (frontier BFS or
Bellman-Ford in CuPy); every answer is checked against scipy. Writes
``benchmarks/results/<prefix>_selector.json`` (and a copy under ``$OUT``)::

    python benchmarks/bench_selector.py [--repeats 5] [--out-prefix h100_s24]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
from bench_formulations import bipartite_zipf, check, gpu_peers, primary_peer

import gswitch as gs
from gswitch.generators import grid2d, rmat, road, star, uniform_random
from gswitch.selector import select

FIELD = {"bfs": "depth", "sssp": "dist"}


def graphs(weighted: bool) -> list[gs.Graph]:
    """Graphs outside the training set: other scales, seeds, edge factors and a plain
    grid (the training set: RMAT-22 ef 16, uniform 2^22 ef 16, road 2048^2, star 2^20,
    bipartite 2^20)."""
    return [rmat(21, 8, seed=7, weighted=weighted),
            rmat(20, 32, seed=8, weighted=weighted),
            uniform_random(1 << 21, 1 << 24, seed=9, weighted=weighted),
            road(1448, 1448, seed=11),
            grid2d(1024, 1024, weighted=weighted, seed=12),
            star((1 << 19) + 1, weighted=weighted, seed=13),
            bipartite_zipf(1 << 19, 1 << 23, seed=14, weighted=weighted)]


def timed(fn, repeats: int) -> tuple[float, object]:
    fn()
    out, times = None, []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--algs", default="bfs,sssp")
    ap.add_argument("--out-prefix", default="run")
    args = ap.parse_args()
    peer_args = argparse.Namespace(repeats=args.repeats, host_repeats=1, backend="gpu")
    rows = []
    for alg in args.algs.split(","):
        for g in graphs(weighted=alg == "sssp"):
            src = int(np.argmax(g.out_degree))
            peers, refs = gpu_peers(alg, g, src, peer_args)
            peer = primary_peer(peers, "gpu")
            row = {"algorithm": alg, "graph": g.name, "n_nodes": g.n_nodes,
                   "n_edges": g.n_edges, "peer": peer and peer["name"],
                   "peer_ms": peer and peer["wall_ms"]}
            pick = select(alg, g)
            row["pick"] = None if pick is None else pick.config
            row["nearest"] = None if pick is None else pick.nearest
            for label, cfg in (("selector", None), ("default", "default")):
                wall, r = timed(lambda cfg=cfg, alg=alg, g=g, src=src: gs.run(
                    alg, g, source=src, backend="gpu", config=cfg), args.repeats)
                bad, _ = check(alg, r.fields[FIELD[alg]], refs)
                row[label] = {"wall_ms": wall * 1e3, "device_ms":
                              1e3 * r.stats["device_time_s"], "verified": bad is None,
                              "error": bad, "source": r.stats.get("config_source")}
            s, d = row["selector"], row["default"]
            row["selector_over_default"] = s["wall_ms"] / d["wall_ms"]
            row["selector_over_peer"] = s["wall_ms"] / row["peer_ms"] if row["peer_ms"] else None
            rows.append(row)
            print(f"{alg:5s} {g.name:28s} selector {s['wall_ms']:9.3f} ms (dev "
                  f"{s['device_ms']:8.3f}, ok={s['verified']}, near {row['nearest']})  default "
                  f"{d['wall_ms']:9.3f} ms (ok={d['verified']})  peer {row['peer_ms'] or 0:9.3f}"
                  f"  sel/def {row['selector_over_default']:.2f}x  sel/peer "
                  f"{row['selector_over_peer'] or 0:.2f}x", flush=True)
    data = {"benchmark": "bench_selector", "rows": rows}
    name = f"{args.out_prefix}_selector.json"
    for d in (Path(__file__).parent / "results",
              Path(os.environ["OUT"]) if "OUT" in os.environ else None):
        if d is not None:
            d.mkdir(parents=True, exist_ok=True)
            (d / name).write_text(json.dumps(data, indent=2, default=str))
            print(f"wrote {d / name}")


if __name__ == "__main__":
    main()
