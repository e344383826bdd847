#!/usr/bin/env bash
# Per-call time of one launch (default host_loop) across several revisions in one run,
# interleaved round by round, to tell a regression from the host's noise. Make the trees
# with (from the repository root):
#   for r in REV1 REV2 ...; do mkdir -p .ab_revs/$r/gswitch
#     git archive $r gswitch strategies algorithms tuner | tar -x -C .ab_revs/$r
#     (cd .ab_revs/$r && mv strategies algorithms tuner gswitch/); done
# then, on a machine with a GPU: REVS="REV1 REV2 ..." bash benchmarks/experiments/ab_revisions.sh
set -euo pipefail
for r in $(seq "${ROUNDS:-3}"); do
  for rev in ${REVS:?name the revisions in REVS}; do
    echo -n "$rev "
    PYTHONPATH="$PWD/.ab_revs/$rev${PYTHONPATH:+:$PYTHONPATH}" python benchmarks/experiments/profile_call.py \
      --no-profile --calls "${CALLS:-1000}" --launch "${LAUNCH:-host_loop}"
  done
done
