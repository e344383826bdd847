"""A selector model judged without a GPU, from timings already recorded.

Two measures, both for BFS and SSSP:

- **Leave one out** on the training runs: each training graph in turn is left out, a
  model is trained on the others (:func:`gswitch.selector.train`), and its pick for the
  left-out graph is looked up among that graph's own candidate timings (device time over
  the graph's fastest candidate).
- **The evaluation graphs** of ``bench_selector_tuned.py``: the model's pick for each of
  the twenty graphs (features in ``results/selector_eval_features.json``) is looked up
  among the configurations timed on that graph (the recorded picks and the studies'
  best, each as a call time over the study's best in the same run; a configuration
  timed in several runs takes their mean). A pick never timed there is listed as
  unknown.

Both compare corpora (``old``: the three H100 runs of the first model; ``new``: with
the H200 corpus runs; ``overlay``: with the clique chains measured again among the
overlay variants, the shipped one) and the weight of the two size features. Usage::

    python benchmarks/experiments/selector_offline_eval.py [--size-weights 0.1,0.5,1]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from train_selector import features_for, latest_runs  # noqa: E402

import gswitch.selector as sel  # noqa: E402

RESULTS = HERE / "results"
OLD = ["h100_s24chooseA_formulations_gpu.json", "h100_s24chooseB_formulations_gpu.json",
       "h100_s24road_formulations_gpu.json"]
NEW = OLD + ["h200_corpusA_formulations_gpu.json", "h200_corpusB_formulations_gpu.json"]
#: the shipped corpus: the clique chains measured again with the overlay variants
OVERLAY = NEW + ["h200_corpusC_formulations_gpu.json"]
EVAL = ["h200_s29a_selector_tuned.json", "h200_s29b_selector_tuned.json",
        "h200_s29c_selector_tuned.json", "h200x2_s31_bench_selector_tuned_s31a.json",
        "h200x2_s31_bench_selector_tuned_s31b.json",
        "bench_selector_tuned_bfs_h200_s43_uniform2.json",
        "bench_selector_tuned_recheck_s44_recheck_bfs.json",
        "bench_selector_tuned_sssp_h200_s43.json", "bench_selector_tuned_sssp_h200_s43b.json",
        "bench_selector_tuned_sssp_h200_s43c.json",
        "bench_selector_tuned_sssp_s44_sssp_roads.json",
        "bench_selector_tuned_recheck_s44_recheck_sssp.json"]
ALGS = ("bfs", "sssp")


def _key(config: dict) -> str:
    return json.dumps(config, sort_keys=True)


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def _pick(entry: dict, feats: dict) -> dict:
    ranked = sorted((sel.feature_distance(feats, t["features"], sel.FEATURES), t["best"])
                    for t in entry["training"])
    return entry["portfolio"][ranked[0][1]]


def _candidates(rows: list[dict], alg: str) -> list[dict]:
    return [r for r in rows if r["algorithm"] == alg and r.get("verified")
            and str(r.get("label", "")).startswith("extra:")
            and r.get("device_time_ms") is not None]


def leave_one_out(rows: list[dict], feats: dict, alg: str) -> list[float]:
    """Per training graph, the left-out model's pick over that graph's fastest candidate."""
    mine = _candidates(rows, alg)
    graphs = sorted({r["graph"] for r in mine})
    times = {(r["graph"], _key(r["config"])): r["device_time_ms"] for r in mine}
    out = []
    for g in graphs:
        best = min(v for (h, _), v in times.items() if h == g)
        entry = sel.train([r for r in mine if r["graph"] != g],
                          {h: feats[(alg, h)] for h in graphs if h != g}, [alg])
        t = times.get((g, _key(_pick(entry["algorithms"][alg], feats[(alg, g)]))))
        if t is not None:
            out.append(t / best)
    return out


def evaluation(model: dict, alg: str, known: dict, eval_feats: dict
               ) -> tuple[list[float], list[str]]:
    """The model's picks on the evaluation graphs, as call time over the study's best."""
    ratios, unknown = [], []
    for g, f in eval_feats.items():
        p = _pick(model["algorithms"][alg], f)
        vals = [r for c, r in known.get((alg, g), [])
                if all(c.get(k) == v for k, v in p.items())]
        if vals:
            ratios.append(sum(vals) / len(vals))
        else:
            unknown.append(g)
    return ratios, unknown


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-weights", default="0.1,0.5,1.0",
                    help="weights of n_nodes and n_edges to try")
    args = ap.parse_args()
    known: dict[tuple[str, str], list[tuple[dict, float]]] = {}
    for name in EVAL:
        for r in json.loads((RESULTS / name).read_text())["rows"]:
            k = (r.get("algorithm", "bfs"), r["graph"])
            known.setdefault(k, []).append(
                (r["selector_config"], r["selector"]["wall_ms"] / r["tuned"]["wall_ms"]))
            known[k].append((r["tuned_config"], 1.0))
    eval_feats = json.loads((RESULTS / "selector_eval_features.json").read_text())
    corpora = {}
    for label, names in (("old", OLD), ("new", NEW), ("overlay", OVERLAY)):
        corpora[label] = latest_runs(
            [json.loads((RESULTS / n).read_text())["rows"] for n in names], list(ALGS))
    feats = features_for(corpora["overlay"], RESULTS / "selector_features.json")
    saved = dict(sel.WEIGHTS)
    try:
        for w in (float(x) for x in args.size_weights.split(",")):
            sel.WEIGHTS.update(n_nodes=w, n_edges=w)
            for label, rows in corpora.items():
                model = {"algorithms": {}}
                for alg in ALGS:
                    mine = [r for r in rows if r["algorithm"] == alg]
                    graphs = {r["graph"] for r in mine}
                    model["algorithms"].update(sel.train(
                        mine, {g: feats[(alg, g)] for g in graphs}, [alg])["algorithms"])
                for alg in ALGS:
                    loo = leave_one_out(rows, feats, alg)
                    ev, unknown = evaluation(model, alg, known, eval_feats)
                    print(f"size weight {w:4.2f}  corpus {label}  {alg:4s}  leave-one-out "
                          f"geomean {_geomean(loo):.3f} worst {max(loo):.2f} (n={len(loo)})"
                          f"  evaluation geomean {_geomean(ev):.3f} worst {max(ev):.2f} "
                          f"(n={len(ev)}{', unknown ' + ','.join(unknown) if unknown else ''})")
    finally:
        sel.WEIGHTS.clear()
        sel.WEIGHTS.update(saved)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
