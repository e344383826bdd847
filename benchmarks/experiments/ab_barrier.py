"""Module compile time and persistent-kernel speed of one package tree (run it for two).

The module's own grid barrier and lane groups replaced CUDA's cooperative-groups header
(and CuPy's relocatable-code compile and device-runtime link of cooperative modules).
This times, in the tree on ``PYTHONPATH``:

- ``compile``: the first call of three configurations on a small RMAT graph with an
  empty kernel cache (a fresh ``CUPY_CACHE_DIR``), minus a warm call: the module's
  compile and load;
- ``device``: the median device time of 7 warm calls (after a warm-up) of BFS with the
  selector's usual pick (persistent, bitmap, twc, direction-optimizing) on RMAT-20 and
  on a 1024x1024 road grid (about 2,000 levels, so the grid barrier dominates), BFS
  with a persistent hierarchical queue and a host-loop warp-aggregated queue on
  RMAT-20, and the default PageRank (persistent) on RMAT-20. Every answer is checked
  against scipy first.

Usage (run it with each tree first on ``PYTHONPATH``)::

    python benchmarks/experiments/ab_barrier.py LABEL  # prints one JSON line
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time

os.environ["CUPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="ab-barrier-cache-")

import numpy as np  # noqa: E402

import gswitch as gs  # noqa: E402
from gswitch.generators import rmat, road  # noqa: E402
from gswitch.testing.reference import compare, reference  # noqa: E402

PICK = {"block_size": 768, "direction": "direction_optimizing", "driving": "data",
        "launch": "persistent", "launch.blocks_per_sm": 0, "load_balance": "twc",
        "worklist": "bitmap"}
CONFIGS = {
    "bfs pick": ("bfs", PICK),
    "bfs persistent hierarchical": ("bfs", {"launch": "persistent", "worklist": "hierarchical",
                                            "load_balance": "twc"}),
    "bfs host_loop warp_aggregated": ("bfs", {"launch": "host_loop",
                                              "worklist": "warp_aggregated"}),
    "pagerank default": ("pagerank", "default"),
}


def _src(alg: str, g: gs.Graph) -> int | None:
    return int(np.argmax(g.out_degree)) if alg == "bfs" else None


def main() -> None:
    label = sys.argv[1] if len(sys.argv) > 1 else "tree"
    out: dict = {"label": label, "compile_s": {}, "device_ms": {}}
    small = rmat(12, 8, seed=1).symmetrize()
    for name, (alg, cfg) in CONFIGS.items():
        kw = {"source": _src(alg, small)} if alg == "bfs" else {}
        t = time.perf_counter()
        gs.run(alg, small, backend="gpu", config=cfg, **kw)
        first = time.perf_counter() - t
        t = time.perf_counter()
        gs.run(alg, small, backend="gpu", config=cfg, **kw)
        out["compile_s"][name] = round(first - (time.perf_counter() - t), 3)
    graphs = {"rmat20": rmat(20, 16, seed=2).symmetrize(), "road1024": road(1024, 1024, seed=3)}
    cases = [(n, "rmat20") for n in CONFIGS] + [("bfs pick", "road1024")]
    for name, gname in cases:
        alg, cfg = CONFIGS[name]
        g = graphs[gname]
        kw = {"source": _src(alg, g)} if alg == "bfs" else {}
        ref = reference(alg, g, kw.get("source"))
        r = gs.run(alg, g, backend="gpu", config=cfg, **kw)
        key = "depth" if alg == "bfs" else "rank"
        bad = compare(alg, r.fields[key], ref)
        if bad:
            raise AssertionError(f"{label} {name} on {gname}: {bad}")
        times = [gs.run(alg, g, backend="gpu", config=cfg, **kw).stats["device_time_s"]
                 for _ in range(7)]
        out["device_ms"][f"{name} / {gname}"] = round(statistics.median(times) * 1e3, 4)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
