#!/usr/bin/env bash
# Device-machine setup without pip: stage the package layout (the package-dir mapping of
# pyproject.toml) under /tmp/gswitch-stage and put it on PYTHONPATH. Source this file.
stage=/tmp/gswitch-stage
rm -rf "$stage" && mkdir -p "$stage"
cp -r gswitch "$stage/gswitch"
cp -r strategies "$stage/gswitch/strategies"
cp -r algorithms "$stage/gswitch/algorithms"
cp -r tuner "$stage/gswitch/tuner"
export PYTHONPATH="$stage${PYTHONPATH:+:$PYTHONPATH}"
