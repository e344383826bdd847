"""Autotuner benchmark: tuned over default, trials to the mark, warm start, --config auto.

Cases: BFS, SSSP, CC and PageRank on a weighted RMAT-<scale> graph and a road-like
<road>x<road> grid (eight cold studies), then, for the --warm algorithms, a study of
RMAT-<scale-1> followed by a warm-started study of RMAT-<scale> in a second storage,
and --config auto on RMAT-<scale+1> (never tuned) against that graph's own study.

Measures (JSON in $OUT or ./bench-results/tuner.json):
- speedup of the best configuration over the default, per case; median and worst;
- trials until a trial came within 5% of the best of the cold study (cold), and the
  same mark reached by the warm-started study (warm);
- time of the --config auto configuration on the unseen graph over its own tuned time;
- wall time of every study.

Trial counts default to far below the issue's 200 so that the whole run fits the time
budget (--budget-s, default 420 s); every study gets an equal share of what is left, and
studies that no longer fit are skipped and listed. The output says so. With
``--storage`` the cold studies live in a storage that outlasts the run (a journal file
path or an Optuna URL): running the command again resumes each study towards
``--trials``, so a 200-trial study can be spread over several runs (or machines, with
the journal file carried along).

GPU:   python benchmarks/bench_tuner.py --backend gpu
CPU:   python benchmarks/bench_tuner.py --backend cpu --scale-small
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import out_dir, write_json
from gswitch.tuner import resolve_config, tune

import gswitch as gs
from gswitch.generators import rmat, road

ALGORITHMS = ["bfs", "sssp", "cc", "pagerank"]


def _source(algorithm: str, graph: gs.Graph) -> int | None:
    return int(np.argmax(graph.out_degree)) if algorithm in ("bfs", "sssp") else None


def _median_time(algorithm: str, graph: gs.Graph, config: gs.Config, backend: str,
                 repeats: int = 5) -> float:
    src = _source(algorithm, graph)
    kwargs = {} if src is None else {"source": src}
    gs.run(algorithm, graph, backend=backend, config=config, **kwargs)  # compile, warm up
    times = []
    for _ in range(repeats):
        st = gs.run(algorithm, graph, backend=backend, config=config, **kwargs).stats
        times.append(st.get("device_time_s") or st["time_s"])
    return statistics.median(times)


class Budget:
    def __init__(self, total_s: float) -> None:
        self.total_s = total_s
        self.t0 = time.perf_counter()

    def left(self) -> float:
        return self.total_s - (time.perf_counter() - self.t0)

    def share(self, studies_left: int) -> float:
        return max(self.left() / max(studies_left, 1), 0.0)


def _study(label: str, algorithm: str, graph: gs.Graph, storage: str, trials: int,
           budget: Budget, studies_left: int, args: argparse.Namespace,
           warm_start: int = 0) -> dict:
    share = budget.share(studies_left)
    if share < 5:
        print(f"{label:<28} skipped: time budget spent")
        return {"label": label, "skipped": "time budget spent"}
    t0 = time.perf_counter()
    r = tune(algorithm, graph, trials=trials, timeout_s=share, storage=storage,
             backend=args.backend, devices=args.devices, seed=args.seed, repeats=args.repeats,
             warm_start=warm_start, refine=args.refine,
             source=_source(algorithm, graph), trial_timeout_s=min(120.0, max(share, 10.0)),
             compile_ahead=args.compile_ahead)
    wall = time.perf_counter() - t0
    finished = len(r.history)
    print(f"{label:<28} {finished:>3} trials  {wall:7.1f} s  best {r.best_time_s or 0:.3e} s  "
          f"default {r.default_time_s or 0:.3e} s  speedup "
          f"{(r.speedup or 0):.2f}x  to-5% {r.trials_to_within(0.05)}")
    return {"label": label, "algorithm": algorithm, "graph": graph.name,
            "n_nodes": graph.n_nodes, "n_edges": graph.n_edges, "trials": finished,
            "wall_s": wall, "timeout_s": share, "best_time_s": r.best_time_s,
            "default_time_s": r.default_time_s, "speedup": r.speedup,
            "best_config": r.best_config, "counts": r.counts,
            "trials_to_5pct": r.trials_to_within(0.05), "history": r.history,
            "warm_start": r.warm_start, "study": r.study_name}


def _to_mark(history: list[dict], mark: float) -> int | None:
    for k, h in enumerate(history, 1):
        if h["outcome"] == "ok" and h["value_s"] <= mark * 1.05:
            return k
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu"])
    ap.add_argument("--scale-small", action="store_true",
                    help="tiny graphs (RMAT-10, road 32x32) to check the script on a CPU")
    ap.add_argument("--scale", type=int, help="RMAT scale of the cases (default 22; 10 small)")
    ap.add_argument("--road", type=int, help="road grid side (default 2048; 32 small)")
    ap.add_argument("--trials", type=int, help="trials per cold study (default 24; 12 small)")
    ap.add_argument("--warm", default="bfs,cc",
                    help="algorithms of the warm-start and --config auto parts (default bfs,cc)")
    ap.add_argument("--parts", default="cold,warm",
                    help="cold (the eight cases), warm (warm start and --config auto, with "
                         "their own cold RMAT studies when the cold part does not run)")
    ap.add_argument("--algorithms", default=",".join(ALGORITHMS),
                    help="algorithms of the cold part (default all four)")
    ap.add_argument("--graphs", default="rmat,road",
                    help="graph kinds of the cold part (default rmat,road)")
    ap.add_argument("--devices", default=None,
                    help="GPUs that share each study, one worker each, e.g. 0,1 (default: "
                         "the current one)")
    ap.add_argument("--budget-s", type=float, default=420.0,
                    help="total time for all studies; each gets an equal share (default 420)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--storage", default=None,
                    help="journal file or Optuna URL for the cold studies (default: a fresh "
                         "journal under the output folder); an existing one is resumed")
    ap.add_argument("--compile-ahead", type=int, default=None,
                    help="tune's compile_ahead (default: its own, one process per spare core "
                         "on the GPU, at most 8)")
    ap.add_argument("--refine", type=float, default=0.5,
                    help="share of local-search trials after the warm start (tune's refine)")
    args = ap.parse_args()
    args.backend = gs.runner.resolve_backend(args.backend)
    small = args.scale_small
    scale = args.scale or (10 if small else 22)
    side = args.road or (32 if small else 2048)
    trials = args.trials or (12 if small else 24)
    parts = {p for p in args.parts.split(",") if p}
    if not parts or not parts <= {"cold", "warm"}:
        ap.error(f"--parts takes cold and/or warm; got {args.parts!r}")
    warm_algos = [a for a in args.warm.split(",") if a] if "warm" in parts else []
    cold_algos = [a for a in args.algorithms.split(",") if a]
    if not cold_algos or not set(cold_algos) <= set(ALGORITHMS):
        ap.error(f"--algorithms takes some of {','.join(ALGORITHMS)}; got {args.algorithms!r}")
    kinds = [k for k in args.graphs.split(",") if k]
    if not kinds or not set(kinds) <= {"rmat", "road"}:
        ap.error(f"--graphs takes rmat and/or road; got {args.graphs!r}")
    try:
        args.devices = ([int(d) for d in args.devices.split(",") if d.strip()]
                        if args.devices else None)
    except ValueError:
        ap.error(f"--devices takes GPU numbers such as 0,1; got {args.devices!r}")
    budget = Budget(args.budget_s)
    t_gen = time.perf_counter()
    needed = set(kinds) if "cold" in parts else set()
    if warm_algos:
        needed.add("rmat")
    graphs = {}
    if "rmat" in needed:
        graphs["rmat"] = rmat(scale, 16, seed=1, weighted=True)
        graphs["rmat"].name = f"rmat-{scale}"
    if "road" in needed:
        graphs["road"] = road(side, side, seed=1)
        graphs["road"].name = f"road-{side}x{side}"
    gen_s = time.perf_counter() - t_gen
    work = Path(tempfile.mkdtemp(prefix="bench-tuner-", dir=out_dir()))
    if args.storage is None:
        cold_store = f"journal://{(work / 'cold.journal').resolve()}"
    elif "://" in args.storage:
        cold_store = args.storage
    else:
        cold_store = f"journal://{Path(args.storage).resolve()}"
    warm_store = f"journal://{(work / 'warm.journal').resolve()}"
    own_store = f"journal://{(work / 'own.journal').resolve()}"
    cold_cases = [(a, k) for a in cold_algos for k in kinds] if "cold" in parts \
        else [(a, "rmat") for a in warm_algos]
    n_studies = len(cold_cases) + 3 * len(warm_algos)
    fits = "" if trials >= 200 else (f" (the issue's 200 do not fit a {args.budget_s:.0f} s "
                                     "budget)")
    print(f"backend {args.backend}; {trials} trials per cold study{fits}; {n_studies} studies"
          f" on {'GPUs ' + ','.join(map(str, args.devices)) if args.devices else 'one device'};"
          f" graphs generated in {gen_s:.1f} s")
    cases = []
    done = 0
    warm: list[dict] = []

    def checkpoint() -> None:  # what is done so far survives a timeout
        write_json("tuner", {"partial": True, "cases": cases, "warm": warm})

    for algo, kind in cold_cases:
        cases.append(_study(f"{algo} {graphs[kind].name}", algo, graphs[kind], cold_store,
                            trials, budget, n_studies - done, args))
        done += 1
        checkpoint()
    if warm_algos:
        prev = rmat(scale - 1, 16, seed=2, weighted=True)
        prev.name = f"rmat-{scale - 1}"
        unseen = rmat(scale + 1, 16, seed=3, weighted=True)
        unseen.name = f"rmat-{scale + 1}"
    for algo in warm_algos:
        first = _study(f"{algo} {prev.name} (warm src)", algo, prev, warm_store,
                       max(trials // 2, 4), budget, n_studies - done, args)
        done += 1
        checkpoint()
        second = _study(f"{algo} {graphs['rmat'].name} (warm)", algo, graphs["rmat"],
                        warm_store, trials, budget, n_studies - done, args, warm_start=2)
        done += 1
        cold = next(c for c in cases if c.get("label") == f"{algo} {graphs['rmat'].name}")
        entry = {"algorithm": algo, "source_study": first, "warm_study": second}
        if "history" in second and "history" in cold and cold.get("best_time_s"):
            mark = min(cold["best_time_s"], second.get("best_time_s") or np.inf)
            entry.update(mark_s=mark, cold_trials=_to_mark(cold["history"], mark),
                         warm_trials=_to_mark(second["history"], mark))
        checkpoint()
        cfg, where = resolve_config(algo, unseen, "auto", backend=args.backend,
                                    storage=warm_store)
        auto_s = _median_time(algo, unseen, cfg, args.backend)
        entry["auto"] = {"graph": unseen.name, "where": where, "time_s": auto_s}
        warm.append(entry)
        checkpoint()
        print(f"  --config auto on {unseen.name}: {auto_s:.3e} s ({where})")
        own = _study(f"{algo} {unseen.name} (own)", algo, unseen, own_store,
                     max(trials // 2, 4), budget, n_studies - done, args)
        done += 1
        entry["auto"].update(own_tuned_s=own.get("best_time_s"),
                             ratio=(auto_s / own["best_time_s"]) if own.get("best_time_s")
                             else None, own_study=own)
        print(f"  --config auto on {unseen.name}: {auto_s:.3e} s vs own tuned "
              f"{own.get('best_time_s') or float('nan'):.3e} s")
        checkpoint()
    speedups = [c["speedup"] for c in cases if c.get("speedup")]
    to5 = [c["trials_to_5pct"] for c in cases if c.get("trials_to_5pct")]
    summary = {
        "backend": args.backend, "trials_per_cold_study": trials, "budget_s": args.budget_s,
        "devices": args.devices,
        "total_wall_s": time.perf_counter() - budget.t0, "generate_s": gen_s,
        "speedup_median": statistics.median(speedups) if speedups else None,
        "speedup_worst": min(speedups) if speedups else None,
        "trials_to_5pct_median": statistics.median(to5) if to5 else None,
        "warm_trials": {w["algorithm"]: (w.get("cold_trials"), w.get("warm_trials"))
                        for w in warm},
        "auto_ratio": {w["algorithm"]: w["auto"].get("ratio") for w in warm},
        "skipped": [c["label"] for c in cases if c.get("skipped")],
        "note": (f"{trials} trials per cold study instead of 200, to fit the time budget"
                 if trials < 200 else f"{trials} trials per cold study"),
    }
    path = write_json("tuner", {"summary": summary, "cases": cases, "warm": warm})
    print("summary:", {k: v for k, v in summary.items() if k != "note"})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
