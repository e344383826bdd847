"""Fuzz the loaders and generator specs in one subprocess limited to 1 GiB of address space.

The budget here is small and the inputs are the same every run (hypothesis derandomised);
``python tests/fuzz_loaders.py --examples 20000 --random`` runs a longer campaign.
"""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("fuzz_loaders.py")


def test_fuzz_loaders_only_graph_or_typed_errors(tmp_path):
    """Random and mutated files of every format: only a Graph or a typed error, under 1 GiB."""
    out = tmp_path / "fuzz.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--examples", "400", "--spec-examples", "150",
         "--memory", str(1 << 30), "--out", str(out), "--journal", str(tmp_path / "last")],
        capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode in (0, 1), f"fuzz died ({proc.returncode}): {proc.stderr[-2000:]}"
    report = json.loads(out.read_text())
    assert report["memory_limit_bytes"] == 1 << 30
    assert report["loader_inputs"] == 400 and report["spec_inputs"] == 150
    assert report["n_others"] == 0, json.dumps(report["others"], indent=1)[:4000]
    outcomes = report["loader_outcomes"]
    assert set(outcomes) <= {"Graph", "GraphFormatError", "InvalidInput"}
    # the mutations must reach both sides: files that still load and files that are refused
    assert outcomes.get("Graph", 0) > 20 and outcomes.get("GraphFormatError", 0) > 20
