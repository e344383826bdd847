"""Pull gather A/B on the GPU: PageRank ``power_pull`` step by step, node against edge gather.

For each graph (the GPU graphs of ``bench_formulations.py`` at ``--scale``), runs
``power_pull`` (topology, pull) under each configuration of ``CONFIGS`` (or
``--configs``) and reports per run: steps, engine device time, wall time, time a step,
and for host-loop runs the median time a step of each phase (from the engine's own
per-launch events); the L1 error of the normalised ranks to a float64 power iteration
run to 1e-12. Next to them, in the same process: one cuSPARSE SpMV of the float32
transition matrix (the work of one power-iteration step), the calibrated cuSPARSE power
iterations of ``bench_formulations.py`` (``gpu_peers_pagerank``), and a device-to-device
copy (bytes read plus written a second: the memory ceiling).

Usage::

    python benchmarks/experiments/bench_pull_gather.py [--scale 22] [--graphs rmat,uniform,road]
        [--repeats 3] [--tolerance 1e-7] [--configs extra.json] [--out-prefix run]

Writes ``benchmarks/results/<prefix>_pull_gather.json`` (and a copy under ``$OUT``).
"""

from __future__ import annotations

import pathlib
import sys

# the maintained benchmarks' helpers live one folder up
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import gswitch as gs
from gswitch.engine.context import LaunchContext

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_formulations import gpu_graph, gpu_peers_pagerank  # noqa: E402

BASE = {"variant": "power_pull", "driving": "topology", "direction": "pull"}
CONFIGS = [
    {"direction.gather": "nodes"},
    {"direction.gather": "nodes", "direction.group": 8},
    {"direction.gather": "edges", "direction.ipt": 3},
    {"direction.gather": "edges", "direction.ipt": 5},
    {"direction.gather": "edges", "direction.ipt": 7},
    {"direction.gather": "edges", "direction.ipt": 7, "block_size": 512},
    {"direction.gather": "edges", "direction.ipt": 7, "launch": "persistent"},
    {"direction.gather": "edges", "direction.ipt": 7, "launch": "cuda_graph"},
]

# the engine's per-launch event times of the last run, and the phases of its steps
_CAPTURED: list = []
_device_time_s = LaunchContext.device_time_s


def _capturing_device_time_s(self):
    if self._events:
        if self._synced_at != self.engine.work:
            self._events[-1][1].synchronize()
        elapsed = self._rt.eventElapsedTime
        times = [elapsed(a.ptr, b.ptr) for a, b in self._events]
        steps = [[p.name for p, *_ in v] for k, v in self.plan.steps.items() if k is not None]
        _CAPTURED[:] = [times, steps]
    return _device_time_s(self)


LaunchContext.device_time_s = _capturing_device_time_s


def phase_times(times: list[float], steps: list[list[str]]) -> dict[str, float]:
    """Median ms a step of each phase, when every step ran the same phases."""
    if len(steps) != 1 or not steps[0]:
        return {}
    names = steps[0]
    k = len(names)
    times = times[: len(times) - len(times) % k]  # a trailing launch of another kind
    return {name: statistics.median(times[i::k]) for i, name in enumerate(names)}


def spmv_ms(g, repeats: int = 20) -> float:
    """Median ms of one cuSPARSE SpMV of the float32 transposed transition matrix."""
    import cupy as cp
    import cupyx.scipy.sparse as cusp
    from bench_formulations import transition_transpose

    indptr = cp.asarray(g.indptr.astype(np.int32))
    indices = cp.asarray(g.indices.astype(np.int32))
    at, _ = transition_transpose(cp, cusp, indptr, indices, cp.float32)
    x = cp.random.default_rng(1).random(g.n_nodes, dtype=cp.float32)
    y = at @ x
    out = []
    for _ in range(repeats):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        y = at @ x
        b.record()
        b.synchronize()
        out.append(cp.cuda.get_elapsed_time(a, b))
    del at, y
    return statistics.median(out)


def copy_gbs(nbytes: int = 1 << 30) -> float:
    """Device-to-device copy, bytes read plus written per second (GB/s)."""
    import cupy as cp

    src = cp.ones(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)
    dst[...] = src
    out = []
    for _ in range(10):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        dst[...] = src
        b.record()
        b.synchronize()
        out.append(cp.cuda.get_elapsed_time(a, b))
    del src, dst
    return 2 * nbytes / (statistics.median(out) * 1e-3) / 1e9


def run_config(g, cfg: dict, tolerance: float, repeats: int, ref: np.ndarray) -> dict:
    config = {**BASE, **cfg}
    row: dict = {"config": cfg}
    try:
        gs.run("pagerank", g, backend="gpu", config=config, tolerance=tolerance)  # warm-up
        dev, wall, phases = [], [], []
        r = None
        for _ in range(repeats):
            t = time.perf_counter()
            r = gs.run("pagerank", g, backend="gpu", config=config, tolerance=tolerance)
            wall.append((time.perf_counter() - t) * 1e3)
            dev.append(r.stats["device_time_s"] * 1e3)
            if _CAPTURED:
                phases.append(phase_times(*_CAPTURED))
        rank = r.fields["rank"].astype(np.float64)
        its = r.stats["iterations"]
        row.update(iterations=its, device_ms=statistics.median(dev),
                   wall_ms=statistics.median(wall),
                   step_us=statistics.median(dev) / max(its, 1) * 1e3,
                   l1_error=float(np.abs(rank / rank.sum() - ref).sum()), error=None)
        if phases and phases[-1]:
            row["phase_us"] = {k: statistics.median(p[k] for p in phases if k in p) * 1e3
                               for k in phases[-1]}
    except Exception as exc:  # noqa: BLE001 - a broken configuration is a row, not a stop
        row.update(error=f"{type(exc).__name__}: {exc}")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--graphs", default="rmat,uniform,road")
    ap.add_argument("--selector-graphs", default="",
                    help="comma-separated names from bench_selector_tuned.py's GRAPHS "
                         "(e.g. bipartite-1M-1.1), run instead of --graphs")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tolerance", type=float, default=1e-7)
    ap.add_argument("--configs", help="JSON list of config dicts (over power_pull, "
                    "topology, pull) instead of the built-in list")
    ap.add_argument("--out-prefix", default="run")
    args = ap.parse_args()
    configs = json.loads(Path(args.configs).read_text()) if args.configs else CONFIGS
    import cupy as cp

    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    ceiling = copy_gbs()
    print(f"{dev}: device-to-device copy {ceiling:.0f} GB/s (read + write)", flush=True)
    report = {"benchmark": "pull_gather", "device": dev, "copy_gbs": ceiling,
              "settings": vars(args), "graphs": []}
    if args.selector_graphs:
        from bench_selector_tuned import SPECS

        makers = dict(SPECS)
        builds = [makers[name] for name in args.selector_graphs.split(",")]
    else:
        builds = [lambda kind=kind: gpu_graph(kind, args.scale, weighted=False)
                  for kind in args.graphs.split(",")]
    for build in builds:
        t = time.perf_counter()
        g = build()
        print(f"-- {g.name}: n={g.n_nodes:,} m={g.n_edges:,} "
              f"(built in {time.perf_counter() - t:.1f} s)", flush=True)
        peers, ref = gpu_peers_pagerank(g, argparse.Namespace(repeats=args.repeats))
        spmv = spmv_ms(g)
        for p in peers:
            print(f"   peer {p['name']:<28} {p['wall_ms']:8.3f} ms  {p['iterations']:3d} it "
                  f"{p['wall_ms'] / p['iterations'] * 1e3:7.1f} us/it  tol={p['tolerance']:.0e} "
                  f"L1={p['l1_error']:.2e}", flush=True)
        print(f"   cuSPARSE SpMV float32 alone: {spmv * 1e3:7.1f} us", flush=True)
        rows = []
        for cfg in configs:
            row = run_config(g, cfg, args.tolerance, args.repeats, ref["rank"])
            rows.append(row)
            label = json.dumps(cfg)[:62]
            if row["error"]:
                print(f"   {label:<62} ERROR {row['error'][:200]}", flush=True)
                continue
            ph = " ".join(f"{k}={v:.0f}" for k, v in row.get("phase_us", {}).items())
            print(f"   {label:<62} {row['iterations']:3d} it dev {row['device_ms']:8.3f} "
                  f"wall {row['wall_ms']:8.3f} ms  {row['step_us']:7.1f} us/step "
                  f"L1={row['l1_error']:.2e}  [{ph}]", flush=True)
        report["graphs"].append({"graph": g.name, "n_nodes": g.n_nodes, "n_edges": g.n_edges,
                                 "peers": peers, "spmv_float32_ms": spmv, "rows": rows})
        del g
        cp.get_default_memory_pool().free_all_blocks()
    name = f"{args.out_prefix}_pull_gather.json"
    text = json.dumps(report, indent=1)
    out = Path(__file__).resolve().parents[1] / "results" / name
    out.write_text(text)
    print(f"wrote {out}")
    if os.environ.get("OUT"):
        (Path(os.environ["OUT"]) / name).write_text(text)


if __name__ == "__main__":
    main()
