"""Brandes betweenness against networkx: raw sums, endpoints, sampling, rescaling, by
both formulations (``batched``, the default, and ``per_source``), and how a run picks
one."""

import networkx as nx
import numpy as np
import pytest
from gswitch.algorithms.betweenness import rescale

import gswitch as gs
from gswitch.errors import AlgorithmError
from gswitch.generators import grid2d, rmat
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import zoo_graph

GRAPHS = {"rmat": rmat(7, 6, seed=1), "grid": grid2d(6, 7),
          "duplicates": zoo_graph("duplicates"), "self_loops": zoo_graph("self_loops"),
          "disconnected": zoo_graph("disconnected"), "dag": zoo_graph("directed_dag"),
          "empty": zoo_graph("empty"), "single": zoo_graph("single")}


VARIANTS = ["batched", "per_source"]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("endpoints", [0, 1])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_raw_sums_equal_networkx(name, endpoints, variant):
    g = GRAPHS[name]
    r = gs.run("betweenness", g, backend="cpu", endpoints=endpoints,
               config={"variant": variant})
    assert r.stats["variant"] == variant
    assert compare("betweenness", r.fields["betweenness"],
                   reference("betweenness", g, endpoints=endpoints)) is None


@pytest.mark.parametrize("variant", ["default", *VARIANTS])
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("endpoints", [False, True])
@pytest.mark.parametrize("k", [None, 7])
def test_rescaled_values_equal_networkx_betweenness_centrality(directed, normalized,
                                                               endpoints, k, variant):
    h = nx.gnm_random_graph(40, 110, seed=3, directed=directed)
    g = gs.Graph.from_networkx(h)
    nodes = None if k is None else np.array(
        nx.utils.create_py_random_state(11).sample(list(h), k))
    kw = {} if nodes is None else {"sources": nodes}
    raw = gs.run("betweenness", g, backend="cpu", endpoints=int(endpoints),
                 config={"variant": variant}, **kw).fields["betweenness"]
    got = rescale(raw, directed=directed, normalized=normalized, endpoints=endpoints,
                  sources=nodes)
    want = nx.betweenness_centrality(h, k=k, normalized=normalized, endpoints=endpoints,
                                     seed=11)
    np.testing.assert_allclose(got, [want[v] for v in range(40)], rtol=1e-9, atol=1e-12)


def test_bad_sources_and_the_equality_footgun():
    g = grid2d(3, 3)
    with pytest.raises(gs.InvalidInput, match="source 9 is out of range"):
        gs.run("betweenness", g, sources=[0, 9], backend="cpu")
    with pytest.raises(AlgorithmError, match="write a.eq\\(b\\)"):
        @gs.algorithm(name="uses_double_equals", reference="none")
        class Bad:
            x = gs.NodeField("int32", init=0)
            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.only_if(e.dst.x == e.src.x)
                e.dst.x.reduce_max(e.src.x)


@pytest.mark.parametrize("graph", [rmat(10, 8, seed=4), grid2d(20, 15),
                                   rmat(9, 6, seed=5, directed=True)],
                         ids=["rmat", "grid", "rmat_directed"])
def test_batched_equals_networkx_on_generated_graphs(graph):
    """Sampled (more than one batch of 64) and exact runs of the default formulation
    give networkx's sums."""
    sources = np.random.default_rng(3).choice(graph.n_nodes, 100, replace=False)
    mask = np.zeros(graph.n_nodes)
    mask[sources] = 1
    r = gs.run("betweenness", graph, backend="cpu", sources=sources)
    assert r.stats["variant"] == "batched" and r.stats["batches"] == 2
    assert compare("betweenness", r.fields["betweenness"],
                   reference("betweenness", graph, sources=mask)) is None


def test_default_is_batched_with_the_per_source_stats_keys():
    """No config: batched runs, with the fields and statistics keys of the per-source
    formulation (and the work it did)."""
    g = grid2d(6, 7)
    batched = gs.run("betweenness", g, backend="cpu")
    per_source = gs.run("betweenness", g, backend="cpu", config={"variant": "per_source"})
    assert batched.stats["variant"] == "batched"
    assert per_source.stats["variant"] == "per_source"
    assert set(batched.fields) == set(per_source.fields) == {"betweenness"}
    for key in ("iterations", "edges_processed", "time_s", "converged", "config_source",
                "active", "modes"):
        assert key in batched.stats and key in per_source.stats, key
    assert batched.stats["iterations"] > 0 and batched.stats["edges_processed"] > 0
    np.testing.assert_allclose(batched.fields["betweenness"],
                               per_source.fields["betweenness"], rtol=1e-9, atol=1e-9)


def test_a_strategy_choice_runs_per_source_and_batched_takes_none():
    """A config that picks a strategy, without variant, runs the formulation of
    operators; with variant=batched it is refused in one line naming the variant."""
    g = grid2d(4, 4)
    r = gs.run("betweenness", g, backend="cpu", config={"driving": "topology"})
    assert r.stats["variant"] == "per_source"
    r = gs.run("betweenness", g, backend="cpu", config={"renumber": "rcm"})
    assert r.stats["variant"] == "batched"  # renumbering is no strategy: both honour it
    np.testing.assert_allclose(r.fields["betweenness"],
                               gs.run("betweenness", g, backend="cpu").fields["betweenness"],
                               rtol=1e-9, atol=1e-9)
    with pytest.raises(gs.InvalidConfig, match="variant batched of betweenness runs its "
                       "own array code.*no driving strategy"):
        gs.run("betweenness", g, backend="cpu",
               config={"variant": "batched", "driving": "topology"})


def test_graphs_too_large_for_a_batch_run_per_source(monkeypatch):
    """Above the batch's node limit the default is the per-source formulation; an
    explicit variant=batched still runs batched."""
    from gswitch.algorithms import _brandes_batch

    monkeypatch.setattr(_brandes_batch, "MAX_NODES", 10)
    g = grid2d(4, 4)
    assert gs.run("betweenness", g, backend="cpu").stats["variant"] == "per_source"
    r = gs.run("betweenness", g, backend="cpu", config={"variant": "batched"})
    assert r.stats["variant"] == "batched"
    assert gs.run("betweenness", grid2d(3, 3), backend="cpu").stats["variant"] == "batched"


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kwargs, message", [
    ({"sources": [0, 9]}, "betweenness source 9 is out of range: the graph has 9 nodes"),
    ({"sources": ["a"]}, "betweenness sources must be node ids"),
    ({"endpoints": 2}, "endpoints"),
    ({"normalized": True}, "betweenness has no parameter 'normalized'; parameters are"),
    ({"k": 10}, "k=10 is more sources than the graph's 9 nodes"),
    ({"k": 2, "sources": [1]}, "sources or k, not both"),
    ({"k": -1}, "k"),
])
def test_bad_parameters_are_one_clear_line(variant, kwargs, message):
    """Both formulations refuse bad parameters with the same one-line InvalidInput."""
    with pytest.raises(gs.InvalidInput, match=message) as info:
        gs.run("betweenness", grid2d(3, 3), backend="cpu", config={"variant": variant},
               **kwargs)
    assert "\n" not in str(info.value)


def test_array_code_formulations_declare_no_operators():
    """``direct=`` takes fields and parameters only: operators and strategy defaults
    are refused at declaration."""
    def run_nothing(graph, params, *, sources, backend, device_arrays):
        return {"x": np.zeros(graph.n_nodes)}, {}

    with pytest.raises(AlgorithmError, match="not operators"):
        @gs.algorithm(name="direct_with_op", direct=run_nothing)
        class WithOp:
            x = gs.NodeField("float64", init=0.0)

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_add(e.src.x)
    with pytest.raises(AlgorithmError, match="no supports or defaults"):
        @gs.algorithm(name="direct_with_defaults", direct=run_nothing,
                      defaults={"driving": "topology"})
        class WithDefaults:
            x = gs.NodeField("float64", init=0.0)

    @gs.algorithm(name="direct_zeros", direct=run_nothing)
    class Zeros:
        """Zeros."""

        x = gs.NodeField("float64", init=1.0)

    r = gs.run(Zeros, grid2d(2, 2), backend="cpu")
    assert r.fields["x"].tolist() == [0.0] * 4 and r.stats["variant"] == "default"


@pytest.mark.parametrize("config", [None, {"variant": "per_source"},
                                    {"variant": "batched", "renumber": "rcm"},
                                    {"variant": "per_source", "renumber": "degree"}])
def test_k_sampled_sources_equal_networkx_with_the_same_draw(config):
    """``k`` draws its sources before any renumbering, the same on both variants: the
    sums are networkx's for the drawn sources."""
    from gswitch.algorithms.betweenness import sampled_sources

    g = rmat(9, 6, seed=3).symmetrize().deduplicate()
    r = gs.run("betweenness", g, backend="cpu", k=24, seed=7, config=config)
    picked = sampled_sources(None, {"k": 24, "seed": 7, "n_nodes": g.n_nodes})
    assert picked.size == 24 and np.unique(picked).size == 24
    want = reference("betweenness", g, sources=np.isin(np.arange(g.n_nodes), picked))
    assert compare("betweenness", r.fields["betweenness"], want) is None
    assert compare("betweenness", r.fields["betweenness"],
                   reference("betweenness", g, k=24, seed=7)) is None


def test_k_draws_differ_by_seed_and_refuse_bad_values():
    g = rmat(8, 6, seed=1).symmetrize().deduplicate()
    a = gs.run("betweenness", g, backend="cpu", k=8, seed=1).fields["betweenness"]
    b = gs.run("betweenness", g, backend="cpu", k=8, seed=2).fields["betweenness"]
    exact = gs.run("betweenness", g, backend="cpu", k=0).fields["betweenness"]
    assert not np.allclose(a, b)
    assert np.allclose(exact, gs.run("betweenness", g, backend="cpu").fields["betweenness"])
    with pytest.raises(gs.InvalidInput, match="sources or k, not both"):
        gs.run("betweenness", g, backend="cpu", k=8, sources=[1, 2])
    with pytest.raises(gs.InvalidInput, match=f"k <= {g.n_nodes}"):
        gs.run("betweenness", g, backend="cpu", k=g.n_nodes + 1)
