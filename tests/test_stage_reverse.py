"""Stages on the reverse graph (``gs.stage(reverse=True)``): hops from a node forward
and hops to it backward, in one staged algorithm, against scipy on the graph and its
transpose; on a GPU where one is present.
"""

import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import gswitch as gs
from gswitch.generators import rmat

INF = 2**30


@gs.algorithm(name="hops_both_ways")
class HopsBothWays:
    """Hops from node 0 (``ahead``) and hops to node 0 (``behind``)."""

    ahead = gs.NodeField("int32", init=gs.INF)
    behind = gs.NodeField("int32", init=gs.INF)

    @gs.host_step
    def seed(fields, params, xp):
        ahead, behind = fields["ahead"].copy(), fields["behind"].copy()
        ahead[0] = 0
        behind[0] = 0
        return {"ahead": ahead, "behind": behind, "start": xp.arange(1, dtype=xp.int32)}

    @gs.stage
    class forward:
        """Out-edges of the caller's graph."""

        start = gs.chosen_nodes()

        @gs.edge_op
        def hop(e):
            e.dst.ahead.reduce_min(e.src.ahead + 1)

    @gs.host_step
    def again(fields, params, xp):
        return {"start": xp.arange(1, dtype=xp.int32)}

    @gs.stage(reverse=True)
    class backward:
        """In-edges of the caller's graph."""

        start = gs.chosen_nodes()

        @gs.edge_op
        def hop(e):
            e.dst.behind.reduce_min(e.src.behind + 1)


def _want(g):
    a = g.to_scipy()
    fw = csgraph.shortest_path(a, unweighted=True, indices=0)
    bw = csgraph.shortest_path(a.T.tocsr(), unweighted=True, indices=0)
    return [np.where(np.isfinite(d), d, INF).astype(np.int64) for d in (fw, bw)]


def _check(r, g):
    fw, bw = _want(g)
    ahead = np.minimum(r.fields["ahead"].astype(np.int64), INF)
    behind = np.minimum(r.fields["behind"].astype(np.int64), INF)
    assert np.array_equal(ahead, fw)
    assert np.array_equal(behind, bw)
    assert not np.array_equal(fw, bw)  # the graph tells the two directions apart


@pytest.mark.parametrize("steps", ["0", "1"])
@pytest.mark.parametrize("driving", ["data", "topology"])
def test_reverse_stage_walks_in_edges(steps, driving, monkeypatch):
    """The reverse stage's hops are scipy's on the transpose, with or without the CPU
    engine's closure."""
    monkeypatch.setenv("GSWITCH_CPU_STEPS", steps)
    g = rmat(8, 4, seed=5)
    _check(gs.run(HopsBothWays, g, backend="cpu", config={"driving": driving}), g)


def test_reverse_stage_is_declared_on_the_stage():
    """Only the declared stage runs reversed."""
    stages = {s.stage_name: s for s in HopsBothWays.stages if isinstance(s, gs.AlgorithmSpec)}
    assert stages["backward"].stage_reverse and not stages["forward"].stage_reverse


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
def test_gpu_reverse_stage(launch):
    g = rmat(8, 4, seed=5)
    _check(gs.run(HopsBothWays, g, backend="gpu", config={"launch": launch}), g)
