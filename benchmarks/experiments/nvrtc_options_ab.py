"""Device time of the engine's kernels compiled with the old NVRTC options
(``-std=c++17``) and the new (``gswitch.engine.gpu.NVRTC_OPTIONS``), fresh processes
alternating, each with an empty kernel cache: BFS, SSSP (unit weights), CC and PageRank
on a symmetric RMAT graph under the selector's pick, every answer checked against the
first process's.

Usage::

    python benchmarks/experiments/nvrtc_options_ab.py [--scale 21] [--rounds 2] [--calls 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

RUN = r"""
import json, statistics, sys, hashlib
sys.path.insert(0, sys.argv[3])
from _common import symmetric_rmat
import numpy as np
import gswitch as gs
from gswitch.engine import gpu
if sys.argv[1] == "old":
    gpu.NVRTC_OPTIONS = gpu.BASE_NVRTC_OPTIONS
g = symmetric_rmat(int(sys.argv[2]))
hub = int(np.argmax(g.out_degree))
out = {"options": list(gpu.NVRTC_OPTIONS)}
for alg, kw, field in (("bfs", {"source": hub}, "depth"), ("sssp", {"source": hub}, "dist"),
                       ("cc", {}, "comp"), ("pagerank", {}, "rank")):
    r = None
    devs = []
    try:
        for i in range(int(sys.argv[4]) + 2):
            r = gs.run(alg, g, backend="gpu", **kw)
            if i >= 2:
                devs.append(r.stats["device_time_s"])
    except Exception as exc:  # reported, the other algorithms still timed
        print(f"{alg}: {type(exc).__name__}: {exc}", file=sys.stderr)
        continue
    a = np.asarray(r.fields[field])
    key = hashlib.sha1(np.round(a, 6).tobytes() if a.dtype.kind == "f" else a.tobytes())
    out[alg] = {"device_ms": statistics.median(devs) * 1e3, "answer": key.hexdigest()[:12]}
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=21)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args()
    here = str(Path(__file__).resolve().parents[1])
    got: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    answers: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for label in ("old", "new"):
                env = {**os.environ, "CUPY_CACHE_DIR": str(Path(tmp) / f"{label}-{r}")}
                p = subprocess.run([sys.executable, "-c", RUN, label, str(args.scale), here,
                                    str(args.calls)], env=env, capture_output=True, cwd=tmp,
                                   text=True)
                if p.returncode or p.stderr.strip():
                    print(p.stderr.strip()[-2000:], flush=True)
                if p.returncode:
                    continue
                out = json.loads(p.stdout.strip().splitlines()[-1])
                print(f"round {r + 1} {label} {out.pop('options')}: " + ", ".join(
                    f"{a} {v['device_ms']:.3f} ms" for a, v in out.items()), flush=True)
                for a, v in out.items():
                    got[label].setdefault(a, []).append(v["device_ms"])
                    answers.setdefault(a, set()).add(v["answer"])
    for a in set(got["old"]) & set(got["new"]):
        o, n = statistics.median(got["old"][a]), statistics.median(got["new"][a])
        print(f"{a}: old {o:.3f} ms, new {n:.3f} ms ({n / o:.3f}x); same answer in every "
              f"process: {len(answers[a]) == 1}")


if __name__ == "__main__":
    main()
