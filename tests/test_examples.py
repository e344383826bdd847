"""Every script in examples/ runs to the end (each checks its own answers)."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _run(*args, cwd):
    proc = subprocess.run([sys.executable, *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("script,needle", [
    ("load_formats.py", "renumbered"),
    ("user_algorithms.py", "hub-avoiding distances"),
    ("networkx_interop.py", "round trip: True"),
    ("networkx_backend.py", "same answers as networkx: True"),
])
def test_example_runs(tmp_path, script, needle):
    """The example exits 0 from another directory and prints its result."""
    assert needle in _run(EXAMPLES / script, cwd=tmp_path)


def test_compare_strategies_plots(tmp_path):
    """The strategy comparison prints a table and draws the chart (or says how to get it)."""
    out = _run(EXAMPLES / "compare_strategies.py", "--generate", "road:30x30", "--repeats", "1",
               "--out", tmp_path / "plots", cwd=tmp_path)
    assert "fastest on road:30x30" in out
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "gswitch[plot]" in out
    else:
        assert (tmp_path / "plots" / "times.png").stat().st_size > 1000


def test_sample_data_has_every_format():
    """examples/data holds the sample graph in every format gswitch reads."""
    import gswitch as gs

    data = EXAMPLES / "data"
    formats = {gs.io.EXTENSIONS[p.suffix] for p in data.glob("sample.*")}
    assert formats == set(gs.io.FORMATS)
