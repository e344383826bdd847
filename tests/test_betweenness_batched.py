"""Batched Brandes (64 sources per traversal) against networkx's sums, on both sides."""

import networkx as nx
import numpy as np
import pytest
from gswitch.algorithms._betweenness_gpu import SOURCE
from gswitch.algorithms.betweenness import expected_betweenness, rescale
from gswitch.algorithms.betweenness_batched import betweenness, edge_betweenness
from gswitch.algorithms.betweenness_weighted import expected_edge_betweenness

import gswitch as gs
from gswitch.generators import grid2d, rmat, road, star
from gswitch.testing.zoo import zoo_graph

GPU = [pytest.mark.gpu,
       pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")]

GRAPHS = {"rmat": rmat(8, 6, seed=1), "rmat_directed": rmat(8, 6, seed=2, directed=True),
          "grid": grid2d(9, 7), "road": road(10, 10, seed=3),
          "duplicates": zoo_graph("duplicates"), "self_loops": zoo_graph("self_loops"),
          "disconnected": zoo_graph("disconnected"), "dag": zoo_graph("directed_dag"),
          "empty": zoo_graph("empty"), "single": zoo_graph("single")}


def _sources(g: gs.Graph, how: str) -> np.ndarray | None:
    """Every node, a sample of a few, more than one batch, or repeated ids."""
    n, rng = g.n_nodes, np.random.default_rng(5)
    if how == "all" or n == 0:
        return None
    if how == "few":
        return rng.choice(n, min(n, 5), replace=False)
    if how == "batches":  # more than 64: two batches, the second partial
        return rng.choice(n, min(n, 100), replace=False)
    return np.r_[rng.integers(0, n, 6), rng.integers(0, n, 6)]  # repeats count once


def _check(g: gs.Graph, how: str, endpoints: bool, backend: str) -> None:
    src = _sources(g, how)
    mask = None
    if src is not None:
        mask = np.zeros(g.n_nodes)
        mask[src] = 1
    want = expected_betweenness(g, sources=mask, endpoints=int(endpoints))
    got = betweenness(g, src, endpoints=endpoints, backend=backend)
    assert got.dtype == np.float64 and got.shape == (g.n_nodes,)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def _check_edges(g: gs.Graph, how: str, backend: str) -> None:
    g = g.with_weights(None)  # the batched sums count hops
    src = _sources(g, how)
    mask = None
    if src is not None:
        mask = np.zeros(g.n_nodes)
        mask[src] = 1
    want = expected_edge_betweenness(g, sources=mask)
    got = edge_betweenness(g, src, backend=backend)
    assert got.dtype == np.float64 and got.shape == (g.simple().n_edges,)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("endpoints", [False, True])
@pytest.mark.parametrize("how", ["all", "few", "batches", "repeats"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_cpu_sums_equal_networkx(name, how, endpoints):
    _check(GRAPHS[name], how, endpoints, "cpu")


@pytest.mark.parametrize("how", ["all", "batches"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_cpu_edge_sums_equal_networkx(name, how):
    _check_edges(GRAPHS[name], how, "cpu")


def test_weights_are_ignored():
    g = road(6, 6, seed=1)
    assert g.weighted
    np.testing.assert_array_equal(betweenness(g, backend="cpu"),
                                  betweenness(g.with_weights(None), backend="cpu"))


def test_equals_the_per_source_algorithm_and_networkx_rescaled():
    h = nx.gnm_random_graph(60, 170, seed=4)
    g = gs.Graph.from_networkx(h)
    nodes = np.array(nx.utils.create_py_random_state(2).sample(list(h), 9))
    raw = betweenness(g, nodes, backend="cpu")
    one = gs.run("betweenness", g, sources=nodes, backend="cpu").fields["betweenness"]
    np.testing.assert_allclose(raw, one, rtol=1e-12, atol=1e-12)
    got = rescale(raw, directed=False, sources=nodes)
    want = nx.betweenness_centrality(h, k=9, seed=2)
    np.testing.assert_allclose(got, [want[v] for v in range(60)], rtol=1e-9, atol=1e-12)


def test_a_hub_row_longer_than_a_block():
    _check(star(701), "all", False, "cpu")


def test_bad_input_is_one_clear_line():
    g = grid2d(3, 3)
    with pytest.raises(gs.InvalidInput, match="source 9 is out of range"):
        betweenness(g, [0, 9], backend="cpu")
    with pytest.raises(gs.InvalidInput, match="node ids"):
        betweenness(g, ["a"], backend="cpu")
    with pytest.raises(gs.InvalidInput, match="backend must be auto, gpu or cpu"):
        betweenness(g, backend="tpu")


@pytest.mark.compile
def test_kernels_compile(nvcc):
    from gswitch.testing.nvcc import compile_source

    ok, out = compile_source(SOURCE, nvcc=nvcc)
    assert ok, out[-3000:]


@GPU[0]
@GPU[1]
@pytest.mark.parametrize("endpoints", [False, True])
@pytest.mark.parametrize("how", ["all", "few", "batches", "repeats"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_gpu_sums_equal_networkx(name, how, endpoints):
    _check(GRAPHS[name], how, endpoints, "gpu")


@GPU[0]
@GPU[1]
@pytest.mark.parametrize("how", ["all", "batches"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_gpu_edge_sums_equal_networkx(name, how):
    _check_edges(GRAPHS[name], how, "gpu")


@GPU[0]
@GPU[1]
def test_gpu_hub_and_larger_graphs_equal_the_cpu_batches():
    _check(star(5001), "all", True, "gpu")
    for g in (rmat(13, 16, seed=7), road(60, 60, seed=2), rmat(12, 8, seed=8, directed=True)):
        src = np.random.default_rng(1).choice(g.n_nodes, 130, replace=False)
        got = betweenness(g, src, backend="gpu")
        want = betweenness(g, src, backend="cpu")
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
        one = gs.run("betweenness", g, sources=src[:3], backend="gpu").fields["betweenness"]
        np.testing.assert_allclose(betweenness(g, src[:3], backend="gpu"), one,
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(edge_betweenness(g, src, backend="gpu"),
                                   edge_betweenness(g, src, backend="cpu"),
                                   rtol=1e-9, atol=1e-9)


def test_compile_plan_builds_no_module_for_the_array_code():
    """gswitch compile plans the per-source formulation's modules (larger graphs run it
    untuned) and none for the batched one, whose kernels CuPy builds on first use."""
    from gswitch.precompile import planned_modules

    labels = [m.label for m in planned_modules(["betweenness"], portfolio=False)]
    assert labels and all(label.startswith("betweenness[per_source]:") for label in labels)


@GPU[0]
@GPU[1]
@pytest.mark.parametrize("endpoints", [0, 1])
@pytest.mark.parametrize("name", ["rmat", "rmat_directed", "road", "disconnected", "empty"])
def test_gpu_run_default_is_batched_and_equals_networkx(name, endpoints):
    """gs.run on the GPU runs the batched formulation by default, with networkx's sums,
    device timing, and the sums left on the device with arrays='cupy'."""
    import cupy

    g = GRAPHS[name]
    src = _sources(g, "batches")
    mask = None
    if src is not None:
        mask = np.zeros(g.n_nodes)
        mask[src] = 1
    want = expected_betweenness(g, sources=mask, endpoints=endpoints)
    kw = {} if src is None else {"sources": src}
    r = gs.run("betweenness", g, backend="gpu", endpoints=endpoints, **kw)
    assert r.stats["variant"] == "batched" and "device_time_s" in r.stats
    np.testing.assert_allclose(r.fields["betweenness"], want, rtol=1e-9, atol=1e-9)
    d = gs.run("betweenness", g, backend="gpu", endpoints=endpoints, arrays="cupy", **kw)
    assert isinstance(d.fields["betweenness"], cupy.ndarray)
    np.testing.assert_allclose(d.fields["betweenness"].get(), want, rtol=1e-9, atol=1e-9)
    one = gs.run("betweenness", g, backend="gpu", endpoints=endpoints,
                 config={"variant": "per_source"}, **kw)
    assert one.stats["variant"] == "per_source"
    np.testing.assert_allclose(one.fields["betweenness"], want, rtol=1e-6, atol=1e-6)


@GPU[0]
@GPU[1]
@pytest.mark.parametrize("variant", ["batched", "per_source"])
def test_gpu_k_sampled_run_equals_the_cpu_and_networkx(variant):
    """``k`` and ``seed`` draw the same sources on the GPU as on the CPU (before any
    renumbering), and both give networkx's sums for them."""
    g = rmat(10, 8, seed=5)
    for config in ({"variant": variant}, {"variant": variant, "renumber": "rcm"}):
        got = gs.run("betweenness", g, backend="gpu", k=70, seed=3, config=config)
        cpu = gs.run("betweenness", g, backend="cpu", k=70, seed=3, config=config)
        np.testing.assert_allclose(got.fields["betweenness"], cpu.fields["betweenness"],
                                   rtol=1e-9, atol=1e-9)
        want = expected_betweenness(g, k=70, seed=3)
        np.testing.assert_allclose(got.fields["betweenness"], want, rtol=1e-6, atol=1e-6)
