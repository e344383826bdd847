"""Staged algorithms on the CPU engine: stages over shared fields, host steps that set
parameters, fields and the next start set, ``e.only_if`` edge filters, the ``subset``
driving, and cc[afforest] against scipy."""

import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import gswitch as gs
from gswitch.declare import int_inf
from gswitch.errors import AlgorithmError, InvalidConfig
from gswitch.generators import rmat, road
from gswitch.testing.reference import compare, reference
from gswitch.testing.staged_algorithms import DoubleSweep, SweepTheRest
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph


def _hops(graph, source):
    d = csgraph.shortest_path(graph.to_scipy(), unweighted=True, indices=source)
    return d


@pytest.mark.parametrize("graph_name", ["road", "rmat", "path", "disconnected", "star"])
def test_double_sweep_matches_two_scipy_searches(graph_name):
    """Stage two starts where the host step chose, from the field it rewrote."""
    g = zoo_graph(graph_name)
    r = gs.run(DoubleSweep, g, source=0, backend="cpu")
    first = _hops(g, 0)
    reached = np.where(np.isfinite(first), first, -1)
    far = int(np.argmax(reached))
    second = _hops(g, far)
    inf = gs.algorithm.int_inf("int32") if hasattr(gs.algorithm, "int_inf") else None
    for got, want in ((r.fields["there"], first), (r.fields["back"], second)):
        fin = np.isfinite(want)
        assert np.array_equal(got[fin], want[fin].astype(np.int32))
        assert (got[~fin] >= 2**30).all(), inf
    names = [s["stage"] for s in r.stats["stages"]]
    assert names == ["forward", "pick_far", "backward"]


@pytest.mark.parametrize("graph_name", ZOO_NAMES)
def test_afforest_matches_scipy_with_every_neighbour_count(graph_name):
    """Any sample size gives the components' smallest ids."""
    g = zoo_graph(graph_name)
    ref = reference("cc", g)
    for k in (1, 2, 16):
        r = gs.run("cc", g, backend="cpu", config={"variant": "afforest"}, neighbours=k)
        assert compare("cc", r.fields["comp"], ref) is None, k
        assert np.array_equal(r.fields["comp"], ref), "labels are the smallest ids"


def test_afforest_finishes_only_outside_the_largest_component():
    """On a power-law graph the finishing stage runs on a small part of the nodes."""
    g = rmat(14, 16, seed=9)
    r = gs.run("cc", g, backend="cpu", config={"variant": "afforest"})
    assert np.array_equal(r.fields["comp"], reference("cc", g))
    stages = [s["stage"] for s in r.stats["stages"]]
    assert stages == ["sample", "find_largest", "finish", "flatten"]
    n_sample = r.stats["stages"][0]["iterations"]
    finish_items = r.stats["active"][n_sample:]
    assert finish_items and max(finish_items) < 0.7 * g.n_nodes


def test_only_if_filters_the_rest_of_the_operator():
    """Statements after e.only_if see only the edges that pass; the answer equals a
    formulation that filters with where()."""

    @gs.algorithm(name="even_hops", reference="test")
    class EvenHops:
        d = gs.NodeField("int32", init=gs.INF, at_source=0)
        start = gs.from_source()

        @gs.edge_op
        def hop(e):
            e.only_if(e.dst.id - (e.dst.id // 2) * 2 < 1)
            e.dst.d.reduce_min(e.src.d + 1)

    @gs.algorithm(name="even_hops_where", reference="test")
    class EvenHopsWhere:
        d = gs.NodeField("int32", init=gs.INF, at_source=0)
        start = gs.from_source()

        @gs.edge_op
        def hop(e):
            even = e.dst.id - (e.dst.id // 2) * 2 < 1
            e.dst.d.reduce_min(gs.where(even, e.src.d + 1, gs.INF))

    g = road(32, 32, seed=4)
    a = gs.run(EvenHops, g, source=0, backend="cpu").fields["d"]
    b = gs.run(EvenHopsWhere, g, source=0, backend="cpu").fields["d"]
    assert np.array_equal(a, b)
    assert (a[1::2] >= 2**30).all() and (a[0] == 0)
    assert "only_if" in EvenHops.edge.describe()


def test_subset_driving_needs_a_formulation_that_declares_it():
    """subset on BFS is refused with a reason: nodes outside the set would never run."""
    with pytest.raises(InvalidConfig, match="subset"):
        gs.run("bfs", zoo_graph("road"), source=0, backend="cpu", config={"driving": "subset"})


def test_stage_errors_are_one_line():
    """A staged class with its own operators, a stage without start, a host step that
    returns an unknown name, and chosen_nodes with no host step before it."""
    with pytest.raises(AlgorithmError, match="belong inside them"):
        @gs.algorithm(name="bad1")
        class Bad1:
            x = gs.NodeField("int32", init=0)
            start = gs.all_nodes()

            @gs.stage
            class s:
                start = gs.all_nodes()

                @gs.edge_op
                def op(e):
                    e.dst.x.reduce_max(e.src.x)

    with pytest.raises(AlgorithmError, match="no initial active set"):
        @gs.algorithm(name="bad2")
        class Bad2:
            x = gs.NodeField("int32", init=0)

            @gs.stage
            class s:
                @gs.edge_op
                def op(e):
                    e.dst.x.reduce_max(e.src.x)

    @gs.algorithm(name="bad3")
    class Bad3:
        x = gs.NodeField("int32", init=0)

        @gs.stage
        class s:
            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_max(e.src.x)

        @gs.host_step
        def oops(fields, params, xp):
            return {"nonsense": 1}

    with pytest.raises(AlgorithmError, match="neither 'start', a field nor a parameter"):
        gs.run(Bad3, zoo_graph("road"), backend="cpu")

    @gs.algorithm(name="bad4")
    class Bad4:
        x = gs.NodeField("int32", init=0)

        @gs.stage
        class s:
            start = gs.chosen_nodes()

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_max(e.src.x)

    with pytest.raises(AlgorithmError, match="no host step before it chose any"):
        gs.run(Bad4, zoo_graph("road"), backend="cpu")


def test_a_host_step_loops_over_stages_until_its_condition_holds():
    """A host step that names a stage runs the stages from there again: three rounds of
    'push every label one hop further' then stop; a name that is no stage is refused."""

    @gs.algorithm(name="rounds", reference="test")
    class Rounds:
        x = gs.NodeField("int32", init=gs.NODE_ID)
        rounds = gs.Param("int32", 0, low=0, high=100)

        @gs.stage(config={"driving": "topology"})
        class spread:
            """Smallest id within reach, to a fixpoint."""

            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_min(e.src.x)

        @gs.host_step
        def again(fields, params, xp):
            n = params["rounds"] + 1
            return {"rounds": n, **({"repeat": "spread"} if n < 3 else {})}

    g = zoo_graph("disconnected")
    r = gs.run(Rounds, g, backend="cpu")
    assert [s["stage"] for s in r.stats["stages"]] == ["spread", "again"] * 3
    assert np.array_equal(r.fields["x"], reference("cc", g))

    @gs.algorithm(name="bad_repeat", reference="test")
    class BadRepeat:
        x = gs.NodeField("int32", init=0)

        @gs.stage
        class s:
            """One stage."""

            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_max(e.src.x)

        @gs.host_step
        def jump(fields, params, xp):
            return {"repeat": "nowhere"}

    with pytest.raises(AlgorithmError, match="repeats 'nowhere'"):
        gs.run(BadRepeat, g, backend="cpu")


@pytest.mark.parametrize("graph_name", ["road", "disconnected", "path", "single"])
def test_a_host_step_that_stops_ends_the_run(graph_name):
    """``{"stop": True}`` ends the run after the host step, with what it returned
    applied; without it the stages after it run."""
    g = zoo_graph(graph_name)
    r = gs.run(SweepTheRest, g, source=0, backend="cpu")
    first = _hops(g, 0)
    fin = np.isfinite(first)
    assert np.array_equal(r.fields["there"][fin], first[fin].astype(np.int32))
    names = [s["stage"] for s in r.stats["stages"]]
    if fin.all():
        assert names == ["forward", "unreached"]
        assert (r.fields["reached_all"] == 1).all() and (r.fields["rest"] >= 2**30).all()
    else:
        assert names == ["forward", "unreached", "others"]
        second = _hops(g, int(np.argmin(fin)))
        ok = np.isfinite(second)
        assert np.array_equal(r.fields["rest"][ok], second[ok].astype(np.int32))
        assert (r.fields["reached_all"] == 0).all()


def test_stop_ends_a_loop_of_stages_and_refuses_repeat_beside_it():
    """A host step looping over stages ends the run with ``"stop"``; asking to repeat
    and to stop at once is refused with one line."""

    @gs.algorithm(name="rounds_then_stop", reference="test")
    class RoundsThenStop:
        x = gs.NodeField("int32", init=gs.NODE_ID)
        rounds = gs.Param("int32", 0, low=0, high=100)

        @gs.stage(config={"driving": "topology"})
        class spread:
            """Smallest id within reach, to a fixpoint."""

            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_min(e.src.x)

        @gs.host_step
        def again(fields, params, xp):
            n = params["rounds"] + 1
            return {"rounds": n, **({"repeat": "spread"} if n < 2 else {"stop": True})}

        @gs.stage
        class never:
            """Would undo the labels: the run stops before it."""

            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_max(e.src.x + 1000, activate=False)

    g = zoo_graph("disconnected")
    r = gs.run(RoundsThenStop, g, backend="cpu")
    assert [s["stage"] for s in r.stats["stages"]] == ["spread", "again"] * 2
    assert np.array_equal(r.fields["x"], reference("cc", g))

    @gs.algorithm(name="repeat_and_stop", reference="test")
    class RepeatAndStop:
        x = gs.NodeField("int32", init=0)

        @gs.stage
        class s:
            """One stage."""

            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_max(e.src.x)

        @gs.host_step
        def both(fields, params, xp):
            return {"repeat": "s", "stop": True}

    with pytest.raises(AlgorithmError, match="both 'repeat' and 'stop'"):
        gs.run(RepeatAndStop, g, backend="cpu")


def test_buffered_field_is_a_jacobi_iteration():
    """Reads of a buffered field see the step's start; its writes the next value; the two
    swap after the node operator: (I + A^T)^k e_s exactly, on graphs with cycles."""
    import scipy.sparse as sp

    from gswitch.testing.staged_algorithms import Walks

    assert Walks.supports["driving"] == ("topology",)
    assert "count__next" in Walks.fields and "count__next" not in Walks.outputs
    for name in ("road", "rmat", "self_loops", "duplicates"):
        g = zoo_graph(name)
        a = sp.csr_array((np.ones(g.n_edges, dtype=np.int64), g.indices, g.indptr),
                         shape=(g.n_nodes, g.n_nodes))
        x = np.zeros(g.n_nodes, dtype=np.int64)
        x[0] = 1
        for _ in range(4):
            x = x + a.T @ x
        r = gs.run(Walks, g, source=0, backend="cpu", steps=4)
        assert r.stats["iterations"] == 4
        assert np.array_equal(r.fields["count"], x), name


def test_buffered_fields_need_the_node_phase_after_the_edges():
    """Without node_after_edges the swap would run before the writes: refused; and a
    driving whose steps do not sweep every node is refused with a reason."""
    from gswitch.testing.staged_algorithms import Walks

    with pytest.raises(InvalidConfig, match="buffered fields"):
        gs.run(_no_supports(Walks), zoo_graph("road"), source=0, backend="cpu",
               config={"driving": "data"})
    with pytest.raises(AlgorithmError, match="node_after_edges=True"):
        @gs.algorithm(name="bad_buffered")
        class BadBuffered:
            x = gs.NodeField("int64", init=1, buffered=True)
            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_add(e.src.x)


def test_step_totals_are_read_by_the_next_step():
    """Two StepTotals, each summed over a step and read by the next (zero in the first):
    the closed form on graphs with self-loops and duplicate edges; PageRank's dangling
    rank, spread by the next step, gives networkx's iteration step for step."""
    from gswitch.testing.staged_algorithms import StepSums

    assert StepSums.step_totals == ("stamp", "ids")
    for name in ("road", "self_loops", "duplicates"):
        g = zoo_graph(name)
        n, k = g.n_nodes, 5
        r = gs.run(StepSums, g, backend="cpu", steps=k)
        assert r.stats["iterations"] == k
        assert np.all(r.fields["a"] == n * k * (k - 1) / 2), name
        assert np.all(r.fields["b"] == (k - 1) * n * (n - 1) / 2), name


def test_step_totals_refuse_drivings_with_operatorless_steps_and_unknown_names():
    from gswitch.testing.staged_algorithms import StepSums

    with pytest.raises(InvalidConfig, match="reads step totals"):
        gs.run(_no_supports(StepSums), zoo_graph("road"), backend="cpu",
               config={"driving": "priority"})
    with pytest.raises(AlgorithmError, match="names no StepTotal"):
        @gs.algorithm(name="bad_total", node_after_edges=True)
        class BadTotal:
            x = gs.NodeField("float64", init=0.0)
            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_add(e.src.x)

            @gs.node_op
            def tot(n):
                n.total(n.x, into="missing")
    with pytest.raises(AlgorithmError, match="at most 4"):
        @gs.algorithm(name="many_totals")
        class ManyTotals:
            x = gs.NodeField("float64", init=0.0)
            t1, t2, t3, t4, t5 = (gs.StepTotal() for _ in range(5))
            start = gs.all_nodes()

            @gs.edge_op
            def op(e):
                e.dst.x.reduce_add(e.src.x)


def test_power_pull_takes_the_steps_of_networkx_iteration():
    """With the dangling rank spread through a step total, power_pull is networkx's
    iteration: on a graph where 40% of the nodes are dangling it stops within a step of a
    float64 power iteration with the same rule (without it: three times as many)."""
    import scipy.sparse as sp

    g = gs.generators.rmat(12, 8, seed=3)
    n = g.n_nodes
    a = sp.csr_array((np.ones(g.n_edges), g.indices, g.indptr), shape=(n, n))
    out = np.asarray(a.sum(axis=1)).ravel()
    dangling = out == 0
    assert dangling.mean() > 0.3
    at = (sp.diags_array(np.where(dangling, 0.0, 1.0 / np.maximum(out, 1))) @ a).T.tocsr()
    x, steps, tol = np.full(n, 1.0 / n), 1, 1e-7  # gswitch's first step sets x = 1/n
    while True:
        nxt = 0.85 * (at @ x + x[dangling].sum() / n) + 0.15 / n
        steps += 1
        if np.abs(nxt - x).sum() < tol:
            break
        x = nxt
    r = gs.run("pagerank", g, backend="cpu", config={"variant": "power_pull"},
               tolerance=tol)
    assert abs(r.stats["iterations"] - steps) <= 1, (r.stats["iterations"], steps)
    assert np.abs(r.fields["rank"] - nxt / nxt.sum()).sum() < 1e-5


def first_edges_depth(g, source, k):
    """Hop distances over the first ``k`` edges of every row, by scipy (INF unreached)."""
    import scipy.sparse as sp

    indptr = g.indptr.astype(np.int64)
    pos = np.arange(g.n_edges) - np.repeat(indptr[:-1], np.diff(indptr))
    keep = pos < k
    src = np.repeat(np.arange(g.n_nodes), np.diff(indptr))[keep]
    a = sp.csr_array((np.ones(int(keep.sum())), (src, g.indices[keep])),
                     shape=(g.n_nodes, g.n_nodes))
    d = csgraph.shortest_path(a, unweighted=True, indices=source)
    return np.where(np.isinf(d), int_inf("int32"), d).astype(np.int32)


@pytest.mark.parametrize("k", [0, 1, 2, 5])
def test_edge_operator_limited_to_the_first_edges_of_a_row(k):
    """edge_op(first="k"): a node expands only the first k out-edges of its row, on every
    path of the CPU engine (sparse and dense frontiers); scipy on that subgraph agrees."""
    from gswitch.testing.staged_algorithms import FirstEdgesDepth

    assert FirstEdgesDepth.edge.first == "k"
    for name in ("rmat", "road", "duplicates", "self_loops"):
        g = zoo_graph(name)
        want = first_edges_depth(g, 0, k)
        for cfg in ({}, {"worklist": "bitmap"}, {"driving": "topology"}):
            r = gs.run(FirstEdgesDepth, g, source=0, backend="cpu", config=cfg, k=k)
            assert np.array_equal(r.fields["depth"], want), (name, cfg)


def test_edge_limit_refuses_pull_and_needs_an_integer_param():
    from gswitch.testing.staged_algorithms import FirstEdgesDepth

    with pytest.raises(InvalidConfig, match="use direction=push"):
        gs.run(FirstEdgesDepth, zoo_graph("road"), source=0, backend="cpu",
               config={"direction": "direction_optimizing"})
    with pytest.raises(AlgorithmError, match="must name an integer Param"):
        @gs.algorithm(name="bad_first")
        class BadFirst:
            x = gs.NodeField("float32", init=0.0)
            frac = gs.Param("float32", 0.5)
            start = gs.all_nodes()

            @gs.edge_op(first="frac")
            def op(e):
                e.dst.x.reduce_max(e.src.x)


def test_a_staged_run_past_its_deadline_stops_before_the_next_stage():
    """No stage gets time of its own beyond the run's deadline: a deadline already spent
    stops the run before the first stage (the tuner prunes such trials)."""
    from gswitch.errors import DeadlineExceeded

    with pytest.raises(DeadlineExceeded, match="before stage sample"):
        gs.run("cc", road(12, 12), backend="cpu", config={"variant": "afforest"},
               deadline_s=1e-9)


def _no_supports(spec):
    import dataclasses

    return dataclasses.replace(spec, supports={}, config_defaults={})


@gs.algorithm(name="shared_start", reference="hops from the source, and the start kept")
class _SharedStart:
    """A host step hands one array to two fields; the stage then writes only one."""

    hops = gs.NodeField("int32", init=gs.INF)
    kept = gs.NodeField("int32", init=gs.INF)

    @gs.host_step
    def seed(fields, params, xp):
        both = fields["hops"].copy()
        both[0] = 0
        return {"hops": both, "kept": both, "start": xp.asarray([0])}

    @gs.stage
    class sweep:
        """BFS from node 0 into ``hops``."""

        start = gs.chosen_nodes()

        @gs.edge_op
        def hop(e):
            e.dst.hops.reduce_min(e.src.hops + 1)


def test_fields_a_host_step_shares_stay_apart_in_the_next_stage():
    """The CPU engine runs a stage on the arrays the last step left, in place, unless
    two fields share one: ``kept`` keeps the start values while ``hops`` fills in."""
    g = gs.Graph.from_edges([0, 1, 2], [1, 2, 3])
    r = gs.run(_SharedStart, g, backend="cpu")
    inf = int_inf("int32")
    assert r.fields["hops"].tolist() == [0, 1, 2, 3]
    assert r.fields["kept"].tolist() == [0, inf, inf, inf]
