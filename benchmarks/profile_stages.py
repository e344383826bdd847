"""Where a default run's time goes: per stage for staged formulations, per step mode.

For each graph and algorithm, the default configuration runs ``--repeats`` times after a
warm-up; the last run's stats give, per stage, its steps, device time and host-step time,
and, for single-stage runs, how many steps each driving mode took. Every answer is checked
against the reference. Prints a table and writes ``benchmarks/results/<prefix>_stages.json``
(and a copy under ``$OUT``).

Usage::

    python benchmarks/profile_stages.py [--scale 22] [--graphs rmat,uniform,road]
        [--algs cc,sssp,pagerank,bfs] [--repeats 3] [--out-prefix h100_s24]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import time
from pathlib import Path

import numpy as np
from bench_formulations import gpu_graph, graph_for, source_of

import gswitch as gs
from gswitch.plugins import get_registry
from gswitch.verify import answer_problem, expected_answer

FIELD = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}


def profile(alg: str, g: gs.Graph, repeats: int, backend: str = "gpu") -> dict:
    """The default run's stats, timed; its answer checked against the reference."""
    src = source_of(alg, g)
    kw = {} if src is None else {"source": src}
    gs.run(alg, g, backend=backend, **kw)  # compile and warm
    walls, devs = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        r = gs.run(alg, g, backend=backend, **kw)
        walls.append(time.perf_counter() - t)
        devs.append(r.stats.get("device_time_s"))
    spec = get_registry().algorithm(alg)  # variants share the reference
    problem = answer_problem(spec, r.fields[FIELD[alg]], expected_answer(spec, g, **kw))
    modes = collections.Counter(r.stats.get("modes", []))
    return {"algorithm": alg, "graph": g.name, "config": r.config.to_dict(),
            "verified": problem is None, "error": problem,
            "device_ms": 1e3 * float(np.median([d or 0.0 for d in devs])),
            "wall_ms": 1e3 * float(np.median(walls)),
            "iterations": r.stats.get("iterations"), "modes": dict(modes),
            "stages": r.stats.get("stages", []),
            "host_step_ms": 1e3 * r.stats.get("host_step_s", 0)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--graphs", default="rmat,uniform,road")
    ap.add_argument("--algs", default="cc,sssp,pagerank,bfs")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out-prefix", default="run")
    ap.add_argument("--backend", default="gpu", help="gpu, or cpu to try the script")
    args = ap.parse_args()
    rows = []
    for kind in args.graphs.split(","):
        base = gpu_graph(kind, args.scale, weighted=False)
        weighted = None
        for alg in args.algs.split(","):
            if alg == "sssp" and weighted is None:
                weighted = gpu_graph(kind, args.scale, weighted=True)
            g = graph_for(alg, base, weighted)
            row = profile(alg, g, args.repeats, args.backend)
            rows.append(row)
            print(f"{alg:9s} {g.name:26s} dev {row['device_ms']:9.3f} ms  wall "
                  f"{row['wall_ms']:9.3f} ms  steps {row['iterations']}  "
                  f"ok={row['verified']}  modes {row['modes']}", flush=True)
            for st in row["stages"]:
                dev = st.get("device_time_s")
                print(f"    {st['stage']:14s} steps {st.get('iterations', '-')!s:>5}  "
                      + (f"dev {1e3 * dev:8.3f} ms" if dev is not None else
                         f"host {1e3 * st.get('host_s', 0):8.3f} ms"), flush=True)
    data = {"benchmark": "profile_stages", "scale": args.scale, "rows": rows}
    name = f"{args.out_prefix}_stages.json"
    for d in [Path(__file__).parent / "results", Path(os.environ["OUT"]) if "OUT" in os.environ
              else None]:
        if d is not None:
            d.mkdir(parents=True, exist_ok=True)
            (d / name).write_text(json.dumps(data, indent=2, default=str))
            print(f"wrote {d / name}")


if __name__ == "__main__":
    main()
