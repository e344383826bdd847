"""Train the configuration selector from ``bench_formulations.py`` runs.

Reads the JSON files of runs made with ``--configs`` (candidate configurations, every
answer verified, peers in the same run), takes each training graph's fastest candidate
that is no slower than the peer, and writes ``gswitch/models/selector.json``: per
algorithm a portfolio of at most eight configurations and the training graphs'
features pointing at their winners (:func:`gswitch.selector.train`). Rows written before
the runs recorded features get them from the graphs rebuilt here: each graph's name says
its kind and scale (``bench_formulations.parse_graph_name``), and
``bench_formulations.gpu_graph`` builds it with the generators and seeds of the run.
One command retrains from any number of runs; a graph that several runs measured takes
its rows from the last of them on the command line::

    python benchmarks/train_selector.py benchmarks/results/h100_s24chooseA_formulations_gpu.json \\
        benchmarks/results/h100_s24chooseB_formulations_gpu.json \\
        benchmarks/results/h100_s24road_formulations_gpu.json [more runs ...]

Training corpus of the shipped model (those three runs, on an H100): RMAT-22 (edge
factor 16), uniform random 2^22 (edge factor 16), the 2048x2048 road-like grid, a star of
2^20 leaves and a Zipf user-item bipartite graph of 2^20 nodes.

The wider corpus (``configs/selector_corpus.md`` gives its GPU commands; its runs are
retrained together with the three above) adds, at 2^19 nodes unless said: RMAT at a
flatter and a steeper skew (``rmat_low``, ``rmat_high``), uniform random of edge factor 2
(``uniform_sparse``), RMAT, uniform random of edge factor 16, a star of 2^17 leaves and a
bipartite graph of 2^17 nodes (four of the five kinds above at another size), the plain
724x724 grid, a chain of 256 cliques of 32 nodes (8,192 nodes, 510 BFS levels) and the
METIS example mesh ``mdual`` of Debian's ``libmetis-doc`` (258,569 nodes). None has the
size and seed of a graph of ``bench_selector_tuned.py`` or ``bench_selector.py``, which
evaluate the model.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench_formulations import gpu_graph, graph_for, parse_graph_name

from gswitch.selector import FEATURES, MODEL_PATH, graph_features, model_version, train


def features_for(rows: list[dict], cache: Path | None = None) -> dict[tuple[str, str], dict]:
    """Features per (algorithm, graph): recorded in the rows, else kept in ``cache``
    from an earlier rebuild, else of the graph rebuilt here from its name (then added
    to ``cache``). Features recorded before a feature of
    :data:`~gswitch.selector.FEATURES` existed count as missing, so the graph is rebuilt
    for all of them.
    """
    def whole(f: dict | None) -> bool:
        return bool(f) and all(k in f for k in FEATURES)

    out = {(r["algorithm"], r["graph"]): r["features"] for r in rows
           if whole(r.get("features"))}
    kept = json.loads(cache.read_text()) if cache is not None and cache.exists() else {}
    for key, f in kept.items():
        alg, _, name = key.partition(":")
        if whole(f):
            out.setdefault((alg, name), f)
    missing = sorted({(r["algorithm"], r["graph"]) for r in rows} - set(out))
    bases: dict[tuple[str, bool], object] = {}
    for alg, name in missing:
        found = parse_graph_name(name)
        if found is None:
            raise SystemExit(f"train_selector: cannot rebuild graph {name!r}; rerun "
                             "bench_formulations.py, which records features")
        kind, scale = found
        weighted = alg == "sssp"
        if (name, weighted) not in bases:
            print(f"rebuilding {name} ({kind}, scale {scale}, weighted={weighted}) for its "
                  "features", flush=True)
            bases[(name, weighted)] = gpu_graph(kind, scale, weighted=weighted)
        base = bases[(name, weighted)]
        g = graph_for(alg, base, base if weighted else None)
        out[(alg, name)] = graph_features(g)
        kept[f"{alg}:{name}"] = out[(alg, name)]
    if cache is not None and missing:
        cache.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")
    return out


def latest_runs(runs: list[list[dict]], algs: list[str]) -> list[dict]:
    """The rows of ``algs``, each (algorithm, graph) from the last run that measured it:
    a graph measured again (with more candidates, say) is judged within that one run, so
    no winner is ever chosen between timings of two runs.
    """
    last = {(r["algorithm"], r["graph"]): i for i, rows in enumerate(runs) for r in rows}
    return [r for i, rows in enumerate(runs) for r in rows
            if r["algorithm"] in algs and last[(r["algorithm"], r["graph"])] == i]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, nargs="+", help="bench_formulations JSON files")
    ap.add_argument("--algs", default="bfs,sssp,pagerank",
                    help="algorithms to model (the shipped model: bfs,sssp,pagerank; cc's "
                    "model lost to its default, configs/selector_corpus.md (e))")
    ap.add_argument("--features-cache", type=Path,
                    default=Path(__file__).parent / "results" / "selector_features.json",
                    help="features of rebuilt graphs, kept between runs")
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    args = ap.parse_args(argv)
    runs = []
    for path in args.results:
        if not path.exists():
            print(f"train_selector: {path} does not exist", file=sys.stderr)
            return 2
        runs.append(json.loads(path.read_text())["rows"])
    algs = [a for a in args.algs.split(",") if a]
    rows = latest_runs(runs, algs)
    feats = features_for(rows, args.features_cache)
    model = {"algorithms": {}}
    for alg in algs:
        mine = [r for r in rows if r["algorithm"] == alg]
        part = train(mine, {g: f for (a, g), f in feats.items() if a == alg}, [alg])
        model = {**part, "algorithms": {**model["algorithms"], **part["algorithms"]}}
    # stamped with the strategy space of every algorithm it covers, not the last one's
    model["space_version"] = model_version(model["algorithms"])
    model["trained_on"] = [p.name for p in args.results]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(model, indent=1, sort_keys=True) + "\n")
    for alg, entry in model["algorithms"].items():
        print(f"{alg}: {len(entry['portfolio'])} configurations, "
              f"{len(entry['training'])} training graphs")
        for t in entry["training"]:
            print(f"  {t['graph']:28s} -> #{t['best']} ({t['device_time_ms']:.2f} ms): "
                  f"{json.dumps(entry['portfolio'][t['best']], sort_keys=True)}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
