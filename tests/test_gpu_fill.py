"""The one-launch device fill (``cuda/fill.cuh``, :mod:`gswitch.engine.fill`) on the
GPU: for every registered formulation, and for fields of every dtype and more of them
than one launch takes, the kernel writes the bytes that the host fill writes (the checks
of ``tests/test_fill.py`` with the kernel run on the device). Runs on a large graph
start their fields this way and give the host path's answers
(``tests/test_gpu.py::test_fields_of_a_large_graph_start_on_the_device``).
"""

import numpy as np
import pytest
from test_fill import _SPECS, EveryDtype, _check

import gswitch as gs
from gswitch.engine.fill import FILL_MAX
from gswitch.plugins import get_registry
from gswitch.testing.user_algorithms import USER_ALGORITHMS

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]


@pytest.mark.parametrize("sources", [(3,), (0, 7, 12)], ids=["one-source", "three"])
@pytest.mark.parametrize(("name", "variant"), _SPECS, ids=[f"{a}-{v}" for a, v in _SPECS])
def test_every_registered_formulation(name, variant, sources):
    _check(get_registry().algorithm(name, variant), 5000, sources, device=True)


@pytest.mark.parametrize("spec", USER_ALGORITHMS, ids=lambda s: s.name)
def test_user_algorithms(spec):
    _check(spec, 5000, device=True)


def test_every_dtype_two_launches_and_a_grid_stride():
    """Ten fields of every four- and eight-byte dtype (ids, infinities, -0.0, the
    largest unsigned values) over more nodes than the grid has threads."""
    n = 4096 * 256 + 1001  # past _MOST_BLOCKS blocks of 256 threads
    launches, _ = _check(EveryDtype, n, (n - 1,), device=True)
    assert [b.count for b in launches] == [FILL_MAX, len(EveryDtype.fields) - FILL_MAX]


@gs.algorithm(name="fill_from_param", reference="the CPU engine")
class FromParam:
    """Every node starts at a parameter's value and the source at 5: what reaches a node
    is the larger."""

    base = gs.Param("float64", 0.0, low=-10.0, high=10.0)
    level = gs.NodeField("float64", init=lambda p: p["base"], at_source=5.0)
    start = gs.from_source()

    @gs.edge_op
    def spread(e):
        e.dst.level.reduce_max(e.src.level)


@pytest.mark.parametrize("launch", ["persistent", "host_loop"])
def test_a_repeated_fill_follows_new_values_and_sources(launch):
    """The engine keeps a plan's packed fill for the next run with the same values: a
    new value (-0.0 after 0.0, which == cannot tell apart) or a new source is written,
    not the kept one."""
    from gswitch.engine import gpu
    from gswitch.generators import rmat

    g = rmat(15, 4, seed=11).symmetrize()
    assert 8 * g.n_nodes > gpu._DEVICE_FILL_BYTES
    cfg = {"launch": launch}
    for base, source in [(0.0, 5), (-0.0, 5), (-0.0, 9), (2.5, 9), (0.0, 5), (0.0, 5)]:
        got = gs.run(FromParam, g, source=source, backend="gpu", config=cfg, base=base)
        want = gs.run(FromParam, g, source=source, backend="cpu", base=base)
        assert got.fields["level"].tobytes() == want.fields["level"].tobytes(), (base, source)
        assert np.signbit(got.fields["level"]).any() == (str(base) == "-0.0")
