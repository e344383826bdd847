#!/usr/bin/env bash
# Same-run A/B of bench_engine.py parts: an older revision in .ab_old (see ab_call.sh for
# how to make it) against the working tree, one after the other on one machine.
#   bash benchmarks/experiments/ab_engine.sh pagerank,grid [extra bench_engine.py arguments]
set -euo pipefail
parts=${1:-pagerank,grid}; shift || true
source benchmarks/experiments/stage_ab.sh
cd benchmarks
for d in old new; do
  echo "== $d"; PYTHONPATH=/tmp/st-$d${PYTHONPATH:+:$PYTHONPATH} python bench_engine.py --parts "$parts" --tag "$d" "$@"
done
