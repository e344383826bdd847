"""A staged GPU run leaves each stage's fields where the engine ran it, and the next
stage reads them there (``GpuEngine.run(in_place=True)``): no copy out and back. A host
step may move fields around between stages (a swap, a view, an in-place write); every
answer equals the CPU engine's, and what the caller gets never shares memory with the
engine's core block, which the next call reuses.
"""

import numpy as np
import pytest

import gswitch as gs
from gswitch.testing.reference import reference
from gswitch.testing.staged_algorithms import DoubleSweep
from gswitch.testing.zoo import SWEEP, zoo_graph

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]


@gs.algorithm(name="swap_between_stages", reference="the CPU engine")
class SwapBetweenStages:
    """Hops from the source into ``a``; a host step swaps ``a`` and ``b`` (and hands ``c``
    back as a view of itself, and writes into ``b`` and ``d`` in place); hops from node 1
    into the new ``a``."""

    a = gs.NodeField("int32", init=gs.INF, at_source=0)
    b = gs.NodeField("int32", init=7)
    c = gs.NodeField("float32", init=0.5)
    d = gs.NodeField("int64", init=3)

    @gs.stage
    class first:
        """BFS from the source into ``a``."""

        start = gs.from_source()

        @gs.edge_op
        def hop(e):
            e.dst.a.reduce_min(e.src.a + 1)

    @gs.host_step
    def swap(fields, params, xp):
        fields["d"][0] = -5  # in place: the next stage reads it
        fields["b"][1] = 0  # the next stage's start, in the field that becomes ``a``
        return {"a": fields["b"], "b": fields["a"], "c": fields["c"][::1],
                "start": xp.asarray([1])}

    @gs.stage
    class second:
        """BFS from node 1 into ``a`` (the old ``b``: 7 elsewhere)."""

        start = gs.chosen_nodes()

        @gs.edge_op
        def hop(e):
            e.dst.a.reduce_min(e.src.a + 1)


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


@pytest.mark.parametrize("arrays", ["numpy", "cupy"])
@pytest.mark.parametrize("launch", ["persistent", "host_loop"])
def test_fields_moved_by_a_host_step_reach_the_next_stage(arrays, launch):
    for name in ("road", "rmat", "path"):
        g = zoo_graph(name)
        want = gs.run(SwapBetweenStages, g, source=0, backend="cpu").fields
        for _ in range(2):  # the second call replays the stages
            got = gs.run(SwapBetweenStages, g, source=0, backend="gpu",
                         config={"launch": launch}, arrays=arrays).fields
            for k, w in want.items():
                assert _host(got[k]).tobytes() == w.tobytes(), (name, k)


def test_what_the_caller_gets_survives_the_next_call():
    """CuPy results of a staged run (its last stage's fields, a view a host step made)
    are the caller's own: another run on the same graph leaves them as they were."""
    g = zoo_graph("rmat")
    first = gs.run(SwapBetweenStages, g, source=0, backend="gpu", arrays="cupy").fields
    kept = {k: v.get() for k, v in first.items()}
    gs.run(SwapBetweenStages, g, source=3, backend="gpu", arrays="cupy")
    gs.run(DoubleSweep, g, source=5, backend="gpu", arrays="cupy")
    for k, v in first.items():
        assert np.array_equal(v.get(), kept[k]), k


def test_afforest_copies_nothing_between_its_stages(monkeypatch):
    """cc[afforest]: the sampled forest stays where the first stage left it for the
    second, and ``flatten`` makes the result: no fresh copy of a field at all."""
    from gswitch.engine import gpu

    g = SWEEP["sweep_rmat"][0]()
    cfg = {"variant": "afforest"}
    gs.run("cc", g, backend="gpu", config=cfg, arrays="cupy")  # compiled, resident
    copies = []
    real = gpu.GpuEngine._fresh_copy

    def counted(self, arr):
        copies.append(arr.nbytes)
        return real(self, arr)

    monkeypatch.setattr(gpu.GpuEngine, "_fresh_copy", counted)
    for arrays in ("cupy", "numpy"):
        r = gs.run("cc", g, backend="gpu", config=cfg, arrays=arrays)
        assert np.array_equal(_host(r.fields["comp"]), reference("cc", g)), arrays
    assert copies == []
