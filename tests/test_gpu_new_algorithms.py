"""GPU suite for core_number, maximal_independent_set and triangles: every supported
strategy pair of each formulation on every zoo graph gives networkx's core numbers or
triangle counts, or an independent and maximal set, and the answer is the CPU engine's."""

import functools

import numpy as np
import pytest

import gswitch as gs
from gswitch.combinations import pairwise_configs
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

OUTPUT = {"core_number": "core", "maximal_independent_set": "in_set",
          "triangles": "triangles"}


def _cases():
    return [(spec, c.replace(variant=spec.variant)) for name in OUTPUT
            for spec in get_registry().variants[name].values() for c in pairwise_configs(spec)]


@functools.cache
def _graph(name, algorithm):
    g = zoo_graph(name)
    # core numbers are refused on self-loops (tests/test_kcore.py checks that)
    return g.remove_self_loops() if algorithm == "core_number" else g


@functools.cache
def _expected(algorithm, name):
    g = _graph(name, algorithm)
    return reference(algorithm, g), gs.run(algorithm, g, backend="cpu").fields[OUTPUT[algorithm]]


def _id(case):
    spec, cfg = case
    return "-".join([spec.label] + [str(cfg[a]) for a in ("worklist", "load_balance",
                                                          "driving", "direction", "launch")])


@pytest.mark.cases("case", _cases, ids=_id)
def test_combination_matches_reference(case):
    """This formulation under this strategy combination gives the reference on every zoo
    graph; the independent set is the one the CPU engine finds (a function of the seed)."""
    spec, cfg = case
    failures = []
    for name in ZOO_NAMES:
        ref, cpu = _expected(spec.name, name)
        got = np.asarray(gs.run(spec.name, _graph(name, spec.name), backend="gpu",
                                config=cfg).fields[OUTPUT[spec.name]])
        problem = compare(spec.name, got, ref)
        if problem is None and not np.array_equal(got, cpu):
            problem = "differs from the CPU engine's answer"
        if problem:
            failures.append(f"{name}: {problem}")
    assert not failures, "; ".join(failures)


def test_triangles_default_on_the_gpu_is_the_oriented_count():
    """With no configuration the GPU counts oriented (renumbered by degree) and gives
    networkx's counts, in the caller's ids."""
    from gswitch.generators import rmat

    g = rmat(11, 8, seed=7)
    r = gs.run("triangles", g, backend="gpu")
    assert r.stats["variant"] == "oriented" and r.config["renumber"] == "degree"
    assert compare("triangles", np.asarray(r.fields["triangles"]),
                   reference("triangles", g)) is None
