"""The tuner on the CPU backend: search space, verified trials, isolation, storage, warm
start and the ``tune`` / ``report`` / ``run --config auto|tuned`` commands.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import optuna
import pytest
from gswitch.tuner import TunerError, build_space, resolve_config, space_version, tune
from gswitch.tuner.space import moves
from gswitch.tuner.storage import open_storage
from gswitch.tuner.worker import PLUGINS_ENV

import gswitch as gs
from gswitch.cli import main
from gswitch.config import DEFAULTS, Config
from gswitch.generators import parse_generator_spec
from gswitch.plugins import AXES, get_registry
from gswitch.strategy import Categorical, FloatRange, IntRange

# strategies under test do their steps on the CPU (no shortest-path closure)
pytestmark = pytest.mark.usefixtures("super_steps")

TESTS = Path(__file__).resolve().parent
GRAPH = "rmat:8,seed=3"


@pytest.fixture
def storage(tmp_path):
    return f"journal://{tmp_path / 'studies.journal'}"


@pytest.fixture
def misbehaving(monkeypatch):
    """Register the crashing, hanging and wrong test strategies in this process and workers."""
    from gswitch.plugins import get_plugin_manager

    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setenv(PLUGINS_ENV, "tuner_plugins.misbehaving")
    yield
    pm = get_plugin_manager()
    plugin = pm.get_plugin("tuner_plugins.misbehaving")
    if plugin is not None:
        pm.unregister(plugin)
    get_registry.cache_clear()


def _trials(storage, name):
    return optuna.load_study(study_name=name, storage=open_storage(storage)).get_trials()


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS)] + [p for p in sys.path if p])
    env.update(extra)
    return env


# ---------------------------------------------------------------------- search space
def test_cpu_space_has_only_cpu_strategies_and_runtime_params():
    """On cpu: only strategies with "cpu" in backends (and whose check accepts BFS: not
    priority driving, which needs a key), no compile-time params, no block_size."""
    g = parse_generator_spec(GRAPH)
    spec = get_registry().algorithm("bfs")
    space = build_space(spec, g, "cpu")
    reg = get_registry()
    for axis in AXES:
        on_cpu = sorted(n for n, c in reg.strategies[axis].items() if "cpu" in c.backends
                        and c(c.default_options()).check(spec, g, None, "cpu") is None)
        if len(on_cpu) > 1:
            assert sorted(space.axes[axis]) == on_cpu
        else:
            assert axis not in space.axes and axis in space.fixed
    for (axis, name), params in space.params.items():
        assert "cpu" in reg.strategy(axis, name).backends
        assert not any(p.compile_time for p in params.values())
    # the only global key both engines honour is the renumbering
    assert set(space.global_params) == {"renumber"} and not space.compile_time


def test_gpu_space_is_conditional_and_marks_compile_time_params():
    """On gpu every registered strategy is a choice; params are sampled only when chosen."""
    g = parse_generator_spec(GRAPH)
    space = build_space(get_registry().algorithm("bfs"), g, "gpu")
    reg = get_registry()
    for axis, choices in space.axes.items():
        assert set(choices) <= set(reg.strategies[axis])
    assert "block_size" in space.global_params
    declared = {f"{a}.{n}.{p}" for (a, n), ps in space.params.items()
                for p, s in ps.items() if s.compile_time}
    assert set(space.compile_time) == declared and declared
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for _ in range(20):
        trial = study.ask()
        cfg = space.suggest(trial)
        for name in trial.params:
            parts = name.split(".")
            if len(parts) == 3:  # axis.strategy.param: only for the chosen strategy
                assert cfg[parts[0]] == parts[1]
        study.tell(trial, 1.0)


@pytest.mark.parametrize("space,value,expected", [
    (Categorical((2, 4, 8, 16, 32), 8), 8, [2, 4, 16, 32]),
    (Categorical((True, False), True), False, [True]),
    (IntRange(64, 1024, 256, step=32), 512, [576, 448, 768, 256]),  # 5% and 25%, on the step
    (IntRange(64, 1024, 256, step=32), 1024, [960, 768]),  # clipped at the top
    (IntRange(2, 256, 16, log=True), 16, [32, 128, 8, 2]),  # x2, x8, /2, /8
    (FloatRange(0.0005, 1.0, 0.05, log=True), 0.0005, [0.001, 0.004]),  # at the bottom
])
def test_moves_are_small_and_large_steps_inside_the_space(space, value, expected):
    """A move stays in the declared space, on its step, and never repeats the value."""
    got = moves(space, value)
    assert got == pytest.approx(expected)
    for v in got:
        assert space.validate("x", v) == v


@pytest.mark.parametrize("algorithm", ["bfs", "pagerank"])
def test_neighbours_change_one_parameter_or_one_axis(algorithm):
    """Every neighbour of a sampled configuration is a valid trial of the space that moves
    one parameter, switches one axis with the new strategy's parameters at defaults, or
    switches the variant keeping every strategy the new variant supports (a move that
    makes the driving strategy push only, or no longer, also drops or draws direction).
    """
    g = parse_generator_spec(GRAPH)
    space = build_space(get_registry().algorithm(algorithm), g, "gpu")
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=4))
    variant_moves = 0
    for _ in range(10):
        trial = study.ask()
        before = space.suggest(trial)
        params = dict(trial.params)
        study.tell(trial, 1.0)
        found = space.neighbours(params)
        texts = [json.dumps(n, sort_keys=True) for n in found]
        assert len(set(texts)) == len(texts) and json.dumps(params, sort_keys=True) not in texts
        switched = set()
        for n in found:
            changed = {k for k in set(n) | set(params) if n.get(k) != params.get(k)}
            if space.config(n).strategy("driving").pushes_only() != \
                    before.strategy("driving").pushes_only():
                # the move decides whether direction is drawn (a driving strategy that
                # pushes only holds it at push): its study parameter comes or goes, and
                # the parameters of a direction strategy it holds out go with it
                changed -= {k for k in changed
                            if k.split("|")[0].split(".")[0] == "direction"
                            and (k in n) != (k in params)}
            if "variant" in changed:
                variant_moves += 1
                cfg = space.config(n)
                spec = space.spec(cfg)
                assert cfg["variant"] == n["variant"] != params["variant"]
                for axis in AXES:
                    assert spec.unsupported(axis, cfg[axis], DEFAULTS.get(axis)) is None
                    if spec.unsupported(axis, before[axis], DEFAULTS.get(axis)) is None:
                        assert cfg[axis] == before[axis]
                switched.add("variant")
                continue
            axes = {k.split("|")[0] for k in changed} & set(space.axes)
            if axes:
                (axis,) = axes
                switched.add(axis)
                (picker,) = {k for k in changed if k.split("|")[0] == axis}
                for k in changed - {picker}:
                    assert k.startswith(f"{axis}.")  # only that axis's strategy parameters
                    if k in n:
                        strategy, pname = k.split(".")[1:]
                        assert strategy == n[picker]
                        assert n[k] == space.params[(axis, strategy)][pname].default
            else:
                assert len(changed) == 1
            cfg = space.config(n)
            assert all(cfg[a.split("|")[0]] == v for a, v in n.items() if a.split("|")[0]
                       in space.axes)
        assert switched >= set(space.axes) - set(AXES) - {"variant"}
        pushes_only = before.strategy("driving").pushes_only()
        assert {a for a in space.axes
                if space.axis_choices(a, before["variant"], pushes_only)[0]} \
            <= switched | {"variant"}
    assert variant_moves == (10 if algorithm == "pagerank" else 0)


def test_space_config_reads_study_parameters():
    """SearchSpace.config gives the configuration a trial with those parameters builds."""
    g = parse_generator_spec(GRAPH)
    space = build_space(get_registry().algorithm("sssp"), g, "gpu")
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=2))
    for _ in range(10):
        trial = study.ask()
        cfg = space.suggest(trial)
        assert space.config(dict(trial.params)).to_dict() == cfg.to_dict()
        study.tell(trial, 1.0)


def _declared_refusal(space, cfg):
    """What a draw breaks of the strategies' declared refusals: a pulling direction with
    a driving strategy that pushes only, or a parameter off the value a strategy holds it
    at for the formulation; ``None`` when neither.
    """
    if cfg.strategy("driving").pushes_only() and cfg.strategy("direction").may_pull:
        return f"driving={cfg['driving']} with direction={cfg['direction']}"
    for axis in AXES:
        for pname, value in space.held_params(cfg["variant"], axis, cfg[axis]).items():
            if cfg[f"{axis}.{pname}"] != value:
                return f"{axis}.{pname}={cfg[f'{axis}.{pname}']}"
    return None


@pytest.mark.parametrize("algorithm,backend", [
    ("core_number", "cpu"), ("bfs", "cpu"), ("sssp", "cpu"), ("betweenness", "cpu"),
    ("edge_betweenness", "cpu"), ("bfs", "gpu"), ("sssp", "gpu"), ("core_number", "gpu")])
def test_space_draws_nothing_a_strategy_declares_it_refuses(algorithm, backend):
    """No draw, and no neighbour of one, pairs a driving strategy that pushes only
    (spatial, async, unrolling) with a direction that may pull, or moves a parameter a
    strategy holds for the formulation (core_number[peel_buckets] and the backward stage
    of betweenness[per_source] fix the bucket width: driving.width_scale 1); so
    check_combination never refuses one for those reasons, and a held parameter is not a
    study parameter there."""
    from gswitch.runner import check_combination

    g = parse_generator_spec("road:9x11,seed=3")
    spec = get_registry().algorithm(algorithm)
    space = build_space(spec, g, backend)
    assert "driving" in space.axes and "direction" in space.axes
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    drawn = {"pushes_only": 0, "held": 0}
    for _ in range(150):
        trial = study.ask()
        cfg = space.suggest(trial)
        assert _declared_refusal(space, cfg) is None, dict(cfg)
        reason = check_combination(space.spec(cfg), g.symmetrize() if spec.symmetric else g,
                                   cfg, backend) or ""
        assert "set direction=push" not in reason and "width_scale" not in reason, reason
        assert space.config(dict(trial.params)).to_dict() == cfg.to_dict()
        drawn["pushes_only"] += cfg.strategy("driving").pushes_only()
        held = space.held_params(cfg["variant"], "driving", cfg["driving"])
        drawn["held"] += bool(held)
        assert not any(k.startswith(f"driving.{cfg['driving']}.") and k.endswith(f".{p}")
                       for k in trial.params for p in held)
        for params in space.neighbours(dict(trial.params)):
            assert _declared_refusal(space, space.config(params)) is None, params
        study.tell(trial, 1.0)
    # the strategies are drawn, with push and at the held width
    assert drawn["held" if algorithm in ("core_number", "betweenness")
                 else "pushes_only"] > 0, drawn


def test_space_version_changes_when_a_plugin_is_installed(misbehaving):
    """Installing a strategy plugin changes the space version and adds its strategies."""
    from gswitch.tuner.worker import load_extra_plugins

    before = space_version()
    assert load_extra_plugins() == ["tuner_plugins.misbehaving"]
    after = space_version()
    assert after != before
    space = build_space(get_registry().algorithm("bfs"), parse_generator_spec(GRAPH), "cpu")
    assert "test_crash" in space.axes["driving"]


def test_no_valid_combination_is_one_clear_error(monkeypatch):
    """An axis whose every strategy refuses gives a TunerError naming the axis and reasons."""
    reg = get_registry()
    for cls in reg.strategies["driving"].values():
        monkeypatch.setattr(cls, "check", lambda self, *a: "nope, not this one")
    with pytest.raises(TunerError, match="no valid combination for bfs on the cpu backend.*"
                       "driving.*nope"):
        build_space(reg.algorithm("bfs"), parse_generator_spec(GRAPH), "cpu")


# ---------------------------------------------------------------------- tuning
def test_tune_cpu_end_to_end(storage, tmp_path):
    """A CPU study measures verified trials, starts with the default and is found again."""
    g = parse_generator_spec(GRAPH)
    result = tune("bfs", g, trials=8, backend="cpu", storage=storage, seed=1)
    assert result.best_config is not None and result.warm_start[0] == "default"
    assert all(w.startswith("suggested:") for w in result.warm_start[1:])
    trials = _trials(storage, result.study_name)
    assert trials[0].user_attrs["source"] == "default"
    assert [t.user_attrs["source"] for t in trials[:len(result.warm_start)]] == \
        result.warm_start
    # the default trial is the configuration gs.run takes on the study's backend
    ran = gs.run("bfs", g, source=int(np.argmax(g.out_degree)), backend="cpu").config
    assert trials[0].user_attrs["config"] == ran.to_dict()
    assert result.history[0]["config"] == ran.to_dict()
    assert [h["config"] for h in result.history if h["outcome"] == "ok" and
            h["value_s"] == result.best_time_s][0] == result.best_config
    ok = [t for t in trials if t.user_attrs.get("outcome") == "ok"]
    assert len([t for t in trials if t.state.name in ("COMPLETE", "PRUNED")]) == 8
    measured = [t for t in ok if not t.user_attrs.get("reused")]
    for t in measured:
        assert len(t.user_attrs["times_s"]) == 3 and t.value == sorted(
            t.user_attrs["times_s"])[1]
        assert t.user_attrs["iterations"] > 0 and t.user_attrs["edges_processed"] > 0
        assert "compile_time_s" in t.user_attrs and "e2e_s" in t.user_attrs
    assert result.best_time_s == min(t.value for t in ok)
    cfg, where = resolve_config("bfs", g, "tuned", backend="cpu", storage=storage)
    assert cfg.to_dict() == result.best_config and "tuned for this graph" in where
    attrs = optuna.load_study(study_name=result.study_name,
                              storage=open_storage(storage)).user_attrs
    assert attrs["fingerprint"] == g.fingerprint and attrs["space_version"] == space_version()
    assert attrs["best_config"] == result.best_config


def test_misbehaving_plugins_do_not_stop_the_study(storage, misbehaving):
    """Crash, hang, wrong answer and a slow run are recorded with reasons (the slow one
    pruned with the time it reached); a correct configuration wins.
    """
    g = parse_generator_spec(GRAPH)
    result = tune("bfs", g, trials=40, backend="cpu", storage=storage, sampler="grid", seed=0,
                  trial_timeout_s=1.0)
    trials = _trials(storage, result.study_name)
    by_driving = {}
    for t in trials:
        cfg = t.user_attrs.get("config") or {}
        by_driving.setdefault(cfg.get("driving"), []).append(t)
    outcome = {d: {t.user_attrs.get("outcome") for t in ts} for d, ts in by_driving.items()}
    assert "crashed" in outcome["test_crash"]
    assert "timeout" in outcome["test_hang"]
    assert "wrong_answer" in outcome["test_wrong"]
    assert "pruned" in outcome["test_slow"]
    for t in by_driving["test_slow"]:
        if t.state.name == "PRUNED":
            assert t.user_attrs["elapsed_s"] >= t.user_attrs["limit_s"] > 0
            assert t.intermediate_values[0] == t.user_attrs["elapsed_s"]
    # crash and hang, each retried once (on a loaded machine a sound trial may also pass
    # the 1 s limit: it fails as a timeout of its own, which is not counted here)
    fails = [t for t in by_driving["test_crash"] + by_driving["test_hang"]
             if t.state.name == "FAIL"]
    assert len(fails) == 2, [(t.user_attrs.get("outcome"), t.user_attrs.get("reason"))
                             for t in fails]
    assert any("status 7" in t.user_attrs["reason"] for t in fails)
    assert not result.best_config["driving"].startswith("test_")
    best = optuna.load_study(study_name=result.study_name, storage=open_storage(storage))
    assert best.best_trial.user_attrs["outcome"] == "ok"  # infeasible trials never win
    wrong = [t for t in by_driving["test_wrong"] if t.user_attrs["outcome"] == "wrong_answer"]
    assert wrong[0].user_attrs["constraint"] == 1.0
    constraints = wrong[0].constraints  # a dict from Optuna 5 on, a list before
    assert list(constraints.values() if isinstance(constraints, dict) else constraints) == [1.0]


def _cpu_default_variant(name: str) -> str:
    """The formulation ``gs.run`` takes on the CPU (``default_on=``, else the default)."""
    family = get_registry().variants[name]
    return next((v for v, spec in family.items() if "cpu" in spec.default_on),
                get_registry().algorithm(name).variant)


def test_warm_start_and_config_auto_use_the_nearest_tuned_graph(storage):
    """A similar graph's best is enqueued; --config auto borrows the nearest graph's best."""
    small = parse_generator_spec("rmat:8,seed=1")
    road = parse_generator_spec("road:24x24")
    a = tune("cc", small, trials=4, backend="cpu", storage=storage, seed=0)
    b = tune("cc", road, trials=4, backend="cpu", storage=storage, seed=0)
    # a similar graph's best comes first, then the default; when that best is the default
    # configuration it is enqueued once, as the similar graph's (timing decides which wins)
    if b.warm_start[0] == "default":
        assert b.warm_start[1] == "suggested:0"
    else:
        # the next is the default, a suggestion, or (the default being the similar
        # graph's best) another formulation's default configuration
        assert b.warm_start[0] == f"similar:{a.study_name}"
        second = b.warm_start[1]
        assert second in ("default", "suggested:0") or (
            second.startswith("default:")
            and second[len("default:"):] in get_registry().variants["cc"])
    if b.warm_start[1] != "default" and b.warm_start[0] != "default":
        # the similar graph's best was the CPU's default formulation's default configuration
        assert a.best_config["variant"] == _cpu_default_variant("cc")
    other = parse_generator_spec("rmat:9,seed=2")
    c = tune("cc", other, trials=3, backend="cpu", storage=storage, seed=0, warm_start=1)
    similar = [w for w in c.warm_start if w.startswith("similar:")]
    assert len(similar) <= 1
    assert c.warm_start[0] == (similar[0] if similar else "default")
    if "default" not in c.warm_start:  # the similar graph's best was the default: once
        bests = {a.study_name: a.best_config, b.study_name: b.best_config}
        assert similar and bests[similar[0][len("similar:"):]]["variant"] == \
            _cpu_default_variant("cc")
    fresh = parse_generator_spec("road:30x30,seed=5")
    cfg, where = resolve_config("cc", fresh, "auto", backend="cpu", storage=storage)
    assert b.study_name in where and "never tuned" in where
    assert cfg.to_dict() == b.best_config
    with pytest.raises(TunerError, match="no tuned configuration for cc on this graph"):
        resolve_config("cc", fresh, "tuned", backend="cpu", storage=storage)


def test_the_default_trial_is_never_pruned(storage, monkeypatch):
    """Every other trial gets the engine deadline; the default's runs to its end, so the
    study always knows its speedup over the default.
    """
    import gswitch.tuner.study as study_mod

    monkeypatch.setattr(study_mod._Session, "limit", lambda self: 1e-9)  # prunes any run
    g = parse_generator_spec("road:12x12")
    result = tune("cc", g, trials=3, backend="cpu", storage=storage, seed=0)
    by_source = {h["source"]: h["outcome"] for h in result.history}
    assert by_source["default"] == "ok" and result.default_time_s is not None
    assert [h["outcome"] for h in result.history if h["source"] != "default"] == \
        ["pruned"] * (len(result.history) - 1)
    assert result.speedup == pytest.approx(1.0)


def test_local_search_tries_untried_neighbours_of_the_best(storage):
    """With refine=0.5, about half the trials after the warm start are neighbours of the
    best trial finished when they were enqueued, never one tried already; with 0 there
    are none.

    A local trial is enqueued at some moment between the end of the trial it refines
    and its own start; trials that end or start in between (asked ahead, or run by the
    sampler meanwhile) may or may not have been seen, so only what is certain is
    checked: the refined trial was the best of those ended by its own end, and the
    local trial repeats no trial started by then.
    """
    from gswitch.tuner.study import best_feasible

    g = parse_generator_spec(GRAPH)
    result = tune("sssp", g, trials=16, backend="cpu", storage=storage, seed=3, refine=0.5)
    trials = _trials(storage, result.study_name)
    space = build_space(get_registry().algorithm("sssp"), g, "cpu")
    local = [t for t in trials if t.user_attrs.get("source") == "refine"]
    sampled = [t for t in trials if "source" not in t.user_attrs]
    assert local and len(local) <= len(sampled) + 1
    by_number = {t.number: t for t in trials}
    for t in local:
        refined = by_number[t.user_attrs["refine_of"]]
        assert refined.number < t.number
        assert refined.datetime_complete <= t.datetime_start
        ended = [u for u in trials if u.datetime_complete is not None
                 and u.datetime_complete <= refined.datetime_complete]
        assert best_feasible(ended).value == refined.value
        assert t.params in space.neighbours(refined.params)
        seen = [u for u in trials if u.number != t.number
                and u.datetime_start is not None
                and u.datetime_start <= refined.datetime_complete]
        assert t.params not in [u.params for u in seen]
    other = tune("sssp", g, trials=10, backend="cpu", storage=storage, seed=3, refine=0,
                 name="no local search")
    assert not [h for h in other.history if h["source"] == "refine"]


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("alg", ["bfs", "sssp", "pagerank"])
def test_neighbours_are_the_parameters_of_the_configurations_they_name(alg, backend):
    """Every neighbour, two moves out from the default, is exactly the study parameters
    of its own configuration: no parameter of a strategy an earlier choice holds out (a
    driving that only pushes holds the direction at push), so a local search never
    counts one configuration under two spellings."""
    import random

    space = build_space(get_registry().algorithm(alg), parse_generator_spec(GRAPH), backend)
    rng = random.Random(0)
    frontier, checked = [space.trial_params(Config({}))], 0
    for _ in range(2):
        moved = [nb for p in frontier for nb in space.neighbours(p)]
        for nb in moved:
            assert space.trial_params(space.config(nb)) == nb
        checked += len(moved)
        rng.shuffle(moved)
        frontier = moved[:12]
    assert checked > 50


def test_continued_repeats_a_one_parameter_step_inside_its_range():
    """The pattern move repeats the step (the factor on a log range), stays inside the
    range, and is refused for two changed parameters or a categorical."""
    g = parse_generator_spec(GRAPH)
    gpu = build_space(get_registry().algorithm("bfs"), g, "gpu")
    base = {axis: choices[0] for axis, choices in gpu.axes.items()}
    base = {**gpu.trial_params(gpu.config(base)), "block_size": 256}
    assert gpu.continued({**base, "block_size": 320}, base)["block_size"] == 384
    assert gpu.continued({**base, "block_size": 1024}, {**base, "block_size": 992}) is None
    two = {**base, "block_size": 320, "read_before_atomic": not base["read_before_atomic"]}
    assert gpu.continued(two, base) is None
    flag = {**base, "read_before_atomic": not base["read_before_atomic"]}
    assert gpu.continued(flag, base) is None
    cpu = build_space(get_registry().algorithm("sssp"), g, "cpu")
    # sssp has two formulations: the driving axis is conditional on the variant
    p0 = {"variant": "bellman_ford", "driving|bellman_ford": "temporal", "direction": "push",
          "driving.temporal.threshold": 0.1}
    p1 = {**p0, "driving.temporal.threshold": 0.05}
    assert cpu.continued(p1, p0)["driving.temporal.threshold"] == pytest.approx(0.025)
    assert cpu.continued({**p1, "driving.temporal.threshold": 0.0005}, p1) is None


def test_local_search_takes_the_improving_move_once_more_first(storage):
    """When the best came from a local-search move of one parameter, the next local-search
    trial is that move repeated, marked ``pattern``."""
    from gswitch.tuner.study import _Session
    from optuna.distributions import CategoricalDistribution, FloatDistribution
    from optuna.trial import create_trial

    g = parse_generator_spec(GRAPH)
    spec = get_registry().algorithm("sssp")
    space = build_space(spec, g, "cpu")
    study = optuna.create_study(study_name="pattern", storage=open_storage(storage))
    dists = {"variant": CategoricalDistribution(list(space.axes["variant"])),
             "driving|bellman_ford": CategoricalDistribution(list(space.axes["driving"])),
             "direction": CategoricalDistribution(list(space.axes["direction"])),
             "driving.temporal.threshold": FloatDistribution(0.0005, 1.0, log=True)}
    p0 = {"variant": "bellman_ford", "driving|bellman_ford": "temporal", "direction": "push",
          "driving.temporal.threshold": 0.2}
    p1 = {**p0, "driving.temporal.threshold": 0.1}
    p2 = {**p0, "direction": "pull"}
    for params, value, attrs in ((p0, 1.0, {"source": "default"}),
                                 (p1, 0.5, {"source": "refine", "refine_of": 0}),
                                 (p2, 2.0, {})):  # a sampler trial: the local search is due
        study.add_trial(create_trial(params=params, distributions=dists, value=value,
                                     user_attrs={**attrs, "outcome": "ok",
                                                 "config": space.config(params).to_dict()}))
    session = _Session(study, space, spec, g, "cpu", 10, None, 0, 1, 3.0, 0.05, 10.0, None,
                       refine=0.5, seed=0)
    session.first_trial = 0
    session._refine()
    (waiting,) = [t for t in study.get_trials() if t.state.name == "WAITING"]
    assert waiting.user_attrs["pattern"] is True and waiting.user_attrs["refine_of"] == 1
    fixed = waiting.system_attrs["fixed_params"]
    assert fixed["driving.temporal.threshold"] == pytest.approx(0.05)


def test_a_resumed_study_gets_no_burst_of_local_search(storage):
    """The local-search share counts the trials of this run only: a study tuned without
    it and resumed with refine=0.5 alternates, rather than spending every new trial on it.
    """
    g = parse_generator_spec(GRAPH)
    first = tune("sssp", g, trials=12, backend="cpu", storage=storage, seed=5, refine=0)
    again = tune("sssp", g, trials=20, backend="cpu", storage=storage, seed=5, refine=0.5)
    new = [h["source"] for h in again.history if h["number"] >= len(first.history)]
    assert len(new) == 8
    assert 1 <= new.count("refine") <= new.count("sampler") + 1


def test_trials_asked_ahead_keep_the_study_count_and_verify_every_trial(storage):
    """With compile_ahead, sampler trials are asked ahead of their turn (on the CPU
    nothing compiles): the study still finishes exactly the trials asked for, each one
    verified, and leaves none running, waiting or failed.
    """
    g = parse_generator_spec(GRAPH)
    result = tune("sssp", g, trials=14, backend="cpu", storage=storage, seed=2,
                  compile_ahead=3)
    trials = _trials(storage, result.study_name)
    finished = [t for t in trials if t.state.name in ("COMPLETE", "PRUNED")]
    assert len(finished) == 14 and all(t.user_attrs.get("outcome") for t in finished)
    assert not [t for t in trials if t.state.name in ("RUNNING", "WAITING")]
    assert all(t.user_attrs.get("outcome") == "cancelled" for t in trials
               if t.state.name == "FAIL")
    assert "failed" not in result.counts
    ok = [t for t in finished if t.user_attrs["outcome"] == "ok"]
    assert result.best_time_s == min(t.value for t in ok)
    assert any(t.user_attrs.get("source", "sampler") == "sampler" for t in finished)


def test_trials_asked_ahead_are_cancelled_when_time_is_up_and_the_study_resumes(storage,
                                                                                tmp_path):
    """A session that runs out of time closes the sampler trials it asked ahead as
    ``cancelled`` (never ``failed``, never left running); running again resumes the study.
    """
    g = parse_generator_spec(GRAPH)
    first = tune("sssp", g, trials=500, timeout_s=4, backend="cpu", storage=storage,
                 seed=4, compile_ahead=4)
    trials = _trials(storage, first.study_name)
    done = len([t for t in trials if t.state.name in ("COMPLETE", "PRUNED")])
    assert 0 < done < 500
    assert not [t for t in trials if t.state.name == "RUNNING"]
    cancelled = [t for t in trials if t.state.name == "FAIL"]
    assert all(t.user_attrs["outcome"] == "cancelled" for t in cancelled)
    assert first.counts.get("cancelled", 0) == len(cancelled) and "failed" not in first.counts
    from gswitch.tuner.report import write_report

    summary = write_report(tmp_path / "report", study=first.study_name, storage=storage)
    assert summary["counts"].get("cancelled", 0) == len(cancelled)
    assert "failed (retried)" not in summary["counts"]
    again = tune("sssp", g, trials=done + 3, backend="cpu", storage=storage, seed=4,
                 compile_ahead=4)
    assert len(again.history) == done + 3


def test_compile_ahead_shares_one_compile_per_module_and_never_fails_a_trial():
    """Configurations that differ in runtime parameters only share one module, hence one
    compile; without a GPU the compile fails in its process and ``wait`` says so with
    ``None`` (the worker then reports the trial's own outcome).
    """
    from gswitch.tuner.ahead import Precompiler

    spec = get_registry().algorithm("bfs")
    pre = Precompiler(spec, False, 1)
    a = gs.Config({"driving": "temporal", "driving.threshold": 0.1})
    b = gs.Config({"driving": "temporal", "driving.threshold": 0.3})
    try:
        fut = pre.submit(a)
        assert fut is not None and pre.submit(b) is fut and pre.submitted == 1
        took = pre.wait(b, 300)
        assert (took is None) == (not gs.gpu_available())
        assert Precompiler(spec, False, 0).submit(a) is None
        assert Precompiler(spec, False, 2, compiles=False).submit(a) is None
    finally:
        pre.close()


@pytest.mark.skipif(not hasattr(os, "nice"), reason="needs a system with nice()")
def test_compile_processes_run_below_the_tuner():
    """The pool's initializer lowers its process's priority, so that compiles on every
    core never take one from the trial being timed."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from gswitch.tuner import ahead

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                             initializer=ahead._init, initargs=("bfs", None)) as pool:
        child = pool.submit(os.nice, 0).result(timeout=120)
    assert child == min(19, os.nice(0) + ahead.COMPILE_NICENESS)


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize("args,message", [
    (["--trials", "0"], "--trials must be at least 1; got 0"),
    (["--storage", "redis-ish://x"], "unknown storage URL 'redis-ish://x'"),
    (["--storage", "sqlite:////no/such/dir/x.db"], "directory /no/such/dir does not exist"),
    (["--repeats", "0"], "--repeats must be an integer of at least 1; got 0"),
    (["--warmup", "-1"], "--warmup must be an integer of at least 0; got -1"),
    (["--warm-start", "-3"], "--warm-start must be an integer of at least 0; got -3"),
    (["--trial-timeout", "0"], "--trial-timeout must be a positive number of seconds"),
    (["--trial-timeout", "inf"], "--trial-timeout must be a positive number of seconds"),
    (["--prune-factor", "0.5"], "--prune-factor must be above 1; got 0.5"),
    (["--refine", "1.5"], "--refine must be a fraction from 0 to 1; got 1.5"),
    (["--refine", "nan"], "--refine must be a fraction from 0 to 1; got nan"),
    (["--compile-ahead", "-1"], "--compile-ahead must be an integer of at least 0; got -1"),
])
def test_bad_tune_input_is_one_line(args, message, capsys, storage):
    """Bad input to gswitch tune gives one line on stderr and exit status 2, and leaves
    no study behind (a bad --repeats used to crash every trial into the study).
    """
    if "--storage" not in args:
        args = [*args, "--storage", storage]
    code = main(["tune", "bfs", "--generate", GRAPH, "--backend", "cpu", *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and message in err
    if storage in args:
        assert not Path(storage.split("://", 1)[1]).exists() or \
            not open_storage(storage).get_all_studies()


def test_config_auto_and_tuned_on_a_fresh_cache(capsys, tmp_path):
    """With no tuning done yet, --config auto runs the default and --config tuned says to
    tune first; neither needs the cache folder to exist nor creates a storage file.
    """
    argv = ["run", "bfs", "--generate", "grid:4x4", "--source", "0", "--backend", "cpu"]
    assert main([*argv, "--config", "auto"]) == 0
    assert "config auto: default config: no bfs study" in capsys.readouterr().err
    assert main([*argv, "--config", "tuned"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "run `gswitch tune bfs ...` on it first" in err
    typo = tmp_path / "typo.journal"
    assert main([*argv, "--config", "auto", "--storage", str(typo)]) == 0
    assert not typo.exists() and not (tmp_path / "gswitch-cache" / "tuner").exists()


def test_report_refusals_are_one_line_and_create_nothing(capsys, tmp_path, storage):
    """report on a storage that does not exist, or --out naming a file, is one line."""
    missing = tmp_path / "missing.journal"
    assert main(["report", "--study", "x", "--storage", str(missing),
                 "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not exist" in err and "--storage" in err
    assert not missing.exists() and not (tmp_path / "rep").exists()
    assert main(["tune", "bfs", "--generate", GRAPH, "--backend", "cpu", "--storage", storage,
                 "--trials", "1", "--no-progress"]) == 0
    capsys.readouterr()
    afile = tmp_path / "a.json"
    afile.write_text("{}")
    assert main(["report", "bfs", "--generate", GRAPH, "--backend", "cpu", "--storage",
                 storage, "--out", str(afile)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is a file" in err and afile.read_text() == "{}"


def test_study_of_another_space_version_is_refused_untouched(storage, capsys):
    """--study naming a study of another space version is refused and left as it was."""
    store = open_storage(storage)
    st = optuna.create_study(study_name="mine", storage=store)
    st.set_user_attr("space_version", "0000000000")
    st.enqueue_trial({"driving": "data"})
    code = main(["tune", "bfs", "--generate", GRAPH, "--backend", "cpu", "--storage", storage,
                 "--study", "mine", "--trials", "2"])
    err = capsys.readouterr().err
    assert code == 2 and "space version 0000000000" in err and len(err.splitlines()) == 1
    again = optuna.load_study(study_name="mine", storage=open_storage(storage))
    assert len(again.get_trials()) == 1 and again.user_attrs == {"space_version": "0000000000"}


# ---------------------------------------------------------------------- CLI
def test_cli_tune_export_run_auto_and_report(storage, tmp_path, capsys):
    """tune --json --export, run --config tuned, and report's markdown and plots."""
    best = tmp_path / "best.json"
    code = main(["tune", "sssp", "--generate", "road:16x16", "--backend", "cpu", "--storage",
                 storage, "--trials", "5", "--seed", "2", "--export", str(best), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["best_config"] == json.loads(best.read_text())
    code = main(["run", "sssp", "--generate", "road:16x16", "--source", "0", "--backend", "cpu",
                 "--config", "tuned", "--storage", storage, "--json"])
    cap = capsys.readouterr()
    assert code == 0 and json.loads(cap.out)["config"] == out["best_config"]
    assert "config tuned: config tuned for this graph" in cap.err
    code = main(["report", "sssp", "--generate", "road:16x16", "--backend", "cpu", "--storage",
                 storage, "--out", str(tmp_path / "rep"), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["best"]["config"] == out["best_config"]
    md = (tmp_path / "rep" / "summary.md").read_text()
    assert "## driving: best time per option" in md and "Best configuration" in md
    sources = summary["sources"]
    # the default configuration of each searched formulation of sssp starts the study
    # (overlay is left out: the 256-node grid is one part)
    n_forms = len(build_space(get_registry().algorithm("sssp"),
                              parse_generator_spec("road:16x16"), "cpu").variants)
    assert n_forms == len(get_registry().variants["sssp"]) - 1
    assert sum(r["trials"] for r in sources.values()) == 5
    assert sources["default"]["trials"] == n_forms
    assert min(r["best_s"] for r in sources.values() if r["best_s"] is not None) == \
        pytest.approx(summary["best"]["time_s"])
    assert "## Where trials came from" in md and f"| default | {n_forms} |" in md
    pytest.importorskip("matplotlib", reason="plots need matplotlib (gswitch[report])")
    assert (tmp_path / "rep" / "history.png").stat().st_size > 1000
    assert (tmp_path / "rep" / "axes.png").stat().st_size > 1000


def _tune_cmd(storage, trials, *extra):
    return [sys.executable, "-m", "gswitch.cli", "tune", "bfs", "--generate", "rmat:12,seed=4",
            "--backend", "cpu", "--storage", storage, "--trials", str(trials), "--seed", "0",
            "--no-progress", *extra]


def _finished(storage):
    store = open_storage(storage)
    studies = store.get_all_studies()
    if not studies:
        return []
    st = optuna.load_study(study_name=studies[0].study_name, storage=store)
    return [t for t in st.get_trials() if t.state.name in ("COMPLETE", "PRUNED")]


def test_sigkill_mid_study_then_rerun_resumes(tmp_path):
    """SIGKILL mid-study loses no completed trial; the same command finishes the study."""
    storage = f"journal://{tmp_path / 'studies.journal'}"
    cmd = _tune_cmd(storage, 30, "--warmup", "3", "--repeats", "5")
    proc = subprocess.Popen(cmd, env=_env(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 40
        while time.time() < deadline and len(_finished(storage)) < 3:
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = {t.number: t.value for t in _finished(storage)}
    assert 3 <= len(before) < 30
    done = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    after = _finished(storage)
    assert len(after) >= 30
    values = {t.number: t.value for t in after}
    assert all(values[n] == v for n, v in before.items())


@pytest.mark.parametrize("kind", ["journal", pytest.param("sqlite", marks=pytest.mark.slow)])
def test_two_processes_share_one_study(tmp_path, kind):
    """Two tuner processes on one journal file or SQLite database fill one study together."""
    storage = (f"journal://{tmp_path / 'studies.journal'}" if kind == "journal"
               else f"sqlite:///{tmp_path / 'studies.db'}")
    open_storage(storage)  # create the schema once, before the two race for it
    procs = [subprocess.Popen(_tune_cmd(storage, 16), env=_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    finished = _finished(storage)
    assert 16 <= len(finished) <= 18
    assert len({t.user_attrs["pid"] for t in finished}) == 2
    assert len({t.number for t in finished}) == len(finished)
    assert DEFAULTS["driving"] in {t.user_attrs["config"]["driving"] for t in finished}


class _Suggestions:
    """Test-only plugin: one refused, one unknown and one valid suggestion."""

    @staticmethod
    @gs.hookimpl
    def gswitch_suggested_configs(algorithm, features, backend):
        return [{"driving": "topology", "driving.atomic_free": True},  # refused for pagerank
                {"driving": "no_such_strategy"},
                {"driving": "temporal"}]


def test_suggested_configs_are_checked_and_enqueued_in_order(storage):
    """Plugins' suggestions follow the default; refused or unknown ones are skipped."""
    from gswitch.plugins import get_plugin_manager

    pm = get_plugin_manager()
    plugin = _Suggestions()
    pm.register(plugin, name="test-suggestions")
    try:
        g = parse_generator_spec("rmat:8,seed=4")
        result = tune("pagerank", g, trials=6, backend="cpu", storage=storage, seed=0)
    finally:
        pm.unregister(plugin)
    trials = _trials(storage, result.study_name)
    configs = [t.user_attrs.get("config", {}) for t in trials]
    sources = [t.user_attrs.get("source", "sampler") for t in trials]
    assert sources[0] == "default"
    suggested = [c for c, s in zip(configs, sources) if s.startswith("suggested:")]
    assert not any(c.get("driving.atomic_free") for c in suggested)
    assert any(c["driving"] == "temporal" for c in suggested)
    assert all(t.user_attrs["outcome"] != "refused" for t in trials
               if t.user_attrs.get("source", "").startswith("suggested:"))


def test_trial_finished_by_another_process_is_dropped(tmp_path):
    """SQLite lets two processes pop one enqueued trial; the slower one's result is dropped,
    the recorded one is kept, and the tuner goes on."""
    from gswitch.tuner.study import _Session

    url = f"sqlite:///{tmp_path / 'race.db'}"
    mine = optuna.create_study(study_name="race", storage=open_storage(url))
    other = optuna.load_study(study_name="race", storage=open_storage(url))
    trial = mine.ask()
    other.tell(trial.number, 2.0)  # the other process finished it first
    session = _Session(mine, None, None, None, "cpu", 4, None, 0, 1, 3.0, 0.05, 10.0, None)
    session._tell(trial, None, {"outcome": "ok", "value_s": 1.0}, time.perf_counter())
    (t,) = optuna.load_study(study_name="race", storage=open_storage(url)).trials
    assert t.value == 2.0
    assert session.new_trials == 0


def test_trial_finished_by_another_process_while_recording_is_dropped(tmp_path,
                                                                      monkeypatch):
    """The other process may finish the trial after this one set its attributes and before
    it tells the value (Optuna then refuses the second ``tell``): the result is dropped
    and the study goes on, as when the trial was finished before recording began."""
    from gswitch.tuner.study import _Session

    url = f"sqlite:///{tmp_path / 'race.db'}"
    mine = optuna.create_study(study_name="race", storage=open_storage(url))
    other = optuna.load_study(study_name="race", storage=open_storage(url))
    trial = mine.ask()
    real_tell = mine.tell

    def tell_after_the_other(t, *args, **kwargs):
        other.tell(trial.number, 2.0)  # the other process gets there first
        return real_tell(t, *args, **kwargs)

    monkeypatch.setattr(mine, "tell", tell_after_the_other)
    session = _Session(mine, None, None, None, "cpu", 4, None, 0, 1, 3.0, 0.05, 10.0, None)
    session._tell(trial, None, {"outcome": "ok", "value_s": 1.0}, time.perf_counter())
    (t,) = optuna.load_study(study_name="race", storage=open_storage(url)).trials
    assert t.value == 2.0
    assert session.new_trials == 0


def test_graph_features_are_cached_by_fingerprint(tmp_path, monkeypatch):
    """Features are computed once per graph; a damaged cache file is recomputed."""
    from gswitch.tuner.storage import FEATURES, graph_features

    from gswitch.analysis import graph_info

    monkeypatch.setenv("GSWITCH_CACHE_DIR", str(tmp_path))
    g = parse_generator_spec("rmat:7,seed=5")
    first = graph_features(g)
    info = graph_info(g)
    assert first == {k: float(info[k]) for k in FEATURES}
    path = tmp_path / "tuner" / "features" / f"{g.fingerprint}.json"
    assert json.loads(path.read_text()) == first
    path.write_text(json.dumps({**first, "n_nodes": 1.0}))  # served from the file
    assert graph_features(g)["n_nodes"] == 1.0
    path.write_text("{not json")
    assert graph_features(g) == first


@pytest.mark.parametrize("devices,names,message", [
    ([0, 2], ["H100", "H100"], "--devices names GPU 2 but this machine has 2 (0 to 1)"),
    ([0, 1], ["H100", "A100"], "--devices lists GPUs of different models (A100, H100)"),
    ([1, 0], ["H200", "H200"], None),
])
def test_device_key_checks_the_listed_gpus(monkeypatch, devices, names, message):
    """The study's device key: listed GPUs must exist and be of one model."""
    import types

    from gswitch.tuner.storage import device_key

    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: len(names), getDevice=lambda: 0,
        getDeviceProperties=lambda i: {"name": names[i].encode()})
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    if message is None:
        assert device_key("gpu", devices) == "gpu:H200"
    else:
        with pytest.raises(gs.InvalidInput, match=re.escape(message)):
            device_key("gpu", devices)
    assert device_key("cpu", devices) == "cpu"


# ---------------------------------------------------------------------- variants
def test_space_samples_variants_and_never_an_unsupported_strategy_with_one():
    """cc's space searches its variants; hook_compress and afforest are never sampled with
    a driving or direction they do not support, and the parameters rebuild the config.
    """
    g = parse_generator_spec(GRAPH)
    reg = get_registry()
    space = build_space(reg.algorithm("cc"), g, "gpu")
    forms = tuple(reg.variants["cc"])
    assert set(forms) == {"afforest", "hook_compress", "label_propagation"}
    assert space.axes["variant"] == forms
    assert space.restricted["hook_compress"] == {"driving": ("topology",), "direction": ("push",)}
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    seen = set()
    for _ in range(40):
        trial = study.ask()
        cfg = space.suggest(trial)
        seen.add(cfg["variant"])
        spec = space.spec(cfg)
        assert spec is reg.variants["cc"][cfg["variant"]]
        assert all(spec.unsupported(axis, cfg[axis], DEFAULTS.get(axis)) is None
                   for axis in AXES)
        if cfg["variant"] in ("hook_compress", "afforest"):  # held: never study parameters
            assert "driving" not in trial.params and "direction" not in trial.params
        assert space.config(dict(trial.params)).to_dict() == cfg.to_dict()
        study.tell(trial, 1.0)
    assert seen == set(forms)
    grid = space.grid()
    assert grid["variant"] == list(forms)


def test_restricted_choices_get_their_own_parameter_name(monkeypatch):
    """A variant that narrows an axis to two or more strategies samples it as
    ``<axis>|<variant>``, so the plain axis keeps one distribution.
    """
    spec = get_registry().variants["cc"]["hook_compress"]
    monkeypatch.setattr(spec, "supports", {"driving": ("topology", "temporal")})
    monkeypatch.setattr(spec, "config_defaults", {"driving": "topology"})
    space = build_space(get_registry().algorithm("cc"), parse_generator_spec(GRAPH), "cpu")
    assert space.axis_choices("driving", "hook_compress") == \
        ("driving|hook_compress", ("temporal", "topology"))
    assert space.axis_choices("driving", "label_propagation")[0] == "driving"
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    for _ in range(30):
        trial = study.ask()
        cfg = space.suggest(trial)
        if cfg["variant"] == "hook_compress":
            assert trial.params["driving|hook_compress"] == cfg["driving"] != "data"
            assert "driving" not in trial.params
        study.tell(trial, 1.0)
    params = space.trial_params({"variant": "hook_compress", "driving": "data"})
    assert params == {"variant": "hook_compress"}  # left for the sampler: not supported
    fixed = space.repaired({"variant": "hook_compress", "driving": "data",
                            "driving.threshold": 0.5})
    assert fixed["driving"] == "topology" and "driving.threshold" not in fixed


def test_space_version_changes_when_a_variant_changes(monkeypatch):
    """Changing what a variant supports or defaults to changes the space version."""
    spec = get_registry().variants["cc"]["hook_compress"]
    before = space_version()
    monkeypatch.setattr(spec, "supports", {"driving": ("topology", "temporal")})
    assert space_version() != before
    monkeypatch.undo()
    assert space_version() == before
    monkeypatch.setattr(spec, "config_defaults", {"driving": "topology", "block_size": 128})
    assert space_version() != before


def test_tune_searches_cc_variants_with_verified_trials(storage):
    """A CPU study of cc tries both variants, every trial's config suits its variant, every
    completed trial was checked against the reference, and warm start enqueues each
    variant's default.
    """
    g = parse_generator_spec(GRAPH)
    result = tune("cc", g, trials=8, backend="cpu", storage=storage, seed=0, sampler="random")
    # on the CPU the default formulation is hook_compress (default_on), tried first
    assert result.warm_start[:3] == ["default", "default:afforest",
                                     "default:label_propagation"]
    trials = _trials(storage, result.study_name)
    done = [t for t in trials if t.state.name == "COMPLETE"]
    assert len(done) == 8
    variants = {t.user_attrs["config"]["variant"] for t in done}
    assert variants == {"afforest", "label_propagation", "hook_compress"}
    reg = get_registry()
    for t in done:
        cfg = t.user_attrs["config"]
        if t.params.get("variant") in ("hook_compress", "afforest"):
            assert "driving" not in t.params and cfg["driving"] == "topology"
        spec = reg.variants["cc"][cfg["variant"]]
        assert all(spec.unsupported(axis, cfg[axis], DEFAULTS.get(axis)) is None
                   for axis in AXES)
        assert t.user_attrs["outcome"] == "ok"  # measured and verified, or the same config
        if not t.user_attrs.get("reused"):
            assert len(t.user_attrs["times_s"]) == 3
    assert result.space["axes"]["variant"] == list(reg.variants["cc"])


def test_pinned_variant_study_and_config_auto_carry_the_variant(storage, capsys):
    """--set variant= tunes one formulation in its own study; --config tuned/auto and the
    warm start of another graph bring that variant back.
    """
    g = parse_generator_spec(GRAPH)
    result = tune("cc", g, trials=3, backend="cpu", storage=storage, seed=0,
                  variant="hook_compress")
    assert result.study_name.startswith("cc[hook_compress]@")
    assert result.best_config["variant"] == "hook_compress"
    assert result.space["fixed"]["variant"] == "hook_compress"
    assert "variant" not in result.space["axes"]
    cfg, _ = resolve_config("cc", g, "tuned", backend="cpu", storage=storage)
    assert cfg["variant"] == "hook_compress" and cfg["driving"] == "topology"
    other = parse_generator_spec("rmat:8,seed=9")
    cfg, where = resolve_config("cc", other, "auto", backend="cpu", storage=storage)
    assert cfg["variant"] == "hook_compress" and "nearest tuned graph" in where
    second = tune("cc", other, trials=1, backend="cpu", storage=storage, seed=0)
    assert second.warm_start[0].startswith("similar:cc[hook_compress]@")
    first = _trials(storage, second.study_name)[0]
    assert first.params["variant"] == "hook_compress"
    assert main(["tune", "cc", "--generate", GRAPH, "--backend", "cpu", "--storage", storage,
                 "--set", "driving=data"]) == 2
    assert "--set takes variant=NAME only" in capsys.readouterr().err


def test_objective_call_or_device_times_and_keeps_studies_apart(storage, tmp_path):
    """--objective call (the default) makes a trial's value the whole call, device its
    engine time; both are recorded on every trial, the two objectives get separate
    studies, and the report finds each and shows both times."""
    from gswitch.tuner.report import write_report

    g = parse_generator_spec(GRAPH)
    call = tune("bfs", g, trials=3, backend="cpu", storage=storage, seed=1)
    device = tune("bfs", g, trials=3, backend="cpu", storage=storage, seed=1,
                  objective="device")
    assert call.study_name != device.study_name and call.study_name.endswith(" [call]")
    for result, key in ((call, "call_s"), (device, "device_s")):
        ok = [t for t in _trials(storage, result.study_name)
              if t.user_attrs.get("outcome") == "ok"]
        assert ok
        for t in ok:
            a = t.user_attrs
            assert a["call_s"] >= a["device_s"] > 0  # a call contains its engine time
            assert t.value == pytest.approx(a[key])
    for objective, result in (("call", call), ("device", device)):
        out = write_report(tmp_path / objective, algorithm="bfs", graph=g, storage=storage,
                           backend="cpu", objective=objective)
        assert out["study_name"] == result.study_name
        assert out["best"]["call_s"] >= out["best"]["device_s"]
        assert "Median call" in (tmp_path / objective / "summary.md").read_text()
    with pytest.raises(gs.InvalidInput, match="--objective must be call or device"):
        tune("bfs", g, trials=1, backend="cpu", storage=storage, objective="wall")


def test_unvalidated_strategies_are_left_out_of_the_gpu_search(monkeypatch, capsys):
    """A strategy whose device code has not passed the GPU suite is not searched on the
    gpu backend (the reason names how to choose it), is still searched on the CPU, and
    ``gswitch strategies`` marks it."""
    from gswitch.cli import main
    from gswitch.plugins import get_registry

    cls = get_registry().strategies["driving"]["temporal"]
    monkeypatch.setattr(cls, "validated", False)
    graph = gs.generators.grid2d(6, 6)
    spec = get_registry().algorithm("bfs")
    gpu = build_space(spec, graph, "gpu")
    assert "--set driving=temporal" in gpu.excluded["driving=temporal"]
    assert "temporal" not in gpu.axis_choices("driving", gpu.variants[0])[1]
    assert "driving=temporal" not in build_space(spec, graph, "cpu").excluded
    assert main(["strategies"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  temporal"))
    assert "not yet validated" in line


# ---------------------------------------------------------------------- array code
@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_space_holds_every_axis_for_a_variant_run_by_array_code(backend):
    """betweenness's batched variant is one more choice of the variant axis; no strategy,
    strategy parameter or GPU launch key is ever sampled with it."""
    g = parse_generator_spec(GRAPH).simple()
    space = build_space(get_registry().algorithm("betweenness"), g, backend)
    assert space.axes["variant"] == ("batched", "per_source")
    assert space.direct == ("batched",)
    assert set(space.restricted["batched"]) <= set(AXES)
    for axis in AXES:
        assert space.axis_choices(axis, "batched") == (None, (DEFAULTS[axis],))
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=2))
    seen = set()
    for _ in range(30):
        trial = study.ask()
        cfg = space.suggest(trial)
        seen.add(cfg["variant"])
        if cfg["variant"] == "batched":
            assert set(trial.params) <= {"variant", "renumber"}
            assert space.neighbours(dict(trial.params))  # the other variant, renumbering
        assert space.config(dict(trial.params)).to_dict() == cfg.to_dict()
        study.tell(trial, 1.0)
    assert seen == {"batched", "per_source"}
    assert space.n_combinations > 1


def test_tune_runs_the_array_code_variant_with_verified_trials(storage):
    """A CPU study of betweenness runs batched trials, checked against the reference."""
    g = parse_generator_spec("grid:6x6")
    result = tune("betweenness", g, trials=6, backend="cpu", storage=storage, seed=0,
                  sampler="random")
    done = [t for t in _trials(storage, result.study_name) if t.state.name == "COMPLETE"]
    batched = [t for t in done if t.user_attrs["config"]["variant"] == "batched"]
    assert batched and all(t.user_attrs["outcome"] == "ok" for t in done)
    assert result.space["direct"] == ["batched"]


def test_the_tune_table_shows_the_best_configurations_own_parameters():
    """A best configuration whose strategies the default does not use shows their
    parameters too, after their axis: the table alone reproduces it."""
    from types import SimpleNamespace

    from gswitch.tuner.cli import _table

    best = {**gs.Config().to_dict(), "driving": "spatial", "driving.schedule": "ring",
            "driving.partition_size": 1024, "renumber": "hilbert"}
    lines = _table(SimpleNamespace(best_config=best, backend="gpu", space={})).splitlines()
    keys = [line.split()[0] for line in lines[1:]]
    assert {"driving.schedule", "driving.partition_size"} <= set(keys)
    assert keys.index("driving.schedule") > keys.index("driving") \
        and keys.index("driving.schedule") < keys.index("direction")
    row = next(line for line in lines if line.split()[0] == "driving.schedule")
    assert row.split()[1:] == ["ring", "-", "*"]
