"""``gswitch.run(..., device=N)`` on real GPUs: the answer on every device, results left
on the chosen device, a graph resident on one GPU never copied to another, and
``gswitch.release``.
"""

import numpy as np
import pytest

import gswitch as gs
from gswitch.errors import InvalidInput
from gswitch.generators import parse_generator_spec
from gswitch.testing.reference import compare, reference

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
    # an array of one GPU read on another: CuPy warns, and turns on peer access
    pytest.mark.filterwarnings("error:The device where the array resides"),
]


def _count() -> int:
    import cupy

    return cupy.cuda.runtime.getDeviceCount()


two_gpus = pytest.mark.skipif(not gs.gpu_available() or _count() < 2,
                              reason="needs two GPUs (runs on nvidia-h200-x2)")


@pytest.mark.parametrize("algorithm", ["bfs", "sssp", "cc", "pagerank"])
def test_every_device_gives_the_reference(algorithm):
    g = parse_generator_spec("rmat:12,seed=7")
    if algorithm in ("bfs", "cc"):
        g = g.symmetrize()
    src = int(g.out_degree.argmax()) if algorithm in ("bfs", "sssp") else None
    want = reference(algorithm, g, source=src)
    for device in range(min(_count(), 2)):
        r = gs.run(algorithm, g if device == 0 else _fresh(g), source=src, backend="gpu",
                   device=device)
        field = next(iter(r.fields))
        assert compare(algorithm, r.fields[field], want) is None, device


def _fresh(g):
    """An equal graph object (a graph object is resident on one GPU at a time)."""
    return gs.Graph(np.array(g.indptr), np.array(g.indices),
                    None if g.weights is None else np.array(g.weights), directed=g.directed)


def test_device_beyond_the_machine_is_one_clear_error():
    g = gs.Graph.from_edges([0, 1], [1, 2])
    count = _count()
    with pytest.raises(InvalidInput, match=f"device={count} names GPU {count}, but this "
                       f"machine has {count}"):
        gs.run("bfs", g, source=0, device=count)


@two_gpus
def test_cupy_results_stay_on_the_chosen_device():
    import cupy

    g = parse_generator_spec("rmat:11,seed=3").symmetrize()
    r = gs.run("bfs", g, source=0, backend="gpu", device=1, arrays="cupy")
    assert r.fields["depth"].device.id == 1
    assert cupy.cuda.runtime.getDevice() == 0  # the caller's current device is restored
    want = reference("bfs", g, source=0)
    assert compare("bfs", r.fields["depth"].get(), want) is None


@two_gpus
def test_a_resident_graph_is_never_copied_to_another_gpu():
    g = parse_generator_spec("rmat:10,seed=1").symmetrize()
    gs.run("cc", g, backend="gpu", device=0)
    with pytest.raises(InvalidInput, match="resident on GPU 0.*device=0.*gswitch.release"):
        gs.run("cc", g, backend="gpu", device=1)
    assert gs.release(g) >= 1
    r = gs.run("cc", g, backend="gpu", device=1)
    assert compare("cc", r.fields["comp"], reference("cc", g)) is None
    with pytest.raises(InvalidInput, match="resident on GPU 1"):
        gs.run("cc", g, backend="gpu", device=0)


@two_gpus
def test_threads_on_two_gpus_give_the_reference():
    from concurrent.futures import ThreadPoolExecutor

    graphs = [parse_generator_spec(f"rmat:12,seed={s}").symmetrize() for s in (1, 2)]
    wants = [reference("bfs", g, source=0) for g in graphs]

    def job(i):
        return [gs.run("bfs", graphs[i], source=0, backend="gpu", device=i).fields["depth"]
                for _ in range(5)]

    with ThreadPoolExecutor(2) as pool:
        outs = list(pool.map(job, [0, 1]))
    for want, runs in zip(wants, outs):
        assert all(compare("bfs", d, want) is None for d in runs)
