"""Where a first GPU call's time goes above the floor of importing CuPy: a fresh process,
its kernel cache filled first by ``gswitch compile --portfolio bfs``, its call under
cProfile, and ``-X importtime`` of ``import gswitch`` in another fresh process.

Usage::

    python benchmarks/experiments/first_call_profile.py [--top 40]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

CALL = r"""
import cProfile, pstats, sys, time
prof = cProfile.Profile()
t = time.perf_counter()
prof.enable()
import gswitch as gs
t_imp = time.perf_counter()
from gswitch.generators import rmat
g = rmat(12, 8, seed=1)
t_gen = time.perf_counter()
r = gs.run("bfs", g, source=0, backend="gpu")
prof.disable()
t_end = time.perf_counter()
print(f"import {t_imp - t:.3f} s, generate {t_gen - t_imp:.3f} s, run {t_end - t_gen:.3f} s, "
      f"total {t_end - t:.3f} s (under the profiler)")
st = pstats.Stats(prof)
st.sort_stats("cumulative").print_stats(int(sys.argv[1]))
st.sort_stats("tottime").print_stats(int(sys.argv[1]))
"""
PLAIN = r"""
import time
t = time.perf_counter()
import cupy
t0 = time.perf_counter()
cupy.cuda.runtime.getDeviceCount(); (cupy.arange(4) + 1).sum().item()
t1 = time.perf_counter()
import gswitch as gs
t2 = time.perf_counter()
from gswitch.generators import rmat
g = rmat(12, 8, seed=1)
t3 = time.perf_counter()
r = gs.run("bfs", g, source=0, backend="gpu")
t4 = time.perf_counter()
r = gs.run("bfs", g, source=0, backend="gpu")
t5 = time.perf_counter()
print(f"import cupy {t0 - t:.3f}, cupy first kernel {t1 - t0:.3f}, import gswitch {t2 - t1:.3f}, "
      f"generate {t3 - t2:.3f}, first run {t4 - t3:.3f}, second run {t5 - t4:.4f} s")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "CUPY_CACHE_DIR": os.path.join(tmp, "cache")}
        subprocess.run([sys.executable, "-m", "gswitch", "compile", "--portfolio", "bfs"],
                       env=env, cwd=tmp, check=True, capture_output=True)
        for _ in range(2):
            subprocess.run([sys.executable, "-c", PLAIN], env=env, cwd=tmp, check=True)
        subprocess.run([sys.executable, "-c", CALL, str(args.top)], env=env, cwd=tmp,
                       check=True)
        p = subprocess.run([sys.executable, "-X", "importtime", "-c", "import gswitch"],
                           env=env, cwd=tmp, check=True, capture_output=True, text=True)
        rows = [ln for ln in p.stderr.splitlines() if ln.startswith("import time:")][1:]
        rows.sort(key=lambda ln: int(ln.split("|")[1]))
        print("\n".join(rows[-30:]))


if __name__ == "__main__":
    main()
