"""GPU suite for the algorithm variants: every supported strategy pair of each non-default
formulation on every zoo graph equals the reference; the GPU debug mode catches an
``.at()`` index outside the graph."""

import functools

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

OUTPUT = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}
VARIANTS = [spec for name in OUTPUT for spec in get_registry().variants[name].values()
            if not spec.default_variant]


def _cases():
    return [(spec, c.replace(variant=spec.variant)) for spec in VARIANTS
            for c in pairwise_configs(spec)]


@functools.cache
def _graph(name):
    return zoo_graph(name)


@functools.cache
def _reference(algorithm, name):
    kwargs = {"source": 0} if algorithm in ("bfs", "sssp") else {}
    return reference(algorithm, _graph(name), **kwargs)


def _id(case):
    spec, cfg = case
    return "-".join([spec.label] + [str(cfg[a]) for a in ("worklist", "load_balance",
                                                          "driving", "direction", "launch")])


@pytest.mark.cases("case", _cases, ids=_id)
def test_variant_combination_matches_reference(case):
    """This formulation under this strategy combination gives the reference on every zoo
    graph."""
    spec, cfg = case
    failures = []
    for name in ZOO_NAMES:
        g = _graph(name)
        if spec.start.kind == "source" and g.n_nodes == 0:
            continue
        kwargs = {"source": 0} if spec.start.kind == "source" else {}
        r = gs.run(spec.name, g, backend="gpu", config=cfg, **kwargs)
        problem = compare(spec.name, r.fields[OUTPUT[spec.name]], _reference(spec.name, name))
        if problem:
            failures.append(f"{name}: {problem}")
    assert not failures, "; ".join(failures)


@pytest.mark.parametrize("spec", VARIANTS, ids=[s.label for s in VARIANTS])
def test_variant_gpu_agrees_with_cpu_on_a_power_law_graph(spec):
    """Default strategies of the variant: the GPU answer equals the CPU engine's."""
    import numpy as np

    from gswitch.generators import rmat

    g = rmat(14, 8, seed=5, weighted=True)
    kwargs = {"source": 1} if spec.start.kind == "source" else {}
    cfg = {"variant": spec.variant}
    a = gs.run(spec.name, g, backend="gpu", config=cfg, **kwargs).fields[OUTPUT[spec.name]]
    b = gs.run(spec.name, g, backend="cpu", config=cfg, **kwargs).fields[OUTPUT[spec.name]]
    if spec.name == "pagerank":
        assert float(np.abs(a.astype(np.float64) - b).sum()) < 1e-4
    else:
        assert np.array_equal(a, b)


_OUT_OF_RANGE = """
import gswitch as gs

@gs.algorithm(name="gpu_test_at_out_of_range")
class OutOfRange:
    x = gs.NodeField("int32", init=gs.NODE_ID)
    start = gs.all_nodes()

    @gs.edge_op
    def bad(e):
        e.dst.x.reduce_min(e.src.x.at(e.src.x + 100000))

gs.run(OutOfRange, gs.Graph.from_edges([0, 1], [1, 2]), backend="gpu")
"""


def test_debug_mode_catches_an_index_outside_the_graph(tmp_path):
    """Under GSWITCH_CUDA_DEBUG=1 an .at() index past the last node stops the kernel with a
    message naming the index, and the run fails (in a process of its own: a trapped kernel
    leaves its CUDA context unusable)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "GSWITCH_CUDA_DEBUG": "1", "CUPY_CACHE_DIR": str(tmp_path)}
    # run from tmp_path: a checkout's own gswitch/ must not shadow the installed package
    proc = subprocess.run([sys.executable, "-c", _OUT_OF_RANGE], env=env, capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode != 0
    assert "index 10000" in proc.stdout + proc.stderr
