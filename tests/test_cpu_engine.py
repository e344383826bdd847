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

# strategies under test do their steps on the CPU (no shortest-path closure)
pytestmark = pytest.mark.usefixtures("super_steps")

# the classic formulations run under every driving; the defaults (afforest, delta-stepping,
# power iteration) under their own, with the config they fill in
SPECS = [get_registry().algorithm(a, v) for a, v in (
    ("bfs", "default"), ("sssp", "bellman_ford"), ("cc", "label_propagation"),
    ("pagerank", "residual_push"))]
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


@gs.algorithm(name="nan_values", reference="the CPU engine's per-edge path")
class NanValues:
    """The heavier edges offer NaN (0/0): the reduction passes them over."""

    dist = gs.NodeField("float32", init=gs.INF, at_source=0.0)
    start = gs.from_source()

    @gs.edge_op
    def relax(e):
        zero = e.src.dist - e.src.dist
        e.dst.dist.reduce_min(gs.where(e.weight > 32, zero / zero, e.src.dist + e.weight))


@gs.algorithm(name="nan_field", reference="the CPU engine's per-edge path")
class NanField:
    """Every node starts at NaN but the sources: NaN never compares worse, so it stays."""

    level = gs.NodeField("float64", init=float("nan"), at_source=1.0)
    start = gs.from_source()

    @gs.edge_op
    def relax(e):
        e.dst.level.reduce_max(gs.minimum(e.src.level + 1.0, 4.0))


@pytest.mark.parametrize("spec", [NanValues, NanField], ids=lambda s: s.name)
def test_fast_float_path_treats_nan_as_the_plain_path(spec, monkeypatch):
    g = GRAPHS["rmat"]()
    # the 32 busiest nodes as sources: the first step reduces over enough edges for the
    # fast path
    sources = np.argsort(g.out_degree)[-32:].tolist()
    assert g.out_degree[sources].sum() * cpu._WHOLE_REDUCTION >= g.n_nodes
    fast = gs.run(spec, g, source=sources, backend="cpu").fields
    monkeypatch.setattr(cpu, "_WHOLE_REDUCTION", 0)
    monkeypatch.setattr(cpu, "_DENSE_FRONTIER", 0)
    plain = gs.run(spec, g, source=sources, backend="cpu").fields
    for name, want in plain.items():
        assert np.array_equal(fast[name], want, equal_nan=True), name
    assert not np.isnan(plain[list(plain)[0]]).all()


def test_activations_collect_sorted_unique_nodes_and_clear():
    """A step's activations come back sorted and unique, from the ids of a sparse step
    or the mask of a dense one, and nothing carries over to the next step."""
    from gswitch.engine.cpu import _Activations

    acts = _Activations(100)
    acts.add(np.array([7, 3, 7, 50], dtype=np.int32))
    acts.add(np.array([3, 1], dtype=np.int64))
    got = acts.take()
    assert got.tolist() == [1, 3, 7, 50] and got.dtype == np.int32
    assert not acts.mask.any() and acts.take().size == 0
    many = np.arange(0, 100, 2)  # half the nodes: taken from the mask
    acts.add(many[::-1].copy())
    assert acts.take().tolist() == many.tolist()
    mask = np.zeros(100, dtype=bool)
    mask[[99, 4]] = True
    acts.add(np.array([4, 10]))
    acts.add_mask(mask)
    assert acts.take().tolist() == [4, 10, 99]
    assert not acts.mask.any()


def test_sparse_steps_on_a_long_path_match_the_reference():
    """Thousands of one-node steps (the sparse path every step) give scipy's depths."""
    from gswitch.generators import grid2d
    from gswitch.testing.reference import compare, reference

    g = grid2d(3, 700)
    for alg, out in (("bfs", "depth"), ("sssp", "dist")):
        r = gs.run(alg, g, source=0, backend="cpu")
        assert compare(alg, r.fields[out], reference(alg, g, source=0)) is None
        assert r.iterations > 700
