"""gswitch as a networkx backend: entry points, conversion, dispatch, answers, fallbacks."""

import itertools
import json
import subprocess
import sys
from importlib.metadata import entry_points

import networkx as nx
import pytest

from gswitch.nxbackend import BackendInterface, NxGraph, _dispatch
from gswitch.nxbackend._dispatch import SMALL_GRAPH
from gswitch.nxbackend._graph import NonNumericWeight
from gswitch.nxbackend._info import FUNCTIONS, get_info


@pytest.fixture(autouse=True)
def quiet_cache_note():
    """networkx warns when it reuses a converted graph; these tests reuse on purpose."""
    nx.config.warnings_to_ignore.add("cache")
    yield
    nx.config.warnings_to_ignore.discard("cache")


@pytest.fixture
def gswitch_first():
    """Route supported calls to gswitch for one test, restoring networkx's setting."""
    saved = list(nx.config.backend_priority.algos)
    nx.config.backend_priority.algos = ["gswitch"]
    yield
    nx.config.backend_priority.algos = saved


@pytest.fixture
def gswitch_for_every_size(gswitch_first, monkeypatch):
    """Route supported calls to gswitch for one test, small graphs included."""
    monkeypatch.setattr(_dispatch, "SMALL_GRAPH", {})


@pytest.fixture
def conversions(monkeypatch):
    """Count the backend's conversions from networkx."""
    calls = []
    original = BackendInterface.convert_from_nx

    def counting(*args, **kwargs):
        calls.append(kwargs.get("edge_attrs"))
        return original(*args, **kwargs)

    monkeypatch.setattr(BackendInterface, "convert_from_nx", staticmethod(counting))
    return calls


def _zoo():
    """Graphs of every kind networkx has, with the awkward cases."""
    graphs = {}
    G = nx.gnm_random_graph(60, 150, seed=1)
    G.add_nodes_from(["iso", ("t", 1)])  # isolated nodes of other types
    G.add_edge(3, 3)
    graphs["undirected"] = G
    D = nx.gnm_random_graph(60, 200, seed=2, directed=True)
    D.add_edge(5, 5)
    D.add_node(99)
    graphs["directed"] = D
    graphs["disconnected"] = nx.disjoint_union(nx.path_graph(7), nx.cycle_graph(9))
    S = nx.relabel_nodes(nx.gnm_random_graph(40, 90, seed=3),
                         {i: f"n{i:02d}" for i in range(40)})
    graphs["strings"] = S
    M = nx.MultiGraph()
    M.add_edges_from([(0, 1), (0, 1), (1, 2), (2, 2), (2, 3), (4, 5)])
    graphs["multigraph"] = M
    MD = nx.MultiDiGraph()
    MD.add_edges_from([(0, 1), (0, 1), (1, 2), (2, 0), (2, 3), (3, 3)])
    graphs["multidigraph"] = MD
    return graphs


def _weighted(directed):
    G = nx.gnm_random_graph(50, 160, seed=4, directed=directed)
    for i, (_u, _v, d) in enumerate(G.edges(data=True)):
        d["weight"] = (i * 7) % 11 + 1
        d["cost"] = ((i * 13) % 17) / 4.0
    return G


ZOO = _zoo()
#: nodes plus edges past every should_run threshold
BIG = max(SMALL_GRAPH.values()) + 300


def test_entry_points_resolve():
    """Both entry points are installed and load the backend and its info."""
    (backend,) = entry_points(group="networkx.backends", name="gswitch")
    (info,) = entry_points(group="networkx.backend_info", name="gswitch")
    assert backend.load() is BackendInterface
    assert info.load() is get_info
    assert "gswitch" in nx.utils.backends.backend_info
    assert nx.config.backends.gswitch.backend == "auto"


def test_info_lists_every_function_and_is_light():
    """get_info names every implemented function; importing it loads no engine or CuPy."""
    info = get_info()
    assert info["backend_name"] == "gswitch" and info["default_config"]["tune"] is False
    assert set(info["functions"]) == set(FUNCTIONS)
    for name in FUNCTIONS:
        assert callable(getattr(BackendInterface, name))
        assert info["functions"][name]["additional_docs"]
    code = ("import sys, json; from gswitch.nxbackend._info import get_info; get_info(); "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('cupy', "
            "'gswitch.engine', 'gswitch.nxbackend.', 'networkx')))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout) == ["gswitch.nxbackend._info"]


@pytest.mark.parametrize("name", sorted(ZOO))
def test_bfs_functions_equal_networkx(name):
    """BFS-based functions give networkx's answers, in networkx's order where ordered."""
    G = ZOO[name]
    first = next(iter(G))
    for source in list(G)[:6]:
        for cutoff in (None, 2):
            got = nx.single_source_shortest_path_length(G, source, cutoff, backend="gswitch")
            assert got == nx.single_source_shortest_path_length(G, source, cutoff)
        assert list(nx.bfs_edges(G, source, backend="gswitch")) == list(nx.bfs_edges(G, source))
        assert list(nx.bfs_edges(G, source, depth_limit=2, backend="gswitch")) == \
            list(nx.bfs_edges(G, source, depth_limit=2))
        assert nx.utils.edges_equal(nx.bfs_tree(G, source, backend="gswitch").edges,
                                    nx.bfs_tree(G, source).edges)
        for d in (0, 1, 3):
            assert nx.descendants_at_distance(G, source, d, backend="gswitch") == \
                nx.descendants_at_distance(G, source, d)
    sources = list(G)[1:4]
    assert list(nx.bfs_layers(G, sources, backend="gswitch")) == list(nx.bfs_layers(G, sources))
    assert list(nx.bfs_layers(G, first, backend="gswitch")) == list(nx.bfs_layers(G, first))
    got = nx.all_pairs_shortest_path_length(G, backend="gswitch")
    assert not isinstance(got, dict) and dict(got) == dict(nx.all_pairs_shortest_path_length(G))


@pytest.mark.parametrize("cutoff", [-1, -0.5, 0, 0.5, 1.5, 2])
def test_hop_lengths_take_networkx_cutoffs(cutoff):
    """networkx lists the source whatever the cutoff and expands a level while
    ``cutoff > level`` (1.5 reaches level 2): the same nodes, one source and all pairs."""
    G = nx.path_graph(5)
    want = nx.single_source_shortest_path_length(G, 0, cutoff)
    assert nx.single_source_shortest_path_length(G, 0, cutoff, backend="gswitch") == want
    got = nx.all_pairs_shortest_path_length(G, cutoff, backend="gswitch")
    assert dict(got) == dict(nx.all_pairs_shortest_path_length(G, cutoff))


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("weight", ["weight", "cost", None, "absent"])
def test_shortest_path_lengths_equal_networkx(directed, weight):
    """Dijkstra and Bellman-Ford lengths match networkx, ints staying ints."""
    G = _weighted(directed)
    for source in (0, 7, 31):
        for cutoff in (None, 5):
            want = nx.single_source_dijkstra_path_length(G, source, cutoff, weight)
            got = nx.single_source_dijkstra_path_length(G, source, cutoff, weight,
                                                        backend="gswitch")
            # the same floats to the last bit, nearest first (ties in either order)
            assert got == want and list(got.values()) == sorted(want.values())
            if weight != "cost":
                assert all(type(x) is int for x in got.values())
        got = nx.single_source_bellman_ford_path_length(G, source, weight, backend="gswitch")
        assert got == nx.single_source_bellman_ford_path_length(G, source, weight)


@pytest.mark.parametrize("cutoff", [-1, 0, 0.25])
def test_weighted_lengths_list_the_source_below_any_cutoff(cutoff):
    """networkx lists the source, at an int 0, whatever the cutoff and the weights."""
    G = nx.path_graph(3)
    nx.set_edge_attributes(G, 0.5, "weight")
    got = nx.single_source_dijkstra_path_length(G, 0, cutoff, backend="gswitch")
    assert got == nx.single_source_dijkstra_path_length(G, 0, cutoff) and type(got[0]) is int
    got = nx.all_pairs_dijkstra_path_length(G, cutoff, backend="gswitch")
    assert dict(got) == dict(nx.all_pairs_dijkstra_path_length(G, cutoff))


@pytest.mark.parametrize("weight", [1e-50, 1e-40, float("inf")])
def test_weights_float32_cannot_hold_fall_back(gswitch_for_every_size, weight):
    """A positive weight below float32's smallest normal (rounded to 0 or coarsely) or
    an infinite one (networkx lists the nodes behind it at inf) is left to networkx."""
    G = nx.path_graph(4)
    nx.set_edge_attributes(G, 1.0, "weight")
    G[1][2]["weight"] = weight
    want = nx.single_source_dijkstra_path_length(G, 0, backend="networkx")
    assert nx.single_source_dijkstra_path_length(G, 0) == want
    assert dict(nx.all_pairs_dijkstra_path_length(G)) == \
        dict(nx.all_pairs_dijkstra_path_length(G, backend="networkx"))
    with pytest.raises(NotImplementedError):
        nx.single_source_dijkstra_path_length(G, 0, backend="gswitch")


def test_multigraph_shortest_paths_take_the_lightest_parallel_edge():
    """Parallel edges: the lightest one counts, as in networkx."""
    M = nx.MultiDiGraph()
    M.add_edge("a", "b", weight=5)
    M.add_edge("a", "b", weight=2)
    M.add_edge("b", "c", weight=1)
    M.add_edge("b", "c")  # default weight 1
    want = nx.single_source_dijkstra_path_length(M, "a")
    assert want == {"a": 0, "b": 2, "c": 3}
    assert nx.single_source_dijkstra_path_length(M, "a", backend="gswitch") == want


@pytest.mark.parametrize("name", sorted(ZOO))
def test_component_functions_equal_networkx(name):
    """Components come in networkx's order; directed graphs raise networkx's error."""
    G = ZOO[name]
    if G.is_directed():
        for f in (nx.connected_components, nx.number_connected_components, nx.is_connected):
            with pytest.raises(nx.NetworkXNotImplemented):
                f(G, backend="gswitch")
        return
    assert list(nx.connected_components(G, backend="gswitch")) == \
        list(nx.connected_components(G))
    assert nx.number_connected_components(G, backend="gswitch") == \
        nx.number_connected_components(G)
    assert nx.is_connected(G, backend="gswitch") is nx.is_connected(G)
    for v in list(G)[::5]:
        assert nx.node_connected_component(G, v, backend="gswitch") == \
            nx.node_connected_component(G, v)


def test_is_connected_on_empty_and_connected_graphs():
    """The null graph raises networkx's NetworkXPointlessConcept; a path is connected."""
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.is_connected(nx.Graph(), backend="gswitch")
    assert nx.is_connected(nx.path_graph(5), backend="gswitch") is True
    assert list(nx.connected_components(nx.Graph(), backend="gswitch")) == []


@pytest.mark.parametrize("name", sorted(ZOO))
@pytest.mark.parametrize("alpha", [0.85, 0.5])
def test_pagerank_equals_networkx(name, alpha):
    """PageRank agrees with networkx's to 1e-6 per node, keyed and ordered the same."""
    G = ZOO[name]
    want = nx.pagerank(G, alpha=alpha, tol=1e-8 if len(G) > 100 else 1e-6)
    got = nx.pagerank(G, alpha=alpha, tol=1e-8 if len(G) > 100 else 1e-6, backend="gswitch")
    assert list(got) == list(want)
    assert all(type(x) is float for x in got.values())
    assert got == pytest.approx(want, abs=1e-6)


@pytest.mark.parametrize("directed", [False, True])
def test_weighted_pagerank_equals_networkx(directed):
    """Weights divide by their row sums as networkx's transition matrix does."""
    G = _weighted(directed)
    G.add_edge(0, 1, weight=0)  # a zero weight is an edge of no rank flow
    for weight in ("weight", "cost", None):
        got = nx.pagerank(G, weight=weight, backend="gswitch")
        assert got == pytest.approx(nx.pagerank(G, weight=weight), abs=1e-6)


def test_weighted_pagerank_reuses_its_stochastic_graph():
    """The row-stochastic graph of a weight is made once per converted graph: a second
    call reuses it (its reverse and device copy with it) and still equals networkx."""
    G = _weighted(True)
    B = BackendInterface.convert_from_nx(G, edge_attrs={"weight": 1, "cost": 1})
    first = nx.pagerank(B, weight="weight", backend="gswitch")
    made = dict(B._graphs)
    second = nx.pagerank(B, weight="weight", backend="gswitch")
    assert second == first == pytest.approx(nx.pagerank(G, weight="weight"), abs=1e-6)
    key = ("stochastic", "weight")
    assert key in made and B._graphs[key] is made[key]
    other = nx.pagerank(B, weight="cost", backend="gswitch")  # another weight: its own
    assert B._graphs[("stochastic", "cost")] is not made[key]
    assert other == pytest.approx(nx.pagerank(G, weight="cost"), abs=1e-6)


def test_pagerank_fails_to_converge_like_networkx():
    """max_iter steps without convergence raise PowerIterationFailedConvergence."""
    G = nx.gnm_random_graph(300, 1200, seed=5, directed=True)
    for max_iter in (0, 1, 3):
        with pytest.raises(nx.PowerIterationFailedConvergence):
            nx.pagerank(G, max_iter=max_iter, backend="gswitch")
    assert nx.pagerank(nx.Graph(), backend="gswitch") == {}


@pytest.mark.parametrize("options", [{"weight": None}, {"weight": "weight"},
                                     {"weight": None, "personalization": {0: 1, 2: 3}}],
                         ids=["unweighted", "weighted", "personalized"])
@pytest.mark.parametrize("graph", [nx.empty_graph(3), nx.path_graph(5),
                                   nx.gnm_random_graph(30, 80, seed=2, directed=True)],
                         ids=["edgeless", "path", "directed"])
def test_pagerank_converges_in_networkx_steps(graph, options):
    """max_iter counts networkx's iterations (personalised too: from networkx's uniform
    start): the fewest steps networkx converges in are enough through gswitch, one
    fewer is not."""
    G = graph.copy()
    for i, (_u, _v, d) in enumerate(G.edges(data=True)):
        d["weight"] = 1 + i % 3
    steps = next(k for k in range(1, 200) if _pagerank_converges(G, k, options, "networkx"))
    assert _pagerank_converges(G, steps, options, "gswitch")
    assert steps == 1 or not _pagerank_converges(G, steps - 1, options, "gswitch")


def test_pagerank_zero_personalization_raises_before_max_iter():
    """An all-zero personalisation is networkx's ZeroDivisionError even with max_iter=0
    (networkx checks it before it iterates)."""
    G = nx.path_graph(3)
    for backend in ("networkx", "gswitch"):
        with pytest.raises(ZeroDivisionError):
            nx.pagerank(G, personalization={0: 0}, max_iter=0, backend=backend)


def test_pagerank_max_iter_as_networkx_takes_it():
    """A max_iter past gswitch's step limit is left to networkx (not an InvalidInput);
    a non-integer one is networkx's TypeError."""
    from gswitch.nxbackend._pagerank import MAX_STEPS
    from gswitch.plugins import get_registry

    G = nx.path_graph(3)
    for spec in ("pagerank", "personalized_pagerank"):
        limit = get_registry().variants[spec]["power_pull"].params["max_iterations"]
        assert MAX_STEPS == limit.high
    reason = BackendInterface.can_run("pagerank", (G,), {"max_iter": MAX_STEPS})
    assert isinstance(reason, str) and "max_iter" in reason
    assert BackendInterface.can_run("pagerank", (G,), {"max_iter": MAX_STEPS - 1}) is True
    assert nx.pagerank(G, max_iter=MAX_STEPS - 1, backend="gswitch") == \
        pytest.approx(nx.pagerank(G), abs=1e-6)
    for backend in ("networkx", "gswitch"):
        with pytest.raises(TypeError):
            nx.pagerank(G, max_iter=2.0, backend=backend)


def test_pagerank_infinite_weights_fall_back(gswitch_for_every_size):
    """An infinite weight is left to networkx (gswitch's shares would be NaN)."""
    G = nx.DiGraph([(0, 1, {"weight": float("inf")}), (1, 2, {"weight": 1.0})])
    G.add_edge(2, 0, weight=2.0)
    want = nx.pagerank(G, backend="networkx")
    assert nx.pagerank(G) == want
    with pytest.raises(NotImplementedError):
        nx.pagerank(G, backend="gswitch")


def _pagerank_converges(G, max_iter, options, backend):
    try:
        nx.pagerank(G, max_iter=max_iter, backend=backend, **options)
    except nx.PowerIterationFailedConvergence:
        return False
    return True


def test_backend_priority_routes_calls(gswitch_first, conversions):
    """With backend_priority, plain networkx calls run on gswitch (large enough graphs)."""
    G = nx.gnm_random_graph(BIG // 3, BIG, seed=6)
    want = nx.pagerank(G, backend="networkx")
    assert conversions == []
    assert nx.pagerank(G) == pytest.approx(want, abs=1e-6)
    assert len(conversions) == 1


def test_small_graphs_stay_in_networkx(gswitch_first, conversions):
    """should_run leaves a graph below the size threshold to networkx."""
    G = nx.path_graph(10)
    assert nx.single_source_shortest_path_length(G, 0) == {i: i for i in range(10)}
    assert conversions == []
    assert isinstance(BackendInterface.should_run("pagerank", (G,), {}), str)


def test_second_call_reuses_the_converted_graph(conversions):
    """networkx caches the conversion per weight attribute; a mutation clears it."""
    G = _weighted(False)
    nx.pagerank(G, backend="gswitch")
    nx.pagerank(G, backend="gswitch")
    nx.single_source_dijkstra_path_length(G, 0, backend="gswitch")  # same "weight" key
    assert conversions == [{"weight": 1}]
    nx.single_source_dijkstra_path_length(G, 0, weight="cost", backend="gswitch")
    assert len(conversions) == 2
    G.add_edge(0, 49, weight=3)
    assert nx.single_source_dijkstra_path_length(G, 0, backend="gswitch") == \
        nx.single_source_dijkstra_path_length(G, 0)
    assert len(conversions) == 3


@pytest.mark.parametrize("view", [
    lambda G: G.subgraph(range(6)),
    lambda G: G.subgraph(range(7)).subgraph(range(6)),
    lambda G: nx.restricted_view(G, [7], []),
    lambda G: G.to_directed(as_view=True).reverse(copy=False),
], ids=["subgraph", "subgraph-of-subgraph", "restricted", "reverse"])
def test_a_view_sees_its_graph_change(view):
    """networkx keeps a view's conversion in the view's cache, which a change of the
    graph it shows does not clear: the next call converts the view again."""
    G = nx.path_graph(8)
    nx.set_edge_attributes(G, 1, "weight")
    H = view(G)
    calls = (lambda: nx.single_source_dijkstra_path_length(H, 0),
             lambda: {v: round(x, 5) for v, x in nx.pagerank(H).items()},
             lambda: sorted(map(sorted, nx.strongly_connected_components(H)
                                if H.is_directed() else nx.connected_components(H))),
             lambda: sorted(nx.k_core(H, 1).edges))
    for change in (lambda: G.remove_edge(2, 3), lambda: G.add_edge(0, 5, weight=2),
                   lambda: G.add_edge(0, 5, weight=9), lambda: G.remove_node(4)):
        got = [_with_backend(func, "gswitch") for func in calls]
        assert got == [_with_backend(func, "networkx") for func in calls]
        change()
    got = [_with_backend(func, "gswitch") for func in calls]
    assert got == [_with_backend(func, "networkx") for func in calls]


def test_a_view_of_a_graph_without_cache_converts_each_call():
    """A shown graph that keeps no cache tells no change: each call converts again."""
    G = nx.path_graph(5)
    G.__networkx_cache__ = None
    H = G.subgraph(range(4))
    assert nx.single_source_shortest_path_length(H, 0, backend="gswitch") == \
        {0: 0, 1: 1, 2: 2, 3: 3}
    G.remove_edge(1, 2)
    assert nx.single_source_shortest_path_length(H, 0, backend="gswitch") == {0: 0, 1: 1}


def _with_backend(func, backend):
    """``func()`` with every call it makes (graph-returning ones too) on ``backend``."""
    first = [backend] if backend != "networkx" else []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_dispatch, "SMALL_GRAPH", {})
        patch.setattr(nx.config.backend_priority, "algos", first)
        patch.setattr(nx.config.backend_priority, "generators", first)
        return func()


def test_unsupported_options_fall_back(gswitch_first):
    """can_run refuses with a reason; networkx then answers the call itself."""
    G = nx.gnm_random_graph(BIG // 3, BIG, seed=7, directed=True)
    reason = BackendInterface.can_run("pagerank", (G,), {"nstart": {0: 1.0}})
    assert isinstance(reason, str) and "nstart" in reason
    assert nx.pagerank(G, nstart={0: 1.0}) == \
        pytest.approx(nx.pagerank(G, nstart={0: 1.0}, backend="networkx"))
    weight = lambda u, v, d: 2  # noqa: E731
    assert isinstance(BackendInterface.can_run(
        "single_source_dijkstra_path_length", (G, 0), {"weight": weight}), str)
    assert nx.single_source_dijkstra_path_length(G, 0, weight=weight) == \
        nx.single_source_dijkstra_path_length(G, 0, weight=weight, backend="networkx")
    assert isinstance(BackendInterface.can_run("bfs_edges", (G, 0), {"reverse": True}), str)
    assert BackendInterface.can_run("not_a_function", (G,), {}) is not True
    with pytest.raises(NotImplementedError, match="not implemented by .gswitch."):
        nx.pagerank(G, dangling={0: 1.0}, backend="gswitch")


def test_negative_weights_fall_back(gswitch_first):
    """Negative weights leave Bellman-Ford to networkx, which finds the negative cycle."""
    G = nx.gnm_random_graph(BIG // 3, BIG, seed=8, directed=True)
    G.add_edge(0, 1, weight=-1)
    G.add_edge(1, 0, weight=-1)
    with pytest.raises(nx.NetworkXUnbounded):
        nx.single_source_bellman_ford_path_length(G, 0)
    with pytest.raises(NotImplementedError):
        nx.single_source_bellman_ford_path_length(G, 0, backend="gswitch")


def test_calls_gswitch_cannot_answer_still_get_networkx_answers(gswitch_first):
    """With gswitch first, a plain networkx script keeps working where gswitch cannot
    answer: negative weights in the all-pairs lengths (refused at the call, not at the
    first item), the damping factor 1 and a directed graph's transitivity."""
    from gswitch.nxbackend._pagerank import MAX_ALPHA
    from gswitch.plugins import get_registry

    D = nx.DiGraph((u, v) for u, v in nx.gnm_random_graph(BIG // 3, BIG, seed=9,
                                                         directed=True).edges() if u < v)
    nx.set_edge_attributes(D, 1.0, "weight")
    u, v = next(iter(D.edges()))
    D[u][v]["weight"] = -0.5
    # the first sources' lengths: the refusal comes at the call, before any item
    first = list(itertools.islice(nx.all_pairs_dijkstra_path_length(D), 5))
    assert first == list(itertools.islice(
        nx.all_pairs_dijkstra_path_length(D, backend="networkx"), 5))
    with pytest.raises(NotImplementedError):  # at the call: networkx can take over
        nx.all_pairs_dijkstra_path_length(D, backend="gswitch")
    P = nx.gnm_random_graph(BIG // 3, BIG, seed=10)
    reason = BackendInterface.can_run("pagerank", (P,), {"alpha": 1.0})
    assert isinstance(reason, str) and "alpha" in reason
    assert nx.pagerank(P, alpha=1.0) == pytest.approx(nx.pagerank(P, alpha=1.0,
                                                                  backend="networkx"))
    alpha = get_registry().variants["pagerank"]["power_pull"].params["alpha"]
    assert MAX_ALPHA == pytest.approx(alpha.high)
    T = nx.gnm_random_graph(BIG // 3, BIG, seed=11, directed=True)
    assert isinstance(BackendInterface.can_run("transitivity", (T,), {}), str)
    assert nx.transitivity(T) == pytest.approx(nx.transitivity(T, backend="networkx"))


def test_non_numeric_weight_is_one_clear_line():
    """A weight that is not a number names the edge, the attribute and the value (the
    cause of networkx's NotImplementedError when gswitch is asked for by name)."""
    G = nx.Graph()
    G.add_edge("a", "b", weight=2)
    G.add_edge("b", "c", weight="heavy")
    with pytest.raises(NotImplementedError) as info:
        nx.single_source_dijkstra_path_length(G, "a", backend="gswitch")
    cause = info.value.__cause__
    assert isinstance(cause, NonNumericWeight) and isinstance(cause, TypeError)
    message = str(cause)
    assert "\n" not in message and "'heavy'" in message and "weight" in message


def test_non_numeric_weight_leaves_the_call_to_networkx(gswitch_for_every_size):
    """With gswitch first, networkx runs a call gswitch cannot convert and answers as
    it does: a weight it never reads is no error, and one it reads is its TypeError."""
    G = nx.Graph([("a", "b", {"weight": 2}), ("c", "d", {"weight": "heavy"})])
    assert nx.single_source_dijkstra_path_length(G, "a") == {"a": 0, "b": 2}
    with pytest.raises(TypeError):
        nx.single_source_dijkstra_path_length(G, "c")
    with pytest.raises(TypeError):
        list(nx.minimum_spanning_edges(G))


@pytest.mark.parametrize("source", [["a"], "nowhere", None])
def test_odd_sources_raise_networkx_errors(source):
    """Unhashable or missing sources raise networkx's own errors: NodeNotFound where
    networkx tests membership first, its TypeError where it first puts the source in a
    set (Dijkstra, Bellman-Ford, bfs_edges) or looks it up (node_connected_component)."""
    G = nx.path_graph(["a", "b", "c"])
    calls = (lambda **kw: nx.single_source_shortest_path_length(G, source, **kw),
             lambda **kw: nx.single_source_dijkstra_path_length(G, source, **kw),
             lambda **kw: nx.single_source_bellman_ford_path_length(G, source, **kw),
             lambda **kw: list(nx.bfs_edges(G, source, **kw)),
             lambda **kw: nx.node_connected_component(G, source, **kw),
             lambda **kw: nx.descendants_at_distance(G, source, 1, **kw))
    for func in calls:
        with pytest.raises(Exception) as want:
            func(backend="networkx")
        with pytest.raises(type(want.value), match="not|unhashable|'nowhere'|None"):
            func(backend="gswitch")


def test_round_trip_through_the_backend_graph():
    """convert_to_nx gives back the nodes, edges, weights and graph attributes."""
    for G in (_weighted(False), _weighted(True), ZOO["multigraph"], ZOO["strings"]):
        G.graph["name"] = "zoo"
        H = BackendInterface.convert_to_nx(BackendInterface.convert_from_nx(
            G, edge_attrs={"weight": 1}, preserve_graph_attrs=True))
        assert isinstance(H, type(G)) and H.graph == G.graph
        assert list(H) == list(G)
        assert sorted(map(repr, H.edges(data="weight", default=1))) == \
            sorted(map(repr, G.edges(data="weight", default=1)))
    assert BackendInterface.convert_to_nx({"a": 1}) == {"a": 1}


def test_backend_graph_runs_without_conversion(conversions):
    """A converted graph passed directly is used as it is."""
    G = _weighted(True)
    B = BackendInterface.convert_from_nx(G, edge_attrs={"weight": 1})
    assert isinstance(B, NxGraph) and B.is_directed() and len(B) == len(G)
    conversions.clear()
    assert nx.single_source_dijkstra_path_length(B, 0, backend="gswitch") == \
        nx.single_source_dijkstra_path_length(G, 0)
    assert nx.pagerank(B) == pytest.approx(nx.pagerank(G), abs=1e-6)
    assert conversions == [] and "gswitch" in repr(B)


def test_config_backend_cpu_and_bad_values():
    """nx.config.backends.gswitch.backend picks the engine; a bad value is one line."""
    cfg = nx.config.backends.gswitch
    G = nx.path_graph(6)
    try:
        cfg.backend = "cpu"
        assert nx.single_source_shortest_path_length(G, 0, backend="gswitch") == \
            {i: i for i in range(6)}
        cfg.backend = "quantum"
        with pytest.raises(ValueError, match="backend must be one of auto, gpu, cpu"):
            nx.single_source_shortest_path_length(G, 0, backend="gswitch")
    finally:
        cfg.backend = "auto"


def test_config_tune_uses_the_storage(tmp_path, monkeypatch):
    """With tune and a storage, the tuner's resolution picks the configuration."""
    from gswitch.nxbackend import _run

    seen = []

    def fake_resolve(algorithm, graph, mode, *, backend, storage):
        from gswitch.config import Config

        seen.append((algorithm, mode, backend, storage))
        return Config(), "default config: no study"

    monkeypatch.setattr("gswitch.tuner.resolve.resolve_config", fake_resolve)
    monkeypatch.setattr(_run, "_TUNED", {})
    cfg = nx.config.backends.gswitch
    url = f"sqlite:///{tmp_path}/studies.db"
    try:
        cfg.storage, cfg.tune, cfg.backend = url, True, "cpu"
        G = nx.path_graph(5)
        assert nx.pagerank(G, backend="gswitch") == pytest.approx(nx.pagerank(G), abs=1e-6)
        nx.pagerank(G, backend="gswitch")
    finally:
        cfg.storage, cfg.tune, cfg.backend = None, False, "auto"
    assert seen == [("pagerank", "auto", "cpu", url)]


def _tri_graphs():
    yield "karate", nx.karate_club_graph()
    yield "strings", ZOO["strings"]
    yield "undirected", ZOO["undirected"]  # a self loop, isolated nodes of other types
    yield "multigraph", ZOO["multigraph"]
    yield "complete", nx.complete_graph(7)
    yield "random", nx.gnm_random_graph(300, 2000, seed=5)


@pytest.mark.parametrize("name,G", list(_tri_graphs()), ids=[n for n, _ in _tri_graphs()])
def test_triangle_and_clustering_functions_equal_networkx(name, G):
    assert nx.triangles(G, backend="gswitch") == nx.triangles(G)
    if G.is_multigraph():  # networkx's per-node routine refuses multigraphs: so do these
        for f in (lambda g, **k: nx.triangles(g, [0, 1], **k), nx.transitivity,
                  nx.clustering, nx.average_clustering):
            with pytest.raises(nx.NetworkXNotImplemented):
                f(G)
            with pytest.raises(nx.NetworkXNotImplemented):
                f(G, backend="gswitch")
        return
    some = list(G)[::3]
    assert nx.triangles(G, some, backend="gswitch") == nx.triangles(G, some)
    v = next(iter(G))
    assert nx.triangles(G, v, backend="gswitch") == nx.triangles(G, v)
    assert nx.transitivity(G, backend="gswitch") == pytest.approx(nx.transitivity(G))
    got, want = nx.clustering(G, backend="gswitch"), nx.clustering(G)
    assert got.keys() == want.keys()
    assert all(got[k] == pytest.approx(want[k]) for k in want)
    assert nx.average_clustering(G, backend="gswitch") == pytest.approx(
        nx.average_clustering(G))
    assert nx.average_clustering(G, count_zeros=False, backend="gswitch") == pytest.approx(
        nx.average_clustering(G, count_zeros=False))


def test_triangle_functions_refuse_what_networkx_refuses(gswitch_first):
    D = nx.DiGraph([(0, 1), (1, 2), (2, 0)])
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.triangles(D, backend="gswitch")
    # directed or weighted clustering is networkx's own
    assert isinstance(BackendInterface.can_run("clustering", (D,), {}), str)
    G = nx.karate_club_graph()
    assert isinstance(BackendInterface.can_run("average_clustering", (G,),
                                               {"weight": "weight"}), str)
    assert nx.clustering(D) == nx.clustering(D)  # with gswitch first: networkx answers


@pytest.mark.parametrize("nodes", [7, 2.5, [[0]], [0, 9, 1, 1], "ab"],
                         ids=["missing-int", "missing-float", "unhashable", "list", "str"])
@pytest.mark.parametrize("name", ["triangles", "clustering", "average_clustering"])
def test_triangle_functions_read_nodes_as_networkx(name, nodes):
    """``nodes`` that is not a node is read as networkx's ``nbunch_iter`` reads it: the
    nodes of it in G, or networkx's NetworkXError (a node not in G that is no sequence,
    an unhashable element), not a TypeError."""
    G = nx.Graph([(0, 1), (1, 2), (2, 0), (2, 3)])
    func = getattr(nx, name)
    try:
        want = func(G, nodes)
    except (nx.NetworkXError, ZeroDivisionError) as err:  # no node: nothing to average
        with pytest.raises(type(err), match=str(err).replace("[", r"\[")):
            func(G, nodes, backend="gswitch")
    else:
        assert func(G, nodes, backend="gswitch") == pytest.approx(want)


@pytest.mark.parametrize("name", ["undirected", "directed", "strings", "disconnected"])
def test_personalized_pagerank_equals_networkx(name):
    """personalization runs gswitch's personalized_pagerank; the same ranks as networkx."""
    G = ZOO[name]
    nodes = list(G)
    for personal in ({nodes[0]: 1.0}, {v: float(i % 3) for i, v in enumerate(nodes)}):
        got = nx.pagerank(G, personalization=personal, backend="gswitch")
        want = nx.pagerank(G, personalization=personal, tol=1e-10, max_iter=10000)
        assert got.keys() == want.keys()
        assert sum(abs(got[v] - want[v]) for v in want) < 1e-4
    with pytest.raises(ZeroDivisionError):
        nx.pagerank(G, personalization={nodes[0]: 0.0}, backend="gswitch")


@pytest.mark.parametrize("name", ["undirected", "directed", "strings", "disconnected"])
def test_betweenness_centrality_equals_networkx(name):
    """Exact and sampled (the same sample as networkx's seed draws), every option."""
    G = ZOO[name]
    for kw in ({}, {"normalized": False}, {"k": 9, "seed": 3},
               {"k": 9, "seed": 3, "endpoints": True}, {"endpoints": True}):
        got = nx.betweenness_centrality(G, backend="gswitch", **kw)
        want = nx.betweenness_centrality(G, **kw)
        assert got.keys() == want.keys()
        assert all(got[v] == pytest.approx(want[v], rel=1e-9, abs=1e-12) for v in want), kw
    assert isinstance(BackendInterface.can_run("betweenness_centrality", (G,),
                                               {"weight": lambda u, v, d: 1}), str)


@pytest.mark.parametrize("name", ["strings", "disconnected"])
def test_core_number_equals_networkx(name):
    G = ZOO[name]
    assert nx.core_number(G, backend="gswitch") == nx.core_number(G)
    loops = nx.Graph([(0, 1), (1, 1)])
    with pytest.raises(nx.NetworkXNotImplemented, match="self loops"):
        nx.core_number(loops, backend="gswitch")
    assert isinstance(BackendInterface.can_run("core_number", (ZOO["directed"],), {}), str)


def test_a_graph_subclass_runs_in_networkx():
    """A subclass of networkx's graph classes may redefine its adjacency (networkx's
    ``_AntiGraph`` holds the complement): gswitch declines it with the reason, and
    networkx's own answer stands."""

    class Complement(nx.Graph):
        pass

    G = Complement(nx.karate_club_graph())
    why = BackendInterface.can_run("core_number", (G,), {})
    assert isinstance(why, str) and "Complement" in why
    assert BackendInterface.can_run("core_number", (nx.karate_club_graph(),), {}) is True


@pytest.mark.parametrize("labelling", ["least", "largest"])
def test_components_come_in_networkx_order_for_any_labels(monkeypatch, labelling):
    """Components listed by first node, each a set; labels that are not each component's
    least id (another formulation's) take the ranking path and give the same."""
    import numpy as np

    from gswitch.nxbackend import _cc

    G = nx.union(nx.path_graph([5, 1, 9]), nx.cycle_graph([3, 0, 7, 2]))
    G.add_nodes_from([8, 4, 6])
    B = BackendInterface.convert_from_nx(G)
    comp = _cc.labels(B)
    if labelling == "largest":
        big = {c: max(np.flatnonzero(comp == c)) for c in set(comp.tolist())}
        comp = np.array([big[c] for c in comp.tolist()])
        assert not _cc._labelled_by_least_member(comp)
        monkeypatch.setattr(_cc, "labels", lambda _: comp)
    else:
        assert _cc._labelled_by_least_member(comp)
    assert list(_cc.connected_components(B)) == list(nx.connected_components(G))


def test_small_graph_core_numbers_take_the_measured_gpu_configuration(monkeypatch):
    """On the GPU a small graph's core numbers peel in one persistent run; a large one,
    or the CPU engine, keeps the default; the answers equal networkx's either way."""
    from gswitch.algorithms import kcore

    from gswitch.nxbackend import _centrality

    G = nx.gnm_random_graph(300, 1200, seed=3)
    B = BackendInterface.convert_from_nx(G)
    graph = B.gswitch_graph()
    monkeypatch.setattr(_centrality, "engine_backend", lambda: "gpu")
    assert _centrality._small_core_config(graph) == {"variant": "peel_sweep",
                                                     "launch": "persistent"}
    monkeypatch.setattr(kcore, "SMALL_GRAPH_EDGES", graph.n_edges - 1)
    assert _centrality._small_core_config(graph) is None
    monkeypatch.setattr(_centrality, "engine_backend", lambda: "cpu")
    assert _centrality._small_core_config(graph) is None
    assert nx.core_number(G, backend="gswitch") == nx.core_number(G)


def _independent_maximal(G, chosen):
    """networkx's set semantics: no edge inside (self loops aside), every node outside
    next to one inside."""
    inside = all(u not in chosen or v not in chosen for u, v in G.edges() if u != v)
    return inside and all(v in chosen or any(w in chosen for w in G[v]) for v in G)


@pytest.mark.parametrize("name", ["undirected", "multigraph"])
def test_maximal_independent_set_is_independent_maximal_and_holds_nodes(
        gswitch_for_every_size, name):
    """The set differs from networkx's (both draw at random) but keeps its promises: it
    is independent and maximal, holds the nodes asked for, and a seed gives one set."""
    G = nx.MultiGraph(_zoo()["undirected"]) if name == "multigraph" else _zoo()["undirected"]
    for seed in (0, 1, 7):
        got = nx.maximal_independent_set(G, seed=seed)
        assert len(got) == len(set(got)) and _independent_maximal(G, set(got))
        assert got == nx.maximal_independent_set(G, seed=seed)
    forced = [0, ("t", 1), "iso"]
    forced = [v for v in forced if not any(w in forced for w in G[v] if w != v)]
    got = nx.maximal_independent_set(G, forced, seed=2)
    assert set(got[:len(forced)]) == set(forced)  # the nodes asked for come first
    assert _independent_maximal(G, set(got))
    want = nx.maximal_independent_set(G, forced, seed=2, backend="networkx")
    assert _independent_maximal(G, set(want)) and set(forced) <= set(want)


def test_maximal_independent_set_refuses_what_networkx_refuses(gswitch_for_every_size):
    G = _zoo()["undirected"]
    u, v = next((a, b) for a, b in G.edges() if a != b)
    for bad in ([u, v], [3], ["nowhere"]):  # joined, a self loop, not a node
        with pytest.raises(nx.NetworkXUnfeasible) as ours:
            nx.maximal_independent_set(G, bad)
        with pytest.raises(nx.NetworkXUnfeasible) as theirs:
            nx.maximal_independent_set(G, bad, backend="networkx")
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.maximal_independent_set(nx.DiGraph([(0, 1)]))
    assert "maximal_independent_set" in get_info()["functions"]
    assert BackendInterface.can_run("maximal_independent_set", (G,), {})


def test_maximal_independent_set_runs_in_gswitch(gswitch_for_every_size, monkeypatch):
    """The call reaches gswitch's Luby rounds, on the nodes left by the forced ones."""
    from gswitch.nxbackend import _mis

    seen = []
    original = _mis.run_algorithm

    def counting(name, graph, **kw):
        seen.append((name, graph.n_nodes))
        return original(name, graph, **kw)

    monkeypatch.setattr(_mis, "run_algorithm", counting)
    G = nx.path_graph(10)
    got = nx.maximal_independent_set(G, [0], seed=3)
    assert seen == [("maximal_independent_set", 8)]  # 0 and its neighbour 1 left out
    assert got[0] == 0 and _independent_maximal(G, set(got))
