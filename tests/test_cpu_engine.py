"""The CPU engine's fast paths give exactly the answers of its plain paths.

Integer min/max/or reductions over many edges run as one unbuffered reduction, and a
dense frontier filters the whole edge list; both are switched off here (the thresholds
set so that they never apply) to compare every field, for the built-in algorithms and
the user-operator ones (int64, uint32 ``reduce_or``, ``reduce_max``, float64, node ids).
"""

import numpy as np
import pytest

import gswitch as gs
from gswitch.engine import cpu
from gswitch.generators import grid2d, rmat
from gswitch.plugins import get_registry
from gswitch.testing.user_algorithms import USER_ALGORITHMS

SPECS = [get_registry().algorithm(a) for a in ("bfs", "sssp", "cc", "pagerank")]
SPECS += list(USER_ALGORITHMS)
GRAPHS = {"rmat": lambda: rmat(11, 8, seed=4, weighted=True),
          "grid": lambda: grid2d(24, 24, weighted=True)}


@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
@pytest.mark.parametrize("config", [{}, {"driving": "topology"}, {"driving": "temporal"}],
                         ids=["data", "topology", "temporal"])
def test_fast_paths_match_plain_paths(spec, graph, config, monkeypatch):
    g = GRAPHS[graph]()
    kw = {"source": [0, 5]} if spec.start.kind == "source" else {}
    fast = gs.run(spec, g, backend="cpu", config=config, **kw)
    monkeypatch.setattr(cpu, "_WHOLE_REDUCTION", 0)
    monkeypatch.setattr(cpu, "_DENSE_FRONTIER", 0)
    plain = gs.run(spec, g, backend="cpu", config=config, **kw)
    assert fast.iterations == plain.iterations
    assert fast.stats["active"] == plain.stats["active"]
    for name, want in plain.fields.items():
        assert fast.fields[name].dtype == want.dtype
        assert np.array_equal(fast.fields[name], want, equal_nan=want.dtype.kind == "f"), name


def test_fast_paths_are_taken():
    """The thresholds let the paths above run on the test graphs (else the test checks
    nothing): a dense frontier and a reduction over many edges occur in CC on the grid."""
    g = GRAPHS["grid"]()
    r = gs.run("cc", g, backend="cpu")
    assert max(r.stats["active"]) * cpu._DENSE_FRONTIER > g.n_nodes
    assert max(r.stats["active"]) * 4 * cpu._WHOLE_REDUCTION >= g.n_nodes
