"""Strongly connected components (``scc``), both formulations, on the CPU engine against
scipy and networkx: zoo and generated directed graphs, every driving each supports (its
super-steps) and the engine's reach closure, the graphs it refuses, its generated CUDA,
and on a GPU where one is present.
"""

from concurrent.futures import ThreadPoolExecutor

import networkx as nx
import numpy as np
import pytest

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.generators import path, rmat
from gswitch.plugins import get_registry
from gswitch.runner import check_combination
from gswitch.staging import stage_config
from gswitch.testing.nvcc import compile_source
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

NAME = "scc"
VARIANTS = sorted(get_registry().variants[NAME])
# the 2,000-node path costs one round per node: left to the generated chains below
ZOO = [n for n in ZOO_NAMES if n != "path"]


def _drivings(variant):
    """The CPU drivings the formulation accepts (with push, the direction it supports)."""
    reg = get_registry()
    spec = reg.variants[NAME][variant]
    return sorted(d for d, cls in reg.strategies["driving"].items() if "cpu" in cls.backends
                  and check_combination(spec, None, gs.Config({"driving": d}), "cpu") is None)


CASES = [(v, d) for v in VARIANTS for d in _drivings(v)]


def _directed(g, seed=0):
    """A directed version of a zoo graph: an undirected one keeps each edge one way, and
    the other way too with probability 1/2 (mixed strong components)."""
    if g.directed:
        return g
    src, dst = g.edges()
    once = src < dst
    src, dst = src[once], dst[once]
    both = np.random.default_rng(seed).random(src.size) < 0.5
    return gs.Graph.from_edges(np.concatenate([src, dst[both]]),
                               np.concatenate([dst, src[both]]), n_nodes=g.n_nodes)


def _planted(sizes, seed=0):
    """Cycles of the given sizes (each a strong component), joined by random forward
    edges between components (which keep them apart) and chords inside them."""
    rng = np.random.default_rng(seed)
    src, dst, start = [], [], 0
    starts = []
    for k in sizes:
        nodes = np.arange(start, start + k)
        src += nodes.tolist()
        dst += np.roll(nodes, -1).tolist()
        chords = rng.integers(start, start + k, size=(k // 2, 2))
        src += chords[:, 0].tolist()
        dst += chords[:, 1].tolist()
        starts.append(start)
        start += k
    for _ in range(len(sizes) * 2):
        a, b = sorted(rng.choice(len(sizes), 2, replace=False))
        src.append(starts[a])
        dst.append(starts[b])
    perm = rng.permutation(start)  # ids scattered over the components
    return gs.Graph.from_edges(perm[src], perm[dst], n_nodes=start, name="planted")


def _cycle_chain(k, length, seed=0):
    """``k`` directed cycles of ``length`` nodes, each joined one way to the next: a
    chain of components (one round each), ids shuffled."""
    ids = np.arange(k * length).reshape(k, length)
    src = [ids.ravel(), ids[:-1, 0]]
    dst = [np.roll(ids, -1, axis=1).ravel(), ids[1:, length // 2]]
    perm = np.random.default_rng(seed).permutation(k * length)
    return gs.Graph.from_edges(perm[np.concatenate(src)], perm[np.concatenate(dst)],
                               n_nodes=k * length)


def _dag(n, m, seed=0):
    """A random DAG: ``m`` edges from a lower to a higher rank, ranks shuffled."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n, (2, m))
    keep = a != b
    lo, hi = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
    perm = rng.permutation(n)
    return gs.Graph.from_edges(perm[lo], perm[hi], n_nodes=n)


GENERATED = {
    "rmat": lambda: rmat(10, 4, seed=1),
    "rmat_sparse": lambda: rmat(11, 2, seed=3),
    "chain": lambda: path(200, directed=True),
    "cycle": lambda: gs.Graph.from_edges(np.arange(300), (np.arange(300) + 1) % 300),
    "cycle_chain": lambda: _cycle_chain(12, 5),
    "dag": lambda: _dag(300, 900),
    "planted": lambda: _planted([1, 2, 5, 17, 40, 3, 100, 1, 8]),
    "self_loops": lambda: zoo_graph("self_loops"),
}


def _networkx_labels(graph):
    """Each node's smallest id in its networkx strong component."""
    h = nx.DiGraph()
    h.add_nodes_from(range(graph.n_nodes))
    h.add_edges_from(zip(*(a.tolist() for a in graph.edges())))
    want = np.empty(graph.n_nodes, dtype=np.int64)
    for comp in nx.strongly_connected_components(h):
        members = list(comp)
        want[members] = min(members)
    return want


def _run(graph, variant, **config):
    return gs.run(NAME, graph, backend="cpu", config={"variant": variant, **config})


@pytest.mark.parametrize("graph_name", ZOO)
@pytest.mark.parametrize(("variant", "driving"), CASES)
def test_zoo_super_steps_match_scipy(graph_name, variant, driving, super_steps):
    """Each zoo graph (directed) gets scipy's strong components under every driving the
    formulation supports, its stages run step by step."""
    graph = _directed(zoo_graph(graph_name))
    got = _run(graph, variant, driving=driving).fields["scc"]
    assert compare(NAME, got, reference(NAME, graph)) is None


@pytest.mark.parametrize("graph_name", sorted(GENERATED))
@pytest.mark.parametrize("variant", VARIANTS)
def test_generated_graphs_match_networkx(graph_name, variant):
    """Labels are exactly the smallest id of each networkx strong component (the CPU
    engine's reach closure doing the searches)."""
    graph = GENERATED[graph_name]()
    got = _run(graph, variant).fields["scc"]
    assert np.array_equal(got, _networkx_labels(graph))


@pytest.mark.parametrize("graph_name", ["planted", "cycle_chain", "dag"])
@pytest.mark.parametrize(("variant", "driving"), CASES)
def test_generated_super_steps_match_networkx(graph_name, variant, driving, super_steps):
    """The same labels from the super-steps of every driving."""
    graph = GENERATED[graph_name]()
    got = _run(graph, variant, driving=driving).fields["scc"]
    assert np.array_equal(got, _networkx_labels(graph))


@pytest.mark.parametrize("variant", VARIANTS)
def test_closure_and_super_steps_do_the_same_searches(variant, monkeypatch):
    """Both ways reach the same fields, the closure in fewer engine steps."""
    g = GENERATED["planted"]()
    closure = _run(g, variant)
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")
    steps = _run(g, variant)
    assert np.array_equal(closure.fields["scc"], steps.fields["scc"])
    assert closure.stats["iterations"] < steps.stats["iterations"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_trim_passes_do_not_change_the_answer(variant):
    g = GENERATED["planted"]()
    want = reference(NAME, g)
    for passes in (1, 2, 50):
        got = gs.run(NAME, g, backend="cpu", trim_passes=passes,
                     config={"variant": variant}).fields["scc"]
        assert compare(NAME, got, want) is None


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_graph_trimming_assigns_whole_ends_after_the_trimming(variant):
    """On a DAG trimming assigns every node: the host step after it ends the run, and no
    colouring or search stage runs."""
    g = _dag(300, 900)
    r = gs.run(NAME, g, backend="cpu", config={"variant": variant}, trim_passes=1000)
    assert compare(NAME, r.fields["scc"], reference(NAME, g)) is None
    stages = {s["stage"] for s in r.stats["stages"]}
    assert stages <= {"_begin", "trimming", "after_trim", "pivots"}, stages


@pytest.mark.parametrize("variant", VARIANTS)
def test_undirected_graph_is_one_line_naming_cc(variant):
    g = gs.Graph.from_edges([0, 1], [1, 2], directed=False)
    with pytest.raises(gs.InvalidInput, match="run cc instead"):
        _run(g, variant)


@pytest.mark.parametrize("variant", VARIANTS)
def test_empty_and_single_node(variant):
    assert _run(zoo_graph("empty"), variant).fields["scc"].size == 0
    assert _run(zoo_graph("single_loop"), variant).fields["scc"].tolist() == [0]


def _stage_sources(launch, only=None):
    cfg = gs.Config({"launch": launch})
    out = {}
    for variant in VARIANTS:
        spec = get_registry().variants[NAME][variant]
        for st in [s for s in spec.stages if isinstance(s, gs.AlgorithmSpec)]:
            name = f"{variant}:{st.stage_name}"
            if only is None or name in only:
                c = stage_config(st, cfg.replace(variant=variant, **spec.config_defaults))
                out[name] = generate_source(st, c, weighted=False).source
    return out


def _compiles(nvcc, launch, only=None):
    sources = _stage_sources(launch, only)
    assert sources
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(sources, pool.map(lambda s: compile_source(s, nvcc=nvcc),
                                             sources.values())))
    for name, (ok, out) in results.items():
        assert ok, f"{name} {launch}:\n{out[-3000:]}"


@pytest.mark.compile
def test_partition_trimming_compiles(nvcc):
    """The partition-guarded trimming (an indirect max into the edge's source, a node
    operator after the edges) compiles with nvcc; every stage of both formulations under
    every launch is below, and in tests/test_compile.py's matrix."""
    _compiles(nvcc, "host_loop", {"forward_backward:trimming"})


@pytest.mark.compile_all
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_every_stage_compiles_under_every_launch(launch, nvcc):
    """Each operator stage of both formulations compiles under each launch (run by
    .ci/run with the compile matrix: nvcc takes seconds a module)."""
    _compiles(nvcc, launch)


def test_the_tuner_searches_it_and_checks_every_trial(tmp_path):
    """A short CPU study of scc finishes with verified trials."""
    from gswitch.tuner import tune

    result = tune(NAME, GENERATED["cycle_chain"](), trials=3, backend="cpu", seed=0,
                  storage=f"journal://{tmp_path / 'studies.journal'}")
    assert result.counts.get("ok", 0) >= 1 and "wrong_answer" not in result.counts


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("graph_name", sorted(GENERATED))
@pytest.mark.parametrize("variant", VARIANTS)
def test_gpu_matches_scipy(graph_name, variant):
    graph = GENERATED[graph_name]()
    got = gs.run(NAME, graph, backend="gpu", config={"variant": variant}).fields["scc"]
    assert compare(NAME, got, reference(NAME, graph)) is None


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("graph_name", ZOO)
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize(("variant", "driving"), CASES)
def test_gpu_zoo_under_every_driving_and_launch(graph_name, launch, variant, driving):
    graph = _directed(zoo_graph(graph_name))
    got = gs.run(NAME, graph, backend="gpu", config={
        "variant": variant, "driving": driving, "launch": launch}).fields["scc"]
    assert compare(NAME, got, reference(NAME, graph)) is None
