"""Shared helpers for benchmark scripts: timing and JSON/plot output."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path


def require_gpu(script: str) -> None:
    """Exit with one line, not a traceback, where no GPU is usable."""
    import gswitch as gs

    if not gs.gpu_available():
        print(f"{script}: no usable GPU here (it needs CuPy and an NVIDIA device: pip install "
              "'gswitch[cuda12]'); nothing to measure. benchmarks/bench_cpu.py measures the "
              "CPU engine.", file=sys.stderr)
        raise SystemExit(2)


TINY_EDGES = ([0, 1, 2], [1, 2, 3])


def launch_floor(reps: int) -> float:
    """Median seconds of an empty CuPy kernel launch plus a stream synchronise: the
    floor of any GPU call on this host."""
    import cupy as cp

    k = cp.RawKernel('extern "C" __global__ void gs_empty() {}', "gs_empty")
    s = cp.cuda.Stream(non_blocking=True)
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        k((1,), (32,), (), stream=s)
        s.synchronize()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2]


def tiny_bfs_times(config, calls: int, warmup: int = 50):
    """End-to-end seconds of ``calls`` GPU BFS runs on the 4-node path (sorted), after
    ``warmup`` runs, and the last result (its depths checked).
    """
    import gswitch as gs

    tiny = gs.Graph.from_edges(*TINY_EDGES)
    for _ in range(warmup):
        gs.run("bfs", tiny, source=0, backend="gpu", config=config)
    ts, r = [], None
    for _ in range(calls):
        t = time.perf_counter()
        r = gs.run("bfs", tiny, source=0, backend="gpu", config=config)
        ts.append(time.perf_counter() - t)
    assert r is None or r.fields["depth"].tolist() == [0, 1, 2, 3]
    ts.sort()
    return ts, r


def median_time(fn, repeats: int = 5, warmup: int = 1) -> tuple[float, list[float]]:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times


def timed(fn, repeats: int, warmup: int = 0) -> tuple[float, object]:
    """Median wall time of ``repeats`` calls of ``fn`` after ``warmup`` untimed ones, and
    the last call's answer (to verify)."""
    out = None
    for _ in range(warmup):
        out = fn()
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), out


def interleaved_rates(ways: dict, reps: int, mb: float, check, width: int = 40
                      ) -> dict[str, float]:
    """Median milliseconds of each of ``ways`` (name -> function) over ``reps`` rounds
    that run every way in turn, so that drift hits them alike; ``check(name, got)``
    verifies each call's result (``None`` results are not checked). Prints each way's
    median and the rate at which it moves ``mb`` MiB.
    """
    times: dict[str, list[float]] = {k: [] for k in ways}
    for _ in range(reps):
        for name, fn in ways.items():
            t = time.perf_counter()
            got = fn()
            times[name].append(time.perf_counter() - t)
            if got is not None:
                check(name, got)
    out = {}
    for name, ts in times.items():
        ms = out[name] = statistics.median(ts) * 1e3
        print(f"  {name:{width}s} {ms:7.3f} ms  {mb / 1024 / ms * 1e3:6.1f} GiB/s")
    return out


def peer_parser(doc: str, repeats: int) -> argparse.ArgumentParser:
    """The options of a benchmark against CPU peers: ``--backend``, ``--repeats``, ``--tag``."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--backend", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--repeats", type=int, default=repeats)
    ap.add_argument("--tag", default="", help="suffix of the JSON file name")
    return ap


def peer_ratios(t: float, scipy_s: float, nx_s: float) -> dict[str, float]:
    """gswitch's time ``t`` over the fastest peer's and over networkx's."""
    return {"ratio_to_fastest_peer": t / min(scipy_s, nx_s), "ratio_to_networkx": t / nx_s}


def out_dir() -> Path:
    d = Path(os.environ.get("OUT") or os.environ.get("GSWITCH_BENCH_OUT") or "bench-results")
    d.mkdir(parents=True, exist_ok=True)
    return d


def write_json(name: str, data: dict) -> Path:
    data = {"machine": platform.node(), "python": platform.python_version(), **data}
    path = out_dir() / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, default=str))
    return path


def try_plot(name: str, title: str, series: dict[str, list[float]], ylabel: str) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, ys in series.items():
        ax.plot(range(len(ys)), ys, label=label)
    ax.set_title(title)
    ax.set_xlabel("iteration")
    ax.set_ylabel(ylabel)
    ax.set_yscale("log")
    ax.legend()
    path = out_dir() / f"{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def symmetric_rmat(scale: int):
    """The symmetrised RMAT graph of ``scale`` (edge factor 16, seed 1), kept in
    ``/tmp/gs_rmat{scale}.npz`` between the runs of a session (building RMAT-22 takes
    tens of seconds)."""
    from pathlib import Path

    import numpy as np

    import gswitch as gs
    from gswitch.generators import rmat

    cache = Path(f"/tmp/gs_rmat{scale}.npz")
    if cache.exists():
        z = np.load(cache)
        return gs.Graph(z["indptr"], z["indices"], None, directed=False, validate=False)
    g = rmat(scale, 16, seed=1).symmetrize()
    np.savez(cache, indptr=g.indptr, indices=g.indices)
    return g

