"""k-core decomposition (``core_number``): every formulation, driving and direction on the
CPU engine against networkx, the graphs it refuses, and its generated CUDA.
"""

import doctest

import numpy as np
import pytest

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.generators import grid2d, path, rmat, road, star
from gswitch.plugins import get_registry
from gswitch.staging import stage_config
from gswitch.testing.nvcc import compile_source
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

pytestmark = pytest.mark.usefixtures("super_steps")

NAME = "core_number"
VARIANTS = sorted(get_registry().variants[NAME])
CASES = [(v, d, r) for v in VARIANTS
         for d in get_registry().variants[NAME][v].supports.get(
             "driving", ("data", "topology", "temporal"))
         for r in get_registry().variants[NAME][v].supports.get("direction", ("push", "pull"))]
GENERATED = {
    "rmat": lambda: rmat(11, 12, seed=2).remove_self_loops(),
    "road": lambda: road(48, 48, seed=3),
    "grid": lambda: grid2d(30, 40),
    "star": lambda: star(3000),
    "path": lambda: path(1500, directed=True),
}


def _run(graph, variant, driving="data", direction="push"):
    cfg = {"variant": variant, "driving": driving, "direction": direction}
    return gs.run(NAME, graph, backend="cpu", config=cfg).fields["core"]


@pytest.mark.parametrize("graph_name", ZOO_NAMES)
@pytest.mark.parametrize("variant,driving,direction", CASES)
def test_zoo_matches_networkx(graph_name, variant, driving, direction):
    """Each formulation gives networkx's core numbers on every zoo graph (self-loops
    removed), under every driving it supports and both directions."""
    graph = zoo_graph(graph_name).remove_self_loops()
    got = _run(graph, variant, driving, direction)
    problem = compare(NAME, got, reference(NAME, graph))
    assert problem is None, problem


@pytest.mark.parametrize("graph_name", sorted(GENERATED))
@pytest.mark.parametrize("variant", VARIANTS)
def test_generated_graphs_match_networkx(graph_name, variant):
    """RMAT, road-like, grid, star and path graphs match networkx."""
    graph = GENERATED[graph_name]()
    got = _run(graph, variant, **get_registry().variants[NAME][variant].config_defaults)
    assert compare(NAME, got, reference(NAME, graph)) is None


@pytest.mark.parametrize("graph_name", [n for n in ZOO_NAMES
                                        if zoo_graph(n).symmetrize().n_self_loops])
@pytest.mark.parametrize("variant", VARIANTS)
def test_self_loops_are_refused_as_networkx_does(graph_name, variant):
    """A graph with a self-loop is one InvalidInput naming a node and the fix."""
    with pytest.raises(gs.InvalidInput, match=r"core_number: core numbers are not defined "
                       r"for graphs with self-loops .* node \d+ has one.*remove_self_loops"):
        gs.run(NAME, zoo_graph(graph_name), backend="cpu", config={"variant": variant})


def test_parallel_edges_of_an_undirected_graph_are_refused_and_directed_ones_merged():
    """An undirected graph that keeps parallel edges is refused (networkx refuses
    multigraphs); a directed graph's two directions and its repeats are one edge."""
    multi = gs.Graph.from_edges([0, 0, 1], [1, 1, 2], directed=False)
    with pytest.raises(gs.InvalidInput, match="edge 0 - 1 is repeated.*deduplicate"):
        gs.run(NAME, multi, backend="cpu")
    assert gs.run(NAME, multi.deduplicate(), backend="cpu").fields["core"].tolist() == [1, 1, 1]
    directed = gs.Graph.from_edges([0, 1, 1, 2, 0, 2, 2], [1, 0, 2, 1, 2, 0, 0])
    assert gs.run(NAME, directed, backend="cpu").fields["core"].tolist() == [2, 2, 2]


def test_unsorted_rows_are_still_checked_for_parallel_edges():
    """The parallel-edge check does not rely on sorted rows."""
    from gswitch.algorithms.kcore import simple_graph_problem

    g = gs.Graph(np.array([0, 3, 4, 5]), np.array([2, 1, 2, 0, 0], dtype=np.int32),
                 directed=False)
    assert "edge 0 - 2 is repeated" in simple_graph_problem(g)


def test_networkx_graph_in_core_numbers_out():
    """A networkx graph goes straight in; results follow G.nodes."""
    nx = pytest.importorskip("networkx")
    G = nx.karate_club_graph()
    got = gs.run(NAME, G, backend="cpu").fields["core"]
    want = nx.core_number(G)
    assert {v: int(c) for v, c in zip(G.nodes, got)} == want


def test_levels_skip_empty_levels_and_sweep_needs_no_host_step():
    """peel_levels runs one peeling stage per distinct core number (above the isolated
    nodes' level), the sweep none: its levels all happen in one run of steps."""
    g = GENERATED["rmat"]()
    levels = gs.run(NAME, g, backend="cpu", config={"variant": "peel_levels"})
    cores = levels.fields["core"]
    peels = [s for s in levels.stats["stages"] if s["stage"] == "peel"]
    assert len(peels) == np.unique(cores[cores > 0]).size
    sweep = gs.run(NAME, g, backend="cpu", config={"variant": "peel_sweep"})
    assert "stages" not in sweep.stats and np.array_equal(sweep.fields["core"], cores)
    assert sweep.stats["iterations"] > cores.max()


@pytest.mark.parametrize("policy", ["near_far", "buckets"])
def test_buckets_peel_every_level_in_one_run(policy):
    """peel_buckets has no host step, takes its levels from the far set (a refill step
    per level above the first), and its answer does not depend on the refill policy."""
    g = GENERATED["rmat"]()
    r = gs.run(NAME, g, backend="cpu", config={"variant": "peel_buckets",
                                                "driving": "priority", "driving.policy": policy})
    cores = r.fields["core"]
    assert "stages" not in r.stats
    assert compare(NAME, cores, reference(NAME, g)) is None
    refills = r.stats["modes"].count("refill")
    assert refills >= np.unique(cores[cores > 0]).size
    # a data step visits what it peels (and nodes filed twice), not every node
    assert sum(r.stats["active"][1:]) < 3 * g.n_nodes + refills * g.n_nodes


def test_buckets_refuse_another_bucket_width():
    """The peeling level is the bucket: a width_scale other than 1 is refused."""
    with pytest.raises(gs.InvalidConfig, match="width_scale"):
        gs.run(NAME, GENERATED["grid"](), backend="cpu",
               config={"variant": "peel_buckets", "driving": "priority",
                       "driving.width_scale": 2.0})


@pytest.mark.parametrize("variant", VARIANTS)
def test_docstring_examples_run(variant):
    """The Examples section of each formulation runs as a doctest."""
    spec = get_registry().variants[NAME][variant]
    test = doctest.DocTestParser().get_doctest(spec.cls.__doc__, {}, spec.label, None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert test.examples and runner.failures == 0


def test_reference_and_comparison_are_declared():
    """Both variants check against networkx exactly."""
    family = get_registry().variants[NAME]
    assert {s.expected for s in family.values()} == {family["peel_levels"].expected}
    want = reference(NAME, zoo_graph("grid"))
    assert compare(NAME, want, want) is None
    assert "nodes differ" in compare(NAME, want + 1, want)


@pytest.mark.compile
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_every_stage_compiles(launch, nvcc):
    """Each formulation's modules (each stage of peel_levels) compile with each launch."""
    for spec in get_registry().variants[NAME].values():
        cfg = gs.Config({"variant": spec.variant, "launch": launch,
                         **spec.config_defaults})
        for st in [s for s in spec.stages if isinstance(s, gs.AlgorithmSpec)] or [spec]:
            gen = generate_source(st, stage_config(st, cfg), weighted=False)
            ok, out = compile_source(gen.source, nvcc=nvcc)
            assert ok, f"{spec.label} {st.stage_name} {launch}:\n{out[-3000:]}"


def test_the_tuner_searches_both_formulations(tmp_path):
    """A CPU study of core_number searches both variants and finishes verified trials."""
    from gswitch.tuner import build_space, tune

    g = GENERATED["rmat"]()
    space = build_space(get_registry().algorithm(NAME), g, "cpu")
    assert sorted(space.axes["variant"]) == VARIANTS
    result = tune(NAME, g, trials=3, backend="cpu", seed=0,
                  storage=f"journal://{tmp_path / 'studies.journal'}")
    assert result.counts.get("ok", 0) >= 1 and "wrong_answer" not in result.counts
    assert result.best_config["variant"] in VARIANTS
