"""Time load_graph on a generated 5M-edge SNAP edge list (and its npz cache); print JSON.

Usage: python benchmarks/bench_loaders.py [--edges 5000000] [--repeat 3] [--weighted]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from gswitch.io import load_graph, save_npz


def write_snap(path: Path, n_edges: int, n_nodes: int, weighted: bool, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n_nodes, n_edges)
    dst = rng.integers(0, n_nodes, n_edges)
    with open(path, "w") as f:
        f.write(f"# Directed graph: synthetic\n# Nodes: {n_nodes} Edges: {n_edges}\n")
        f.write("# FromNodeId\tToNodeId\n")
        if weighted:
            w = rng.integers(1, 64, n_edges)
            np.savetxt(f, np.stack([src, dst, w], axis=1), fmt="%d", delimiter="\t")
        else:
            np.savetxt(f, np.stack([src, dst], axis=1), fmt="%d", delimiter="\t")


def timed(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--edges", type=int, default=5_000_000)
    ap.add_argument("--nodes", type=int, default=1 << 20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--weighted", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.txt"
        write_snap(path, args.edges, args.nodes, args.weighted)
        graph = load_graph(path)
        snap_times = timed(lambda: load_graph(path), args.repeat)
        npz = save_npz(graph, Path(tmp) / "bench.npz")
        npz_times = timed(lambda: load_graph(npz), args.repeat)
        result = {
            "benchmark": "load_graph",
            "edges": graph.n_edges,
            "nodes": graph.n_nodes,
            "weighted": args.weighted,
            "file_mb": round(path.stat().st_size / 2**20, 1),
            "cpus": os.cpu_count(),
            "snap_seconds": [round(t, 3) for t in snap_times],
            "snap_median_s": round(statistics.median(snap_times), 3),
            "snap_medges_per_s": round(graph.n_edges / statistics.median(snap_times) / 1e6, 2),
            "npz_seconds": [round(t, 3) for t in npz_times],
            "npz_median_s": round(statistics.median(npz_times), 3),
        }
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
