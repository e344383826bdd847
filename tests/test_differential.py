"""Randomized differential testing on the CPU engine: configurations drawn from each
algorithm's tuner space (every axis, strategy parameter and ``renumber``) on small random
graphs of several families, each answer against the algorithm's independent reference,
and answers that are unique equal across configurations.

This is how renumbering was found to change the answers of formulations that break ties
by node id. Marked ``slow`` (``.ci/run`` runs it); a failure names the graph, the
seed and the configuration, which reproduce it.
"""

import json

import numpy as np
import optuna
import pytest
from gswitch.tuner import build_space

import gswitch as gs
from gswitch.errors import InvalidConfig, InvalidInput
from gswitch.generators import clique_chain, grid2d, rmat, road, star, uniform_random
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference

pytestmark = pytest.mark.slow

#: one valid answer among several (checked by their reference's invariant only)
NOT_UNIQUE = {"maximal_independent_set", "label_propagation", "minimum_spanning_forest"}
#: configurations drawn per (algorithm, graph)
DRAWS = 24


def _graphs(seed: int) -> dict[str, gs.Graph]:
    rng = np.random.default_rng(seed)
    n = 60
    src, dst = rng.integers(0, n, 150), rng.integers(0, n, 150)
    odd = gs.Graph.from_edges(np.r_[src, 3, 3], np.r_[dst, 3, 7],  # a loop, a repeat
                              rng.integers(1, 9, 152).astype(float), n_nodes=n + 4)
    return {
        "rmat": rmat(7, 4, seed=seed, weighted=True),
        "uniform_undirected": uniform_random(90, 200, seed=seed).symmetrize(),
        "road": road(9, 11, seed=seed),
        "grid": grid2d(7, 8),
        "star": star(40, weighted=True, seed=seed),
        "chain": clique_chain(6, 5, weighted=True, seed=seed),
        "odd_directed": odd,
    }


def _kwargs(spec, graph):
    kw = {"source": 1} if spec.start.kind == "source" else {}
    if "sources" in spec.inputs and spec.inputs["sources"][1].default == 0:
        kw["sources"] = [0, 2, 5]
    return kw


CASES = sorted(get_registry().variants)


@pytest.mark.parametrize("name", CASES)
def test_random_configurations_give_the_reference(name):
    spec0 = get_registry().algorithm(name)
    for gname, graph in _graphs(seed=11).items():
        kw = _kwargs(spec0, graph)
        try:
            space = build_space(spec0, graph, "cpu")
        except (InvalidConfig, InvalidInput, gs.GswitchError):
            continue  # no formulation runs on this graph (say, SCC of an undirected one)
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=7))
        unique = None
        for _ in range(DRAWS):
            try:
                cfg = space.suggest(study.ask())
            except InvalidConfig:
                continue
            try:
                r = gs.run(name, graph, backend="cpu", config=cfg, **kw)
            except (InvalidConfig, InvalidInput) as exc:
                assert str(exc).strip() and "\n" not in str(exc).strip()
                continue
            spec = get_registry().algorithm(name, cfg["variant"])
            out = spec.outputs[0]
            ref_kw = dict(kw)
            if "sources" in kw:
                ref_kw["sources"] = spec.inputs["sources"][1].prepare(
                    kw["sources"], {"n_nodes": graph.n_nodes})
            where = f"{name} on {gname} (seed 11) with {json.dumps(cfg.to_dict())}"
            problem = compare(spec, r.fields[out], reference(spec, graph, **ref_kw))
            assert problem is None, f"{where}: {problem}"
            if name not in NOT_UNIQUE and r.fields[out].dtype.kind in "iub" \
                    and spec.outputs[0] == spec0.outputs[0]:
                if unique is None:
                    unique = r.fields[out]
                assert np.array_equal(r.fields[out], unique), where
