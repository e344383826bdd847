"""GPU suite for label_propagation: every supported strategy pair of each formulation on
the zoo gives networkx's partition (semi-synchronous) or a fixpoint of label propagation
(asynchronous), and the CPU engine's labels."""

import functools

import numpy as np
import pytest

import gswitch as gs
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

NAME = "label_propagation"
VARIANTS = sorted(get_registry().variants[NAME])
#: the 2000-node path needs one colouring step per node
ZOO = [n for n in ZOO_NAMES if n != "path"]


@functools.cache
def _expected(name, variant):
    g = zoo_graph(name)
    cpu = gs.run(NAME, g, backend="cpu", config={"variant": variant}).fields["label"]
    return g, reference(NAME, g), cpu


@functools.cache
def _configs(variant):
    from gswitch.combinations import pairwise_configs  # enumerating them takes seconds

    return tuple(pairwise_configs(get_registry().variants[NAME][variant]))


@pytest.mark.parametrize("name", ZOO)  # one test per graph, so workers share the suite
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_combination_matches_the_reference(variant, name):
    """Every pairwise strategy combination the variant supports gives the reference
    answer on the zoo graph, and the CPU engine's labels."""
    g, ref, cpu = _expected(name, variant)
    failures = []
    for cfg in _configs(variant):
        got = gs.run(NAME, g, backend="gpu",
                     config=cfg.replace(variant=variant)).fields["label"]
        problem = compare(NAME, got, ref) if variant == "semi_synchronous" else None
        if problem is None and not np.array_equal(got, cpu):
            problem = "differs from the CPU engine's labels"
        if problem:
            failures.append(f"{dict(cfg)}: {problem}")
    assert not failures, f"{len(failures)} failures; " + "; ".join(failures[:5])
