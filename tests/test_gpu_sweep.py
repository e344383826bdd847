"""GPU sweep: configurations drawn with every parameter, on larger graphs of other shapes.

The GPU suite (``test_gpu.py``) covers all pairs of strategy options at their default
parameters on the small zoo. This sweep draws :data:`~gswitch.testing.zoo.SWEEP_CONFIGS`
configurations per algorithm from the whole space, numeric and runtime parameters,
``block_size`` and small worklist capacities included, and runs each on every graph of
:data:`~gswitch.testing.zoo.SWEEP` (10^5 to 10^6 edges: hubs of degree 10^5 pushed and
pulled, a road-like grid, a directed power-law graph, thousands of tiny components, a
path into a clique, zero-weight edges, 10^5 nodes almost all isolated). Every answer
must equal the scipy reference; a combination a strategy refuses for a graph must be
refused by the run too. The compile suite compiles the same configurations in CI.
``GSWITCH_SWEEP_SEED=N`` draws another sample, for exploring beyond what CI compiles.
"""

import functools
import os

import pytest

import gswitch as gs
from gswitch.combinations import sampled_configs
from gswitch.plugins import get_registry
from gswitch.runner import check_combination
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import SWEEP_CONFIGS, SWEEP_NAMES, sweep_configs, sweep_graph

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

ALGORITHMS = ["bfs", "sssp", "cc", "pagerank"]
OUTPUT = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}
SPECS = {a: get_registry().algorithm(a) for a in ALGORITHMS}
SEED = os.environ.get("GSWITCH_SWEEP_SEED")


def _cases():
    return [(a, c) for a in ALGORITHMS for c in (
        sweep_configs(SPECS[a]) if SEED is None else
        sampled_configs(SPECS[a], SWEEP_CONFIGS, seed=int(SEED)))]


@functools.cache
def _graph(name):
    return sweep_graph(name)


@functools.cache
def _reference(algorithm, name):
    g, source = _graph(name)
    kwargs = {"source": source} if algorithm in ("bfs", "sssp") else {}
    return reference(algorithm, g, **kwargs)


def _id(case):
    alg, cfg = case
    return f"{alg}-{cfg.key()[:10]}-" + "-".join(str(cfg[a]) for a in (
        "worklist", "load_balance", "driving", "direction", "launch"))


@pytest.mark.cases("case", _cases, ids=_id)
def test_drawn_configuration_matches_reference(case):
    """This drawn configuration gives the reference answer on every sweep graph."""
    algorithm, cfg = case
    failures, ran, refused = [], 0, 0
    for name in SWEEP_NAMES:
        g, source = _graph(name)
        kwargs = {"source": source} if algorithm in ("bfs", "sssp") else {}
        reason = check_combination(SPECS[algorithm], g, cfg, "gpu")
        if reason:
            # e.g. cuda_graph with a worklist too small for the graph: refused, with the
            # strategy's reason, before anything runs
            with pytest.raises(gs.InvalidConfig) as exc:
                gs.run(algorithm, g, backend="gpu", config=cfg, **kwargs)
            assert reason.split(":")[0] in str(exc.value), str(exc.value)
            refused += 1
            continue
        try:
            r = gs.run(algorithm, g, backend="gpu", config=cfg, **kwargs)
        except gs.InvalidConfig as exc:
            # the one refusal that depends on the device: a cooperative kernel whose
            # block cannot be resident (registers x block_size); it names the fix
            assert "cannot run" in str(exc) and "block_size" in str(exc), str(exc)
            assert cfg["launch"] != "host_loop"
            return
        ran += 1
        problem = compare(algorithm, r.fields[OUTPUT[algorithm]], _reference(algorithm, name))
        if problem:
            failures.append(f"{name}: {problem}")
    assert not failures, f"{cfg.to_dict()}: " + "; ".join(failures)
    assert ran + refused == len(SWEEP_NAMES)
