"""gswitch compile: the modules untuned GPU runs need, built ahead into the kernel cache."""

import json
import os
import subprocess
import sys

import pytest

import gswitch as gs
from gswitch.cli import main
from gswitch.codegen import generate_source
from gswitch.errors import InvalidInput
from gswitch.plugins import get_registry
from gswitch.precompile import compile_modules, planned_modules
from gswitch.selector import load_model
from gswitch.testing.nvcc import compile_source


def _keys(modules):
    return [generate_source(m.spec, m.config, m.weighted).key for m in modules]


def test_defaults_and_the_portfolio_each_once():
    plain = planned_modules(portfolio=False)
    full = planned_modules(portfolio=True)
    assert len(set(_keys(full))) == len(full)  # one entry per distinct source
    assert set(_keys(plain)) <= set(_keys(full))
    names = {m.spec.name for m in plain}
    assert names == set(get_registry().algorithms)
    # every portfolio entry of the shipped model is among the modules (weighted and not,
    # where its operator reads weights)
    model = load_model()
    from gswitch.runner import _spec, with_variant_defaults

    for alg, entry in model["algorithms"].items():
        for values in entry["portfolio"]:
            spec = _spec(alg, gs.Config.shared(values), values, "gpu")
            cfg = with_variant_defaults(spec, values, "gpu")
            if not spec.stages:
                assert generate_source(spec, cfg, False).key in _keys(full)
    assert any(m.weighted for m in full if m.spec.name == "sssp")
    assert not any(m.weighted for m in full if m.spec.name == "bfs")  # reads no weight


def test_a_stale_portfolio_entry_is_left_out(tmp_path):
    model = load_model()
    stale = json.loads(json.dumps(model))
    stale["algorithms"]["bfs"]["portfolio"].append({"driving": "priority"})  # bfs has no key
    path = tmp_path / "model.json"
    path.write_text(json.dumps(stale))
    got = planned_modules(["bfs"], model_path=path)
    assert all("portfolio #" + str(len(stale["algorithms"]["bfs"]["portfolio"]) - 1)
               not in m.label for m in got)


def test_unknown_algorithm_and_no_gpu():
    with pytest.raises(InvalidInput, match="unknown algorithm 'nope'; registered: .*bfs"):
        planned_modules(["nope"])
    if not gs.gpu_available():
        with pytest.raises(InvalidInput, match="needs CuPy and an NVIDIA GPU"):
            compile_modules(planned_modules(["bfs"], portfolio=False))


def test_the_warm_up_gives_every_run_what_it_cannot_do_without(monkeypatch):
    """gswitch compile's warm-up runs every registered algorithm, msbfs too: each run gets
    a source where it starts from one and the inputs it requires (msbfs's sources), so
    none is refused (checked without a GPU: the engine and the runs are stand-ins that
    resolve the parameters as gs.run does)."""
    import contextlib

    import gswitch.engine.gpu
    import gswitch.generators
    import gswitch.runner
    from gswitch.precompile import warm_engine

    class Engine:
        stream = type("Stream", (contextlib.nullcontext,), {"synchronize": lambda self: None})()

        def resident(self, graph):
            return type("Resident", (), {"reverse_arrays": lambda self, on_device: None})()

    ran = []

    def run(name, graph, backend, config=None, arrays="numpy", source=None, **params):
        spec = get_registry().algorithm(name)
        assert (source is not None) == (spec.start.kind == "source"), name
        spec.resolve_params(params, graph.n_nodes)
        ran.append(name)

    monkeypatch.setattr(gswitch.engine.gpu.GpuEngine, "instance", classmethod(lambda c: Engine()))
    monkeypatch.setattr(gswitch.generators, "rmat", lambda *a, **k: gs.Graph.from_edges(
        [0, 1], [1, 0], [1.0, 1.0]))
    monkeypatch.setattr(gswitch.runner, "run", run)
    warm_engine(sorted(get_registry().algorithms), portfolio=False)
    assert "msbfs" in ran and set(ran) == set(get_registry().algorithms)


def test_cli_lists_and_refuses_cleanly(capsys):
    assert main(["compile", "--portfolio", "--list"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == f"{len(planned_modules())} modules"
    assert any(line.startswith("sssp[") and "weighted" in line for line in out)
    if not gs.gpu_available():
        assert main(["compile", "bfs"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--list" in err[0]


@pytest.mark.compile
@pytest.mark.compile_all  # minutes of nvcc: .ci/run runs it with the compile matrix
def test_every_planned_module_compiles_with_nvcc(nvcc):
    for m in planned_modules():
        ok, log = compile_source(generate_source(m.spec, m.config, m.weighted).source)
        assert ok, f"{m.label}: {log[-2000:]}"


RUN_FIRST = r"""
import time, sys
t = time.perf_counter()
import gswitch as gs
from gswitch.generators import rmat
g = rmat(12, 8, seed=1)
r = gs.run("bfs", g, source=0, backend="gpu")
print(time.perf_counter() - t)
"""

@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
def test_a_first_run_after_compile_finds_its_module(tmp_path):
    """After gswitch compile --portfolio, a new process's first BFS adds nothing to the
    kernel cache (its module was there)."""
    env = {**os.environ, "CUPY_CACHE_DIR": str(tmp_path / "cupy")}
    subprocess.run([sys.executable, "-m", "gswitch", "compile", "--portfolio", "bfs"],
                   check=True, env=env, capture_output=True)
    before = sorted(p.name for p in (tmp_path / "cupy").rglob("*") if p.is_file())
    assert before
    subprocess.run([sys.executable, "-c", RUN_FIRST], check=True, env=env,
                   capture_output=True)
    after = sorted(p.name for p in (tmp_path / "cupy").rglob("*") if p.is_file())
    assert after == before
