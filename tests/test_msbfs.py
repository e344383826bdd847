"""Multi-source BFS (``msbfs``) and the ``uint64`` fields it needs: hop distances against
scipy and networkx on zoo and generated graphs, batches of 64, bad sources, the
expression language on 64-bit sets, and its generated CUDA."""

import doctest

import networkx as nx
import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph
from gswitch.algorithms import msbfs
from gswitch.algorithms.msbfs import BATCH, distances

import gswitch as gs
import gswitch.expr as ex
from gswitch.codegen import generate_source, lower_expr
from gswitch.generators import grid2d, rmat, uniform_random
from gswitch.plugins import get_registry
from gswitch.testing.nvcc import compile_source
from gswitch.testing.zoo import zoo_graph

SPEC = get_registry().algorithm("msbfs")
CONFIGS = [{"driving": "data", "direction": "push"}, {"driving": "data", "direction": "pull"},
           {"driving": "topology", "direction": "push"},
           {"driving": "data", "direction": "direction_optimizing"}]
ZOO = ["empty", "single", "single_loop", "disconnected", "self_loops", "duplicates", "star",
       "grid", "rmat", "uniform", "directed_dag"]


def _scipy_hops(graph, sources):
    if graph.n_nodes == 0:
        return np.zeros((len(sources), 0), dtype=np.int64)
    d = csgraph.shortest_path(graph.to_scipy(), unweighted=True, indices=sources)
    return np.where(np.isinf(d), -1, d).astype(np.int64).reshape(len(sources), -1)


def _sources(graph, k=BATCH):
    """Up to ``k`` sources spread over the ids, the last node included."""
    n = graph.n_nodes
    return np.unique(np.linspace(0, n - 1, min(n, k)).astype(np.int64)) if n else \
        np.zeros(0, np.int64)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c['driving']}-{c['direction']}")
@pytest.mark.parametrize("name", ZOO)
def test_zoo_matches_scipy(name, config):
    """A batch of sources on every zoo graph: scipy's hop counts, -1 where unreached,
    under each driving and direction the formulation supports."""
    g = zoo_graph(name)
    src = _sources(g)
    got = distances(g, src, backend="cpu", config=config)
    assert got.dtype == np.int32 and got.shape == (src.size, g.n_nodes)
    np.testing.assert_array_equal(got, _scipy_hops(g, src))


@pytest.mark.parametrize("graph", [
    pytest.param(lambda: uniform_random(150, 300, seed=4), id="directed-disconnected"),
    pytest.param(lambda: rmat(8, 4, seed=1), id="rmat"),
    pytest.param(lambda: grid2d(12, 12), id="grid")])
def test_several_batches_match_networkx(graph):
    """Every node a source (more than 64: several traversals) gives networkx's
    all_pairs_shortest_path_length, on a directed graph with unreachable pairs too."""
    g = graph()
    assert g.n_nodes > 2 * BATCH
    got = distances(g, backend="cpu")
    G = nx.DiGraph()
    G.add_nodes_from(range(g.n_nodes))
    G.add_edges_from(zip(*(a.tolist() for a in g.edges())))
    want = np.full((g.n_nodes, g.n_nodes), -1)
    for s, row in nx.all_pairs_shortest_path_length(G):
        want[s, list(row)] = list(row.values())
    np.testing.assert_array_equal(got, want)


def test_repeated_and_unordered_sources_keep_their_rows():
    """Rows follow the sources as given, repeats included, across batch boundaries."""
    g = uniform_random(100, 400, seed=2)
    src = np.r_[np.arange(99, -1, -1), [5, 5, 63]]
    np.testing.assert_array_equal(distances(g, src, backend="cpu"), _scipy_hops(g, src))


def test_seen_sets_match_the_declared_reference():
    """The run's first output (seen) equals the spec's expected() bit for bit, bit 63
    included."""
    g = rmat(7, 4, seed=3)
    src = np.arange(0, 128, 2)
    r = gs.run("msbfs", g, sources=src, backend="cpu")
    prepared = msbfs.source_bits(src, {"n_nodes": g.n_nodes})
    want = SPEC.expected(g, sources=prepared)
    assert SPEC.compare(r.fields["seen"], want) is None
    assert int(r.fields["seen"][src[-1]]) >> 63 == 1


@pytest.mark.parametrize("sources,match", [
    ([0, 7], r"msbfs source 7 is out of range: the graph has 3 nodes"),
    ([-1], r"msbfs source -1 is out of range"),
    (["a"], r"msbfs sources must be node ids")])
def test_bad_sources_are_one_line(sources, match):
    """An id outside the graph or not an id is refused naming the value."""
    with pytest.raises(gs.InvalidInput, match=match):
        distances(gs.Graph.from_edges([0, 1], [1, 2]), sources, backend="cpu")


def test_dense_matrix_is_estimated_first(monkeypatch):
    """Under a memory limit the (k, n) matrix is refused with the bytes and the fix."""
    g = uniform_random(3000, 3000, seed=1)
    monkeypatch.setenv("GSWITCH_MEMORY_LIMIT", "4M")
    with pytest.raises(gs.InvalidInput, match=r"dense 3,000 x 3,000 hop-distance matrix "
                       r"needs about 34.3 MiB .* use gswitch.algorithms.msbfs."
                       r"distances_batches"):
        distances(g, backend="cpu")


def test_a_run_without_sources_is_refused_in_one_line():
    """gs.run("msbfs", g) without sources would start from no node and return empty sets:
    it is refused in one line naming sources= (--param sources= under the command line,
    which refuses it before the run), and so is a study of it."""
    from gswitch.tuner import tune

    from gswitch._hints import cli_names

    g = gs.Graph.from_edges([0, 1], [1, 2])
    want = (r"^msbfs needs its source node ids \(at most 64\), got none: pass "
            r"sources=\[ID, \.\.\.\] ")
    for config in (None, {"driving": "topology"}):
        with pytest.raises(gs.InvalidInput, match=want) as err:
            gs.run("msbfs", g, backend="cpu", config=config)
        assert "\n" not in str(err.value) and "--param" not in str(err.value)
    with cli_names(), pytest.raises(gs.InvalidInput, match=r"pass --param sources=ID,ID"):
        gs.run("msbfs", g, backend="cpu")
    with pytest.raises(gs.InvalidInput, match=want):
        tune("msbfs", g, trials=1, backend="cpu")
    assert gs.run("msbfs", g, sources=[1], backend="cpu").fields["seen"].tolist() == [0, 1, 1]


@pytest.mark.parametrize("empty", [[], (), np.array([], dtype=np.int64)])
def test_an_empty_source_list_is_refused_too(empty):
    """An explicit empty list starts no node either: refused in one line."""
    g = gs.Graph.from_edges([0, 1], [1, 2])
    with pytest.raises(gs.InvalidInput, match=r"^msbfs needs its source node ids "
                       r"\(at most 64\), got an empty list: pass sources=") as err:
        gs.run("msbfs", g, sources=empty, backend="cpu")
    assert "\n" not in str(err.value)


def test_one_run_takes_at_most_64_distinct_sources():
    """gs.run itself refuses 65 sources or a repeat and points at distances()."""
    g = uniform_random(100, 200, seed=1)
    with pytest.raises(gs.InvalidInput, match="at most 64 sources at once, got 65.*distances"):
        gs.run("msbfs", g, sources=np.arange(65), backend="cpu")
    with pytest.raises(gs.InvalidInput, match="distinct"):
        gs.run("msbfs", g, sources=[1, 1], backend="cpu")


def test_uint64_expressions_keep_all_64_bits():
    """uint64 promotes above int64, lowers to unsigned long long literals, and the CPU
    engine ORs the top bit in a reduction."""
    a = ex.FieldLoad("x", "self", "uint64")
    assert (a | 1).dtype == "uint64" and (a & ex.Const(3, "int64")).dtype == "uint64"
    assert (a + 0.5).dtype == "float64"
    assert "ULL" in lower_expr(a | (1 << 63))
    with pytest.raises(gs.AlgorithmError, match="uint64"):
        gs.NodeField("bool")

    @gs.algorithm(name="top_bit_or", expected=None)
    class TopBit:
        bits = gs.NodeField("uint64", init=0, at_source=2**63 + 1)
        start = gs.from_source()

        @gs.edge_op
        def spread(e):
            e.dst.bits.reduce_or(e.src.bits | (e.src.bits >> 63 << 1))

    g = gs.Graph.from_edges([0, 1], [1, 2])
    got = gs.run(TopBit, g, source=0, backend="cpu").fields["bits"]
    assert got.dtype == np.uint64 and got.tolist() == [2**63 + 1, 2**63 + 3, 2**63 + 3]


def test_docstring_example_runs():
    """The Examples section runs as a doctest."""
    test = doctest.DocTestParser().get_doctest(SPEC.cls.__doc__, {}, "msbfs", None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert test.examples and runner.failures == 0


@pytest.mark.compile
def test_generated_cuda_compiles(nvcc):
    """The node operator's 31 plane updates and the uint64 atomic OR compile (every
    strategy pair: tests/test_compile.py)."""
    gen = generate_source(SPEC, gs.Config(SPEC.config_defaults), weighted=False)
    assert "unsigned long long" in gen.source
    ok, out = compile_source(gen.source, nvcc=nvcc)
    assert ok, out[-3000:]


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c['driving']}-{c['direction']}")
@pytest.mark.parametrize("name", ["disconnected", "duplicates", "rmat", "grid", "directed_dag"])
def test_gpu_matches_scipy(name, config):
    """On the GPU every node a source (several batches) gives scipy's hop counts."""
    g = zoo_graph(name)
    got = distances(g, backend="gpu", config=config)
    np.testing.assert_array_equal(got, _scipy_hops(g, np.arange(g.n_nodes)))
