"""Shared helpers for benchmark scripts: timing and JSON/plot output."""

from __future__ import annotations

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
