"""Strongly connected components (``scc``) on the CPU engine against scipy and networkx:
zoo and generated directed graphs, every driving it supports, the graphs it refuses, its
generated CUDA, and on a GPU where one is present.
"""

import networkx as nx
import numpy as np
import pytest

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.generators import path, rmat
from gswitch.plugins import get_registry
from gswitch.staging import stage_config
from gswitch.testing.nvcc import compile_source, find_nvcc
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

pytestmark = pytest.mark.usefixtures("super_steps")

NAME = "scc"
DIRECTED_ZOO = [n for n in ZOO_NAMES if zoo_graph(n).directed and n != "path"]


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


GENERATED = {
    "rmat": lambda: rmat(10, 4, seed=1),
    "rmat_sparse": lambda: rmat(11, 2, seed=3),
    "chain": lambda: path(200, directed=True),
    "cycle": lambda: gs.Graph.from_edges(np.arange(300), (np.arange(300) + 1) % 300),
    "planted": lambda: _planted([1, 2, 5, 17, 40, 3, 100, 1, 8]),
    "self_loops": lambda: zoo_graph("self_loops"),
}


def _drivings():
    spec = get_registry().algorithm(NAME)
    return spec.supports.get("driving", ("data", "topology", "temporal"))


@pytest.mark.parametrize("graph_name", DIRECTED_ZOO)
@pytest.mark.parametrize("driving", _drivings())
def test_zoo_matches_scipy(graph_name, driving):
    """Each directed zoo graph gets scipy's strong components, labelled by their
    smallest id, under every driving."""
    graph = zoo_graph(graph_name)
    got = gs.run(NAME, graph, backend="cpu", config={"driving": driving}).fields["scc"]
    assert compare(NAME, got, reference(NAME, graph)) is None


@pytest.mark.parametrize("graph_name", sorted(GENERATED))
def test_generated_graphs_match_networkx(graph_name):
    """Labels are exactly the smallest id of each networkx strong component."""
    graph = GENERATED[graph_name]()
    got = gs.run(NAME, graph, backend="cpu").fields["scc"]
    h = nx.DiGraph()
    h.add_nodes_from(range(graph.n_nodes))
    h.add_edges_from(zip(*(a.tolist() for a in graph.edges())))
    want = np.empty(graph.n_nodes, dtype=np.int64)
    for comp in nx.strongly_connected_components(h):
        members = list(comp)
        want[members] = min(members)
    assert np.array_equal(got, want)


def test_trim_passes_do_not_change_the_answer():
    g = GENERATED["planted"]()
    want = reference(NAME, g)
    for passes in (1, 2, 50):
        got = gs.run(NAME, g, backend="cpu", trim_passes=passes).fields["scc"]
        assert compare(NAME, got, want) is None


def test_undirected_graph_is_one_line_naming_cc():
    g = gs.Graph.from_edges([0, 1], [1, 2], directed=False)
    with pytest.raises(gs.InvalidInput, match="run cc instead"):
        gs.run(NAME, g, backend="cpu")


def test_empty_and_single_node():
    assert gs.run(NAME, zoo_graph("empty"), backend="cpu").fields["scc"].size == 0
    assert gs.run(NAME, zoo_graph("single_loop"), backend="cpu").fields["scc"].tolist() == [0]


# one launch here; the compile matrix (tests/test_compile.py, -m compile_all) covers
# every launch with every strategy
@pytest.mark.parametrize("launch", ["persistent"])
def test_every_stage_compiles(launch):
    """Each operator stage compiles with nvcc under each launch."""
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found: install the CUDA toolkit (CI installs it in .ci/run)")
    spec = get_registry().algorithm(NAME)
    cfg = gs.Config({"launch": launch, **spec.config_defaults})
    for st in [s for s in spec.stages if isinstance(s, gs.AlgorithmSpec)]:
        gen = generate_source(st, stage_config(st, cfg), weighted=False)
        ok, out = compile_source(gen.source, nvcc=nvcc)
        assert ok, f"{st.stage_name} {launch}:\n{out[-3000:]}"


def test_the_tuner_searches_it_and_checks_every_trial(tmp_path):
    """A short CPU study of scc finishes with verified trials."""
    from gswitch.tuner import tune

    result = tune(NAME, GENERATED["planted"](), trials=4, backend="cpu", seed=0,
                  storage=f"journal://{tmp_path / 'studies.journal'}")
    assert result.counts.get("ok", 0) >= 1 and "wrong_answer" not in result.counts


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("graph_name", sorted(GENERATED))
def test_gpu_matches_scipy(graph_name):
    graph = GENERATED[graph_name]()
    got = gs.run(NAME, graph, backend="gpu").fields["scc"]
    assert compare(NAME, got, reference(NAME, graph)) is None
