"""Same-run A/B of the first GPU call with the CUDA context made while CuPy imports
(``gswitch.context_ahead``) and without (``GSWITCH_CONTEXT_AHEAD=0``), fresh processes
alternating after ``gswitch compile --portfolio bfs`` filled one kernel cache; beside
them the floor (a fresh process importing CuPy and running cached CuPy kernels).

Each first call prints its parts: ``import gswitch``, the first ``gpu_available()``
(CuPy's import, and the thread's start), the call itself, all from the process's clock.

Usage::

    python benchmarks/experiments/first_call_ahead.py [--rounds 5]
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

FIRST = r"""
import time
t0 = time.perf_counter()
import gswitch as gs
t1 = time.perf_counter()
from gswitch.generators import rmat
g = rmat(12, 8, seed=1)
t2 = time.perf_counter()
gs.gpu_available()
t3 = time.perf_counter()
r = gs.run("bfs", g, source=0, backend="gpu")
t4 = time.perf_counter()
import json
from gswitch import context_ahead
assert int((r.fields["depth"] >= 0).sum()) > 1
print(json.dumps({"seconds": t4 - t0, "import_gswitch": t1 - t0, "generate": t2 - t1,
                  "gpu_available": t3 - t2, "call": t4 - t3,
                  "ahead": context_ahead.outcome}))
"""
FLOOR = r"""
import time
t = time.perf_counter()
import cupy as cp
(cp.arange(4) + 1).sum().item()
print('{"seconds": %f}' % (time.perf_counter() - t))
"""


def _fresh(code: str, env: dict[str, str], cwd: str) -> dict:
    p = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, cwd=cwd,
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    import compileall

    import gswitch

    compileall.compile_dir(str(Path(gswitch.__file__).parent), quiet=1)
    got: dict[str, list[float]] = {"off": [], "on": [], "floor": []}
    with tempfile.TemporaryDirectory() as tmp:
        cache = {"CUPY_CACHE_DIR": str(Path(tmp) / "cache")}
        subprocess.run([sys.executable, "-m", "gswitch", "compile", "--portfolio", "bfs"],
                       env={**os.environ, **cache}, cwd=tmp, check=True,
                       capture_output=True)
        floor = {"CUPY_CACHE_DIR": str(Path(tmp) / "floor")}
        _fresh(FLOOR, floor, tmp)
        _fresh(FIRST, cache, tmp)  # any module the compile left out, built once
        for r in range(args.rounds):
            for label, flag in (("off", "0"), ("on", "1")):
                out = _fresh(FIRST, {**cache, "GSWITCH_CONTEXT_AHEAD": flag}, tmp)
                got[label].append(out["seconds"])
                parts = ", ".join(f"{k} {v:.3f}" for k, v in out.items()
                                  if isinstance(v, float) and k != "seconds")
                print(f"round {r + 1} context ahead {label:3s}: first call "
                      f"{out['seconds']:.3f} s ({parts}; thread {out['ahead']})")
            got["floor"].append(_fresh(FLOOR, floor, tmp)["seconds"])
            print(f"round {r + 1} floor: {got['floor'][-1]:.3f} s")
    for k, v in got.items():
        print(f"median {k}: {statistics.median(v):.3f} s over {len(v)} fresh processes")
    pairs = sum(a < b for a, b in zip(got["on"], got["off"]))
    print(f"context ahead faster in {pairs} of {len(got['on'])} pairs")


if __name__ == "__main__":
    main()
