"""How long NVRTC takes to build the engine's modules under other compile options: the
first call's module with an empty kernel cache is most of its time.

The CUDA sources of a few first calls' modules (BFS's pick on a small RMAT graph, BFS's
and PageRank's defaults) are saved from a run with ``CUPY_CACHE_SAVE_CUDA_SOURCE``;
each is then compiled in a fresh process with an empty cache under every option set,
rotating, ``--rounds`` times. The kernels' register counts are printed beside the
times: options that change code generation show there.

Usage::

    python benchmarks/experiments/nvrtc_options.py [--rounds 3]
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

SAVE = r"""
import gswitch as gs
from gswitch.generators import rmat
g = rmat(12, 8, seed=1)
gs.run("bfs", g, source=0, backend="gpu")
gs.run("bfs", g, source=0, backend="gpu", config="default")
gs.run("pagerank", g, backend="gpu", config="default")
"""
COMPILE = r"""
import json, re, sys, time
import cupy as cp
src = open(sys.argv[1]).read()
opts = tuple(json.loads(sys.argv[2]))
names = re.findall(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(", src)
cp.cuda.runtime.free(0)  # the context first: only the compile is timed
t = time.perf_counter()
mod = cp.RawModule(code=src, options=opts)
fns = [mod.get_function(k) for k in names]
s = time.perf_counter() - t
print(json.dumps({"seconds": s, "regs": {k: f.num_regs for k, f in zip(names, fns)}}))
"""
OPTIONS = {
    "now": ["-std=c++17"],
    "minimal": ["-std=c++17", "-minimal"],
    "split": ["-std=c++17", "--split-compile=0"],
    "both": ["-std=c++17", "-minimal", "--split-compile=0"],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        saved = Path(tmp) / "saved"
        env = {**os.environ, "CUPY_CACHE_DIR": str(saved), "CUPY_CACHE_SAVE_CUDA_SOURCE": "1"}
        subprocess.run([sys.executable, "-c", SAVE], env=env, check=True, cwd=tmp)
        sources = sorted(p for p in saved.rglob("*.cu")
                         if "gs_fill_fields" in p.read_text(errors="replace"))
        print(f"{len(sources)} engine modules saved")
        times: dict[tuple[str, str], list[float]] = {}
        for r in range(args.rounds):
            for src in sources:
                for label, opts in OPTIONS.items():
                    cache = Path(tmp) / f"c-{r}-{src.stem}-{label}"
                    p = subprocess.run(
                        [sys.executable, "-c", COMPILE, str(src), json.dumps(opts)],
                        env={**os.environ, "CUPY_CACHE_DIR": str(cache)}, cwd=tmp,
                        capture_output=True, text=True)
                    if p.returncode:
                        print(f"{src.stem[:10]} {label}: failed: "
                              f"{p.stderr.strip().splitlines()[-1:]}")
                        continue
                    out = json.loads(p.stdout.strip().splitlines()[-1])
                    times.setdefault((src.stem[:10], label), []).append(out["seconds"])
                    if r == 0:
                        print(f"{src.stem[:10]} {label:8s} {out['seconds']:.3f} s  registers "
                              f"{out['regs']}")
        for (mod, label), ts in sorted(times.items()):
            print(f"median {mod} {label:8s} {statistics.median(ts):.3f} s over {len(ts)} "
                  f"({', '.join(f'{t:.3f}' for t in ts)})")


if __name__ == "__main__":
    main()
