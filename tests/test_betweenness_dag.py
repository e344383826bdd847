"""The array-code formulations of weighted and edge betweenness (``dag`` on the CPU,
``batched`` edge betweenness on hop lengths) against networkx, which one a run picks,
the GPU's refusal of ``dag``, the tuner's space, and edge fields returned by array code."""

import networkx as nx
import numpy as np
import pytest
from gswitch.algorithms import _brandes_dag
from gswitch.algorithms.betweenness import rescale
from gswitch.tuner import build_space

import gswitch as gs
from gswitch.errors import AlgorithmError
from gswitch.generators import grid2d, rmat
from gswitch.plugins import get_registry
from gswitch.runner import _build_plan
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import zoo_graph

#: zoo graphs with integer weights 1..63: directed ones, unreachable parts, ties
ZOO = ("directed_dag", "disconnected", "duplicates", "self_loops", "single", "empty")


def _mask(n, ids):
    mask = np.zeros(n)
    mask[ids] = 1
    return mask


@pytest.mark.parametrize("name", ZOO)
def test_dag_equals_networkx_on_the_zoo(name):
    """Node and edge sums of ``dag`` are networkx's, exact and from a few sources, with
    and without endpoints."""
    g = zoo_graph(name)
    picked = np.random.default_rng(1).choice(g.n_nodes, min(5, g.n_nodes), replace=False)
    for algorithm, key, kwargs in [
            ("weighted_betweenness", "betweenness", {}),
            ("weighted_betweenness", "betweenness", {"endpoints": 1, "sources": picked}),
            ("edge_betweenness", "edge_betweenness", {"sources": picked})]:
        r = gs.run(algorithm, g, backend="cpu", config={"variant": "dag"}, **kwargs)
        ref_kw = {k: v for k, v in kwargs.items() if k != "sources"}
        if "sources" in kwargs:
            ref_kw["sources"] = _mask(g.n_nodes, picked)
        assert compare(algorithm, r.fields[key], reference(algorithm, g, **ref_kw)) is None


def test_dag_batches_of_one_source_give_the_same_sums(monkeypatch):
    """However many sources share a batch, the sums are the same."""
    g = zoo_graph("duplicates")
    whole = gs.run("edge_betweenness", g, backend="cpu").fields["edge_betweenness"]
    monkeypatch.setattr(_brandes_dag, "BATCH_BUDGET", 1)
    r = gs.run("edge_betweenness", g, backend="cpu")
    assert r.stats["batches"] == g.n_nodes
    np.testing.assert_allclose(r.fields["edge_betweenness"], whole, rtol=1e-12, atol=1e-12)


def test_dag_equals_networkx_rescaled_with_equal_length_paths():
    """Integer weights on a grid (many equal-length paths), k sampled sources, directed
    and undirected: networkx's rescaled values."""
    for directed in (False, True):
        h = nx.grid_2d_graph(7, 7)
        h = nx.convert_node_labels_to_integers(h.to_directed() if directed else h)
        rng = np.random.default_rng(2)
        for u, v in h.edges:
            h[u][v]["weight"] = int(rng.integers(1, 3))
        g = gs.Graph.from_networkx(h)
        nodes = np.array(nx.utils.create_py_random_state(3).sample(list(h), 9))
        raw = gs.run("weighted_betweenness", g, backend="cpu", sources=nodes)
        assert raw.stats["variant"] == "dag"
        got = rescale(raw.fields["betweenness"], directed=directed, sources=nodes)
        want = nx.betweenness_centrality(h, k=9, weight="weight", seed=3)
        np.testing.assert_allclose(got, [want[v] for v in range(49)], rtol=1e-9, atol=1e-12)


def test_a_weight_lost_in_float64_is_one_clear_line():
    """An edge that does not lengthen its path in float64 (a zero-length cycle) is named."""
    g = gs.Graph.from_edges([0, 1, 2], [1, 2, 1], [1e20, 1.0, 1.0])
    with pytest.raises(gs.InvalidInput, match=r"does not lengthen a path .* scale the "
                                              r"weights up or drop the edge") as info:
        gs.run("weighted_betweenness", g, backend="cpu")
    assert "\n" not in str(info.value)


def test_the_backend_default_depends_on_the_weights():
    """On the CPU: ``dag`` for weights, ``batched`` edge betweenness on hop lengths (no
    weights or all 1); a config that picks a strategy runs ``per_source``."""
    weighted = zoo_graph("road")
    ones = weighted.with_weights(np.ones(weighted.n_edges, dtype=np.float32))
    runs = {(a, w.weights is None or bool((w.weights == 1).all())):
            gs.run(a, w, backend="cpu", sources=[0, 7]).stats["variant"]
            for a in ("weighted_betweenness", "edge_betweenness") for w in (weighted, ones)}
    assert runs == {("weighted_betweenness", False): "dag",
                    ("weighted_betweenness", True): "dag",
                    ("edge_betweenness", False): "dag",
                    ("edge_betweenness", True): "batched"}
    r = gs.run("edge_betweenness", weighted, backend="cpu", sources=[0, 7],
               config={"driving": "topology"})
    assert r.stats["variant"] == "per_source"


def test_on_the_gpu_the_defaults_leave_dag_out_and_refuse_it_in_one_line():
    """The GPU's plan runs ``per_source`` on weights and ``batched`` on hop lengths;
    ``variant=dag`` there names the backend and the variants that run."""
    g = zoo_graph("road")
    assert _build_plan("weighted_betweenness", g, None, "gpu").spec.variant == "per_source"
    assert _build_plan("edge_betweenness", g, None, "gpu").spec.variant == "per_source"
    assert _build_plan("edge_betweenness", g.with_weights(None), None,
                       "gpu").spec.variant == "batched"
    for name in ("weighted_betweenness", "edge_betweenness"):
        with pytest.raises(gs.InvalidConfig, match=r"variant dag of \w+ runs on the cpu "
                                                   r"backend only, not the gpu one; run it "
                                                   r"with backend='cpu', or choose another "
                                                   r"variant \(variant=per_source") as info:
            _build_plan(name, g, {"variant": "dag"}, "gpu")
        assert "\n" not in str(info.value)


def test_batched_edge_betweenness_refuses_weights_other_than_one():
    """Batched Brandes counts hops: a weighted graph is refused with the fix."""
    with pytest.raises(gs.InvalidInput, match="edge_betweenness: variant batched counts "
                                              "hops, but the graph has weights other than 1"):
        gs.run("edge_betweenness", zoo_graph("road"), backend="cpu",
               config={"variant": "batched"})


def test_the_tuner_searches_dag_on_the_cpu_only():
    """``dag`` is a variant of the CPU's space and left out of the GPU's, with why."""
    g = zoo_graph("road")
    for name in ("weighted_betweenness", "edge_betweenness"):
        spec = get_registry().algorithm(name)
        cpu, gpu = build_space(spec, g, "cpu"), build_space(spec, g, "gpu")
        assert "dag" in cpu.variants and "dag" in cpu.direct
        assert "dag" not in gpu.variants
        assert "runs on the cpu backend only" in gpu.excluded["variant=dag"]


def _edges_back(graph, params, *, sources, backend, device_arrays):
    return {"tail": graph.edges()[0], "twice": graph.weights * 2}, {"iterations": 1}


@gs.algorithm(name="edges_back_by_array_code", reference="none", direct=_edges_back)
class EdgesBack:
    """Each stored edge's tail and doubled weight, from array code."""

    x = gs.NodeField("int32", init=0, output=False)
    tail = gs.EdgeField("int32", ids="node")
    twice = gs.EdgeField("float32")


@pytest.mark.parametrize("renumber", ["none", "rcm", "degree"])
def test_array_code_returns_edge_fields_in_caller_edge_order(renumber):
    """Edge fields of array code come back in the caller's edge order and ids."""
    g = rmat(6, 4, seed=2)
    g = g.with_weights(np.arange(1, g.n_edges + 1, dtype=np.float32))
    r = gs.run(EdgesBack, g, backend="cpu", config={"renumber": renumber})
    np.testing.assert_array_equal(r.fields["twice"], g.weights * 2)
    np.testing.assert_array_equal(r.fields["tail"], g.edges()[0])
    assert "edge field tail: int32 init=0 (array code)" in EdgesBack.describe()


def test_array_code_edge_fields_of_the_wrong_length_are_named():
    """An edge field that is not one value per stored edge is refused in one line."""
    @gs.algorithm(name="edge_field_too_short", reference="none",
                  direct=lambda graph, params, **kw: ({"w": np.zeros(2)}, {}))
    class Short:
        x = gs.NodeField("int32", init=0, output=False)
        w = gs.EdgeField("float64")

    with pytest.raises(AlgorithmError, match=r"returned edge field 'w' of shape \(2,\); "
                                             r"it holds one value per stored edge \(14,\)"):
        gs.run(Short, grid2d(2, 3), backend="cpu")


def test_backends_must_name_cpu_or_gpu():
    """A formulation's backends are checked when it is declared."""
    with pytest.raises(AlgorithmError, match="backends must name 'cpu', 'gpu' or both"):
        @gs.algorithm(name="on_no_backend", backends=("tpu",),
                      direct=lambda graph, params, **kw: ({}, {}))
        class Nowhere:
            x = gs.NodeField("int32", init=0)
