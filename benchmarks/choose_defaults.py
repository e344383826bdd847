"""Choose each algorithm's default configuration from a bench_formulations run.

The default of an algorithm on the GPU is the candidate configuration (variant and
strategies) with the smallest geometric mean of device time over the graphs of the run
(RMAT-22, uniform-random 2^22, road 2048x2048), among candidates whose answer was
verified on every graph. With ``--guard star,bipartite`` those graphs count in no mean:
a candidate must not collapse there, i.e. its call (wall time) must be no slower than
the plain-CuPy or cuSPARSE peer of the same run; candidates that collapse rank after all
that do not. Reads the JSON files that ``bench_formulations.py --configs
benchmarks/configs/default_candidates.json`` wrote and writes the table that chose
(``<prefix>_default_choice.md`` and ``.json`` beside the first)::

    python benchmarks/choose_defaults.py benchmarks/results/h100_s23choose_formulations_gpu.json
    python benchmarks/choose_defaults.py main.json skew.json --guard star,bipartite
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def _guarded(graph: str, guard: tuple[str, ...]) -> bool:
    return any(graph.startswith(g) for g in guard)


def choose(rows: list[dict], metric: str = "device_time_ms",
           guard: tuple[str, ...] = ()) -> dict:
    """Per algorithm: every candidate's times per graph, geomean over the graphs not in
    ``guard``, its worst call-over-peer ratio on those in it, and the winner.
    """
    out: dict = {}
    for alg in sorted({r["algorithm"] for r in rows}):
        mine = [r for r in rows if r["algorithm"] == alg and r["label"].startswith("extra:")]
        graphs = sorted({r["graph"] for r in mine if not _guarded(r["graph"], guard)})
        guards = sorted({r["graph"] for r in mine if _guarded(r["graph"], guard)})
        cands: dict[str, dict] = {}
        for r in mine:
            key = json.dumps(r["config"], sort_keys=True)
            c = cands.setdefault(key, {"config": r["config"], "times": {}, "ok": True,
                                       "ratios": {}})
            c["times"][r["graph"]] = r.get(metric)
            c["ok"] = c["ok"] and bool(r["verified"]) and r.get(metric) is not None
            if r["graph"] in guards:
                c["ratios"][r["graph"]] = r.get("ratio_to_peer")
        table = []
        for c in cands.values():
            ok = c["ok"] and all(c["times"].get(g) for g in graphs + guards)
            geo = math.exp(sum(math.log(c["times"][g]) for g in graphs) / len(graphs)) \
                if ok else None
            worst = max((c["ratios"].get(g) or math.inf for g in guards), default=None)
            table.append({"config": c["config"], "times_ms": c["times"], "verified": ok,
                          "geomean_ms": geo, "worst_guard_ratio": worst,
                          "collapses": worst is not None and worst > 1.0})
        table.sort(key=lambda t: (t["geomean_ms"] is None, t["collapses"],
                                  t["geomean_ms"] or 0))
        best = table[0] if table and table[0]["geomean_ms"] is not None else None
        for t in table:
            t["vs_best"] = (t["geomean_ms"] / best["geomean_ms"]) if best and t["geomean_ms"] \
                else None
        out[alg] = {"graphs": graphs + guards, "guards": guards, "candidates": table,
                    "chosen": None if best is None else best["config"]}
    return out


def markdown(choice: dict, source: str) -> str:
    lines = [f"# Default configurations chosen from `{source}`", "",
             "Geometric mean of device time (ms) over the graphs; every answer verified. "
             "Guard graphs count in no mean; 'guard' is the worst call time over the "
             "peer's there (above 1: the candidate collapses, and ranks after those that "
             "do not). The first row of each table is the default the algorithm now "
             "ships with.", ""]
    for alg, c in choice.items():
        lines += [f"## {alg}", "",
                  "| config | " + " | ".join(c["graphs"]) + " | geomean | vs best | guard |",
                  "|---|" + "---|" * (len(c["graphs"]) + 3)]
        for t in c["candidates"]:
            times = " | ".join("-" if t["times_ms"].get(g) is None
                               else f"{t['times_ms'][g]:.2f}" for g in c["graphs"])
            geo = "not verified" if t["geomean_ms"] is None else f"{t['geomean_ms']:.2f}"
            vs = "-" if t["vs_best"] is None else f"{t['vs_best']:.2f}x"
            worst = t.get("worst_guard_ratio")
            guard = "-" if worst is None else f"{worst:.2f}x"
            lines.append(f"| `{json.dumps(t['config'], sort_keys=True)}` | {times} | {geo} "
                         f"| {vs} | {guard} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, nargs="+", help="bench_formulations JSON files")
    ap.add_argument("--metric", default="device_time_ms", choices=("device_time_ms", "wall_ms"))
    ap.add_argument("--guard", default="", help="graphs (name prefixes, comma-separated) "
                    "where a candidate must not be slower than the peer, e.g. star,bipartite")
    args = ap.parse_args(argv)
    rows = []
    for path in args.results:
        if not path.exists():
            print(f"choose_defaults: {path} does not exist; run bench_formulations.py "
                  "with --configs benchmarks/configs/default_candidates.json first",
                  file=sys.stderr)
            return 2
        rows += json.loads(path.read_text())["rows"]
    guard = tuple(g for g in args.guard.split(",") if g)
    choice = choose(rows, args.metric, guard)
    first = args.results[0]
    stem = first.name.replace("_formulations_gpu.json", "")
    md = first.with_name(f"{stem}_default_choice.md")
    md.write_text(markdown(choice, ", ".join(p.name for p in args.results)))
    first.with_name(f"{stem}_default_choice.json").write_text(
        json.dumps(choice, indent=2, sort_keys=True))
    for alg, c in choice.items():
        print(f"{alg}: {json.dumps(c['chosen'], sort_keys=True)}")
    print(f"wrote {md}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
