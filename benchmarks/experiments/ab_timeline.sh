#!/usr/bin/env bash
# Same-run A/B of warm calls' time beyond their device time (call_timeline.py, no trace):
# an older revision in .ab_old against the working tree, alternating, $ROUNDS rounds
# (default 2), for CC, PageRank and BFS on RMAT-22 and BFS on a 4-node path, with
# arrays=$ARRAYS (default cupy), and the 4-node BFS with host arrays. Run from the
# repository root on a machine with a GPU after benchmarks/device_env.sh:
#   bash benchmarks/experiments/ab_timeline.sh
set -euo pipefail
source benchmarks/experiments/stage_ab.sh
for r in $(seq ${ROUNDS:-2}); do for d in old new; do
  for spec in "cc" "pagerank" "bfs" "bfs --tiny" "bfs --tiny --arrays numpy"; do
    echo -n "$d round $r: "
    PYTHONPATH=/tmp/st-$d:/tmp/site python3 benchmarks/experiments/call_timeline.py \
      --arrays ${ARRAYS:-cupy} --calls ${CALLS:-200} --alg $spec 2>&1 | grep -v "Warn\|warn"
  done
done; done
