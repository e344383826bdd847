"""benchmarks/run.py: every listed benchmark exists, the list and errors read right."""

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _runner():
    spec = importlib.util.spec_from_file_location("bench_run", BENCH / "run.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_every_listed_script_exists_and_no_one_off_at_top_level(capsys):
    run = _runner()
    for b in run.BENCHES.values():
        assert (BENCH / b.script).is_file(), b.script
        assert b.peers and b.what
    for script in run.TOOLS.values():
        assert (BENCH / script).is_file()
    assert not list(BENCH.glob("ab_*")), "one-off A/B scripts belong in experiments/"
    assert run.main([]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in run.BENCHES)
    assert run.main(["no-such-benchmark"]) == 2
    assert "unknown benchmark" in capsys.readouterr().err
