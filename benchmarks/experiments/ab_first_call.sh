#!/usr/bin/env bash
# Same-run A/B of the first GPU call in a fresh process after `gswitch compile --portfolio
# bfs` (each tree with its own kernel cache): .ab_old (an older revision) against the
# working tree, alternating, $ROUNDS rounds (default 4); beside them the floor, a fresh
# process importing CuPy and running a few cached CuPy kernels. Run from the repository
# root on a GPU machine after benchmarks/device_env.sh:
#   bash benchmarks/experiments/ab_first_call.sh
set -euo pipefail
source benchmarks/experiments/stage_ab.sh
python3 - <<'PY'
import compileall
for d in ("/tmp/st-old/gswitch", "/tmp/st-new/gswitch"):
    compileall.compile_dir(d, quiet=1)
PY
FIRST='import time; t = time.perf_counter(); import gswitch as gs; from gswitch.generators import rmat; g = rmat(12, 8, seed=1); r = gs.run("bfs", g, source=0, backend="gpu"); print(f"{time.perf_counter() - t:.3f}")'
FLOOR='import time; t = time.perf_counter(); import cupy as cp; (cp.arange(4) + 1).sum().item(); print(f"{time.perf_counter() - t:.3f}")'
cd /tmp
for d in old new; do
  CUPY_CACHE_DIR=/tmp/abfc-$d PYTHONPATH=/tmp/st-$d:/tmp/site python3 -m gswitch compile --portfolio bfs >/dev/null 2>&1
done
CUPY_CACHE_DIR=/tmp/abfc-floor python3 -c "$FLOOR" >/dev/null
for r in $(seq ${ROUNDS:-4}); do
  for d in old new; do
    echo "$d round $r: first call $(CUPY_CACHE_DIR=/tmp/abfc-$d PYTHONPATH=/tmp/st-$d:/tmp/site python3 -c "$FIRST" 2>/dev/null | tail -1) s"
  done
  echo "floor round $r: $(CUPY_CACHE_DIR=/tmp/abfc-floor python3 -c "$FLOOR") s"
done
