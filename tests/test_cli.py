"""The gswitch command line, in-process and as a real subprocess."""

import json
import subprocess
import sys

import numpy as np
import pytest

from gswitch.cli import main
from gswitch.testing.reference import reference


def test_version(capsys):
    """--version prints the package version."""
    import gswitch

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert gswitch.__version__ in capsys.readouterr().out


def test_run_bfs_generated_json(capsys, tmp_path):
    """run --json reports stats, and --output saves the reference answer."""
    out = tmp_path / "depth.npy"
    rc = main(["run", "bfs", "--generate", "rmat:10,seed=2", "--source", "3", "--backend",
               "cpu", "--json", "--output", str(out)])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert data["algorithm"] == "bfs" and data["backend"] == "cpu"
    assert data["stats"]["iterations"] >= 1
    from gswitch.generators import parse_generator_spec

    g = parse_generator_spec("rmat:10,seed=2")
    assert np.array_equal(np.load(out, allow_pickle=False), reference("bfs", g, source=3))


def test_run_graph_file_with_set_and_config(capsys, tmp_path):
    """A graph file, --set and --config combine; the human output names the config."""
    p = tmp_path / "g.txt"
    p.write_text("# comment\n0 1\n1 2\n2 0\n3 4\n")
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"driving": "temporal"}))
    rc = main(["run", "cc", str(p), "--backend", "cpu", "--config", str(cfg),
               "--set", "driving.threshold=0.5"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "driving=temporal" in out and "driving.threshold=0.5" in out
    assert "components=2" in out


def test_run_pagerank_param(capsys):
    """--param passes algorithm parameters."""
    rc = main(["run", "pagerank", "--generate", "grid:8x8", "--backend", "cpu",
               "--param", "alpha=0.5", "--json"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)["result"]["rank"]
    assert abs(res["sum"] - 1.0) < 1e-4


@pytest.mark.parametrize("argv,needle", [
    (["run", "bfs", "missing.mtx", "--source", "0"], "not found"),
    (["run", "bfs", "--generate", "rmat:6", "--source", "999"], "out of range"),
    (["run", "nope", "--generate", "rmat:6"], "unknown algorithm 'nope'"),
    (["run", "bfs", "--generate", "rmat:6", "--source", "0", "--set", "worklist=zz"],
     "unknown worklist strategy 'zz'; choose one of"),
    (["run", "bfs", "--generate", "rmat:6", "--source", "0", "--set", "block_size=100"],
     "multiple of 32"),
    (["run", "bfs", "--generate", "rmat:6", "--source", "0", "--set", "oops"],
     "key=value"),
    (["run", "bfs", "--generate", "bogus:3", "--source", "0"], "bogus"),
    (["run", "pagerank", "--generate", "rmat:6", "--param", "alpha=2"], "alpha"),
    (["run", "bfs", "--generate", "rmat:6", "--source", "0", "--backend", "cpu",
      "--set", "driving.atomic_free=true"], "not a parameter of driving strategy 'data'"),
    (["run", "bfs"], "no graph given"),
    (["run", "bfs", "--generate", "rmat:6", "--source", "0", "--output", "x.txt"],
     ".npy or .npz"),
])
def test_bad_input_one_line(capsys, argv, needle):
    """Bad input: exit status 2 and one line on stderr naming the problem."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("gswitch: error:")
    assert needle in err


def test_negative_sssp_weight_file(capsys, tmp_path):
    """A negative SSSP weight in a DIMACS file is refused with the edge named."""
    p = tmp_path / "neg.gr"
    p.write_text("c test\np sp 3 2\na 1 2 4\na 2 3 -1\n")
    assert main(["run", "sssp", str(p), "--source", "0", "--backend", "cpu"]) == 2
    assert "non-negative" in capsys.readouterr().err


def test_pagerank_invalid_combination_reason(capsys):
    """An invalid strategy combination is refused with the strategy's reason."""
    rc = main(["run", "pagerank", "--generate", "rmat:6", "--backend", "cpu",
               "--set", "driving=topology", "--set", "driving.atomic_free=true"])
    assert rc == 2
    assert "atomic_free needs monotone reductions" in capsys.readouterr().err


def test_info_json_matches_graph(capsys):
    """info --json reports sizes and a diameter estimate."""
    assert main(["info", "--generate", "grid:10x12", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["n_nodes"] == 120 and info["n_edges"] == 2 * (9 * 12 + 10 * 11)
    assert info["diameter_estimate"] == 9 + 11


def test_strategies_lists_every_axis(capsys):
    """strategies lists all five axes, their strategies and parameters."""
    assert main(["strategies", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"worklist", "load_balance", "driving", "direction", "launch"}
    assert data["load_balance"]["virtual_warp"]["params"]["size"]["choices"] == [2, 4, 8, 16, 32]
    assert main(["strategies"]) == 0
    assert "virtual_warp" in capsys.readouterr().out


def test_algorithms_describe(capsys):
    """algorithms --describe prints traced operators."""
    assert main(["algorithms", "--describe"]) == 0
    out = capsys.readouterr().out
    assert "dst.depth.min((src.depth + 1))" in out


def test_gpu_backend_without_gpu_is_one_line(capsys):
    """Asking for the GPU where none is usable is a clear error."""
    import gswitch as gs

    if gs.gpu_available():
        pytest.skip("a GPU is present; this checks the no-GPU message")
    assert main(["run", "bfs", "--generate", "rmat:6", "--source", "0", "--backend", "gpu"]) == 2
    assert "--backend cpu" in capsys.readouterr().err


def test_console_script_subprocess():
    """The installed entry point runs and exits non-zero on bad input."""
    ok = subprocess.run([sys.executable, "-m", "gswitch.cli", "run", "bfs", "--generate",
                         "grid:4x4", "--source", "0", "--backend", "cpu"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "depth: reached=16, max=6" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "gswitch.cli", "run", "bfs", "--generate",
                          "grid:4x4", "--source", "99"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
