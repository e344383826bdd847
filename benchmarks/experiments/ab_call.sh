#!/usr/bin/env bash
# Same-run A/B of the per-call time (benchmarks/experiments/profile_call.py --no-profile), alternating
# an older revision in .ab_old with the working tree, $ROUNDS rounds (default 3), in the
# order $ORDER (default "old new"; "new old" checks that the order does not matter). Make
# .ab_old with:
#   mkdir .ab_old && git archive REV gswitch strategies algorithms tuner | tar -x -C .ab_old
# Run from the repository root on a machine with a GPU: bash benchmarks/experiments/ab_call.sh
set -euo pipefail
source benchmarks/experiments/stage_ab.sh
# ${MAPPING:+--mapping}: pass the configuration as a dict (MAPPING=1), as most callers do
for r in $(seq ${ROUNDS:-3}); do for d in ${ORDER:-old new}; do for l in host_loop persistent cuda_graph; do echo -n "$d "; PYTHONPATH=/tmp/st-$d python benchmarks/experiments/profile_call.py --no-profile --calls 500 --launch $l ${MAPPING:+--mapping}; done; done; done
