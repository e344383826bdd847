#!/usr/bin/env bash
# Stage the two trees of a same-run A/B in the package layout (see ../devsetup.sh):
# .ab_old (an older revision, made with
#   mkdir .ab_old && git archive REV gswitch strategies algorithms tuner | tar -x -C .ab_old)
# into /tmp/st-old and the working tree into /tmp/st-new. Source it from the repository root.
for d in old new; do rm -rf /tmp/st-$d; mkdir -p /tmp/st-$d; done
src=.ab_old
for d in old new; do
  cp -r $src/gswitch /tmp/st-$d/gswitch; cp -r $src/strategies /tmp/st-$d/gswitch/strategies
  cp -r $src/algorithms /tmp/st-$d/gswitch/algorithms; cp -r $src/tuner /tmp/st-$d/gswitch/tuner
  src=.
done
