"""The strategy contract proven from outside: a third-party package under examples/.

``examples/plugin_package`` registers the worklist ``byte_flags`` through the ``gswitch``
entry-point group and ships its ``.cuh`` as package data. The test pip-installs it into a
temporary target next to a deliberately broken entry-point distribution, then checks in a
fresh interpreter that the strategy shows up in ``gswitch strategies``, runs on the CPU
reference path, passes the conformance suite, is compiled through the real pipeline and is
part of the all-pairs matrix, while the broken plugin is reported by name.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# strategies under test do their steps on the CPU (no shortest-path closure)
pytestmark = pytest.mark.usefixtures("super_steps")

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "examples" / "plugin_package"

CHECK = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
import gswitch as gs
from gswitch.cli import main
from gswitch.combinations import pairwise_configs
from gswitch.generators import rmat
from gswitch.plugins import get_registry
from gswitch.testing.conformance import compile_problems, strategy_problems
from gswitch.testing.reference import compare, reference

reg = get_registry()
cls = reg.strategy("worklist", "byte_flags")
g = rmat(9, seed=4)
r = gs.run("bfs", g, source=0, backend="cpu", config={"worklist": "byte_flags"})
out = {
    "failures": reg.failures,
    "source": reg.sources[("worklist", "byte_flags")],
    "conformance": strategy_problems(cls),
    "compile": compile_problems(cls) if sys.argv[1] == "1" else None,
    "pairs": sum(c["worklist"] == "byte_flags" for c in pairwise_configs(reg.algorithm("bfs"))),
    "cpu_run": compare("bfs", r.fields["depth"], reference("bfs", g, source=0)),
}
print("RESULT" + json.dumps(out))
main(["strategies"])
"""


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    """The example package pip-installed into a private target, plus a broken plugin."""
    tgt = tmp_path_factory.mktemp("plugins")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
         str(tgt), str(PACKAGE)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    broken = tgt / "broken_gswitch_plugin-0.1.dist-info"
    broken.mkdir()
    (broken / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: broken-gswitch-plugin\nVersion: 0.1\n")
    (broken / "entry_points.txt").write_text(
        "[gswitch]\nbroken_one = gswitch_no_such_module_for_tests\n")
    return tgt


def _check(target, compile_it: bool):
    """Run CHECK in a fresh process that finds the package on its path: its result and
    what `gswitch strategies` printed after it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(target)] + [p for p in sys.path if p])}
    proc = subprocess.run([sys.executable, "-c", CHECK, "1" if compile_it else "0"],
                          capture_output=True, text=True, env=env, timeout=600, cwd=target)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT"))
    return json.loads(line[len("RESULT"):]), proc.stdout.split(line, 1)[1]


def test_third_party_strategy_is_found_everywhere(target):
    """Installed from outside, byte_flags is listed, runs and conforms; a broken entry
    point is reported by name and does not stop the others."""
    out, listing = _check(target, compile_it=False)
    assert out["source"] == "byte_flags"
    assert out["conformance"] == []
    assert out["cpu_run"] is None
    assert out["pairs"] >= 1
    assert out["compile"] is None
    assert any("broken_one" in f and "broken-gswitch-plugin" in f for f in out["failures"])
    assert "byte_flags" in listing


@pytest.mark.compile
def test_third_party_strategy_compiles(target, nvcc):
    """The installed strategy's device code compiles in every combination it joins."""
    out, _listing = _check(target, compile_it=True)
    assert out["source"] == "byte_flags"
    assert out["compile"] == []
