"""Pull for an edge operator whose one reduction follows guards: an in-edge a guard
refuses offers the reduction's identity. Both engines (the GPU cases carry the ``gpu``
marker) give push's answer, and the generated CUDA compiles.
"""

import numpy as np
import pytest

import gswitch as gs
from gswitch.codegen import generate_source, pull_form
from gswitch.config import Config
from gswitch.generators import grid2d, rmat
from gswitch.testing.nvcc import compile_source


@gs.algorithm(name="even_hops")
class EvenHops:
    """Hops from the source along edges into even ids, or out of the source's
    neighbourhood (test algorithm)."""

    dist = gs.NodeField("int32", init=gs.INF, at_source=0)
    start = gs.from_source()

    @gs.edge_op
    def hop(e):
        e.only_if((e.dst.id // 2 * 2).eq(e.dst.id) | (e.src.dist < 2))
        e.only_if(e.dst.dist > e.src.dist)
        e.dst.dist.reduce_min(e.src.dist + 1)


GRAPHS = {"rmat": lambda: rmat(10, 8, seed=2), "grid": lambda: grid2d(20, 30)}


def test_guards_then_one_reduction_have_a_pull_form():
    assert pull_form(EvenHops) is None
    src = generate_source(EvenHops, Config({"direction": "pull"}), False).source
    assert "return GS_PULL_IDENTITY;  // a guard refuses the in-edge" in src


@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("direction", ["pull", "direction_optimizing"])
def test_cpu_pull_equals_push(graph, direction):
    g = GRAPHS[graph]()
    push = gs.run(EvenHops, g, source=0, backend="cpu").fields["dist"]
    got = gs.run(EvenHops, g, source=0, backend="cpu",
                 config={"direction": direction, "worklist": "bitmap"}).fields["dist"]
    assert np.array_equal(got, push)
    assert np.unique(push).size >= 3  # the run went several hops


@pytest.mark.compile
@pytest.mark.parametrize("gather", ["nodes", "edges"])
def test_guarded_pull_compiles(gather, nvcc):
    cfg = Config({"direction": "direction_optimizing", "direction.gather": gather,
                  "worklist": "bitmap"})
    ok, out = compile_source(generate_source(EvenHops, cfg, False).source, nvcc=nvcc)
    assert ok, out[-3000:]


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("direction", ["pull", "direction_optimizing"])
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_gpu_pull_equals_the_cpu_engine(graph, direction, launch):
    g = GRAPHS[graph]()
    want = gs.run(EvenHops, g, source=0, backend="cpu").fields["dist"]
    got = gs.run(EvenHops, g, source=0, backend="gpu",
                 config={"direction": direction, "worklist": "bitmap",
                         "launch": launch}).fields["dist"]
    assert np.array_equal(got, want)
