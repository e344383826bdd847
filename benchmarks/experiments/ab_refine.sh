#!/usr/bin/env bash
# Same-run A/B of the tuner's local search on a two-GPU machine: benchmarks/bench_tuner.py
# (cold part, the same seed and cases) with --refine 0 on one GPU and --refine $REFINE
# (default 0.5) on the other at the same time, each study on its own GPU. $SWAP=1 swaps
# the GPUs. Extra arguments go to bench_tuner.py (cases, trials, budget). Logs and JSON in
# $OUT/refine-0 and $OUT/refine-$REFINE.
# Run from the repository root after sourcing benchmarks/devsetup.sh:
#   bash benchmarks/experiments/ab_refine.sh --algorithms pagerank --graphs rmat --scale 19 --trials 200
set -uo pipefail
out=${OUT:-./bench-results}
refine=${REFINE:-0.5}
gpus=(0 1); [ "${SWAP:-0}" = 1 ] && gpus=(1 0)
pids=()
i=0
for r in 0 "$refine"; do
  mkdir -p "$out/refine-$r"
  (cd benchmarks && CUDA_VISIBLE_DEVICES=${gpus[$i]} OUT="$out/refine-$r" \
     python bench_tuner.py --backend gpu --parts cold --refine "$r" "$@" \
     > "$out/refine-$r/log" 2>&1) &
  pids+=($!)
  i=$((i + 1))
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
for r in 0 "$refine"; do echo "== refine $r (GPU ${gpus[0]} for 0)"; grep -v "^ *$" "$out/refine-$r/log" | tail -12; done
exit $rc
