"""The engine before and after the opening of the engine, in one run on one GPU.

Stages two package trees given on the command line (the previous engine exported from
git, and this one) and times the same workloads in a subprocess for each: BFS on RMAT
(hub source) with the old default and with ``virtual_warp`` 32, and BFS on the grid with
the persistent launch. Times are the engines' own device-time figures (``kernel_time_s``
before, ``device_time_s`` after), median of 5 after a warm-up; every answer is checked
against scipy. Usage::

    python benchmarks/experiments/bench_before_after.py OLD_STAGE NEW_STAGE [--scale 22]
"""

from __future__ import annotations

import pathlib
import sys

# the maintained benchmarks' helpers live one folder up
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import json
import os
import subprocess
import sys

from _common import write_json

SNIPPET = r"""
import json, statistics, sys
import numpy as np
import gswitch as gs
from gswitch.generators import rmat, grid2d
from scipy.sparse.csgraph import shortest_path
scale = int(sys.argv[1])
g = rmat(scale, 16, seed=1).symmetrize()
src = int(np.argmax(g.out_degree))
grid = grid2d(2048, 2048)
out = {}
def t(name, graph, s, cfg, ref_max):
    gs.run("bfs", graph, source=s, backend="gpu", config=cfg)
    ts = []
    for _ in range(5):
        r = gs.run("bfs", graph, source=s, backend="gpu", config=cfg)
        ts.append(r.stats.get("device_time_s", r.stats.get("kernel_time_s")))
    assert int(r.fields["depth"].max()) == ref_max
    out[name] = statistics.median(ts) * 1e3
ref = gs.run("bfs", g, source=src, backend="cpu").fields["depth"].max()
t("rmat default", g, src, {}, ref)
t("rmat virtual_warp 32", g, src, {"load_balance": "virtual_warp", "load_balance.size": 32}, ref)
t("rmat thread", g, src, {"load_balance": "thread"}, ref)
t("grid persistent vw4", grid, 0, {"launch": "persistent", "load_balance.size": 4}, 4094)
print("RESULT" + json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--scale", type=int, default=22)
    args = ap.parse_args()
    res = {}
    for label, stage in (("before", args.old), ("after", args.new)):
        env = {**os.environ, "PYTHONPATH": stage}
        proc = subprocess.run([sys.executable, "-c", SNIPPET, str(args.scale)], env=env,
                              capture_output=True, text=True, cwd="/tmp")
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            raise SystemExit(1)
        line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT"))
        res[label] = json.loads(line[6:])
    for name in res["before"]:
        b, a = res["before"][name], res["after"][name]
        print(f"{name:24s} before {b:8.3f} ms  after {a:8.3f} ms  ({b / a:5.2f}x)")
    write_json("bench_before_after", res)


if __name__ == "__main__":
    main()
