# A/B of per-call time: .ab_old (HEAD before the change) vs the working tree
for d in old new; do rm -rf /tmp/st-$d; mkdir -p /tmp/st-$d; done
src=.ab_old; for d in old new; do cp -r $src/gswitch /tmp/st-$d/gswitch; cp -r $src/strategies /tmp/st-$d/gswitch/strategies; cp -r $src/algorithms /tmp/st-$d/gswitch/algorithms; cp -r $src/tuner /tmp/st-$d/gswitch/tuner; src=.; done
for r in 1 2 3; do for d in old new; do for l in host_loop persistent; do echo -n "$d "; PYTHONPATH=/tmp/st-$d python benchmarks/profile_call.py --no-profile --calls 500 --launch $l; done; done; done
