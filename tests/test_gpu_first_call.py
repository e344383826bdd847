"""GPU suite: a first GPU call in a fresh process loads only what it runs. ``cupyx``
(whose package loads CuPy's SciPy, linear-algebra and optimizer modules, and through
the last one Optuna) and Optuna stay unimported: together they cost a first call 0.3 to
1 s. (The tuner's light plugin module registers its commands; its studies need Optuna.)"""

import json
import subprocess
import sys

import pytest

import gswitch as gs

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

FIRST = r"""
import json, sys
import gswitch as gs
from gswitch.generators import rmat
g = rmat(10, 8, seed=1)
r = gs.run("bfs", g, source=0, backend="gpu")
# CuPy registers cupyx as a lazy module; its first attribute access loads the package,
# whose __init__ imports these
heavy = {"cupyx.linalg", "cupyx.optimizing", "cupyx.scipy.sparse", "optuna"}
loaded = sorted(set(sys.modules) & heavy)
print(json.dumps({"loaded": loaded, "reached": int((r.fields["depth"] >= 0).sum())}))
"""


def test_first_gpu_call_leaves_cupyx_and_optuna_unimported():
    out = subprocess.run([sys.executable, "-c", FIRST], capture_output=True, text=True,
                         check=True, timeout=300)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["reached"] > 1
    assert got["loaded"] == [], got


AHEAD = r"""
import json
import gswitch as gs
from gswitch import context_ahead
from gswitch.generators import rmat
g = rmat(10, 8, seed=1)
r = gs.run("bfs", g, source=0, backend="gpu")
ref = gs.run("bfs", g, source=0, backend="cpu")
import cupy
print(json.dumps({"outcome": context_ahead.outcome, "device": cupy.cuda.runtime.getDevice(),
                  "same": r.fields["depth"].tolist() == ref.fields["depth"].tolist()}))
"""


@pytest.mark.parametrize("ahead", ["1", "0"])
def test_first_call_on_the_context_made_while_cupy_imported(ahead):
    """The thread made device 0's primary context (or was turned off), and the call ran
    there with the CPU engine's answer."""
    import os

    env = {**os.environ, "GSWITCH_CONTEXT_AHEAD": ahead}
    out = subprocess.run([sys.executable, "-c", AHEAD], capture_output=True, text=True,
                         check=True, timeout=300, env=env)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["same"] is True
    assert got["device"] == 0
    want = {"init": 0, "device": 0, "context": 0} if ahead == "1" else {}
    assert got["outcome"] == want


def test_the_device_nvrtc_takes_the_engine_options():
    """A module compiled here kept the fast options (no fallback to the base ones) and
    gives the CPU engine's answer."""
    from gswitch.engine import gpu
    from gswitch.generators import rmat

    g = rmat(9, 8, seed=3)
    r = gs.run("sssp", g, source=0, backend="gpu", config="default")
    ref = gs.run("sssp", g, source=0, backend="cpu")
    assert r.fields["dist"].tolist() == ref.fields["dist"].tolist()
    assert gpu.NVRTC_OPTIONS == ("-std=c++17", "-minimal", "--split-compile=0")
