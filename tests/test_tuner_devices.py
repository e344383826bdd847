"""Tuning on several devices, simulated on the CPU backend: one study shared by two worker
processes, a worker killed mid-study, batches of graphs spread over devices, and the
``device=`` choice of ``gswitch.run``.

The same code runs on a machine with two GPUs in ``tests/test_tuner_gpu.py`` and
``tests/test_gpu_devices.py``.
"""

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time

import optuna
import pytest
from gswitch.tuner import tune
from gswitch.tuner.batch import graph_paths, is_batch, tune_batch
from gswitch.tuner.storage import open_storage

import gswitch as gs
from gswitch.cli import main
from gswitch.errors import InvalidInput
from gswitch.generators import parse_generator_spec
from gswitch.locality import METHODS
from gswitch.testing.reference import compare, reference

#: the orders the tuner searches besides the caller's own
RENUMBERED = [m for m in METHODS if m != "none"]

pytestmark = pytest.mark.usefixtures("super_steps")


def _study_trials(storage, name):
    return optuna.load_study(study_name=name, storage=open_storage(storage)).get_trials()


def _finished(trials):
    return [t for t in trials if t.state.name in ("COMPLETE", "PRUNED")]


def _best_is_correct(graph, config):
    src = int(graph.out_degree.argmax())
    r = gs.run("bfs", graph, source=src, backend="cpu", config=config)
    assert compare("bfs", r.fields["depth"], reference("bfs", graph, source=src)) is None


def test_two_simulated_devices_share_one_study(tmp_path):
    """devices=[0, 1] on the CPU: two worker processes fill one study; each trial names
    its worker, none claims a GPU, and no trial number is counted twice."""
    storage = f"journal://{tmp_path / 's.journal'}"
    g = parse_generator_spec("rmat:11,seed=2").symmetrize()
    result = tune("bfs", g, trials=12, backend="cpu", storage=storage, seed=0,
                  devices=[0, 1], warmup=2, repeats=4)
    finished = _finished(_study_trials(storage, result.study_name))
    assert 12 <= len(finished) <= 13
    assert {t.user_attrs["worker"] for t in finished} == {"cpu0", "cpu1"}
    assert not any("gpu" in t.user_attrs for t in finished)
    assert len({t.number for t in finished}) == len(finished)
    _best_is_correct(g, result.best_config)


def _workers():
    return [p for p in multiprocessing.active_children() if p.name == "gswitch-tuner-worker"]


def test_worker_killed_mid_study_loses_no_trial(tmp_path):
    """kill -9 of one of two workers: every trial finished before stays as it was, the
    killed worker's trial (or the next one it is given) records why, a fresh worker takes
    over, and the study reaches its trials."""
    storage = f"journal://{tmp_path / 's.journal'}"
    g = parse_generator_spec("rmat:12,seed=4").symmetrize()
    seen: dict = {}

    def progress(info):
        if "killed" in seen or sum(info["counts"].get(k, 0) for k in ("ok", "pruned")) < 3:
            return
        others = [p for p in _workers() if p.pid != seen.get("skip")]
        victim = others[-1]
        seen["before"] = {t.number: t.value for t in
                          _finished(_study_trials(storage, seen["name"]))}
        os.kill(victim.pid, signal.SIGKILL)
        seen["killed"] = victim.pid

    name = "bfs-kill-test"
    seen["name"] = name
    optuna.create_study(study_name=name, storage=open_storage(storage))
    result = tune("bfs", g, trials=16, backend="cpu", storage=storage, seed=1,
                  devices=[0, 1], warmup=3, repeats=8, name=name, progress=progress)
    assert "killed" in seen
    trials = _study_trials(storage, name)
    after = {t.number: t.value for t in _finished(trials)}
    assert len(after) >= 16
    assert all(after[n] == v for n, v in seen["before"].items())
    notes = [t.user_attrs.get("reason", "") + t.user_attrs.get("worker_restarted", "")
             for t in trials]
    assert any("SIGKILL" in n for n in notes)
    crashed = [t for t in trials if t.user_attrs.get("outcome") == "crashed"]
    for t in crashed:  # a trial lost to the kill failed and was enqueued again
        assert t.state.name == "FAIL"
        assert any(r.user_attrs.get("retry_of") == t.number for r in trials)
    assert result.best_config is not None


def _graph_dir(tmp_path, specs):
    folder = tmp_path / "graphs"
    folder.mkdir()
    for i, spec in enumerate(specs):
        gs.save_graph(parse_generator_spec(spec), folder / f"g{i}.mtx")
    (folder / "notes.md").write_text("not a graph")
    return folder


def test_batch_spreads_graphs_over_devices_and_resumes(tmp_path):
    """A batch gives each graph its own study, uses both devices, and a second run finds
    every study done and runs no trial."""
    folder = _graph_dir(tmp_path, ["rmat:9,seed=1", "grid:12x12", "rmat:8,seed=2"])
    paths = graph_paths(str(folder))
    assert [p.name for p in paths] == ["g0.mtx", "g1.mtx", "g2.mtx"]
    storage = f"journal://{tmp_path / 's.journal'}"
    events = []
    items = tune_batch("bfs", paths, load=gs.load_graph, devices=[0, 1], trials=4,
                       backend="cpu", storage=storage, seed=0, progress=events.append)
    assert [i["graph"] for i in items] == [str(p) for p in paths]
    assert {i["lane"] for i in items} == {"0", "1"}
    assert {e["event"] for e in events} == {"start", "trial", "done"}
    for path, item in zip(paths, items):
        trials = _study_trials(storage, item["result"]["study_name"])
        assert len(_finished(trials)) >= 4
        _best_is_correct(gs.load_graph(path), item["result"]["best_config"])
    again = tune_batch("bfs", paths, load=gs.load_graph, devices=[0, 1], trials=4,
                       backend="cpu", storage=storage, seed=0)
    assert [i["result"]["new_trials"] for i in again] == [0, 0, 0]


def test_batch_cli_reports_a_bad_graph_and_tunes_the_others(tmp_path, capsys):
    """A .list batch with one unreadable graph: the others are tuned, the bad one is one
    line, and the exit status says that not every graph has a result."""
    folder = _graph_dir(tmp_path, ["rmat:8,seed=1", "grid:8x8"])
    (folder / "bad.mtx").write_text("%%MatrixMarket matrix coordinate\nnot numbers\n")
    listing = tmp_path / "graphs.list"
    listing.write_text("# two graphs and a broken one\ngraphs/g0.mtx\n\ngraphs/bad.mtx\n"
                       f"{folder / 'g1.mtx'}\n")
    assert is_batch(str(listing)) and is_batch(str(folder)) and not is_batch("g.mtx")
    storage = f"journal://{tmp_path / 's.journal'}"
    code = main(["tune", "bfs", str(listing), "--backend", "cpu", "--devices", "0,1",
                 "--trials", "3", "--storage", storage, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    by_name = {os.path.basename(i["graph"]): i for i in out["graphs"]}
    assert list(by_name) == ["g0.mtx", "bad.mtx", "g1.mtx"]
    assert "error" in by_name["bad.mtx"] and "\n" not in by_name["bad.mtx"]["error"]
    for name in ("g0.mtx", "g1.mtx"):
        assert by_name[name]["result"]["best_config"]


@pytest.mark.parametrize("argv,message", [
    (["--study", "x"], "--study names one graph's study"),
    (["--export", "best.json"], "--export names one graph's study"),
])
def test_batch_refuses_single_study_flags(tmp_path, capsys, argv, message):
    folder = _graph_dir(tmp_path, ["grid:4x4"])
    assert main(["tune", "bfs", str(folder), "--backend", "cpu", *argv]) == 2
    assert message in capsys.readouterr().err


def test_batch_list_errors_name_the_line(tmp_path):
    listing = tmp_path / "g.list"
    listing.write_text("missing.mtx\n")
    with pytest.raises(InvalidInput, match="g.list line 1: missing.mtx is not a file"):
        graph_paths(str(listing))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InvalidInput, match="holds no graph files"):
        graph_paths(str(empty))


def _batch_cmd(folder, storage, trials):
    return [sys.executable, "-m", "gswitch.cli", "tune", "bfs", str(folder), "--backend",
            "cpu", "--devices", "0,1", "--storage", storage, "--trials", str(trials),
            "--seed", "0", "--no-progress", "--json", "--warmup", "3", "--repeats", "6"]


@pytest.mark.slow  # 14 s: three studies in subprocesses, twice
def test_killed_batch_resumes_with_the_same_command(tmp_path):
    """SIGKILL of a batch run: the same command finishes every graph's study, and the
    trials finished before the kill are kept."""
    folder = _graph_dir(tmp_path, ["rmat:11,seed=1", "rmat:11,seed=2", "rmat:10,seed=3"])
    storage = f"journal://{tmp_path / 's.journal'}"
    cmd = _batch_cmd(folder, storage, 6)
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)

    def finished_now():
        store = open_storage(storage)
        out = {}
        for s in store.get_all_studies():
            st = optuna.load_study(study_name=s.study_name, storage=store)
            out.update({(s.study_name, t.number): t.value for t in _finished(st.get_trials())})
        return out

    try:
        deadline = time.time() + 60
        while time.time() < deadline and len(finished_now()) < 4:
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = finished_now()
    assert 4 <= len(before) < 18
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    items = json.loads(done.stdout)["graphs"]
    assert len(items) == 3 and all(i["result"]["best_config"] for i in items)
    after = finished_now()
    assert all(after[k] == v for k, v in before.items())
    for item in items:
        assert len(_finished(_study_trials(storage, item["result"]["study_name"]))) >= 6


# ------------------------------------------------------------------ gs.run(device=)
@pytest.mark.parametrize("kwargs,message", [
    ({"device": 0, "backend": "cpu"}, "device=0 picks a GPU, but the backend is backend='cpu'"),
    ({"device": -1}, "device must be a GPU number"),
    ({"device": True}, "device must be a GPU number"),
    ({"device": "0"}, "device must be a GPU number"),
])
def test_run_device_is_checked(kwargs, message):
    g = gs.Graph.from_edges([0, 1], [1, 2])
    with pytest.raises(InvalidInput, match=message):
        gs.run("bfs", g, source=0, **kwargs)


def test_cli_device_with_cpu_backend_is_one_line(capsys):
    code = main(["run", "bfs", "--generate", "grid:4x4", "--backend", "cpu", "--device", "1"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err
    assert "--device 1 picks a GPU, but the backend is --backend cpu" in err


@pytest.mark.skipif(gs.gpu_available(), reason="checks the machine without a GPU")
def test_device_without_gpu_says_what_is_missing(capsys):
    code = main(["run", "bfs", "--generate", "grid:4x4", "--device", "0"])
    err = capsys.readouterr().err
    assert code != 0 and "--device 0 needs CuPy and an NVIDIA GPU" in err


def test_release_without_gpu_copies_frees_nothing():
    g = gs.Graph.from_edges([0, 1], [1, 2])
    gs.run("bfs", g, source=0, backend="cpu")
    assert gs.release(g) == 0


def _renumber_in_process(folder, spec, queue):
    from gswitch import locality

    locality.SHARED_MIN_EDGES = 1
    locality.share_renumbered(folder)
    g = parse_generator_spec(spec)
    calls = []
    real = locality._BUILDERS["rcm"]
    locality._BUILDERS["rcm"] = lambda graph: calls.append(1) or real(graph)
    out, perm, _ = locality.renumbered(g, "rcm")
    queue.put((len(calls), out.fingerprint, perm.tolist()))


def test_renumbered_graphs_are_built_once_per_shared_folder(tmp_path):
    """Two processes sharing a folder (a study's workers): the first builds the renumbered
    graph and writes it, the second reads the same graph and order instead of building."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    got = []
    for _ in range(2):
        p = ctx.Process(target=_renumber_in_process, args=(str(tmp_path), "rmat:9,seed=2",
                                                           queue))
        p.start()
        got.append(queue.get(timeout=60))
        p.join(30)
    assert [g[0] for g in got] == [1, 0]
    assert got[0][1:] == got[1][1:]
    from gswitch import locality

    g = parse_generator_spec("rmat:9,seed=2")
    assert locality.order(g, "rcm").tolist() == got[0][2]
    assert list(tmp_path.glob("renumbered-*.npz"))


def test_progress_bars_show_each_worker_and_each_lane():
    """The study's bar counts finished trials; a line per worker follows its trials; a
    batch has a line per device lane naming its current graph."""
    from gswitch.tuner.progress import TuneBars

    bars = TuneBars(4, "tune bfs")
    counts = {"ok": 2, "pruned": 1, "running": 1, "refused": 1}
    workers = {"gpu0": {"trials": 2, "last": "ok"}, "gpu1": {"trials": 3, "last": "pruned"}}
    bars.study({"counts": counts, "best_s": 0.002, "workers": workers})
    assert bars.main.n == 4  # ok + pruned + refused; running is not finished
    assert {k: b.n for k, b in bars.lines.items()} == {"gpu0": 2, "gpu1": 3}
    bars.close()
    batch = TuneBars(10, "tune bfs, graphs", graphs=2)
    batch.batch({"event": "start", "lane": "1", "graph": "/x/road.mtx"})
    batch.batch({"event": "trial", "lane": "1", "graph": "/x/road.mtx", "counts": {"ok": 3},
                 "best_s": 0.5})
    assert "road.mtx" in batch.lines["1"].desc and batch.lines["1"].n == 3
    batch.batch({"event": "done", "lane": "1", "graph": "/x/road.mtx"})
    assert batch.main.n == 1
    batch.close()


def test_prebuilt_renumbered_copies_are_read_not_built(tmp_path, monkeypatch):
    """A study's background builds write each renumbered copy beside the graph file; a
    worker that then needs one reads it (its own builders are never called) and gets the
    same graph and order as a build in place."""
    from gswitch.tuner.prebuild import Prebuilder

    from gswitch import locality

    g = parse_generator_spec("rmat:10,seed=6")
    path = gs.save_graph(g, tmp_path / "graph.npz")
    built = Prebuilder(path, g.fingerprint, ["rcm", "degree"])
    for p in built.processes:
        p.join(60)
    built.close()
    want = {m: locality.build_renumbered(parse_generator_spec("rmat:10,seed=6"), m)
            for m in ("rcm", "degree")}
    monkeypatch.setattr(locality, "SHARED_MIN_EDGES", 1)
    monkeypatch.setattr(locality, "_BUILDERS", {})  # any build here would fail
    locality.share_renumbered(tmp_path)
    try:
        for method, (graph, perm) in want.items():
            out, got, _ = locality.renumbered(gs.load_graph(path), method)
            assert got.tolist() == perm.tolist()
            assert out.fingerprint == graph.fingerprint
    finally:
        locality.share_renumbered(None)


def test_prebuild_runs_for_large_gpu_studies_only(tmp_path):
    from gswitch.tuner import build_space
    from gswitch.tuner.prebuild import MIN_EDGES, Prebuilder, renumber_methods

    from gswitch.plugins import get_registry

    g = parse_generator_spec("grid:8x8")
    spec = get_registry().algorithm("bfs")
    assert renumber_methods(build_space(spec, g, "cpu")) == RENUMBERED
    space = build_space(spec, g, "cpu")
    assert Prebuilder.for_study(g, tmp_path / "g.npz", space, "cpu") is None
    assert g.n_edges < MIN_EDGES
    assert Prebuilder.for_study(g, tmp_path / "g.npz", space, "gpu") is None


def test_a_stopped_build_leaves_no_half_copy(tmp_path):
    """close() while a build runs: the process is gone, and the copy is either whole (both
    files) or absent, so a worker builds it then."""
    from gswitch.tuner.prebuild import Prebuilder

    g = parse_generator_spec("rmat:16,seed=1")
    path = gs.save_graph(g, tmp_path / "graph.npz")
    built = Prebuilder(path, g.fingerprint, ["rcm"])
    time.sleep(1.0)
    procs = list(built.processes)
    built.close()
    assert not any(p.is_alive() for p in procs)
    perm = list(tmp_path.glob("renumbered-*.perm.npy"))
    copy = list(tmp_path.glob("renumbered-*.npz"))
    assert not perm or copy


def test_hosts_start_a_shared_batch_at_different_graphs(tmp_path, monkeypatch):
    """The first graph a host takes depends on its name; results keep the list's order."""
    from gswitch.tuner import batch

    folder = _graph_dir(tmp_path, ["grid:4x4", "grid:5x5", "grid:6x6"])
    paths = graph_paths(str(folder))
    starts = set()
    for host in ("node-a", "node-b", "node-c", "node-d", "node-e"):
        monkeypatch.setattr(batch.socket, "gethostname", lambda host=host: host)
        starts.add(batch.host_offset(3))
    assert len(starts) > 1 and starts <= {0, 1, 2}
    monkeypatch.setattr(batch.socket, "gethostname", lambda: "node-x")
    first = []
    items = tune_batch("bfs", paths, load=gs.load_graph, trials=2, backend="cpu",
                       storage=f"journal://{tmp_path / 's.journal'}",
                       progress=lambda e: e["event"] == "start" and first.append(e["graph"]))
    assert first[0] == str(paths[batch.host_offset(3)])
    assert [i["graph"] for i in items] == [str(p) for p in paths]


def test_a_large_gpu_study_starts_its_builds(tmp_path):
    """for_study on a GPU study of a graph past MIN_EDGES starts one build per
    renumbering of the space, and they write the copies beside the graph file."""
    import types

    from gswitch.tuner import build_space
    from gswitch.tuner.prebuild import MIN_EDGES, Prebuilder

    from gswitch.plugins import get_registry

    g = parse_generator_spec("rmat:9,seed=8")
    path = gs.save_graph(g, tmp_path / "graph.npz")
    space = build_space(get_registry().algorithm("bfs"), g, "cpu")
    large = types.SimpleNamespace(n_nodes=g.n_nodes, n_edges=MIN_EDGES,
                                  fingerprint=g.fingerprint)
    built = Prebuilder.for_study(large, path, space, "gpu")
    assert built is not None and len(built.processes) == len(RENUMBERED)
    for p in built.processes:
        p.join(60)
    built.close()
    assert len(list(tmp_path.glob("renumbered-*.perm.npy"))) == len(RENUMBERED)
