#!/usr/bin/env bash
# Device-machine setup (source it from the repository root): install the wheels carried in
# .whl/ (optuna and its needs, pytest-xdist, hypothesis, and setuptools >= 77, which the
# build of gswitch needs for its SPDX license field) and gswitch itself into /tmp/site,
# with no package index. Falls back to the staged layout of devsetup.sh if the build fails.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || return 1
export PYTHONPATH=/tmp/site
# a machine kept warm between commands still has the last command's install: replace it
rm -rf /tmp/gswitch-site
if python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
        --no-cache-dir --target /tmp/gswitch-site . >/tmp/gswitch-install.log 2>&1; then
    export PYTHONPATH=/tmp/gswitch-site:/tmp/site
else
    echo "pip could not build gswitch here (see /tmp/gswitch-install.log); using devsetup.sh"
    tail -3 /tmp/gswitch-install.log
    source benchmarks/devsetup.sh
fi
export PATH="/tmp/gswitch-site/bin:$PATH" CUPY_CACHE_DIR=/tmp/cupy-cache PYTHONUNBUFFERED=1
python3 -c "import sys, cupy, numpy, scipy, gswitch, optuna; print(sys.version.split()[0], 'cupy', cupy.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__, 'optuna', optuna.__version__, 'gswitch', gswitch.__file__, 'gpu', gswitch.gpu_available())"
