"""The selector's training corpus (benchmarks/bench_formulations.py graph kinds,
train_selector.py rebuilds, configs/selector_corpus.md) and bench_selector_tuned.py's
--picks and --recheck, on the CPU."""

import importlib
import json
import os
import re
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

import gswitch as gs
from gswitch.generators import grid2d, rmat
from gswitch.testing.datasets import DatasetUnavailable, metis_graph_dir

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
PLAN = BENCH / "configs" / "selector_corpus.md"
SHIPPED = {"rmat-22-16": "rmat", "uniform-4194304-67108864": "uniform",
           "road-2048x2048": "road", "star-1048577": "star",
           "bipartite-zipf-1048576": "bipartite"}


def _bench(name):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


@pytest.fixture(scope="module")
def formulations():
    """benchmarks/bench_formulations.py as a module."""
    return _bench("bench_formulations")


@pytest.fixture(scope="module")
def tuned():
    """benchmarks/bench_selector_tuned.py as a module."""
    return _bench("bench_selector_tuned")


@pytest.fixture(scope="module")
def metis_available():
    """Whether libmetis-doc's graphs are installed or cached (never fetched here)."""
    try:
        metis_graph_dir(download=False)
    except DatasetUnavailable as exc:
        return str(exc)
    return None


def _kinds():
    return _bench("bench_formulations").KINDS


@pytest.mark.parametrize("kind", _kinds())
@pytest.mark.parametrize("weighted", [False, True])
def test_each_kind_builds_small_and_its_name_gives_back_kind_and_scale(
        formulations, kind, weighted, metis_available):
    """Every kind builds at scale 8 under its graph_name, which parses back to it."""
    if kind == "metis" and metis_available:
        # the mesh is a Debian package's file, not generated, and this test never
        # downloads: without it installed or cached (the METIS loader tests fetch it into
        # the cache) there is no graph to build; the reason names the package
        pytest.skip(metis_available)
    g = formulations.gpu_graph(kind, 8, weighted=weighted)
    assert g.name == formulations.graph_name(kind, 8)
    found = formulations.parse_graph_name(g.name)
    assert found is not None and found[0] == kind
    if kind != "metis":
        assert found[1] == 8 and g.n_nodes <= 1 << 8
    if weighted or kind == "road":
        w = g.weights
        assert w is not None and w.min() >= 1 and w.max() < 64
        if not g.directed:  # both directions of an edge weigh the same
            a = g.to_scipy()
            assert (a != a.T).nnz == 0


def test_new_kinds_are_the_families_asked_for(formulations):
    """Skews, degrees and diameters of the new kinds at a small scale."""
    low, high = (formulations.gpu_graph(k, 12, False) for k in ("rmat_low", "rmat_high"))
    assert low.directed and high.directed
    assert low.out_degree.max() < high.out_degree.max()
    sparse = formulations.gpu_graph("uniform_sparse", 12, False)
    assert sparse.n_edges == 2 * sparse.n_nodes
    grid = formulations.gpu_graph("grid", 12, True)
    assert grid.n_nodes == 64 * 64 and grid.out_degree.max() == 4
    chain = formulations.gpu_graph("chain", 12, False)
    assert chain.n_nodes == 1 << 12 and chain.out_degree.max() == 32


def test_names_are_unique_and_the_shipped_ones_parse(formulations):
    """No two (kind, scale) share a name; the shipped model's graphs are scale 22."""
    names = [formulations.graph_name(k, s) for k in formulations.KINDS if k != "metis"
             for s in range(7, 31)]
    assert len(names) == len(set(names))
    for name, kind in SHIPPED.items():
        assert formulations.parse_graph_name(name) == (kind, 22)
    assert formulations.parse_graph_name("rmat-21-16-lowskew") == ("rmat_low", 21)
    assert formulations.parse_graph_name("grid-1024x2048") is None
    assert formulations.parse_graph_name("rmat-20-16-s21") is None


def test_graphs_option_takes_a_scale_per_kind(formulations):
    """--graphs KIND:SCALE overrides --scale per kind; bad entries are refused."""
    args = formulations.parse_args(["--graphs", "chain:13,grid,metis", "--scale", "19"])
    assert args.graphs == [("chain", 13), ("grid", 19), ("metis", 19)]
    assert formulations.parse_args([]).graphs == [(k, 22) for k in formulations.GRAPHS]
    quick = formulations.parse_args(["--quick", "--graphs", "grid:19,rmat"])
    assert quick.graphs == [("grid", 10), ("rmat", 10)]
    for bad in ("rmat_medium", "grid:x", "metis:19", "chain:3", "rmat:31"):
        with pytest.raises(SystemExit):
            formulations.parse_args(["--graphs", bad])


def test_configs_files_merge_per_algorithm_once(formulations, tmp_path):
    """Several --configs files: lists merged per algorithm, a repeated config kept once."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"bfs": [{"launch": "persistent"}, {"launch": "host_loop"}]}))
    b.write_text(json.dumps({"bfs": [{"launch": "host_loop"}, {"block_size": 128}],
                             "sssp": [{"variant": "bellman_ford"}]}))
    args = formulations.parse_args(["--configs", str(a), str(b)])
    assert args.extra == {"bfs": [{"launch": "persistent"}, {"launch": "host_loop"},
                                  {"block_size": 128}],
                          "sssp": [{"variant": "bellman_ford"}]}
    assert formulations.settings(args)["configs"] == [str(a), str(b)]


def test_data_dir_points_the_dataset_cache(formulations, monkeypatch, tmp_path):
    """--data-dir sets GSWITCH_DATA_DIR, where the metis kind looks (and only looks)."""
    monkeypatch.setenv("GSWITCH_DATA_DIR", "unset")
    formulations.parse_args(["--data-dir", str(tmp_path)])
    assert os.environ["GSWITCH_DATA_DIR"] == str(tmp_path.resolve())


def test_train_selector_rebuilds_features_from_names(tmp_path):
    """Rows without features get those of the graph their name rebuilds, then cached."""
    train = _bench("train_selector")
    formulations = _bench("bench_formulations")
    rows = [{"algorithm": alg, "graph": formulations.graph_name(kind, 9)}
            for kind in ("rmat_high", "uniform_sparse", "grid", "chain") for alg in ("bfs", "sssp")]
    cache = tmp_path / "features.json"
    feats = train.features_for(rows, cache)
    for r in rows:
        kind, scale = formulations.parse_graph_name(r["graph"])
        g = formulations.gpu_graph(kind, scale, weighted=r["algorithm"] == "sssp")
        assert feats[(r["algorithm"], r["graph"])] == gs.selector.graph_features(g)
    assert len(json.loads(cache.read_text())) == len(rows)
    with pytest.raises(SystemExit, match="cannot rebuild graph 'mystery-graph'"):
        train.features_for([{"algorithm": "bfs", "graph": "mystery-graph"}], None)


def test_a_graph_measured_again_is_judged_within_the_last_run():
    """Rows of a graph two runs measured come from the later run alone; graphs one run
    measured keep theirs; other algorithms are left out."""
    train = _bench("train_selector")
    first = [{"algorithm": "bfs", "graph": "g1", "label": "a"},
             {"algorithm": "bfs", "graph": "g2", "label": "a"},
             {"algorithm": "cc", "graph": "g1", "label": "a"}]
    second = [{"algorithm": "bfs", "graph": "g1", "label": "b"},
              {"algorithm": "sssp", "graph": "g2", "label": "b"}]
    rows = train.latest_runs([first, second], ["bfs", "sssp"])
    assert [(r["algorithm"], r["graph"], r["label"]) for r in rows] == [
        ("bfs", "g2", "a"), ("bfs", "g1", "b"), ("sssp", "g2", "b")]


def _plan_commands():
    """Each ``bench_formulations.py`` command of the plan, as its argument words."""
    text = PLAN.read_text().replace("\\\n", " ")
    parts = [p for line in text.splitlines() for p in line.split("&&")
             if "bench_formulations.py --backend" in p]
    words = [[w for w in shlex.split(p.split("|")[0]) if not re.match(r"\d*>", w)]
             for p in parts]  # no redirections
    return [w[w.index("bench_formulations.py") + 1:] for w in words]


def test_the_plan_parses_and_trains_on_no_evaluation_size(formulations, monkeypatch):
    """The plan's commands parse; every graph in them is below the 2^20 nodes of the
    smallest evaluation graph (scale 19 or less, or the 258k-node metis mesh); the third
    measures the chains again among the overlay candidates; the fourth, CC and PageRank
    on the corpus's graphs among the default candidates and more."""
    monkeypatch.setenv("GSWITCH_DATA_DIR", "restored-after-the-test")
    monkeypatch.chdir(BENCH)  # the commands run in benchmarks/
    commands = _plan_commands()
    assert len(commands) == 4
    named = []
    for words in commands[:2]:
        args = formulations.parse_args(words)
        assert args.algs == ["bfs", "sssp"] and args.extra["bfs"] and args.extra["sssp"]
        named += args.graphs
    assert {k for k, _ in named} == set(formulations.KINDS) - {"road"}
    assert all(scale <= 19 for kind, scale in named if kind != "metis")
    table = re.findall(r"^\| `(\w+)(?::(\d+))?` \| `([^`]+)`", PLAN.read_text(), re.M)
    assert [(k, int(s) if s else 22) for k, s, _ in table] == named
    for kind, scale, name in table:
        assert formulations.graph_name(kind, int(scale) if scale else 22) == name
    # corpus C: the clique chains again, among the overlay candidates too
    again = formulations.parse_args(commands[2])
    assert {k for k, _ in again.graphs} == {"chain"}
    assert all(scale <= 19 for _, scale in again.graphs)
    for alg in ("bfs", "sssp"):
        assert any(c.get("variant") == "overlay" for c in again.extra[alg])
    # corpus D: CC and PageRank on the corpus's graphs, at the plain call's tolerance
    d = formulations.parse_args(commands[3])
    assert d.algs == ["cc", "pagerank"] and d.pr_tolerance == [1e-6]
    assert {k for k, _ in d.graphs} == set(formulations.KINDS) - {"road"}
    assert all(scale <= 19 for kind, scale in d.graphs if kind != "metis")
    assert d.variants["cc"] == [] and d.variants["pagerank"] == []  # no bare variant rows
    defaults = json.loads((BENCH / "configs" / "default_candidates.json").read_text())
    for alg in ("cc", "pagerank"):
        assert all(c in d.extra[alg] for c in defaults[alg])
        assert len(d.extra[alg]) > len(defaults[alg])


# ---------------------------------------------------------------- bench_selector_tuned

@pytest.fixture
def tiny_specs(tuned, monkeypatch):
    """Two small graphs in place of the twenty evaluation graphs."""
    monkeypatch.setattr(tuned, "SPECS", [
        ("tiny-rmat", lambda: rmat(9, 8, seed=3).symmetrize()),
        ("tiny-grid", lambda: grid2d(24, 24))])


class _OnDevice:
    """Stands for the CuPy array a call with ``arrays="cupy"`` returns."""

    def __init__(self, a):
        self.a = a

    def get(self):
        return self.a


def _cpu_stand_in(cpu_run, calls):
    """``gs.run`` on the CPU engine for the benchmark's GPU calls: records each call's
    config and ``arrays``, and hands the fields of an ``arrays="cupy"`` call back as
    :class:`_OnDevice`."""
    def run_on_cpu(alg, g, *, backend, config, arrays="numpy", **kw):
        calls.append((config, arrays, kw.get("source", "none")))
        r = cpu_run(alg, g, backend="cpu", config=config, **kw)
        r.stats["device_time_s"] = 1e-3
        if arrays == "cupy":
            for k in list(r.fields):
                r.fields[k] = _OnDevice(r.fields[k])
        return r

    return run_on_cpu


def test_saved_rows_default_to_bfs_and_the_run_weight_seed(tuned, tmp_path):
    """Rows without an algorithm are BFS; SSSP rows without a seed had 100 + index."""
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"rows": [{"graph": "a"}, {"graph": "b"}]}))
    sssp = tmp_path / "sssp.json"
    sssp.write_text(json.dumps({"algorithm": "sssp", "rows": [
        {"graph": "a", "algorithm": "sssp"}, {"graph": "b", "algorithm": "sssp",
                                              "weight_seed": 7}]}))
    got = [(alg, seed, r["graph"]) for alg, seed, r in tuned.saved_rows([old, sssp])]
    assert got == [("bfs", 100, "a"), ("bfs", 101, "b"), ("sssp", 100, "a"), ("sssp", 7, "b")]


def test_pick_status_compares_the_keys_both_name(tuned):
    """An older row lacking a newer key is the same pick; a differing value is not."""
    now = {"launch": "persistent", "driving.unroll": 0}
    assert tuned.pick_status(now, {"launch": "persistent"}) == "same"
    assert tuned.pick_status(now, {"launch": "host_loop"}) == "changed"
    assert tuned.pick_status(now, None) == "not recorded"


def test_picks_say_same_changed_or_not_recorded(tuned, tiny_specs, tmp_path, capsys):
    """--picks resolves the pick on the host as gs.run does and compares saved rows."""
    g = tuned.build("tiny-rmat", "bfs")
    config, note = tuned.selector_pick("bfs", g)
    assert note == gs.runner._plan_call("bfs", g, None, "gpu").note
    assert note.startswith(("selector: ", "default"))
    saved = tmp_path / "saved.json"
    other = {**config, "block_size": -1}
    saved.write_text(json.dumps({"rows": [
        {"graph": "tiny-rmat", "selector_config": config, "selector_source": note},
        {"graph": "tiny-grid", "selector_config": other, "selector_source": "old pick"}]}))
    out = tuned.picks([0, 1], ["bfs", "sssp"], [saved])
    assert [(r["graph"], r["algorithm"], r["pick"]) for r in out] == [
        ("tiny-rmat", "bfs", "same"), ("tiny-rmat", "sssp", "not recorded"),
        ("tiny-grid", "bfs", "changed"), ("tiny-grid", "sssp", "not recorded")]
    assert "was: old pick" in capsys.readouterr().out


def test_recheck_times_the_three_configs_without_a_study(tuned, tiny_specs, tmp_path,
                                                         monkeypatch):
    """--recheck rebuilds each saved graph and runs pick, tuned and default in rotation,
    every answer checked, with no study; here on the CPU engine."""
    from gswitch.testing.reference import reference

    def no_study(*a, **k):
        raise AssertionError("--recheck must not tune")

    import gswitch.tuner

    monkeypatch.setattr(gswitch.tuner, "tune", no_study)
    monkeypatch.setattr(tuned, "peer_and_reference", lambda alg, g, src, repeats: (
        {"name": "peer", "wall_ms": 1.0}, reference(alg, g, source=src)))
    calls = []
    monkeypatch.setattr(gs, "run", _cpu_stand_in(gs.run, calls))
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"algorithm": "sssp", "rows": [
        {"graph": "tiny-grid", "algorithm": "sssp", "tuned_config": {},
         "selector_config": {"launch": "no-such-launch"}, "selector_over_tuned": 1.5},
        {"graph": "tiny-rmat", "algorithm": "sssp", "tuned_config": {}}]}))
    rows = tuned.recheck([saved], 2, {"tiny-grid"})
    # three rounds of four calls: the pick, tuned, default, the pick with the result left
    # on the device
    assert len(rows) == 1 and len(calls) == 3 * 4
    assert sorted(a for _c, a, _s in calls) == ["cupy"] * 3 + ["numpy"] * 9
    row = rows[0]
    assert row["graph"] == "tiny-grid" and row["weight_seed"] == 100 and "tune_s" not in row
    assert row["pick"] == "changed" and row["recorded"]["selector_over_tuned"] == 1.5
    assert {"selector", "tuned", "default"} <= set(row) and row["peer_ms"] == 1.0
    assert np.isfinite(row["selector_over_tuned"]) and row["selector_over_peer"] > 0
    assert row["selector_on_device_over_peer"] == row["selector_on_device"]["wall_ms"] / 1.0
    assert "| tiny-grid |" in tuned.table(rows)


@pytest.mark.parametrize("alg", ["cc", "pagerank"])
def test_measure_runs_every_node_algorithms_without_a_source(tuned, tiny_specs, alg,
                                                              monkeypatch):
    """CC and PageRank rows: the study and every call get no source, every answer is
    checked, and a row without a verified peer prints as such in the table."""
    from gswitch.testing.reference import reference

    seen = []

    class Study:
        best_config = {"launch": "persistent"}
        new_trials = 3

    def fake_tune(alg_, g, **kw):
        seen.append(("tune", kw.get("source", "none")))
        return Study()

    import gswitch.tuner

    monkeypatch.setattr(gswitch.tuner, "tune", fake_tune)
    monkeypatch.setattr(tuned, "peer_and_reference", lambda a, g, src, repeats: (
        None, reference(a, g)))
    calls = []
    monkeypatch.setattr(gs, "run", _cpu_stand_in(gs.run, calls))
    g = tuned.build("tiny-rmat", alg)
    row = tuned.measure("tiny-rmat", g, 3, 2, alg)
    assert seen == [("tune", "none")] and all(src == "none" for _c, _a, src in calls)
    assert len(calls) == 3 * 4
    assert row["algorithm"] == alg and row["trials"] == 3 and row["peer_ms"] is None
    assert row["selector_over_peer"] is None and np.isfinite(row["selector_over_tuned"])
    assert row["selector_on_device_over_peer"] is None
    line = [t for t in tuned.table([row]).splitlines() if t.startswith("| tiny-rmat |")]
    assert line and "none verified" in line[0] and line[0].endswith("| - | - |")


def test_measure_checks_every_node_answers(tuned, tiny_specs, monkeypatch):
    """A wrong CC answer in the rotation stops the row."""
    monkeypatch.setattr(tuned, "peer_and_reference", lambda a, g, src, repeats: (
        None, np.zeros(g.n_nodes, dtype=np.int64) + 7))
    monkeypatch.setattr(gs, "run", _cpu_stand_in(gs.run, []))
    with pytest.raises(AssertionError, match="wrong answer"):
        tuned.measure("tiny-rmat", tuned.build("tiny-rmat", "cc"), 0, 1, "cc",
                      tuned_config={})


def test_cc_and_pagerank_candidates_give_the_reference_answer():
    """Every CC and PageRank candidate of the corpus D plan is a configuration the
    engine accepts, with the reference answer (on the CPU engine)."""
    from gswitch.testing.reference import compare, reference

    cands = json.loads((BENCH / "configs" / "cc_pagerank_candidates.json").read_text())
    g = rmat(8, 8, seed=2).symmetrize()
    for alg, field in (("cc", "comp"), ("pagerank", "rank")):
        want = reference(alg, g)
        assert cands[alg]
        for config in cands[alg]:
            r = gs.run(alg, g, backend="cpu", config=config)
            assert compare(alg, r.fields[field], want) is None, (alg, config)


def test_plot_draws_the_ratios_of_saved_rows(tuned, tmp_path):
    """--table --plot: a PNG of rows with and without a peer and an on-device time."""
    rows = [{"graph": "a", "selector_over_tuned": 1.1, "selector_over_peer": 0.5,
             "selector_on_device_over_peer": 0.4},
            {"graph": "b", "selector_over_tuned": 0.9, "selector_over_peer": None},
            {"graph": "c", "selector_over_tuned": 1.9, "selector_over_peer": 1.2}]
    out = tmp_path / "ratios.png"
    tuned.plot(rows, str(out), "bfs")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
