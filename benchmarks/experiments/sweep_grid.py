"""BFS on the 2048x2048 grid over launch-related settings: device and end-to-end time per
configuration (median of the last three of four runs), every depth checked against the
grid's closed form (|dx| + |dy| from the source).

Usage::

    python benchmarks/experiments/sweep_grid.py [--grid 2048] [--source corner|center]
        [--configs JSON-LIST]
"""

from __future__ import annotations

import pathlib
import sys

# the maintained benchmarks' helpers live one folder up
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import json
import statistics

import numpy as np
from _common import require_gpu, write_json

DEFAULT = [
    {"launch": "persistent", "load_balance.size": 4, "block_size": bs}
    for bs in (64, 128, 256, 512, 1024)
] + [
    {"launch": "persistent", "load_balance.size": 2},
    {"launch": "persistent", "load_balance.size": 4, "worklist": "atomic"},
    {"launch": "persistent", "load_balance.size": 4, "worklist.dedup": True},
    {"launch": "cuda_graph", "load_balance.size": 4, "worklist.dedup": True, "block_size": 128},
    {"launch": "cuda_graph", "load_balance.size": 4, "worklist.dedup": True, "launch.steps": 64},
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", type=int, default=2048)
    ap.add_argument("--source", choices=["corner", "center"], default="corner")
    ap.add_argument("--configs", default=None, help="JSON list of configurations")
    args = ap.parse_args()
    require_gpu("sweep_grid.py")
    import gswitch as gs
    from gswitch.generators import grid2d

    g = grid2d(args.grid, args.grid)
    k = args.grid
    si = sj = 0 if args.source == "corner" else k // 2
    source = si * k + sj
    want = np.abs(np.arange(k * k) // k - si) + np.abs(np.arange(k * k) % k - sj)
    rows = []
    for cfg in json.loads(args.configs) if args.configs else DEFAULT:
        ts, es = [], []
        for _ in range(4):
            r = gs.run("bfs", g, source=source, backend="gpu", config=cfg)
            ts.append(r.stats["device_time_s"])
            es.append(r.stats["time_s"])
        ok = bool(np.array_equal(r.fields["depth"], want))
        dev, e2e = statistics.median(ts[1:]), statistics.median(es[1:])
        rows.append({"config": cfg, "device_ms": dev * 1e3, "end_to_end_ms": e2e * 1e3,
                     "correct": ok, "us_per_step": dev * 1e6 / r.iterations})
        print(f"{dev * 1e3:8.2f} ms  {dev * 1e6 / r.iterations:5.2f} us/step  end to end "
              f"{e2e * 1e3:8.2f} ms  correct={ok}  {cfg}")
    write_json("sweep_grid", {"rows": rows})


if __name__ == "__main__":
    main()
