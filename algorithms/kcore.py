"""k-core decomposition: the core number of every node of an undirected graph."""

from __future__ import annotations

import weakref

import numpy as np

import gswitch as gs
from gswitch._hints import option
from gswitch.verify import exact

_REFERENCE = "networkx.core_number"


def expected_cores(graph: gs.Graph, source: int | None = None, **params) -> np.ndarray:
    """Core numbers by ``networkx.core_number`` on the symmetrised graph (parallel edges
    merged, as the symmetrisation merges them).
    """
    import networkx as nx

    g = graph.symmetrize()
    nxg = nx.Graph()
    nxg.add_nodes_from(range(g.n_nodes))
    src, dst = g.edges()
    nxg.add_edges_from(zip(src.tolist(), dst.tolist()))
    cores = nx.core_number(nxg)
    return np.array([cores[v] for v in range(g.n_nodes)], dtype=np.int64)


_REFUSALS: dict[int, str | None] = {}


def simple_graph_problem(graph: gs.Graph) -> str | None:
    """Why ``graph`` (the symmetrised graph a run gets) has no core numbers: a self-loop
    or a parallel edge, which networkx refuses too; ``None`` for a simple graph.

    Kept per graph while it lives (graphs are immutable): a GPU run on a large graph
    pays the pass over its edges once.
    """
    key = id(graph)
    if key not in _REFUSALS:
        _REFUSALS[key] = _simple_graph_problem(graph)
        weakref.finalize(graph, _REFUSALS.pop, key, None)
    return _REFUSALS[key]


def _simple_graph_problem(graph: gs.Graph) -> str | None:
    src, dst = graph.edges()
    loops = np.flatnonzero(src == dst)
    if loops.size:
        return (f"core numbers are not defined for graphs with self-loops (networkx raises "
                f"NetworkXNotImplemented too); node {int(src[loops[0]])} has one. "
                f"Remove them first: {option('drop_loops')}")
    same_row = src[1:] == src[:-1]
    if bool((same_row & (dst[1:] < dst[:-1])).any()):  # rows not sorted: sort the pairs
        key = np.sort(src.astype(np.int64) * max(graph.n_nodes, 1) + dst)
        dup = np.flatnonzero(key[1:] == key[:-1])
        pair = (int(key[dup[0]] // graph.n_nodes), int(key[dup[0]] % graph.n_nodes)) \
            if dup.size else None
    else:
        dup = np.flatnonzero(same_row & (dst[1:] == dst[:-1]))
        pair = (int(src[dup[0]]), int(dst[dup[0]])) if dup.size else None
    if pair is not None:
        return (f"core numbers are not defined for multigraphs (networkx refuses them too); "
                f"edge {pair[0]} - {pair[1]} is repeated. "
                f"Merge parallel edges first: {option('merge_duplicates')}")
    return None


# ---------------------------------------------------------------------- peel_levels
def _shed(e, p):
    # a node peeled in this step takes itself from the remaining degree of each neighbour
    # still in the graph; a neighbour whose remaining degree falls below k is peeled next
    e.only_if(e.src.shed.eq(1) & (e.dst.core < 0))
    e.dst.excess.reduce_add(1, activate_above=1 - p.k)


#: above any remaining degree: marks the peeled nodes out of the level's minimum
_NO_DEGREE = 2**31 - 1


def _first_level(n):
    isolated = n.out_degree < 1
    n.excess = -n.out_degree
    n.shed = gs.where(isolated, 1, 0)
    n.core = gs.where(isolated, 0, n.core)


def _peel(n, p):
    removing = (n.core < 0) & (n.excess > -p.k)  # remaining degree below k
    n.shed = gs.where(removing, 1, 0)
    n.core = gs.where(removing, p.k - 1, n.core)


@gs.algorithm(name="core_number", symmetric=True, reference=_REFERENCE, variant="peel_levels",
              expected=expected_cores, compare=exact, check_graph=simple_graph_problem)
class PeelLevels:
    """Core numbers by peeling, level by level (Batagelj-Zaversnik, bulk-synchronous).

    Returns
    -------
    core : ndarray of int32
        The core number of every node: the largest ``k`` such that the node belongs to
        a subgraph in which every node has at least ``k`` neighbours.

    Raises
    ------
    InvalidInput
        If the symmetrised graph has a self-loop or a parallel edge (an undirected
        :class:`~gswitch.Graph` built with duplicates kept): networkx's ``core_number``
        refuses both, and the answer would depend on how they were counted.

    Notes
    -----
    The graph is symmetrised first, which merges the two directions of an edge and any
    parallel directed edges into one undirected edge: a directed input has the core
    numbers of its underlying simple undirected graph.

    ``excess`` holds minus a node's remaining degree. A level ``k`` peels every node whose
    remaining degree is below ``k``: its core number is ``k - 1``, and each of its
    neighbours still in the graph gets ``+1`` on ``excess`` with an atomic add that
    activates the neighbour when it crosses ``1 - k`` (its remaining degree fell below
    ``k``), so only the nodes that fall are ever visited, each once. A level is a stage
    run to its fixpoint under any driving; between levels a host step jumps ``k`` to one
    more than the smallest remaining degree (levels that would peel nothing are
    skipped) and chooses the nodes below it as the next start set. There are as many
    levels as distinct core numbers. The first stage reads every node's degree (into
    ``excess``) and peels the isolated nodes.

    References
    ----------
    .. [1] Batagelj, Zaversnik, "An O(m) algorithm for cores decomposition of networks",
       arXiv cs/0310049 (2003).
    .. [2] Dhulipala, Blelloch, Shun, "Julienne: a framework for parallel graph algorithms
       using work-efficient bucketing", SPAA 2017.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 0, 1, 2], [1, 2, 2, 3], n_nodes=5)
    >>> gs.run("core_number", g).fields["core"].tolist()
    [2, 2, 2, 1, 0]

    """

    core = gs.NodeField("int32", init=-1, doc="core number (-1 until peeled)")
    excess = gs.NodeField("int32", init=0, output=False, doc="minus the remaining degree")
    shed = gs.NodeField("int32", init=0, output=False, doc="1 in the step a node is peeled")
    k = gs.Param("int32", 1, low=1, high=2**31 - 1,
                 doc="the level being peeled (set by the host step level)")

    @gs.stage
    class degrees:
        """Read every node's degree and peel the isolated nodes (level 1)."""

        start = gs.all_nodes()
        shed = gs.edge_op(_shed)
        first_level = gs.node_op(_first_level)

    @gs.host_step
    def level(fields, params, xp):
        out = _next_level(fields, xp)
        # every node peeled already (isolated nodes only): peel runs from no node
        return {"start": fields["core"] < 0} if out is None else out

    @gs.stage
    class peel:
        """Peel level k: the chosen nodes, then every node that falls below k."""

        start = gs.chosen_nodes()
        shed = gs.edge_op(_shed)
        peel = gs.node_op(_peel)

    @gs.host_step
    def next_level(fields, params, xp):
        out = _next_level(fields, xp)
        return None if out is None else {**out, "repeat": "peel"}


def _next_level(fields, xp):
    """The next level ``k`` (one more than the least remaining degree) and its start set,
    the nodes below it; ``None`` once every node is peeled. One reduction and one read
    of its value decide both.
    """
    core, excess = fields["core"], fields["excess"]
    alive = core < 0
    if alive.size == 0:
        return None
    least = int(xp.where(alive, -excess, _NO_DEGREE).min())
    if least == _NO_DEGREE:
        return None
    k = least + 1
    return {"k": k, "start": alive & (excess > -k)}


# ---------------------------------------------------------------------- peel_sweep
@gs.algorithm(name="core_number", symmetric=True, reference=_REFERENCE, variant="peel_sweep",
              default=False, check_graph=simple_graph_problem,
              supports={"driving": ("topology",)}, defaults={"driving": "topology"})
class PeelSweep:
    """Core numbers by peeling every level in one device-side run, without host steps.

    Returns
    -------
    core : ndarray of int32
        The core number of every node.

    Raises
    ------
    InvalidInput
        If the symmetrised graph has a self-loop or a parallel edge.

    Notes
    -----
    The peeling of ``peel_levels`` with the level kept on the device: every step sweeps
    every node (topology driving), peels the nodes whose remaining degree is below the
    current level ``k`` and sends their neighbours ``+1`` on ``excess`` (minus the
    remaining degree). A step total counts the nodes each step peeled; a step that reads
    a count of zero (nothing fell in the previous step) raises ``k`` by one on every
    node. The run, every level of it, is one sequence of steps, so a persistent or
    CUDA-graph launch needs no host round trip at all, where ``peel_levels`` returns to
    the host once per level; the price is a sweep of every node per step, and a step
    per level, also for the levels that peel nothing.

    References
    ----------
    .. [1] Batagelj, Zaversnik, "An O(m) algorithm for cores decomposition of networks",
       arXiv cs/0310049 (2003).
    .. [2] Kabir, Madduri, "Parallel k-core decomposition on multicore platforms",
       IPDPSW 2017.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 0, 1, 2], [1, 2, 2, 3], n_nodes=5)
    >>> gs.run("core_number", g, config={"variant": "peel_sweep"}).fields["core"].tolist()
    [2, 2, 2, 1, 0]

    """

    core = gs.NodeField("int32", init=-1, doc="core number (-1 until peeled)")
    excess = gs.NodeField("int32", init=0, output=False, doc="minus the remaining degree")
    shed = gs.NodeField("int32", init=0, output=False, doc="1 in the step a node is peeled")
    level = gs.NodeField("int32", init=0, output=False, doc="the level k, on every node")
    waiting = gs.NodeField("int32", init=0, output=False,
                           doc="steps a node has stayed in the graph")
    peeled = gs.StepTotal(doc="nodes peeled in the step")
    start = gs.all_nodes()

    @gs.edge_op
    def shed_edges(e):
        e.only_if(e.src.shed.eq(1) & (e.dst.core < 0))
        e.dst.excess.reduce_add(1)

    @gs.node_op
    def sweep(n, p):
        excess = gs.where(p.iteration.eq(0), -n.out_degree, n.excess)
        k = n.level + gs.where(p.peeled < 0.5, 1, 0)
        removing = (n.core < 0) & (excess > -k)
        n.shed = gs.where(removing, 1, 0)
        n.total(gs.where(removing, 1.0, 0.0), into="peeled")
        # a node still in the graph keeps the run going (levels that peel nothing
        # change nothing else)
        n.waiting.reduce_add(gs.where((n.core < 0) & ~removing, 1, 0), activate=True)
        # the stores come last: the expressions above read the fields as the step found
        # them
        n.core = gs.where(removing, k - 1, n.core)
        n.excess = excess
        n.level = k


# ---------------------------------------------------------------------- peel_buckets
def _shed_below_bucket(e, p):
    # as _shed, with the level the step's bucket: a neighbour whose remaining degree
    # falls to the bucket is pushed (once: the add that crosses); the others wait in the
    # far set under their remaining degree
    e.only_if(e.src.shed.eq(1) & (e.dst.core < 0))
    e.dst.excess.reduce_add(1, activate_above=-p.bucket)  # reaches -k: degree k


def _peel_bucket(n, p):
    excess = gs.where(p.iteration.eq(0), -n.out_degree, n.excess)
    alive = n.core < 0
    removing = alive & (excess > -1 - p.bucket)  # remaining degree at most the bucket
    # stored first: the push below files the node under its remaining degree
    n.excess = excess
    n.shed = gs.where(removing, 1, 0)
    # the first step files every node it does not peel in the far set, by its degree
    n.waiting.reduce_add(gs.where(alive & ~removing & p.iteration.eq(0), 1, 0),
                         activate=True)
    n.core = gs.where(removing, p.bucket, n.core)


@gs.algorithm(name="core_number", symmetric=True, reference=_REFERENCE, variant="peel_buckets",
              default=False, check_graph=simple_graph_problem,
              priority=lambda n: -n.excess, priority_width=1.0,
              supports={"driving": ("priority",), "direction": ("push",)},
              defaults={"driving": "priority", "direction": "push"},
              # RMAT-22 on an H200 (bench_scale_targets.py, gpu_scale_targets_s34.json):
              # 82 ms persistent with virtual warps, 164 ms with twc, 171 ms as a CUDA
              # graph, 261 ms host loop; peel_levels 254 ms in the same run
              default_on=("gpu",),
              backend_defaults={"gpu": {"launch": "persistent",
                                        "load_balance": "virtual_warp"}})
class PeelBuckets:
    """Core numbers by peeling, with the levels as the buckets of priority driving.

    Returns
    -------
    core : ndarray of int32
        The core number of every node.

    Raises
    ------
    InvalidInput
        If the symmetrised graph has a self-loop or a parallel edge.

    Notes
    -----
    Julienne's bucketed peeling [2]_ on the driving strategy ``priority``: a node's
    priority key is its remaining degree and a bucket is one key value
    (``priority_width=1``), so the bucket a step processes, ``p.bucket``, is the level
    ``k`` being peeled. A processed node whose remaining degree is at most ``k`` gets
    core number ``k`` and takes itself from its neighbours' degrees; a neighbour whose
    degree falls to ``k`` is pushed into the current bucket, every other one waits in the
    far set under its degree. When a level is exhausted, the strategy's refill step takes
    the next non-empty bucket from the far set on the device. The run is one sequence of
    steps, with no host step between levels (``peel_levels`` returns to the host once
    per level), and a step visits only the nodes peeled in it, not every node
    (``peel_sweep``). The first step visits every node: it peels the isolated ones and
    files the others under their degree.

    A node whose degree fell below a later level while it waited is pushed by that
    level's crossing and again, harmlessly, by the refill of its old bucket: the second
    visit finds it peeled.

    References
    ----------
    .. [1] Batagelj, Zaversnik, "An O(m) algorithm for cores decomposition of networks",
       arXiv cs/0310049 (2003).
    .. [2] Dhulipala, Blelloch, Shun, "Julienne: a framework for parallel graph algorithms
       using work-efficient bucketing", SPAA 2017.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 0, 1, 2], [1, 2, 2, 3], n_nodes=5)
    >>> gs.run("core_number", g, config={"variant": "peel_buckets"}).fields["core"].tolist()
    [2, 2, 2, 1, 0]

    """

    core = gs.NodeField("int32", init=-1, doc="core number (-1 until peeled)")
    excess = gs.NodeField("int32", init=0, output=False, doc="minus the remaining degree")
    shed = gs.NodeField("int32", init=0, output=False, doc="1 in the step a node is peeled")
    waiting = gs.NodeField("int32", init=0, output=False,
                           doc="1 once the first step filed the node in the far set")
    start = gs.all_nodes()
    shed_edges = gs.edge_op(_shed_below_bucket)
    peel = gs.node_op(_peel_bucket)


#: Adjacency entries up to which a GPU call is fastest peeling every level in one
#: persistent run (``SMALL_GRAPH_CONFIG``): 0.23 ms against the level-by-level
#: formulation's 3.0 ms on a 1,000-node graph, 0.98 against 3.7 ms at 100k nodes and 800k
#: entries; level by level won on RMAT-22 (128M entries: 317 against 507 ms). H200,
#: ``benchmarks/experiments/kcore_small.py`` (``h200_s33d_kcore_small.log``). The
#: networkx backend's ``core_number`` uses it.
SMALL_GRAPH_EDGES = 1_000_000
SMALL_GRAPH_CONFIG = {"variant": "peel_sweep", "launch": "persistent"}

SPEC = PeelLevels
VARIANTS = [PeelLevels, PeelSweep, PeelBuckets]


@gs.hookimpl
def gswitch_algorithms():
    return VARIANTS
