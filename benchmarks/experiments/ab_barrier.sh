#!/usr/bin/env bash
# Same-run A/B of ab_barrier.py: the tree in .ab_old (make it with
#   mkdir .ab_old && git archive REV gswitch strategies algorithms tuner | tar -x -C .ab_old)
# against the working tree, alternating, $ROUNDS rounds (default 2). Needs a GPU.
set -euo pipefail
source benchmarks/experiments/stage_ab.sh
for r in $(seq "${ROUNDS:-2}"); do
  for d in old new; do
    PYTHONPATH=/tmp/st-$d${PYTHONPATH:+:$PYTHONPATH} python3 benchmarks/experiments/ab_barrier.py "$d"
  done
done
