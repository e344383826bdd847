#!/usr/bin/env bash
# Device diagnostics (session 29): where a large call's host time goes, the tiny call,
# cold starts, and which modules a first run adds after `gswitch compile --portfolio bfs`.
# Run from the repository root after `source benchmarks/device_env.sh`; writes to $OUT.
set -o pipefail
P=benchmarks/experiments
for arr in cupy numpy; do
  python3 $P/profile_large_call.py --alg bfs --config none --arrays $arr --calls 20 --top 25
done 2>&1 | tee $OUT/s29_profile_bfs.log
python3 $P/profile_large_call.py --alg bfs --config '{"worklist": "bitmap", "load_balance": "twc", "driving": "data", "direction": "direction_optimizing", "launch": "host_loop"}' --calls 20 --top 20 2>&1 | tee $OUT/s29_profile_bfs_hostloop.log
for a in cc pagerank; do
  python3 $P/profile_large_call.py --alg $a --config none --arrays cupy --calls 10 --top 20
done 2>&1 | tee $OUT/s29_profile_cc_pr.log
python3 $P/call_breakdown.py --rmat 22 --calls 30 2>&1 | tee $OUT/s29_breakdown_rmat22.log
for l in persistent host_loop; do python3 $P/profile_call.py --launch $l --calls 2000 --top 25; done 2>&1 | tee $OUT/s29_tiny.log
python3 -c "
import sys; sys.path.insert(0, 'benchmarks')
from _common import tiny_bfs_times
for c in (None, 'default', {'launch': 'persistent'}):
    ts, r = tiny_bfs_times(c, 3000)
    print('tiny', c, 'median us', ts[len(ts)//2]*1e6, 'config', r.config.to_dict(), r.stats.get('config_source'))
" 2>&1 | tee -a $OUT/s29_tiny.log
# cold start and precompile diagnosis
RUN='import time; t=time.perf_counter(); import gswitch as gs; from gswitch.generators import rmat; g=rmat(12,8,seed=1); r=gs.run("bfs", g, source=0, backend="gpu"); print("first call s", time.perf_counter()-t, r.config.to_dict(), r.stats.get("config_source"))'
{
rm -rf /tmp/cc1 && CUPY_CACHE_DIR=/tmp/cc1 CUPY_CACHE_SAVE_CUDA_SOURCE=1 python3 -c "$RUN"
CUPY_CACHE_DIR=/tmp/cc1 python3 -c "$RUN"
rm -rf /tmp/cc2 && export CUPY_CACHE_SAVE_CUDA_SOURCE=1
time (CUPY_CACHE_DIR=/tmp/cc2 python3 -m gswitch compile --portfolio bfs | tail -3)
find /tmp/cc2 -type f | sort > /tmp/before
CUPY_CACHE_DIR=/tmp/cc2 python3 -c "$RUN"
find /tmp/cc2 -type f | sort > /tmp/after
echo "added:"; comm -13 /tmp/before /tmp/after
for f in $(comm -13 /tmp/before /tmp/after | grep '\.cu$'); do echo "== $f"; head -c 3000 $f; echo; done
CUPY_CACHE_DIR=/tmp/cc2 python3 -X importtime -c "import gswitch as gs; from gswitch.generators import rmat; g=rmat(12,8,seed=1); r=gs.run('bfs', g, source=0, backend='gpu')" 2>&1 | sort -t'|' -k2 -n | tail -25
} 2>&1 | tee $OUT/s29_cold.log
