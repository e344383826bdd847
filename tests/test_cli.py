"""The gswitch command line, in-process and as a real subprocess."""

import json
import re
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


def test_run_of_array_code_names_its_variant_not_strategies(capsys):
    """A formulation run by array code (batched betweenness) shows its variant; an
    operator formulation shows the strategies that ran."""
    assert main(["run", "betweenness", "--generate", "rmat:8", "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "config: variant=batched (array code: no strategy applies)" in out
    assert "driving=" not in out
    assert main(["run", "betweenness", "--generate", "rmat:8", "--backend", "cpu",
                 "--set", "variant=per_source"]) == 0
    assert "config: driving=" in capsys.readouterr().out


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


@pytest.mark.parametrize(("argv", "needle"), [
    (["run", "msbfs", "--generate", "road:8x8"], "msbfs needs its source node ids"),
    (["run", "msbfs", "--generate", "road:8x8", "--source", "0"],
     "give its source node ids (at most 64) as --param sources=ID,ID,..."),
    (["run", "msbfs", "--generate", "road:8x8", "--param", "sources=0,x"],
     "--param sources=0,x: give node ids separated by commas"),
    (["tune", "msbfs", "--generate", "road:8x8", "--trials", "1", "--backend", "cpu"],
     "msbfs needs its source node ids"),
    (["run", "core_number", "--generate", "rmat:7", "--backend", "cpu"],
     "Remove them first: --simple"),
    (["run", "bfs", "--generate", "rmat:5", "--source", "0", "--set", "driving=temporal",
      "--set", "driving.threshold=abc"], "--set driving.threshold=abc: driving.threshold"),
    (["tune", "bfs", "--generate", "rmat:5", "--set", "driving=topology"],
     "got driving=topology"),
])
def test_node_list_inputs_from_the_command_line(capsys, argv, needle):
    """Inputs that list nodes (msbfs's sources) come as --param NAME=ID,ID,...; a run
    that cannot do without them, or gives --source instead, is refused in one line."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err


def test_simple_drops_self_loops_and_merges_parallel_edges(tmp_path):
    """--simple makes a generated graph with self loops a simple graph: core numbers
    run, and equal networkx's on that simple graph."""
    import networkx as nx

    from gswitch.generators import parse_generator_spec

    out = tmp_path / "core.npy"
    assert main(["run", "core_number", "--generate", "rmat:7", "--simple", "--backend",
                 "cpu", "--output", str(out)]) == 0
    g = parse_generator_spec("rmat:7").symmetrize()
    G = nx.Graph()
    G.add_nodes_from(range(g.n_nodes))
    G.add_edges_from((int(a), int(b)) for a, b in zip(*g.edges()) if a != b)
    want = nx.core_number(G)
    assert np.load(out, allow_pickle=False).tolist() == [want[v] for v in range(g.n_nodes)]


def test_sources_and_personalization_by_param(capsys, tmp_path):
    """--param sources=0,9 runs msbfs from those nodes and --param personalization=3
    personalises PageRank on node 3, as the Python calls do."""
    from gswitch.algorithms.msbfs import decode

    import gswitch as gs
    from gswitch.generators import parse_generator_spec

    g = parse_generator_spec("road:8x8")
    out = {}
    for argv, alg, kw in ((["--param", "sources=0,9"], "msbfs", {"sources": [0, 9]}),
                          (["--param", "personalization=3"], "personalized_pagerank",
                           {"personalization": 3})):
        path = tmp_path / f"{alg}.npz"
        assert main(["run", alg, "--generate", "road:8x8", "--backend", "cpu",
                     "--output", str(path), *argv]) == 0
        out[alg] = dict(np.load(path, allow_pickle=False))
        want = gs.run(alg, g, backend="cpu", **kw).fields
        assert all(np.array_equal(out[alg][k], want[k]) for k in want)
    hops = decode(out["msbfs"], 2)
    assert hops[0, 0] == 0 and hops[1, 9] == 0


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
    assert set(data) == {"worklist", "load_balance", "driving", "direction", "launch",
                         "global"}
    assert data["load_balance"]["virtual_warp"]["params"]["size"]["choices"] == [2, 4, 8, 16, 32]
    from gswitch.config import GLOBAL_KEYS

    # the keys of no single strategy, with their ranges, like strategy parameters
    assert set(data["global"]) == set(GLOBAL_KEYS)
    assert data["global"]["block_size"]["low"] == 64 and data["global"]["block_size"]["summary"]
    assert main(["strategies"]) == 0
    out = capsys.readouterr().out
    assert "virtual_warp" in out and "--set block_size=VALUE   default 256, range 64" in out


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


def test_gpu_backend_message_names_the_callers_option(monkeypatch):
    """Without a GPU, Python callers are told backend='cpu', command-line users the flag."""
    import gswitch as gs
    from gswitch._hints import cli_names
    from gswitch.runner import resolve_backend

    monkeypatch.setattr("gswitch.runner.gpu_available", lambda: False)
    with pytest.raises(gs.DeviceError) as info:
        resolve_backend("gpu")
    assert "backend='cpu'" in str(info.value) and "--backend" not in str(info.value)
    with cli_names(), pytest.raises(gs.DeviceError) as info:
        resolve_backend("gpu")
    assert "--backend cpu" in str(info.value) and "\n" not in str(info.value)


def test_console_script_subprocess():
    """The installed entry point runs and exits non-zero on bad input."""
    ok = subprocess.run([sys.executable, "-m", "gswitch.cli", "run", "bfs", "--generate",
                         "grid:4x4", "--source", "0", "--backend", "cpu"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "depth: reached=16, max=6" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "gswitch.cli", "run", "bfs", "--generate",
                          "grid:4x4", "--source", "99"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


# ---------------------------------------------------------------------------- hardening
HOSTILE_FILES = {
    "big.txt": "0 2147483646\n",
    "big.mtx": "%%MatrixMarket matrix coordinate pattern general\n2000000000 2000000000 1\n1 2\n",
    "big.gr": "p sp 2000000000 1\na 1 2 1\n",
    "huge.mtx": "%%MatrixMarket matrix coordinate pattern general\n"
                "1000000000000 1000000000000 1\n1 2\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_FILES))
def test_memory_hostile_files_one_line(capsys, tmp_path, monkeypatch, name):
    """Two-line files declaring billions of nodes are refused with bytes needed/available."""
    monkeypatch.setenv("GSWITCH_MEMORY_LIMIT", "8G")
    p = tmp_path / name
    p.write_text(HOSTILE_FILES[name])
    assert main(["info", str(p)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert ("needs about" in err and "available" in err) or "at most 2,147,483,647" in err
    if name == "big.txt":
        assert "--renumber" in err and "renumber=True" not in err


@pytest.mark.parametrize("command", [["info", "{p}"],
                                     ["run", "bfs", "{p}", "--source", "0", "--backend", "cpu"],
                                     ["convert", "{p}", "{tmp}/out.mtx"]])
def test_a_gz_name_on_plain_text_is_one_line(capsys, tmp_path, command):
    """A plain-text edge list named .gz is refused with exit status 2 and one line naming
    the file and the fix, not read as text."""
    p = tmp_path / "edges.txt.gz"
    p.write_text("0 1\n1 2\n")
    assert main([a.format(p=p, tmp=tmp_path) for a in command]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("gswitch: error:")
    assert f"{p}: not gzip data, though the name ends in .gz" in err
    assert "rename it without .gz" in err and "recompress it with gzip" in err


@pytest.mark.parametrize("spec", ["uniform:1000000000:10", "grid:100000x100000", "rmat:30",
                                  "path:2000000000"])
def test_memory_hostile_generators_one_line(capsys, monkeypatch, spec):
    """Generator specs too large for int32 ids or memory are refused before drawing."""
    monkeypatch.setenv("GSWITCH_MEMORY_LIMIT", "8G")
    assert main(["info", "--generate", spec]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and spec in err


def test_renumber_loads_sparse_ids(capsys, tmp_path):
    """--renumber loads an edge list whose ids are huge and sparse."""
    p = tmp_path / "s.txt"
    p.write_text("0 2147483646\n2147483646 99999999999999\n")
    assert main(["run", "bfs", str(p), "--renumber", "--source", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["graph"]["n_nodes"] == 3
    assert data["result"]["depth"] == {"reached": 3, "max": 2}


@pytest.mark.parametrize("target,needle", [
    ("/proc/x.npy", "cannot write --output /proc/x.npy"),
    ("{tmp}", "is a directory"),
    ("{tmp}/missing/x.npy", "does not exist"),
])
def test_output_checked_before_the_run(capsys, tmp_path, target, needle):
    """An unwritable --output is refused before any work, in one line."""
    target = target.format(tmp=tmp_path)
    rc = main(["run", "bfs", "--generate", "rmat:12", "--source", "0", "--output", target])
    assert rc == 2
    captured = capsys.readouterr()
    assert captured.out == "" and needle in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_output_written_atomically(capsys, tmp_path):
    """--output leaves exactly the file, no temporary next to it."""
    out = tmp_path / "r.npz"
    assert main(["run", "cc", "--generate", "grid:4x4", "--output", str(out)]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["r.npz"]
    assert set(np.load(out).files) == {"comp"}


@pytest.mark.parametrize("argv,needle,absent", [
    (["run", "bfs", "--generate", "rmat:4"], "--source NODE", "source="),
    (["info", "{tmp}/g"], "--format FORMAT", "fmt="),
    (["run", "sssp", "{tmp}/neg.gr", "--source", "0"], "--no-weights", "weighted=False"),
    (["info", "{tmp}"], "is a directory", "extension"),
    (["info", "{tmp}/junk.txt"], "binary data", "\\x00"),
    (["run", "bfs", "--generate", "path:0", "--source", "0"], "no nodes", "0..-1"),
    (["info", "--generate", "rmat:4", "--bogus"], "--bogus", "usage:"),
])
def test_messages_name_cli_flags(capsys, tmp_path, argv, needle, absent):
    """Errors under the CLI name flags, not Python keywords, and never echo binary bytes."""
    (tmp_path / "g").write_text("0 1\n")
    (tmp_path / "neg.gr").write_text("p sp 2 1\na 1 2 -3\n")
    (tmp_path / "junk.txt").write_bytes(b"\x00\x01\x02\xff\xfe garbage")
    argv = [a.format(tmp=tmp_path) for a in argv]
    with pytest.raises(SystemExit) if "--bogus" in argv else _nothing() as exc:
        rc = main(argv)
    rc = exc.value.code if exc is not None and hasattr(exc, "value") else rc
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1
    assert needle in err and absent not in err


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def test_debug_accepted_anywhere(tmp_path):
    """--debug after the subcommand shows the traceback."""
    proc = subprocess.run([sys.executable, "-m", "gswitch.cli", "run", "bfs", "--generate",
                           "rmat:4", "--debug"], capture_output=True, text=True)
    assert proc.returncode != 0 and "Traceback" in proc.stderr and "InvalidInput" in proc.stderr


def test_cpu_note_for_gpu_only_settings(capsys):
    """GPU-only settings on the cpu backend get a one-line note and are not listed."""
    assert main(["run", "bfs", "--generate", "grid:4x4", "--source", "0", "--backend", "cpu",
                 "--set", "launch=persistent", "--set", "block_size=128"]) == 0
    captured = capsys.readouterr()
    note = [line for line in captured.err.splitlines() if line.startswith("note:")]
    assert len(note) == 1 and "launch=persistent" in note[0] and "block_size=128" in note[0]
    assert "launch=" not in captured.out and "GPU-only settings not shown" in captured.out


def test_human_output_is_plain(capsys):
    """No reST markup in strategies, no function reprs in --describe, short floats."""
    assert main(["strategies"]) == 0
    out = capsys.readouterr().out
    assert "``" not in out and ":class:" not in out
    assert main(["algorithms", "--describe"]) == 0
    out = capsys.readouterr().out
    assert "<function" not in out and "p['alpha']" in out
    assert main(["run", "pagerank", "--generate", "rmat:8", "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    floats = re.findall(r"\d+\.\d+", out.split("rank:")[1])
    assert floats and all(len(f.replace(".", "").lstrip("0")) <= 6 for f in floats)


@pytest.mark.parametrize("out_name", ["g.mtx", "g.txt", "g.gr", "g.npz", "g.mtx.gz"])
def test_convert_round_trip(capsys, tmp_path, out_name):
    """convert writes a file that loads back to the same graph."""
    from gswitch.generators import parse_generator_spec
    from gswitch.io import load_graph

    out = tmp_path / out_name
    assert main(["convert", "--generate", "road:5x5", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    g, back = parse_generator_spec("road:5x5"), load_graph(out)
    assert back.n_nodes == g.n_nodes and back.n_edges == g.n_edges
    if out_name.endswith((".gr", ".txt")):
        # DIMACS and edge lists are directed formats: both directions come back as arcs
        assert np.array_equal(back.indptr, g.indptr) and np.array_equal(back.indices, g.indices)
        assert np.array_equal(back.weights, g.weights)
    else:
        assert back == g
    assert main(["convert", str(out), str(tmp_path / "again.npz")]) == 0


def test_convert_refuses_unknown_output(capsys, tmp_path):
    """An output extension that names no writable format is refused before loading."""
    assert main(["convert", "--generate", "grid:2x2", str(tmp_path / "g.xyz")]) == 2
    assert "--to" in capsys.readouterr().err


def test_cpu_note_names_only_what_the_config_file_changes(capsys, tmp_path):
    """A config file's note lists its GPU-only keys that differ from the default, not
    every default a full file spells out.
    """
    cfg = tmp_path / "c.json"
    # every default but data driving's own parameters, which temporal driving has not
    full = {k: v for k, v in gs_default_config().items() if not k.startswith("driving.")}
    cfg.write_text(json.dumps({**full, "driving": "temporal", "block_size": 128}))
    assert main(["run", "bfs", "--generate", "grid:4x4", "--source", "0", "--backend", "cpu",
                 "--config", str(cfg), "--set", "launch=persistent"]) == 0
    note = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    assert len(note) == 1 and "block_size=128" in note[0] and "launch=persistent" in note[0]
    assert "worklist=" not in note[0] and "l2_prefetch" not in note[0]
    (tmp_path / "d.json").write_text(json.dumps({"driving": "temporal"}))
    assert main(["run", "bfs", "--generate", "grid:4x4", "--source", "0", "--backend", "cpu",
                 "--config", str(tmp_path / "d.json")]) == 0
    assert "note:" not in capsys.readouterr().err


def gs_default_config():
    """The full default configuration, as an exported tuning result spells it out."""
    from gswitch.config import Config

    return Config().to_dict()


@pytest.mark.parametrize("content,needle", [
    ('{"block_size": true}', "block_size must be an integer; got true"),
    ('{"driving": "temporal", "driving.threshold": false}',
     "driving.threshold must be a number; got false"),
])
def test_config_file_booleans_are_not_numbers(capsys, tmp_path, content, needle):
    """A JSON true/false where a number belongs is refused, not read as 1 or 0."""
    cfg = tmp_path / "c.json"
    cfg.write_text(content)
    assert main(["run", "bfs", "--generate", "grid:4x4", "--source", "0", "--backend", "cpu",
                 "--config", str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err


def test_convert_to_edge_list_keeps_isolated_nodes(capsys, tmp_path):
    """convert to .txt keeps the node count (isolated last nodes) and undirectedness."""
    from gswitch.io import load_graph

    assert main(["convert", "--generate", "star:1", str(tmp_path / "s.txt")]) == 0
    assert main(["convert", "--generate", "grid:1x3", str(tmp_path / "g.txt")]) == 0
    capsys.readouterr()
    assert load_graph(tmp_path / "s.txt").n_nodes == 1
    g = load_graph(tmp_path / "g.txt")
    assert not g.directed and g.n_nodes == 3 and g.n_edges == 4
    assert main(["info", str(tmp_path / "s.txt"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_nodes"] == 1


# ---------------------------------------------------------------------- variants
SAMPLE = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "examples" / "data"
             / "sample.mtx")


def test_algorithms_lists_variants_and_marks_the_default(capsys):
    """algorithms shows each formulation of cc, the default one marked, in text and JSON."""
    assert main(["algorithms", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    cc = data["cc"]["variants"]
    assert set(cc) == {"afforest", "label_propagation", "hook_compress"}
    assert [v for v, d in cc.items() if d["default"]] == ["afforest"]
    assert data["cc"]["default_variant"] == "afforest"
    assert cc["hook_compress"]["supports"] == {"driving": ["topology"], "direction": ["push"]}
    assert [v for v, d in data["bfs"]["variants"].items() if d["default"]] == ["default"]
    assert set(data["bfs"]["variants"]) == {"default", "overlay"}
    assert main(["algorithms"]) == 0
    out = capsys.readouterr().out
    assert "variant afforest (default):" in out
    assert re.search(r"variant hook_compress \(default on cpu\): .*\n.*driving topology only", out)
    assert "variant hook_compress (default)" not in out


def test_run_variant_gives_the_default_variants_labels(capsys, tmp_path):
    """--set variant=hook_compress runs that formulation (with its own driving default)
    and finds the labels label propagation finds.
    """
    default, hooked = tmp_path / "lp.npy", tmp_path / "hc.npy"
    assert main(["run", "cc", SAMPLE, "--backend", "cpu", "--output", str(default)]) == 0
    capsys.readouterr()
    assert main(["run", "cc", SAMPLE, "--backend", "cpu", "--set", "variant=hook_compress",
                 "--json", "--output", str(hooked)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["config"]["variant"] == "hook_compress"
    assert summary["config"]["driving"] == "topology"
    a, b = np.load(default), np.load(hooked)
    assert a.size > 1 and np.array_equal(a, b)


@pytest.mark.parametrize("argv", [
    ["run", "cc", SAMPLE, "--backend", "cpu", "--set", "variant=shiloach"],
    ["run", "bfs", SAMPLE, "--backend", "cpu", "--set", "variant=hook_compress"],
    ["tune", "cc", SAMPLE, "--backend", "cpu", "--set", "variant=no-such"],
])
def test_bad_variant_is_one_line_naming_the_flag(capsys, argv, tmp_path, monkeypatch):
    """An unknown variant exits 2 with one line naming --set variant= and the valid ones."""
    monkeypatch.setenv("GSWITCH_STORAGE", f"journal://{tmp_path / 's.journal'}")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--set variant=" in err
    valid = "afforest, hook_compress, label_propagation" if argv[1] == "cc" else "default"
    assert valid in err
    assert not (tmp_path / "s.journal").exists()


def test_betweenness_runs_batched_by_default_and_per_source_on_request(capsys, tmp_path):
    """gswitch run betweenness takes the batched formulation; --set variant=per_source
    the other, with the same sums; algorithms marks batched as array code."""
    out = {v: tmp_path / f"{v}.npy" for v in ("batched", "per_source")}
    base = ["run", "betweenness", "--generate", "grid:5x5", "--backend", "cpu",
            "--param", "sources=0,3,7,24", "--json"]
    assert main([*base, "--output", str(out["batched"])]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["stats"]["variant"] == "batched"
    assert summary["stats"]["iterations"] > 0
    assert main([*base, "--set", "variant=per_source", "--output",
                 str(out["per_source"])]) == 0
    assert json.loads(capsys.readouterr().out)["stats"]["variant"] == "per_source"
    np.testing.assert_allclose(np.load(out["batched"]), np.load(out["per_source"]),
                               rtol=1e-9, atol=1e-9)
    assert main(["run", "betweenness", "--generate", "grid:5x5", "--backend", "cpu"]) == 0
    assert "iterations:" in capsys.readouterr().out
    assert main(["algorithms", "--json"]) == 0
    bc = json.loads(capsys.readouterr().out)["betweenness"]
    assert bc["default_variant"] == "batched"
    assert bc["variants"]["batched"]["direct"] and not bc["variants"]["per_source"]["direct"]
    assert main(["algorithms"]) == 0
    assert "variant batched (default): " in capsys.readouterr().out


def test_batched_betweenness_with_a_strategy_is_one_line(capsys):
    """--set variant=batched with a strategy exits 2 with one line naming the variant."""
    assert main(["run", "betweenness", "--generate", "grid:3x3", "--backend", "cpu",
                 "--set", "variant=batched", "--set", "driving=topology"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "variant batched of betweenness" in err


def test_npy_output_names_the_fields_it_leaves_out(capsys, tmp_path):
    """A .npy file holds one field: a result of several says which need an .npz."""
    out = tmp_path / "forest.npy"
    assert main(["run", "minimum_spanning_forest", "--generate", "road:8x8", "--backend",
                 "cpu", "--output", str(out)]) == 0
    err = capsys.readouterr().err
    assert "need an .npz file" in err and "tree_u" in err
    assert main(["run", "bfs", "--generate", "road:8x8", "--source", "0", "--backend", "cpu",
                 "--output", str(tmp_path / "depth.npy")]) == 0
    assert "npz" not in capsys.readouterr().err


@pytest.mark.parametrize("source", ["999", "-1", "99999999999999999999"])
def test_a_source_out_of_range_names_the_flag(capsys, source):
    """--source past the graph's nodes is refused in one line naming --source and the
    value (it said 'source 999', and for a number past int64 'must be an integer')."""
    assert main(["run", "bfs", "--generate", "rmat:6", "--backend", "cpu",
                 "--source", source]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"--source {source} is out of range: the graph has 64 nodes, ids 0..63" in err


@pytest.mark.parametrize(("argv", "needle"), [
    (["pagerank", "--param", "alpha=2"], "--param alpha=2 must be in [0.0, 0.999]"),
    (["pagerank", "--param", "alpha=abc"], "--param alpha=abc must be a number"),
    (["pagerank", "--param", "max_iterations=1.5"],
     "--param max_iterations=1.5 must be an integer"),
    (["pagerank", "--param", "tolerance=nan"], "--param tolerance=nan must not be NaN"),
    (["pagerank", "--param", "nosuch=1"],
     "--param nosuch=1: pagerank has no parameter 'nosuch'; parameters are alpha"),
    (["msbfs", "--param", "sources=0,999"],
     "--param sources=0,999: msbfs source 999 is out of range"),
    (["personalized_pagerank", "--param", "personalization=999"],
     "--param personalization=999: personalization node 999 is out of range"),
])
def test_a_bad_param_names_the_flag(capsys, argv, needle):
    """A bad --param value is refused in one line that names --param and the value (it said
    'parameter alpha', or named only the algorithm's input)."""
    assert main(["run", *argv, "--generate", "rmat:6", "--backend", "cpu"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err


@pytest.mark.parametrize(("text", "needle"), [
    (None, "cannot read config file"),
    ("not json", "config is not valid JSON"),
    ('{"nosuch": 1}', "unknown config key 'nosuch'"),
])
def test_a_bad_config_file_names_the_flag(capsys, tmp_path, text, needle):
    """A --config file that cannot be read or used is refused in one line naming --config
    and the file (a JSON error named neither)."""
    cfg = tmp_path / "cfg.json"
    if text is not None:
        cfg.write_text(text)
    assert main(["run", "bfs", "--generate", "rmat:5", "--source", "0", "--backend", "cpu",
                 "--config", str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"--config {cfg}: {needle}" in err
