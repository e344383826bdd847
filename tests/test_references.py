"""An algorithm declares its own reference and comparison: the built-ins, variants that
inherit them, a user algorithm checked by the test helpers and by the tuner, wrong answers.
"""

from pathlib import Path

import numpy as np
import pytest
from gswitch.tuner import tune
from gswitch.tuner.study import _reference
from gswitch.tuner.worker import PLUGINS_ENV, load_extra_plugins, measure

import gswitch as gs
from gswitch.algorithm import int_inf
from gswitch.config import Config
from gswitch.generators import parse_generator_spec
from gswitch.plugins import get_plugin_manager, get_registry
from gswitch.testing.reference import canonical_labels, compare, reference
from gswitch.verify import answer_problem, close, exact, expected_answer, generic_compare

TESTS = Path(__file__).resolve().parent
PLUGIN = "tuner_plugins.declared_reference"
BUILTIN = ["bfs", "sssp", "cc", "pagerank"]
#: run arguments of each built-in, so tests stay free of per-algorithm branches
RUN_ARGS = {"bfs": {"source": 0}, "sssp": {"source": 0}, "cc": {}, "pagerank": {}}


@pytest.fixture
def declared(monkeypatch):
    """Register the test plugin with a declared reference, here and in tuner workers."""
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setenv(PLUGINS_ENV, PLUGIN)
    load_extra_plugins()
    yield __import__(PLUGIN, fromlist=["MARK"])
    pm = get_plugin_manager()
    plugin = pm.get_plugin(PLUGIN)
    if plugin is not None:
        pm.unregister(plugin)
    get_registry.cache_clear()


@pytest.fixture
def graph():
    """A small weighted RMAT graph with unreached nodes from node 0."""
    return parse_generator_spec("rmat:7,seed=4,weighted")


def _unreached(g, source=0):
    d = reference("bfs", g, source=source)
    assert (d < 0).any()
    return d


# ---------------------------------------------------------------------- built-ins
@pytest.mark.parametrize("name", BUILTIN)
def test_builtin_declares_reference_and_variants_inherit_it(name):
    """Each built-in declares expected and compare; every variant has the same ones."""
    reg = get_registry()
    base = reg.algorithm(name)
    assert callable(base.expected) and callable(base.compare)
    assert base.expected.__module__ == f"gswitch.algorithms.{name}"
    for spec in reg.variants[name].values():
        assert spec.expected is base.expected and spec.compare is base.compare


@pytest.mark.parametrize("name", BUILTIN)
def test_builtin_answer_matches_by_name_and_by_spec(name, graph):
    """The wrapper finds the declared functions by name or spec; the CPU answer matches."""
    spec = get_registry().algorithm(name)
    args = RUN_ARGS[name]
    by_name, by_spec = reference(name, graph, **args), reference(spec, graph, **args)
    np.testing.assert_array_equal(by_name, by_spec)
    got = gs.run(name, graph, backend="cpu", **args).fields[spec.outputs[0]]
    assert compare(name, got, by_name) is None
    assert compare(spec, got, by_spec) is None


@pytest.mark.parametrize("name", BUILTIN)
def test_builtin_comparison_reports_a_wrong_answer(name, graph):
    """Moving one node's answer far off, or dropping a node, is reported in one line."""
    args = RUN_ARGS[name]
    want = reference(name, graph, **args)
    got = gs.run(name, graph, backend="cpu", **args).fields[
        get_registry().algorithm(name).outputs[0]].copy()
    node = int(np.flatnonzero(np.isfinite(want) & (want >= 0))[-1])
    got[node] = got[node] + 3
    problem = compare(name, got, want)
    assert problem and "\n" not in problem
    assert "shape" in compare(name, got[:-1], want)


def test_tolerances_are_part_of_the_comparison():
    """PageRank allows an L1 distance of 1e-4, SSSP rtol 1e-5 / atol 1e-4, CC any labels."""
    ranks = np.full(4, 0.25)
    assert compare("pagerank", ranks + 2e-5, ranks) is None
    assert "L1 distance" in compare("pagerank", ranks + 1e-4, ranks)
    dist = np.array([0.0, 1.0, np.inf])
    assert compare("sssp", dist + 5e-5, dist) is None
    assert "distance differs" in compare("sssp", dist + 5e-4, dist)
    assert "reachability" in compare("sssp", np.array([0.0, np.inf, np.inf]), dist)
    labels = np.array([0, 0, 2, 2])
    assert compare("cc", np.array([7, 7, 3, 3]), labels) is None
    assert compare("cc", np.array([7, 7, 7, 3]), labels)
    assert compare("bfs", np.array([0, 1, 2]), np.array([0, 1, 3])).startswith("1 nodes")


def test_shared_helpers():
    """canonical_labels still imports from the test helpers; the verify helpers agree."""
    np.testing.assert_array_equal(canonical_labels([5, 5, 1, 9, 1]), [0, 0, 2, 3, 2])
    assert exact([1, 2], [1, 2]) is None and exact([1, 2], [1, 3])
    assert close([1.0, np.inf], [1.0, np.inf], rtol=0, atol=0) is None
    assert close([1.0, -np.inf], [1.0, np.inf], rtol=0, atol=0)
    assert generic_compare(np.array([1, 2]), np.array([1, 2])) is None
    assert generic_compare(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-3]))


def test_reference_params_are_completed_with_the_defaults(graph):
    """A reference reads every parameter; the caller's values replace the defaults."""
    default = reference("pagerank", graph)
    np.testing.assert_allclose(default, reference("pagerank", graph, alpha=0.85))
    assert np.abs(reference("pagerank", graph, alpha=0.5) - default).sum() > 1e-3


# ---------------------------------------------------------------------- user algorithms
def test_user_algorithm_is_checked_by_its_own_functions(declared, graph):
    """By name or spec the wrapper calls the user's expected and compare, which accept the
    engine's infinity where the generic comparison would not."""
    spec = get_registry().algorithm("hops_declared")
    assert spec.expected is declared.expected_hops and spec.compare is declared.compare_hops
    want = reference("hops_declared", graph, source=0)
    np.testing.assert_array_equal(want, _unreached(graph))
    got = gs.run("hops_declared", graph, backend="cpu", source=0).fields["depth"]
    assert (got >= int_inf("int32")).any()
    assert compare("hops_declared", got, want) is None
    assert compare(spec, got, want) is None
    assert generic_compare(got, want) is not None  # only the declared one accepts it


def test_user_variant_inherits_the_declared_reference(declared, graph):
    """A variant without expected/compare of its own uses its default variant's."""
    variant = get_registry().algorithm("hops_declared", "inherits")
    assert variant.expected is declared.expected_hops
    assert variant.compare is declared.compare_hops
    got = gs.run(variant, graph, backend="cpu", source=0).fields["depth"]
    assert compare(variant, got, reference(variant, graph, source=0)) is None


def test_user_comparison_reports_a_wrong_answer(declared, graph):
    """A wrong answer is reported by the algorithm's own comparison, in its words."""
    want = reference("hops_declared", graph, source=0)
    got = gs.run("hops_declared", graph, backend="cpu", source=0).fields["depth"].copy()
    got[want == 1] += 1
    problem = compare("hops_declared", got, want)
    assert problem.startswith(declared.MARK) and "nodes differ" in problem


def test_algorithm_without_reference(declared, graph):
    """No declared expected: the wrapper says so, the tuner uses the CPU engine's answer,
    and answers are compared generically."""
    spec = get_registry().algorithm("hops_undeclared")
    assert spec.expected is None and spec.compare is None
    with pytest.raises(KeyError, match="declares no expected"):
        reference("hops_undeclared", graph, source=0)
    assert expected_answer(spec, graph, source=0) is None
    ref, desc = _reference(spec, graph, 0, {})
    assert desc == "CPU engine, default configuration"
    assert answer_problem(spec, ref, ref) is None
    assert "nodes differ" in answer_problem(spec, ref + 1, ref)


# ---------------------------------------------------------------------- the tuner
def test_tuner_reference_is_the_declared_one(declared, graph):
    """The tuner's expected answer comes from the spec's expected, named in its note."""
    spec = get_registry().algorithm("hops_declared")
    ref, desc = _reference(spec, graph, 0, {})
    np.testing.assert_array_equal(ref, declared.expected_hops(graph, 0))
    assert "scipy shortest_path (test plugin)" in desc
    ref, desc = _reference(get_registry().algorithm("bfs"), graph, 0, {})
    np.testing.assert_array_equal(ref, reference("bfs", graph, source=0))


def test_tuner_measure_checks_trials_with_the_declared_compare(declared, graph):
    """A trial passes by the declared compare, and fails with its message when the
    expected answer is not what the algorithm computes."""
    spec = get_registry().algorithm("hops_declared")
    ref, _ = _reference(spec, graph, 0, {})
    kw = dict(backend="cpu", source=0, params={}, warmup=0, repeats=1, deadline_s=None)
    assert measure(spec, graph, Config(), reference=ref, **kw)["outcome"] == "ok"
    out = measure(spec, graph, Config(), reference=np.where(ref > 0, ref + 1, ref), **kw)
    assert out["outcome"] == "wrong_answer"
    assert out["reason"].startswith(f"wrong answer: {declared.MARK}")


def test_tune_verifies_a_user_algorithm_in_its_workers(declared, tmp_path):
    """A study of the user algorithm completes trials: its workers check answers with the
    declared compare (the generic one would reject every one of them)."""
    g = parse_generator_spec("rmat:7,seed=4")
    result = tune("hops_declared", g, trials=3, backend="cpu", seed=0, source=0,
                  storage=f"journal://{tmp_path / 'studies.journal'}")
    assert result.counts.get("ok", 0) >= 1 and result.best_config is not None
    assert "scipy shortest_path (test plugin)" in result.reference
