"""Label-propagation communities (``label_propagation``): the semi-synchronous variant
against networkx's ``label_propagation_communities`` exactly, the seeded asynchronous one
by its fixpoint invariant and modularity, the ``label_frequency`` intrinsic, and the
generated CUDA.
"""

import doctest
import functools

import networkx as nx
import numpy as np
import pytest
from gswitch.algorithms.lpa import compare_most_frequent, expected_neighbours, unhappy_nodes

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.config import DEFAULTS
from gswitch.engine.cpu_intrinsics import label_frequency
from gswitch.plugins import get_registry
from gswitch.staging import stage_config
from gswitch.testing.nvcc import compile_source
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

NAME = "label_propagation"
VARIANTS = sorted(get_registry().variants[NAME])
#: the 2000-node path needs one colouring step per node (its greedy order is a chain)
ZOO = [n for n in ZOO_NAMES if n != "path"]


def _from_nx(G):
    """``G`` as a gswitch graph, node ``i`` for the ``i``-th node of ``G`` (networkx's
    labels start as positions in that order, so the order decides its ties)."""
    position = {v: i for i, v in enumerate(G)}
    pairs = np.array([(position[a], position[b]) for a, b in G.edges()],
                     dtype=np.int64).reshape(-1, 2)
    return gs.Graph.from_edges(pairs[:, 0], pairs[:, 1], n_nodes=G.number_of_nodes(),
                               directed=False)


def _nx_sets(G, communities):
    """Position sets of ``G``'s communities."""
    position = {v: i for i, v in enumerate(G)}
    return {frozenset(position[v] for v in c) for c in communities}


@functools.cache
def _planted(kind, seed):
    if kind == "planted":
        G = nx.planted_partition_graph(6, 25, 0.4, 0.02, seed=seed)
    else:
        G = nx.random_partition_graph([20, 35, 50, 25], 0.3, 0.01, seed=seed)
    return G, _from_nx(G)


PLANTED = [(k, s) for k in ("planted", "random") for s in range(3)]


def _labels(graph, variant, **kw):
    return gs.run(NAME, graph, backend="cpu", config={"variant": variant},
                  **kw).fields["label"]


def _communities(labels):
    groups = {}
    for v, lab in enumerate(labels.tolist()):
        groups.setdefault(lab, set()).add(v)
    return list(groups.values())


@pytest.mark.parametrize("graph_name", ZOO)
def test_zoo_semi_synchronous_is_networkx(graph_name):
    """The semi-synchronous partition is networkx's on every zoo graph (self-loops,
    isolated nodes, parallel edges and directed inputs included)."""
    graph = zoo_graph(graph_name)
    got = _labels(graph, "semi_synchronous")
    assert compare(NAME, got, reference(NAME, graph)) is None


@pytest.mark.parametrize("kind,seed", PLANTED)
def test_planted_partitions_are_networkx(kind, seed):
    """On planted-partition graphs the partition equals networkx's, set for set."""
    G, graph = _planted(kind, seed)
    got = {frozenset(c) for c in _communities(_labels(graph, "semi_synchronous"))}
    assert got == _nx_sets(G, nx.community.label_propagation_communities(G))


def test_colours_beyond_one_mask_window():
    """A 70-clique needs 70 colours, more than the 62 of a node's mask: the nodes that
    run out move their window on, and the answer is still networkx's."""
    G = nx.complete_graph(70)
    G.add_edges_from([(69, 70), (70, 71), (71, 72), (5, 73)])
    got = {frozenset(c) for c in _communities(_labels(_from_nx(G), "semi_synchronous"))}
    assert got == {frozenset(c) for c in nx.community.label_propagation_communities(G)}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kind,seed", PLANTED)
def test_fixpoint_connectivity_and_modularity(variant, kind, seed):
    """Every label is among its neighbours' most frequent, each community is connected,
    and the modularity is within 0.05 of networkx's label propagation."""
    G, graph = _planted(kind, seed)
    labels = _labels(graph, variant, **({"seed": seed} if variant == "asynchronous" else {}))
    assert compare_most_frequent(labels, expected_neighbours(graph)) is None
    nodes = list(G)
    communities = [{nodes[i] for i in c} for c in _communities(labels)]
    assert all(nx.is_connected(G.subgraph(c)) for c in communities)
    ours = nx.community.modularity(G, communities)
    theirs = nx.community.modularity(G, nx.community.label_propagation_communities(G))
    assert ours >= theirs - 0.05


@pytest.mark.parametrize("graph_name", ZOO)
def test_zoo_asynchronous_reaches_the_fixpoint(graph_name):
    """The asynchronous variant ends with every label among the most frequent of its
    node's neighbours on every zoo graph."""
    graph = zoo_graph(graph_name)
    got = _labels(graph, "asynchronous", seed=7)
    assert compare(NAME, got, reference(NAME, graph)) is None or \
        compare_most_frequent(got, expected_neighbours(graph)) is None


def test_asynchronous_is_a_function_of_the_seed():
    """One seed gives one answer; the seed reaches the draws."""
    _, graph = _planted("planted", 1)
    a = _labels(graph, "asynchronous", seed=11)
    assert np.array_equal(a, _labels(graph, "asynchronous", seed=11))
    others = [_labels(graph, "asynchronous", seed=s) for s in range(12, 16)]
    assert any(not np.array_equal(a, b) for b in others)


@pytest.mark.parametrize("variant", VARIANTS)
def test_parallel_edges_are_refused_and_directed_repeats_merged(variant):
    """An undirected graph keeping a parallel edge is one InvalidInput naming the edge
    and the fix; a directed graph's repeats merge into one undirected edge."""
    multi = gs.Graph.from_edges([0, 0, 1, 2], [1, 1, 2, 3], directed=False,
                                duplicates="keep")
    with pytest.raises(gs.InvalidInput, match=r"edge 0 - 1 is repeated.*deduplicate"):
        gs.run(NAME, multi, backend="cpu", config={"variant": variant})
    directed = gs.Graph.from_edges([0, 1, 0, 1, 2], [1, 0, 1, 2, 3])
    assert gs.run(NAME, directed, backend="cpu",
                  config={"variant": variant}).fields["label"].size == 4


def test_the_invariant_check_catches_an_unhappy_node():
    """The fixpoint check names a node whose label is not among the most frequent."""
    graph = gs.Graph.from_edges([0, 1, 2], [1, 2, 3], directed=False)
    assert compare_most_frequent(np.array([0, 0, 3, 3]), expected_neighbours(graph)) is None
    problem = compare_most_frequent(np.array([0, 0, 0, 3]), expected_neighbours(graph))
    assert problem is not None and "node 3" in problem
    assert unhappy_nodes(np.array([0, 0, 0, 3]), graph.indptr, graph.indices).tolist() == [3]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("driving", ["data", "topology", "temporal"])
@pytest.mark.parametrize("direction", ["push", "pull"])
def test_cpu_engine_strategies(variant, driving, direction):
    """A supported driving and direction gives the variant's labels on the CPU engine;
    another is refused with the reason before anything runs."""
    spec = get_registry().variants[NAME][variant]
    _, graph = _planted("random", 0)
    cfg = {"variant": variant, "driving": driving, "direction": direction}
    if spec.unsupported("driving", driving, DEFAULTS["driving"]) or spec.unsupported(
            "direction", direction, DEFAULTS["direction"]):
        with pytest.raises(gs.InvalidConfig, match=f"variant {variant} of {NAME} supports"):
            gs.run(NAME, graph, backend="cpu", config=cfg)
        return
    got = gs.run(NAME, graph, backend="cpu", config=cfg).fields["label"]
    assert np.array_equal(got, _labels(graph, variant))


@pytest.mark.parametrize("row", ["dst", "src"])
def test_label_frequency_counts_the_row(row):
    """The CPU intrinsic counts, per edge, the entries of one end's row holding the other
    end's label, as a plain loop does."""
    rng = np.random.default_rng(3)
    graph = gs.Graph.from_edges(rng.integers(0, 40, 300), rng.integers(0, 40, 300),
                                n_nodes=40)
    labels = rng.integers(0, 5, 40).astype(np.int32)
    src, dst = graph.edges()
    order = rng.permutation(src.size)
    a, b = (src, dst) if row == "dst" else (dst, src)
    a, b = a[order], b[order]
    got = label_frequency(graph, labels, a, b)
    want = [int((labels[graph.indices[graph.indptr[y]:graph.indptr[y + 1]]]
                 == labels[x]).sum()) for x, y in zip(a, b)]
    assert got.tolist() == want


def _probe(dtype, row):
    @gs.algorithm(name="label_frequency_probe")
    class Probe:
        x = gs.NodeField(dtype, init=0)
        start = gs.all_nodes()

        @gs.edge_op
        def op(e):
            e.dst.x.reduce_max(e.label_frequency("x", row=row))

    return Probe


@pytest.mark.parametrize("dtype,row,match", [
    ("float32", "dst", r"label_frequency\('x'\) needs an integer field, x is float32"),
    ("int32", "both", r"label_frequency\(row='both'\): choose one of dst, src")])
def test_label_frequency_refuses_bad_arguments(dtype, row, match):
    """A float field or an unknown row is one clear error."""
    with pytest.raises(gs.AlgorithmError, match=match):
        _probe(dtype, row)


def test_label_frequency_has_no_pull_form():
    """Pull does not walk out-rows, so the intrinsic refuses it with the reason."""
    from gswitch.codegen import pull_form

    assert "label_frequency() reads out-rows" in pull_form(_probe("int32", "dst"))


@pytest.mark.parametrize("variant", VARIANTS)
def test_docstring_examples_run(variant):
    """The Examples section of each formulation runs as a doctest."""
    spec = get_registry().variants[NAME][variant]
    test = doctest.DocTestParser().get_doctest(spec.cls.__doc__, {}, spec.label, None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert test.examples and runner.failures == 0


@pytest.mark.compile
@pytest.mark.compile_all  # nvcc: .ci/run runs it with the compile matrix
@pytest.mark.parametrize("launch", ["persistent"])
def test_every_stage_compiles(launch, nvcc):
    """Each operator stage of each formulation compiles (tests/test_compile.py covers
    the other launches and strategies)."""
    for spec in get_registry().variants[NAME].values():
        cfg = gs.Config({"variant": spec.variant, "launch": launch, **spec.config_defaults})
        for st in [s for s in spec.stages if isinstance(s, gs.AlgorithmSpec)] or [spec]:
            gen = generate_source(st, stage_config(st, cfg), weighted=False)
            ok, out = compile_source(gen.source, nvcc=nvcc)
            assert ok, f"{spec.label} {st.stage_name} {launch}:\n{out[-3000:]}"


def test_label_propagation_keeps_the_caller_ids():
    """Both formulations break ties by node id (the semi-synchronous one by networkx's
    order and Prec-Max rule, the asynchronous one by keys hashed from the ids and the
    seed), so a renumbered copy would find other communities: they support
    renumber=none only, refused in one line before any copy is built, and the tuner
    holds it there."""
    import optuna
    from gswitch.tuner import build_space

    g = gs.Graph.from_edges(*zip(*nx.karate_club_graph().edges()), directed=False)
    for variant in VARIANTS:
        for method in ("rcm", "degree", "hilbert"):
            with pytest.raises(gs.InvalidConfig, match=f"renumber={method}: variant "
                               f"{variant} of label_propagation supports renumber none"):
                gs.run(NAME, g, backend="cpu", config={"variant": variant,
                                                       "renumber": method})
    space = build_space(get_registry().algorithm(NAME), g, "cpu")
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=2))
    for variant in VARIANTS:
        assert "renumber" not in space.globals_of(variant)
    for _ in range(20):
        assert space.suggest(study.ask())["renumber"] == "none"
