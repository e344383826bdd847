"""gswitch profile: per-phase times, bytes and bandwidth, the ncu CSV, the CLI."""

import json
import os
import stat
import sys

import networkx as nx
import numpy as np
import pytest

import gswitch as gs
from gswitch.cli import main
from gswitch.ncu import METRICS, irregularity, parse_csv, run_under_ncu
from gswitch.plugins import get_registry
from gswitch.profile import operator_traffic
from gswitch.testing.zoo import zoo_graph

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "data", "sample.mtx")
GRID = ["--generate", "grid:12x12"]
PHASE_KEYS = {"stage", "name", "kind", "time_s", "calls", "time_per_call_s", "bytes",
              "bandwidth_bytes_per_s", "fraction_of_peak"}

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
          '"Block Size","Grid Size","Device","CC","Section Name","Metric Name",'
          '"Metric Unit","Metric Value"')


def _row(launch, kernel, metric, value):
    return (f'"{launch}","4242","python3","host","{kernel}","1","13","(256, 1, 1)",'
            f'"(132, 1, 1)","0","9.0","Command line profiler metrics","{metric}","",'
            f'"{value}"')


def _csv(counters):
    """An ncu --csv --page details log: a ==PROF== line, then one row per launch and metric."""
    lines = ["==PROF== Connected to process 4242", HEADER]
    for launch, (kernel, values) in enumerate(counters):
        for key, value in values.items():
            lines.append(_row(launch, kernel, METRICS[key], value))
    return "\n".join(lines) + "\n"


LAUNCHES = [
    ("gs_phase_kernel", {"divergent_branches": "1,200", "instructions": "48,000",
                         "memory_instructions": "3,000", "memory_lines": "4,500"}),
    ("gs_phase_kernel", {"divergent_branches": "300", "instructions": "12,000",
                         "memory_instructions": "1,000", "memory_lines": "1,000"}),
    ("gs_wl_compact_spill", {"divergent_branches": "0", "instructions": "500",
                             "memory_instructions": "n/a", "memory_lines": "40"}),
]


def _cli(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def _profile_json(capsys, *argv):
    rc, out, err = _cli(capsys, "profile", *argv, "--backend", "cpu", "--json", "--no-ncu")
    assert rc == 0, err
    return json.loads(out)


# ---------------------------------------------------------------------------- ncu
def test_parse_csv_sums_each_kernel_over_its_launches():
    """Values with thousands separators are summed per kernel; n/a and notes are skipped."""
    got = parse_csv(_csv(LAUNCHES))
    phase = got["gs_phase_kernel"]
    assert phase["launches"] == 2
    assert phase[METRICS["divergent_branches"]] == 1500
    assert phase[METRICS["instructions"]] == 60000
    assert phase[METRICS["memory_lines"]] == 5500
    spill = got["gs_wl_compact_spill"]
    assert spill["launches"] == 1 and METRICS["memory_instructions"] not in spill


def test_irregularity_is_burtschers_ratios():
    """Control flow: divergent / executed; memory: replays (lines beyond one per
    instruction) / issued (lines).
    """
    irr = irregularity(parse_csv(_csv(LAUNCHES))["gs_phase_kernel"])
    assert irr["control_flow"] == pytest.approx(1500 / 60000)
    assert irr["memory_access"] == pytest.approx((5500 - 4000) / 5500)


def test_parse_csv_without_metric_rows():
    """Output with no CSV (ncu failed before profiling) gives no kernels."""
    assert parse_csv("==PROF== Connected\n==ERROR== no permission\n") == {}


def _fake_ncu(tmp_path, text):
    """An ncu stand-in that writes ``text`` to its --log-file and checks its arguments."""
    data = tmp_path / "log.csv"
    data.write_text(text)
    script = tmp_path / "ncu"
    script.write_text(
        f"#!{sys.executable}\n"
        "import shutil, sys\n"
        "a = sys.argv[1:]\n"
        "assert '--csv' in a and '--metrics' in a, a\n"
        f"assert a[a.index('--metrics') + 1] == {','.join(METRICS.values())!r}\n"
        f"shutil.copy({str(data)!r}, a[a.index('--log-file') + 1])\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_run_under_ncu_reads_the_log(tmp_path):
    """The command runs under ncu with the metrics, and its log is parsed per kernel."""
    out = run_under_ncu(["true"], _fake_ncu(tmp_path, _csv(LAUNCHES)))
    assert out["available"] and out["launches"] == 3
    assert set(out["kernels"]) == {"gs_phase_kernel", "gs_wl_compact_spill"}
    assert out["control_flow"] == pytest.approx(1500 / 60500)


def test_run_under_ncu_without_metrics_says_why(tmp_path):
    """An ncu that reports nothing gives a note, not an error."""
    out = run_under_ncu(["true"], _fake_ncu(tmp_path, "==ERROR== ERR_NVGPUCTRPERM\n"))
    assert not out["available"] and "no metrics" in out["note"]


def test_without_ncu_one_line(capsys, monkeypatch, tmp_path):
    """With PATH lacking ncu, one line says so, and times and bandwidths still come."""
    monkeypatch.setenv("PATH", str(tmp_path))
    rc, out, err = _cli(capsys, "profile", "pagerank", *GRID, "--backend", "cpu")
    assert rc == 0
    assert len(err.strip().splitlines()) == 1 and "ncu" in err and "PATH" in err
    assert "edge operator" in out and "of peak" in out and "B/s" in out


def test_cpu_backend_with_ncu_says_why(capsys, monkeypatch, tmp_path):
    """With ncu on PATH, the CPU backend still measures nothing under it, in one line."""
    _fake_ncu(tmp_path, _csv(LAUNCHES))
    monkeypatch.setenv("PATH", str(tmp_path))
    rc, _out, err = _cli(capsys, "profile", "cc", *GRID, "--backend", "cpu")
    assert rc == 0 and err.count("\n") == 1 and "--backend gpu" in err


def test_ncu_reruns_the_same_command(capsys, tmp_path):
    """The command ncu profiles is gswitch run with the profile's graph, source, --set
    and --param: run on the CPU instead, it takes the same configuration.
    """
    from gswitch.cli import _run_argv, build_parser

    argv = ["profile", "pagerank", SAMPLE, "--set", "variant=power_pull",
            "--set", "direction=push", "--param", "alpha=0.7"]
    forwarded = _run_argv(build_parser().parse_args(argv))
    assert forwarded[-4:] == ["--backend", "gpu", "--json", "--no-progress"]
    rc = main(["run", *forwarded[:-4], "--backend", "cpu", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["config"]["direction"] == "push"
    assert data["stats"]["variant"] == "power_pull"


# ---------------------------------------------------------------------------- bytes
def test_operator_traffic_of_sssp():
    """SSSP reads dist at the source, the column id and weight, and reads and writes dist
    at the destination (float32 each); two int offsets per source node.
    """
    g = zoo_graph("grid")
    t = operator_traffic(get_registry().algorithm("sssp"), g)
    assert (t.node, t.src_fields, t.weight) == (0, 4, 4)
    assert t.edge == 4 + 4 + 2 * 4
    assert t.offsets == 2 * g.indptr.dtype.itemsize


# ---------------------------------------------------------------------------- CLI, JSON
def test_json_schema_and_sums(capsys):
    """Every phase has the documented keys; times sum to the engine's, within 5%."""
    data = _profile_json(capsys, "pagerank", SAMPLE)
    assert data["backend"] == "cpu" and data["algorithm"] == "pagerank"
    peak = data["peak_bandwidth"]["bytes_per_s"]
    assert peak > 0 and "memcpy" in data["peak_bandwidth"]["source"]
    names = {p["name"] for p in data["phases"]}
    assert {"node operator", "edge expansion", "edge operator"} <= names
    for p in data["phases"]:
        assert set(p) == PHASE_KEYS
        assert p["time_s"] >= 0 and p["calls"] >= 0
        if p["bandwidth_bytes_per_s"] is not None:
            assert p["bandwidth_bytes_per_s"] == pytest.approx(p["bytes"] / p["time_s"])
            assert p["fraction_of_peak"] == pytest.approx(p["bandwidth_bytes_per_s"] / peak)
    total = sum(p["time_s"] for p in data["phases"])
    assert total == pytest.approx(data["phase_time_s"])
    assert abs(total - data["engine_time_s"]) <= 0.05 * data["engine_time_s"]
    assert total <= data["time_s"]
    assert data["irregularity"]["available"] is False


def test_work_matches_networkx(capsys):
    """A power iteration sweeps every node and in-edge each step: the work the bytes come
    from is steps * n and steps * m of networkx's count of the graph.
    """
    data = _profile_json(capsys, "pagerank", *GRID, "--set", "variant=power_pull")
    ref = nx.grid_2d_graph(12, 12).to_directed()
    work = data["work"][""]
    steps = data["iterations"]
    assert work["items"] == steps * ref.number_of_nodes()
    assert work["edges"] == steps * ref.number_of_edges()
    per_step = {p["name"]: p["calls"] for p in data["phases"]}
    assert per_step["node operator"] == per_step["edge operator"] == steps
    edge_op = next(p for p in data["phases"] if p["name"] == "edge operator")
    assert edge_op["bytes"] >= work["edges"] * 16  # at least the ids of every edge


def test_set_resolves_like_run(capsys):
    """--set reaches the run: the config reported is the one asked for."""
    data = _profile_json(capsys, "bfs", *GRID, "--source", "0", "--set", "driving=topology")
    assert data["config"]["driving"] == "topology"


def test_staged_algorithm_reports_stages(capsys):
    """A staged algorithm's phases carry their stage; host steps are their own rows."""
    data = _profile_json(capsys, "betweenness", *["--generate", "grid:3x3"],
                         "--set", "variant=per_source")
    stages = {p["stage"] for p in data["phases"]}
    assert len(stages) >= 2 and "" not in stages
    assert any(p["name"] == "host step" for p in data["phases"])
    total = sum(p["time_s"] for p in data["phases"])
    assert total <= data["time_s"]


def test_array_code_variant_is_one_phase(capsys):
    """A formulation run by array code (betweenness's default, batched) is one phase."""
    data = _profile_json(capsys, "betweenness", *["--generate", "grid:3x3"])
    assert [p["name"] for p in data["phases"]] == ["array code"]
    assert 0 < data["phases"][0]["time_s"] <= data["time_s"]


def test_text_output(capsys):
    """The table names the backend and every phase."""
    rc, out, _err = _cli(capsys, "profile", "cc", *GRID, "--backend", "cpu", "--no-ncu")
    assert rc == 0
    assert "backend cpu" in out and "worklist compaction" in out and "peak bandwidth" in out


@pytest.mark.parametrize("argv, flag", [
    (["profile", "nope", *GRID], "unknown algorithm 'nope'"),
    (["profile", "bfs", "missing.mtx", "--source", "0"], "missing.mtx"),
    (["profile", "bfs", "--generate", "zz:3", "--source", "0"], "zz:3"),
    (["profile", "bfs", *GRID, "--source", "0", "--set", "driving=nope"],
     "--set driving=nope"),
    (["profile", "bfs", *GRID, "--source", "0", "--set", "block_size=100"],
     "--set block_size=100"),
    (["profile", "bfs", *GRID, "--source", "0", "--set", "oops"], "--set"),
    (["profile", "bfs", *GRID, "--source", "0", "--plot", "chart.txt"], "--plot"),
    (["profile", "bfs", *GRID], "--source"),
])
def test_bad_input_one_line(capsys, argv, flag):
    """Bad input exits 2 with one line naming what was wrong."""
    rc, _out, err = _cli(capsys, *argv, "--backend", "cpu", "--no-ncu")
    assert rc == 2
    assert err.count("\n") == 1 and flag in err


def test_plot_written(capsys, tmp_path):
    """--plot writes a PNG."""
    target = tmp_path / "phases.png"
    rc, out, err = _cli(capsys, "profile", "pagerank", *GRID, "--backend", "cpu",
                        "--no-ncu", "--plot", str(target))
    assert rc == 0, err
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(target) in out


def test_plot_without_matplotlib(capsys, monkeypatch, tmp_path):
    """Without matplotlib, --plot is refused in one line naming the install, before work."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    rc, _out, err = _cli(capsys, "profile", "pagerank", *GRID, "--backend", "cpu",
                         "--no-ncu", "--plot", str(tmp_path / "x.png"))
    assert rc == 2 and err.count("\n") == 1 and "pip install matplotlib" in err
    assert not (tmp_path / "x.png").exists()


def test_timer_off_changes_nothing():
    """A run without a timer gives the same answer as a profiled one."""
    from gswitch.engine.timing import PhaseTimer

    g = zoo_graph("rmat")
    plain = gs.run("pagerank", g, backend="cpu")
    timer = PhaseTimer()
    timed = gs.run("pagerank", g, backend="cpu", timer=timer)
    assert np.array_equal(plain["rank"], timed["rank"])
    assert timer.phases and sum(p.calls for p in timer.phases.values()) > 0


def test_gpu_event_labels_reach_the_timer():
    """The GPU context charges each event's time to its phase, its whole-step kernel or
    its helper kernel, and the bytes follow what each ran (checked without a device).
    """
    from types import SimpleNamespace

    from gswitch.engine.context import LaunchContext
    from gswitch.engine.timing import EVERY_PHASE, PhaseTimer
    from gswitch.profile import _phase_rows
    from gswitch.strategy import Phase

    timer = PhaseTimer()
    expand = Phase("expand", 20, "active", direction="push")
    labels = [expand, expand, ("gs_persistent_kernel", EVERY_PHASE),
              ("gs_wl_compact_spill", None)]
    LaunchContext._charge(SimpleNamespace(_timer=timer, _labels=labels),
                          [1.0, 3.0, 2.0, 0.5])
    got = {(e.name, e.calls): e.time_s for e in timer.phases.values()}
    assert got == {("expand", 2): pytest.approx(4e-3),
                   ("gs_persistent_kernel", 1): pytest.approx(2e-3),
                   ("gs_wl_compact_spill", 1): pytest.approx(5e-4)}
    g = zoo_graph("grid")
    spec = get_registry().algorithm("sssp")
    timer.note_run(spec, {"active": [1, 4, 8], "iterations": 3, "edges_processed": 40})
    rows = {r["name"]: r for r in _phase_rows(timer, g, "gpu", 1e12)}
    t = operator_traffic(spec, g)
    assert rows["expand"]["bytes"] == 13 * (t.offsets + t.src_fields + 4) + 40 * t.edge
    assert rows["gs_persistent_kernel"]["bytes"] > rows["expand"]["bytes"]
    assert rows["gs_wl_compact_spill"]["bytes"] is None
    assert rows["expand"]["fraction_of_peak"] == pytest.approx(
        rows["expand"]["bytes"] / 4e-3 / 1e12)


# ---------------------------------------------------------------------------- GPU
@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize("algorithm, extra", [("bfs", ["--source", "0"]), ("pagerank", []),
                                              ("cc", [])])
def test_gpu_phases_sum_to_kernel_time(capsys, launch, algorithm, extra):
    """On the GPU the phases are kernels whose event times sum to the run's device time,
    and the peak comes from the device's memory clock and bus width.
    """
    rc, out, err = _cli(capsys, "profile", algorithm, "--generate", "rmat:12", *extra,
                        "--backend", "gpu", "--set", f"launch={launch}", "--json", "--no-ncu")
    if rc == 2 and "invalid strategy combination" in err:
        pytest.skip(f"{algorithm} does not run with launch={launch}: {err.strip()}")
    assert rc == 0, err
    data = json.loads(out)
    kernels = [p for p in data["phases"] if p["kind"] == "kernel"]
    assert kernels and all(p["name"] == "host step" for p in data["phases"]
                           if p["kind"] != "kernel")
    # a staged run's device time counts its host steps, as the phases do
    assert data["phase_time_s"] == pytest.approx(data["device_time_s"], rel=1e-6)
    assert "device attributes" in data["peak_bandwidth"]["source"] \
        or "measured" in data["peak_bandwidth"]["source"]
    assert any(p["bytes"] for p in data["phases"])


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
def test_gpu_irregularity_from_ncu(capsys):
    """With ncu on PATH, the report carries both ratios, each in [0, 1]."""
    import shutil

    if shutil.which("ncu") is None:
        pytest.skip("ncu (Nsight Compute) is not on PATH")
    rc, out, err = _cli(capsys, "profile", "bfs", "--generate", "rmat:10", "--source", "0",
                        "--backend", "gpu", "--set", "launch=host_loop", "--json")
    assert rc == 0, err
    irr = json.loads(out)["irregularity"]
    assert irr["available"], irr["note"]
    assert 0 <= irr["control_flow"] <= 1 and 0 <= irr["memory_access"] <= 1
