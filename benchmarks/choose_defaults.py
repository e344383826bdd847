"""Choose each algorithm's default configuration from a bench_formulations run.

The default of an algorithm on the GPU is the candidate configuration (variant and
strategies) with the smallest geometric mean of device time over the graphs of the run
(RMAT-22, uniform-random 2^22, road 2048x2048), among candidates whose answer was
verified on every graph. Reads the JSON that ``bench_formulations.py --configs
benchmarks/configs/default_candidates.json`` wrote and writes the table that chose
(``<prefix>_default_choice.md`` and ``.json`` beside it)::

    python benchmarks/choose_defaults.py benchmarks/results/h100_s23choose_formulations_gpu.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def choose(rows: list[dict], metric: str = "device_time_ms") -> dict:
    """Per algorithm: every candidate's times per graph, geomean, and the winner."""
    out: dict = {}
    for alg in sorted({r["algorithm"] for r in rows}):
        mine = [r for r in rows if r["algorithm"] == alg and r["label"].startswith("extra:")]
        graphs = sorted({r["graph"] for r in mine})
        cands: dict[str, dict] = {}
        for r in mine:
            key = json.dumps(r["config"], sort_keys=True)
            c = cands.setdefault(key, {"config": r["config"], "times": {}, "ok": True})
            c["times"][r["graph"]] = r.get(metric)
            c["ok"] = c["ok"] and bool(r["verified"]) and r.get(metric) is not None
        table = []
        for c in cands.values():
            ok = c["ok"] and all(c["times"].get(g) for g in graphs)
            geo = math.exp(sum(math.log(c["times"][g]) for g in graphs) / len(graphs)) \
                if ok else None
            table.append({"config": c["config"], "times_ms": c["times"], "verified": ok,
                          "geomean_ms": geo})
        table.sort(key=lambda t: (t["geomean_ms"] is None, t["geomean_ms"] or 0))
        best = table[0] if table and table[0]["geomean_ms"] is not None else None
        for t in table:
            t["vs_best"] = (t["geomean_ms"] / best["geomean_ms"]) if best and t["geomean_ms"] \
                else None
        out[alg] = {"graphs": graphs, "candidates": table,
                    "chosen": None if best is None else best["config"]}
    return out


def markdown(choice: dict, source: str) -> str:
    lines = [f"# Default configurations chosen from `{source}`", "",
             "Geometric mean of device time (ms) over the graphs; every answer verified. "
             "The first row of each table is the default the algorithm now ships with.", ""]
    for alg, c in choice.items():
        lines += [f"## {alg}", "",
                  "| config | " + " | ".join(c["graphs"]) + " | geomean | vs best |",
                  "|---|" + "---|" * (len(c["graphs"]) + 2)]
        for t in c["candidates"]:
            times = " | ".join("-" if t["times_ms"].get(g) is None
                               else f"{t['times_ms'][g]:.2f}" for g in c["graphs"])
            geo = "not verified" if t["geomean_ms"] is None else f"{t['geomean_ms']:.2f}"
            vs = "-" if t["vs_best"] is None else f"{t['vs_best']:.2f}x"
            lines.append(f"| `{json.dumps(t['config'], sort_keys=True)}` | {times} | {geo} "
                         f"| {vs} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, help="bench_formulations JSON")
    ap.add_argument("--metric", default="device_time_ms", choices=("device_time_ms", "wall_ms"))
    args = ap.parse_args(argv)
    if not args.results.exists():
        print(f"choose_defaults: {args.results} does not exist; run bench_formulations.py "
              "with --configs benchmarks/configs/default_candidates.json first",
              file=sys.stderr)
        return 2
    rows = json.loads(args.results.read_text())["rows"]
    choice = choose(rows, args.metric)
    stem = args.results.name.replace("_formulations_gpu.json", "")
    md = args.results.with_name(f"{stem}_default_choice.md")
    md.write_text(markdown(choice, args.results.name))
    args.results.with_name(f"{stem}_default_choice.json").write_text(
        json.dumps(choice, indent=2, sort_keys=True))
    for alg, c in choice.items():
        print(f"{alg}: {json.dumps(c['chosen'], sort_keys=True)}")
    print(f"wrote {md}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
