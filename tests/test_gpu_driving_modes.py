"""GPU suite for open driving modes and priority driving: ``sssp[delta_stepping]`` under
both policies, several widths and every launch mode on graphs with zero weights and
long paths; the test plugin's own modes; priority state kept across steps on the device.
"""

import itertools

import numpy as np
import pytest

import gswitch as gs
import gswitch.plugins as plugins
from gswitch.generators import road
from gswitch.plugins import get_registry, reset_registry
from gswitch.testing.reference import compare, reference
from gswitch.testing.user_strategies import PLUGIN_MODULE
from gswitch.testing.zoo import SWEEP, zoo_graph

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

GRAPHS = ["sweep_road", "sweep_zero_weights", "sweep_broom", "sweep_rmat"]
CASES = list(itertools.product(("near_far", "buckets"), (0.05, 1.0, 20.0),
                               ("host_loop", "persistent", "cuda_graph"),
                               ("atomic", "bitmap")))


def _sweep(name):
    factory, source = SWEEP[name]
    g = factory()
    return g, max(source, 0)


@pytest.mark.parametrize("policy,scale,launch,worklist", CASES)
def test_delta_stepping_on_the_gpu_matches_dijkstra(policy, scale, launch, worklist):
    """Every policy, width, launch mode and worklist gives scipy's distances."""
    cfg = {"variant": "delta_stepping", "driving": "priority", "driving.policy": policy,
           "driving.width_scale": scale, "launch": launch, "worklist": worklist}
    if launch == "cuda_graph" and worklist == "atomic":
        cfg["worklist.dedup"] = True  # a replayed graph needs a bounded worklist
    for name in GRAPHS:
        g, s = _sweep(name)
        r = gs.run("sssp", g, source=s, backend="gpu", config=cfg)
        problem = compare("sssp", r.fields["dist"], reference("sssp", g, source=s))
        assert problem is None, f"{name}: {problem}"


def test_delta_stepping_refills_and_does_less_work_than_bellman_ford():
    """On a road grid the GPU run takes refill steps and relaxes fewer edges; the trace
    names the priority strategy's modes."""
    g = road(256, 256, seed=5)
    bf = gs.run("sssp", g, source=0, backend="gpu", config={"variant": "bellman_ford"})
    ds = gs.run("sssp", g, source=0, backend="gpu", config={"variant": "delta_stepping"})
    assert np.allclose(bf.fields["dist"], ds.fields["dist"])
    assert set(ds.stats["modes"]) == {"data", "refill"}
    assert ds.stats["edges_processed"] < bf.stats["edges_processed"]


@pytest.fixture
def alternating(monkeypatch):
    original = plugins._builtin_modules
    monkeypatch.setattr(plugins, "_builtin_modules", lambda: original() + (PLUGIN_MODULE,))
    reset_registry()
    yield get_registry().strategies["driving"]["alternating"]
    monkeypatch.setattr(plugins, "_builtin_modules", original)
    reset_registry()


@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
def test_plugin_driving_mode_runs_on_the_gpu(alternating, launch):
    """The test plugin's 'queue' and 'sweep' modes run on the device and agree with the
    reference; the step trace alternates them."""
    g = zoo_graph("road")
    for name, kwargs, out in (("bfs", {"source": 0}, "depth"), ("cc", {}, "comp")):
        r = gs.run(name, g, backend="gpu", config={"driving": "alternating", "launch": launch},
                   **kwargs)
        assert compare(name, r.fields[out], reference(name, g, **kwargs)) is None
        modes = r.stats["modes"]
        assert modes[:4] == ["queue", "sweep", "queue", "sweep"][: len(modes[:4])]
