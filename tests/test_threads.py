"""Calls of gswitch.run from several threads at once, on shared and on separate graphs:
every answer is the reference (CPU here; the GPU suite runs the same on the device)."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import gswitch as gs
from gswitch.generators import rmat, road
from gswitch.testing.reference import compare, reference

FIELD = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}


def _calls(backend, n_rounds):
    graphs = [road(40, 40, seed=1), rmat(11, 8, seed=2, weighted=True)]
    refs = {}
    for i, g in enumerate(graphs):
        for alg in FIELD:
            kw = {"source": 3} if alg in ("bfs", "sssp") else {}
            refs[(i, alg)] = reference(alg, g, **kw)

    def one(job):
        i, alg = job
        kw = {"source": 3} if alg in ("bfs", "sssp") else {}
        r = gs.run(alg, graphs[i], backend=backend, **kw)
        return job, r.fields[FIELD[alg]]

    jobs = [(i, alg) for _ in range(n_rounds) for i in range(len(graphs)) for alg in FIELD]
    np.random.default_rng(0).shuffle(jobs)
    with ThreadPoolExecutor(max_workers=8) as pool:
        out = list(pool.map(one, jobs))
    assert len(out) == len(jobs)
    for (i, alg), got in out:
        assert compare(alg, got, refs[(i, alg)]) is None, (i, alg)


def test_threads_on_the_cpu():
    _calls("cpu", 3)


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
def test_threads_on_the_gpu():
    """Calls queue on the engine (its staging and pools serve one call at a time); none
    sees another's fields."""
    _calls("gpu", 4)
