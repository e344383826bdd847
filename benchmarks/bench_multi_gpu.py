"""Tuning on every GPU of a host: scaling, quality, batches and a killed worker.

Four parts, each against its peer in the same run (the same study on one GPU):

- ``scaling``: ``--trials`` (40) trials of BFS and of PageRank on a symmetrised RMAT
  graph (scale 22: 4.2M nodes, edge factor 16), with ``devices=[0]`` and with
  ``devices=[0, 1]``. Target: two GPUs take at most 0.6x the wall time of one.
- ``quality`` (from the same studies): both GPUs' trials count in the two-GPU study, and
  its best configuration is within 5% of the one-GPU study's best.
- ``batch``: BFS studies of four graphs (``--batch-trials`` each) as one batch, on one
  GPU and on two. Target: at most 0.6x.
- ``fault``: a two-GPU study (``--fault-trials``) during which one worker is killed with
  SIGKILL. Target: every trial finished before the kill is kept unchanged, the study
  reaches its trials, and its best configuration gives the reference answer.

Every study starts from an empty storage and its own empty kernel cache (so that neither
side of a comparison loads modules the other compiled); references are computed once,
before any clock starts. Each trial records the GPU it ran on. Results go to
``$OUT/multi_gpu_<tag>.json`` after every part, so a run cut short keeps what finished.

GPU (two GPUs): python benchmarks/bench_multi_gpu.py --tag s30
Smoke test of the script on the CPU (simulated devices, small graphs):
    python benchmarks/bench_multi_gpu.py --backend cpu --scale 10 --fault-scale 10 \
        --trials 6 --batch-trials 3 --fault-trials 8 --kill-after 2 --small-batch
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import optuna
from _common import require_gpu, write_json
from gswitch.tuner import tune
from gswitch.tuner.batch import tune_batch
from gswitch.tuner.storage import open_storage
from gswitch.tuner.study import _cached_reference, _default_source, graph_features

import gswitch as gs
from gswitch.generators import parse_generator_spec, rmat
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference

#: "cpu" only to smoke-test the script (--backend cpu): devices are then simulated
BACKEND = "gpu"
BATCH_GRAPHS = ["rmat:20:16,seed=11", "uniform:1000000:16000000,seed=12",
                "road:1024x1024,seed=13", "rmat:20:8,seed=14,a=0.45,b=0.22,c=0.22"]
SMALL_BATCH = ["rmat:10,seed=11", "uniform:1000:8000,seed=12", "road:32x32,seed=13",
               "rmat:9,seed=14"]


def _warm_reference(algorithm: str, graph: gs.Graph) -> None:
    """Compute (and cache) what both sides of a comparison would otherwise find computed
    by the first study: the reference trials are checked against (on disk), and the
    graph's fingerprint and features (kept on the graph object)."""
    spec = get_registry().algorithm(algorithm)
    _cached_reference(spec, graph, _default_source(spec, graph, None), {})
    graph_features(graph)


def _fresh(workdir: Path, label: str) -> str:
    """An empty storage for one study, and an empty kernel cache for its processes."""
    cache = workdir / f"kernels-{label}"
    cache.mkdir()
    os.environ["CUPY_CACHE_DIR"] = str(cache)  # inherited by workers and compile processes
    return f"journal://{workdir / (label + '.journal')}"


def _trials(storage: str, name: str) -> list[Any]:
    return optuna.load_study(study_name=name, storage=open_storage(storage)).get_trials()


def _per_gpu(trials: list[Any]) -> dict[str, int]:
    """Finished trials per worker (``gpu0``, ``gpu1``; ``cpu0`` ... when simulated)."""
    out: dict[str, int] = {}
    for t in trials:
        if t.state.name in ("COMPLETE", "PRUNED"):
            key = str(t.user_attrs.get("worker", "current"))
            out[key] = out.get(key, 0) + 1
    return out


def _study(algorithm: str, graph: gs.Graph, devices: list[int], trials: int, workdir: Path,
           label: str, **extra: Any) -> dict[str, Any]:
    storage = _fresh(workdir, label)
    t0 = time.perf_counter()
    result = tune(algorithm, graph, trials=trials, backend=BACKEND, storage=storage, seed=0,
                  devices=devices, **extra)
    wall = time.perf_counter() - t0
    rows = _trials(storage, result.study_name)
    ok = [t for t in rows if t.user_attrs.get("outcome") == "ok"]
    walls = [float(t.user_attrs["wall_s"]) for t in rows if "wall_s" in t.user_attrs]
    out = {"devices": devices, "wall_s": wall, "best_s": result.best_time_s,
           "best_config": result.best_config, "default_s": result.default_time_s,
           "counts": result.counts, "per_gpu": _per_gpu(rows), "ok_trials": len(ok),
           "median_trial_wall_s": statistics.median(walls) if walls else None,
           "compile_s": sum(float(t.user_attrs.get("ahead_compile_s", 0.0)) for t in rows),
           "storage": storage, "study": result.study_name, "timings": result.timings,
           "timeline": _timeline(rows)}
    tm = result.timings
    print(f"  {label:<18} {wall:7.1f} s  best {_ms(result.best_time_s)}  trials per GPU "
          f"{out['per_gpu']}  counts {result.counts}\n  {'':<18} setup {tm['setup_s']:.1f} s, "
          f"trials {tm['trials_s']:.1f} s (serial {tm['serial_s']:.1f}, compile waits "
          f"{tm['ahead_wait_s']:.1f}, busy {({k: round(v, 1) for k, v in tm['busy_s'].items()})}"
          f"), close {tm['close_s']:.1f} s", flush=True)
    return out


def _timeline(trials: list[Any]) -> list[dict[str, Any]]:
    """When each trial ran (seconds from the first start), where, and what it waited for."""
    starts = [t.datetime_start for t in trials if t.datetime_start is not None]
    if not starts:
        return []
    zero = min(starts)

    def at(d: Any) -> float | None:
        return None if d is None else (d - zero).total_seconds()

    keys = ("outcome", "source", "worker", "wall_s", "ahead_wait_s", "ahead_compile_s",
            "compile_time_s", "value_s", "device_s", "call_s", "worker_restarted")
    return [{"number": t.number, "state": t.state.name, "start": at(t.datetime_start),
             "end": at(t.datetime_complete),
             **{k: t.user_attrs[k] for k in keys if k in t.user_attrs}} for t in trials]


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1e3:.3f} ms"


def part_scaling(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    graph = rmat(args.scale, 16, seed=1).symmetrize()
    graph.name = f"rmat-{args.scale}"
    out: dict[str, Any] = {"graph": graph.name, "n_nodes": graph.n_nodes,
                           "n_edges": graph.n_edges, "trials": args.trials}
    for algorithm in args.algorithms:
        _warm_reference(algorithm, graph)
        one = _study(algorithm, graph, [0], args.trials, workdir, f"{algorithm}-1gpu")
        two = _study(algorithm, graph, [0, 1], args.trials, workdir, f"{algorithm}-2gpu")
        ratio = two["wall_s"] / one["wall_s"]
        quality = two["best_s"] / one["best_s"] if one["best_s"] and two["best_s"] else None
        both = len(two["per_gpu"]) >= 2 and "current" not in two["per_gpu"]
        again = _remeasure(algorithm, graph, {"one_gpu": one["best_config"],
                                              "two_gpus": two["best_config"]})
        again_ratio = again["two_gpus"]["call_s"] / again["one_gpu"]["call_s"]
        out[algorithm] = {"one_gpu": one, "two_gpus": two, "wall_ratio": ratio,
                          "scaling_met": ratio <= 0.6, "best_ratio": quality,
                          "remeasured": again, "remeasured_ratio": again_ratio,
                          "quality_met": again_ratio <= 1.05 and both,
                          "both_gpus_count": both}
        print(f"{algorithm}: two GPUs / one = {ratio:.2f} (target <= 0.6: "
              f"{'met' if ratio <= 0.6 else 'missed'}); best two / one in the studies = "
              f"{quality if quality is None else round(quality, 3)}, timed again side by "
              f"side = {again_ratio:.3f} (call; device "
              f"{again['two_gpus']['device_s'] / again['one_gpu']['device_s']:.3f}; target "
              f"<= 1.05), both GPUs in the study: {both}", flush=True)
    return out


def _remeasure(algorithm: str, graph: gs.Graph, configs: dict[str, Any],
               rounds: int = 9) -> dict[str, Any]:
    """Time each study's best configuration again, in this process on GPU 0, in rotated
    rounds: the studies' own figures carry the noise of their moment (two workers and the
    compile processes share the host during a two-GPU study)."""
    spec = get_registry().algorithm(algorithm)
    src = _default_source(spec, graph, None)
    kwargs = {} if src is None else {"source": src}
    calls: dict[str, list[float]] = {k: [] for k in configs}
    device: dict[str, list[float]] = {k: [] for k in configs}
    for cfg in configs.values():
        gs.run(algorithm, graph, backend=BACKEND, config=gs.Config(cfg), **kwargs)
    labels = list(configs)
    for r in range(rounds):
        for label in labels[r % 2:] + labels[:r % 2]:
            for _ in range(3):
                t0 = time.perf_counter()
                res = gs.run(algorithm, graph, backend=BACKEND, config=gs.Config(configs[label]),
                             **kwargs)
                calls[label].append(time.perf_counter() - t0)
                device[label].append(res.stats.get("device_time_s") or res.stats["time_s"])
    return {k: {"call_s": statistics.median(calls[k]), "device_s": statistics.median(device[k])}
            for k in configs}


def part_batch(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    folder = workdir / "batch"
    folder.mkdir()
    paths = []
    specs = SMALL_BATCH if args.small_batch else BATCH_GRAPHS
    for i, spec in enumerate(specs):
        g = parse_generator_spec(spec).symmetrize()
        paths.append(folder / f"g{i}.npz")
        gs.save_graph(g, paths[-1])
        _warm_reference("bfs", gs.load_graph(paths[-1]))
    out: dict[str, Any] = {"graphs": specs, "trials": args.batch_trials}
    for label, devices in (("one_gpu", [0]), ("two_gpus", [0, 1])):
        storage = _fresh(workdir, f"batch-{label}")
        t0 = time.perf_counter()
        items = tune_batch("bfs", paths, load=gs.load_graph, devices=devices,
                           trials=args.batch_trials, backend=BACKEND, storage=storage,
                           seed=0)
        wall = time.perf_counter() - t0
        out[label] = {"wall_s": wall, "items": [
            {"graph": Path(i["graph"]).name, "lane": i["lane"], "wall_s": i["wall_s"],
             "error": i.get("error"),
             "best_s": (i.get("result") or {}).get("best_time_s")} for i in items]}
        print(f"  batch {label:<9} {wall:7.1f} s  lanes "
              f"{[(Path(i['graph']).name, i['lane'], round(i['wall_s'], 1)) for i in items]}",
              flush=True)
    ratio = out["two_gpus"]["wall_s"] / out["one_gpu"]["wall_s"]
    out.update(wall_ratio=ratio, met=ratio <= 0.6)
    print(f"batch: two GPUs / one = {ratio:.2f} (target <= 0.6: "
          f"{'met' if ratio <= 0.6 else 'missed'})", flush=True)
    return out


def part_fault(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    graph = rmat(args.fault_scale, 16, seed=3).symmetrize()
    _warm_reference("bfs", graph)
    storage = _fresh(workdir, "fault")
    name = "bfs-fault"
    optuna.create_study(study_name=name, storage=open_storage(storage))
    seen: dict[str, Any] = {}
    lock = threading.Lock()

    def progress(info: dict[str, Any]) -> None:
        with lock:
            done = sum(info["counts"].get(k, 0) for k in ("ok", "pruned"))
            if "killed" in seen or done < args.kill_after:
                return
            workers = [p for p in multiprocessing.active_children()
                       if p.name == "gswitch-tuner-worker"]
            seen["before"] = {t.number: t.value for t in _trials(storage, name)
                              if t.state.name in ("COMPLETE", "PRUNED")}
            victim = workers[-1]
            os.kill(victim.pid, signal.SIGKILL)  # the other worker's, most likely mid-trial
            seen["killed"] = victim.pid
            seen["at_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    result = tune("bfs", graph, trials=args.fault_trials, backend=BACKEND, storage=storage,
                  seed=0, devices=[0, 1], name=name, progress=progress)
    wall = time.perf_counter() - t0
    rows = _trials(storage, name)
    after = {t.number: t.value for t in rows if t.state.name in ("COMPLETE", "PRUNED")}
    kept = all(after.get(n) == v for n, v in seen.get("before", {}).items())
    crashed = [{"number": t.number, "gpu": t.user_attrs.get("gpu"),
                "reason": t.user_attrs.get("reason"),
                "retried_by": [r.number for r in rows
                               if r.user_attrs.get("retry_of") == t.number]}
               for t in rows if t.user_attrs.get("outcome") == "crashed"]
    restarts = [{"number": t.number, "note": t.user_attrs["worker_restarted"]}
                for t in rows if "worker_restarted" in t.user_attrs]
    src = int(np.argmax(graph.out_degree))
    r = gs.run("bfs", graph, source=src, backend=BACKEND, config=result.best_config)
    correct = compare("bfs", r.fields["depth"], reference("bfs", graph, source=src)) is None
    out = {"graph": f"rmat-{args.fault_scale}", "trials": args.fault_trials, "wall_s": wall,
           "killed_pid": seen.get("killed"), "killed_at_s": seen.get("at_s"),
           "finished_before_kill": len(seen.get("before", {})),
           "finished_after": len(after), "all_kept": kept, "crashed": crashed,
           "restarts": restarts, "per_gpu": _per_gpu(rows), "best_correct": correct,
           "met": bool(seen.get("killed")) and kept and len(after) >= args.fault_trials
           and correct}
    print(f"fault: killed a worker after {out['finished_before_kill']} finished trials; "
          f"{len(after)} finished in the end (target {args.fault_trials}), kept: {kept}, "
          f"crashed trials {crashed}, restarts {restarts}, best correct: {correct} -> "
          f"{'met' if out['met'] else 'missed'}", flush=True)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--parts", default="scaling,batch,fault",
                   help="comma-separated: scaling (with quality), batch, fault")
    p.add_argument("--scale", type=int, default=22)
    p.add_argument("--algorithms", default="bfs,pagerank")
    p.add_argument("--trials", type=int, default=40)
    p.add_argument("--batch-trials", type=int, default=20)
    p.add_argument("--fault-scale", type=int, default=20)
    p.add_argument("--fault-trials", type=int, default=30)
    p.add_argument("--kill-after", type=int, default=8)
    p.add_argument("--tag", default="run")
    p.add_argument("--backend", default="gpu", choices=["gpu", "cpu"],
                   help="cpu: smoke-test this script with simulated devices")
    p.add_argument("--small-batch", action="store_true", help="small batch graphs")
    args = p.parse_args()
    args.algorithms = [a for a in args.algorithms.split(",") if a]
    global BACKEND
    BACKEND = args.backend
    names = ["simulated"] * 2
    if BACKEND == "gpu":
        require_gpu("bench_multi_gpu.py")
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
        if count < 2:
            raise SystemExit(f"bench_multi_gpu.py needs two GPUs; this machine has {count}")
        names = [cupy.cuda.runtime.getDeviceProperties(d)["name"].decode()
                 for d in range(count)]
    data: dict[str, Any] = {"gpus": names, "cpus": os.cpu_count(), "args": vars(args)}
    print(f"GPUs: {names}, host cores: {os.cpu_count()}", flush=True)
    parts = {"scaling": part_scaling, "batch": part_batch, "fault": part_fault}
    with tempfile.TemporaryDirectory(prefix="gswitch-multi-gpu-") as tmp:
        for name in args.parts.split(","):
            t0 = time.perf_counter()
            data[name] = parts[name](args, Path(tmp))
            data[name]["part_wall_s"] = time.perf_counter() - t0
            path = write_json(f"multi_gpu_{args.tag}", data)
    print(f"wrote {path}", flush=True)


if __name__ == "__main__":
    main()
