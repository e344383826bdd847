"""GPU suite: ``twc``'s deferred outliers, which the zoo's small graphs never reach with the
default threshold. With the threshold at its minimum, graphs with hubs send nodes to the
side queue, also in runs whose steps alternate with steps that run no operator (priority
refills), and every answer is still the reference's.
"""

import numpy as np
import pytest

import gswitch as gs
from gswitch.generators import rmat, star
from gswitch.testing.reference import compare, reference

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

#: the smallest outlier threshold twc accepts
LOW = 1024


def _graphs():
    return {"star": star(3000),
            "rmat": rmat(13, 16, seed=5, directed=False, duplicates="drop",
                         self_loops="drop")}


def _hubbed(g):
    return int(np.max(g.out_degree)) >= LOW


CASES = [
    ("core_number", {"variant": "peel_buckets"}, {}),
    ("sssp", {"variant": "delta_stepping"}, {"source": 0}),
    ("bfs", {}, {"source": 0}),
]


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize("name,config,args", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("graph_name", ["star", "rmat"])
def test_outliers_give_the_reference_answer(graph_name, name, config, args, launch):
    g = _graphs()[graph_name]
    assert _hubbed(g)
    cfg = {**config, "load_balance": "twc", "load_balance.outlier_threshold": LOW,
           "launch": launch}
    got = gs.run(name, g, backend="gpu", config=cfg, **args).fields
    first = next(iter(got))
    assert compare(name, got[first], reference(name, g, **args)) is None


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize("graph_name", ["star", "rmat"])
def test_betweenness_with_outliers_equals_networkx(graph_name, launch):
    """Brandes' backward stage refills a level between data steps: a hub deferred in one
    level must not be expanded again two steps later."""
    from gswitch.algorithms.betweenness import expected_betweenness

    g = _graphs()[graph_name]
    hub = int(np.argmax(g.out_degree))
    sources = np.array(sorted({hub, 1, 7, 42}))
    cfg = {"load_balance": "twc", "load_balance.outlier_threshold": LOW, "launch": launch}
    got = gs.run("betweenness", g, backend="gpu", config=cfg, sources=sources)
    mask = np.zeros(g.n_nodes, dtype=bool)
    mask[sources] = True
    np.testing.assert_allclose(got.fields["betweenness"], expected_betweenness(g, sources=mask),
                               rtol=1e-6, atol=1e-6)
