"""Same-run A/B of the CPU engine: an older revision's tree against the working tree.

Make the older tree with::

    mkdir -p /tmp/old && git archive REV gswitch strategies algorithms tuner | tar -x -C /tmp/old
    mv /tmp/old/strategies /tmp/old/algorithms /tmp/old/tuner /tmp/old/gswitch/

then run ``python benchmarks/experiments/ab_cpu.py /tmp/old`` from the repository root:
each tree runs
CC on a 256x256 grid, BFS on RMAT-16 (symmetrised) and PageRank on it, BFS and SSSP on a
1024x1024 grid (2,047 steps of a few thousand nodes), in alternating
subprocesses (``--rounds``), printing the median of three runs and a checksum of each
answer (equal checksums: the same answer).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

CASES = r'''
import sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import gswitch as gs
from gswitch.generators import grid2d, rmat
r = rmat(16, 16, seed=1).symmetrize()
road = grid2d(1024, 1024)
for name, graph, kw in (("cc grid256", grid2d(256, 256), {}), ("bfs rmat16", r, {"source": 0}),
                        ("pagerank rmat16", r, {}), ("bfs grid1024", road, {"source": 0}),
                        ("sssp grid1024", road, {"source": 0})):
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        res = gs.run(name.split()[0], graph, backend="cpu", **kw)
        ts.append(time.perf_counter() - t)
    out = np.asarray(list(res.fields.values())[0], dtype=np.float64)
    print(f"  {name}: {sorted(ts)[1]:.3f} s  steps {res.iterations}  checksum {out.sum():.6g}")
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old", help="the older revision's tree (holding gswitch/)")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    new = str(Path(__file__).resolve().parent.parent)
    for _ in range(args.rounds):
        for label, tree in (("old", args.old), ("new", new)):
            print(label, flush=True)
            subprocess.run([sys.executable, "-c", CASES, tree], check=True)


if __name__ == "__main__":
    main()
