"""The tuner on the GPU backend: a verified study, and one study shared by two GPUs."""

import statistics

import optuna
import pytest
from gswitch.tuner import tune
from gswitch.tuner.storage import open_storage

import gswitch as gs
from gswitch.errors import InvalidInput
from gswitch.generators import parse_generator_spec
from gswitch.testing.reference import compare, reference

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

GRAPH = "rmat:12,seed=5"


def _gpu_count() -> int:
    import cupy

    return cupy.cuda.runtime.getDeviceCount()


def _check_study(storage, result, graph):
    """Every finished trial was verified; the best configuration gives the reference."""
    trials = optuna.load_study(study_name=result.study_name,
                               storage=open_storage(storage)).get_trials()
    finished = [t for t in trials if t.state.name in ("COMPLETE", "PRUNED")]
    assert finished and all(t.user_attrs.get("outcome") for t in finished)
    ok = [t for t in finished if t.user_attrs["outcome"] == "ok"]
    assert ok and result.best_time_s == min(t.value for t in ok)
    src = int(graph.out_degree.argmax())
    r = gs.run("bfs", graph, source=src, backend="gpu", config=result.best_config)
    assert compare("bfs", r.fields["depth"], reference("bfs", graph, source=src)) is None
    return finished


def test_tune_gpu_verifies_trials_and_finds_a_correct_best(tmp_path):
    """A GPU study from the default: measured trials, a correct best, a device key."""
    storage = f"journal://{tmp_path / 'studies.journal'}"
    g = parse_generator_spec(GRAPH).symmetrize()
    result = tune("bfs", g, trials=8, backend="gpu", storage=storage, seed=0)
    assert result.device.startswith("gpu:") and result.warm_start[0] == "default"
    finished = _check_study(storage, result, g)
    assert len(finished) == 8
    assert all("gpu" not in t.user_attrs for t in finished)  # no --devices: current GPU


def test_modules_compiled_ahead_are_loaded_not_compiled_by_the_worker(tmp_path, monkeypatch):
    """With compile processes, trials record the background compile, and the worker that
    runs them loads the module from the kernel cache in a fraction of that time.
    """
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "kernels"))  # nothing cached yet
    storage = f"journal://{tmp_path / 'studies.journal'}"
    g = parse_generator_spec(GRAPH).symmetrize()
    result = tune("bfs", g, trials=12, backend="gpu", storage=storage, seed=2,
                  compile_ahead=4)
    finished = _check_study(storage, result, g)
    assert len(finished) == 12
    ahead = [t for t in finished if t.user_attrs.get("outcome") == "ok"
             and "ahead_compile_s" in t.user_attrs]
    assert len(ahead) >= 6
    compiled = statistics.median(t.user_attrs["ahead_compile_s"] for t in ahead)
    loaded = statistics.median(t.user_attrs["compile_time_s"] for t in ahead)
    assert loaded < 0.5 * compiled


def test_devices_beyond_the_machine_is_one_clear_error(tmp_path):
    """``--devices`` naming a GPU that is not there is refused before any study exists."""
    storage = f"journal://{tmp_path / 'studies.journal'}"
    count = _gpu_count()
    with pytest.raises(InvalidInput, match=f"--devices names GPU {count} but this machine"):
        tune("bfs", parse_generator_spec(GRAPH), trials=2, backend="gpu", storage=storage,
             devices=[0, count])
    assert not optuna.study.get_all_study_names(open_storage(storage))


@pytest.mark.skipif(not gs.gpu_available() or _gpu_count() < 2, reason="needs two GPUs")
def test_two_gpus_share_one_study(tmp_path):
    """``devices=[0, 1]``: one worker per GPU fills one study, both GPUs run trials."""
    storage = f"journal://{tmp_path / 'studies.journal'}"
    g = parse_generator_spec(GRAPH).symmetrize()
    result = tune("bfs", g, trials=16, backend="gpu", storage=storage, seed=0, devices=[0, 1])
    finished = _check_study(storage, result, g)
    assert 16 <= len(finished) <= 17
    assert {t.user_attrs["gpu"] for t in finished} == {0, 1}
    assert len({t.number for t in finished}) == len(finished)


@pytest.mark.skipif(not gs.gpu_available() or _gpu_count() < 2, reason="needs two GPUs")
def test_batch_spreads_graphs_over_two_gpus(tmp_path):
    """A batch of two graphs on ``devices=[0, 1]``: one study each, one per GPU, both
    with a verified best; every trial of a study ran on its lane's GPU."""
    from gswitch.tuner.batch import tune_batch

    storage = f"journal://{tmp_path / 'studies.journal'}"
    paths = []
    for i, spec in enumerate(["rmat:12,seed=5", "grid:64x64"]):
        paths.append(tmp_path / f"g{i}.npz")
        gs.save_graph(parse_generator_spec(spec).symmetrize(), paths[-1])
    items = tune_batch("bfs", paths, load=gs.load_graph, devices=[0, 1], trials=6,
                       backend="gpu", storage=storage, seed=0)
    assert sorted(i["lane"] for i in items) == ["0", "1"]
    for path, item in zip(paths, items):
        finished = _check_study(storage, _Result(item["result"]), gs.load_graph(path))
        assert {t.user_attrs["gpu"] for t in finished} == {int(item["lane"])}


class _Result:
    """A batch item's result with the attributes ``_check_study`` reads."""

    def __init__(self, data):
        self.study_name = data["study_name"]
        self.best_time_s = data["best_time_s"]
        self.best_config = data["best_config"]
