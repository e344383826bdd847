"""Weighted betweenness and edge betweenness by Brandes' algorithm over the shortest-path
DAG of each source: distances, then path counts and dependencies level by level.
"""

from __future__ import annotations

import inspect

import numpy as np
from gswitch.algorithms.betweenness import (
    accumulate_source,
    compare_betweenness,
    levels,
    source_mask,
)

import gswitch as gs
from gswitch.verify import close

from . import _brandes_dag
from ._brandes_batch import fits_hops, hops_problem
from .betweenness_batched import run_edge_variant as run_batched_edges

#: a node's ``hop`` until the longest-hop stage reaches it (0: the source)
_UNREACHED_HOP = 2**30


def positive_weights_problem(graph: gs.Graph) -> str | None:
    """Why ``graph`` has no weighted betweenness: a zero weight (a zero-length cycle has
    no finite shortest-path DAG), or ``None``.
    """
    if graph.weights is None:
        return None
    zero = np.flatnonzero(np.asarray(graph.weights) == 0)
    if zero.size == 0:
        return None
    src, dst = graph.edges()
    i = int(zero[0])
    return (f"weighted betweenness needs positive edge weights: edge ({int(src[i])}, "
            f"{int(dst[i])}) has weight 0; give it a positive weight or drop the edge")


def _networkx_passes(graph: gs.Graph, sources):
    """The Dijkstra passes of networkx (``S, P, sigma``) per source, with the weights the
    engine reads (float32, 1 when unweighted), the DiGraph and the simple graph (whose
    CSR order the edge values follow). The DiGraph is built from the graph's own edges
    here, not from :meth:`Graph.simple`: self loops dropped, and of parallel edges the
    lightest, as networkx reads a multigraph.
    """
    import networkx as nx
    from networkx.algorithms.centrality.betweenness import _single_source_dijkstra_path_basic

    src, dst = graph.edges()
    w = (np.ones(graph.n_edges) if graph.weights is None
         else np.asarray(graph.weights, dtype=np.float64))
    lightest: dict[tuple[int, int], float] = {}
    for a, b, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        if a != b and x < lightest.get((a, b), float("inf")):
            lightest[(a, b)] = x
    g = nx.DiGraph()
    g.add_nodes_from(range(graph.n_nodes))
    g.add_weighted_edges_from((a, b, x) for (a, b), x in lightest.items())
    simple = graph.simple()
    ids = range(graph.n_nodes) if sources is None else np.flatnonzero(sources).tolist()
    return g, simple, ((s, _single_source_dijkstra_path_basic(g, s, "weight")) for s in ids)


def expected_weighted_betweenness(graph: gs.Graph, source: int | None = None, *,
                                  endpoints: int = 0, sources=None, **params) -> np.ndarray:
    """Raw weighted Brandes sums by networkx (before its rescaling) over the given
    sources (every node without them), on the simple graph.
    """
    from networkx.algorithms.centrality.betweenness import (
        _accumulate_basic,
        _accumulate_endpoints,
    )

    g, _, passes = _networkx_passes(graph, sources)
    acc = dict.fromkeys(g, 0.0)
    accumulate = _accumulate_endpoints if endpoints else _accumulate_basic
    for s, (s_list, pred, sigma, _) in passes:
        acc, _ = accumulate(acc, s_list, pred, sigma, s)
    return np.array([acc[v] for v in range(graph.n_nodes)])


def expected_edge_betweenness(graph: gs.Graph, source: int | None = None, *,
                              sources=None, **params) -> np.ndarray:
    """Raw edge dependencies by networkx (weighted by the graph's weights, 1 without
    them) per stored edge of the simple graph, in its CSR order, ordered pairs.
    """
    from networkx.algorithms.centrality.betweenness import _accumulate_edges

    g, simple, passes = _networkx_passes(graph, sources)
    acc = dict.fromkeys(g, 0.0)
    acc.update(dict.fromkeys(g.edges(), 0.0))
    for s, (s_list, pred, sigma, _) in passes:
        acc = _accumulate_edges(acc, s_list, pred, sigma, s)
    src, dst = simple.edges()
    return np.array([acc[(a, b)] for a, b in zip(src.tolist(), dst.tolist())])


def compare_edge_betweenness(got: np.ndarray, expected: np.ndarray) -> str | None:
    """Float64 sums of float64 path counts: ``rtol=1e-6, atol=1e-6``."""
    return close(got, expected, rtol=1e-6, atol=1e-6, what="edge betweenness")


def rescale_edges(raw: np.ndarray, n_nodes: int, *, directed: bool,
                  normalized: bool = True, k: int | None = None) -> np.ndarray:
    """Rescale summed edge dependencies as networkx's ``edge_betweenness_centrality``.

    Parameters
    ----------
    raw : ndarray
        One sum per edge (for an undirected graph, both directions of an edge added).
    n_nodes : int
        Nodes of the graph.
    directed : bool
        Whether the graph is directed (undirected pairs count once: halved unless
        normalised).
    normalized : bool
        Divide by the number of (source, target) pairs.
    k : int, optional
        The number of sampled sources; ``None`` for exact.

    Returns
    -------
    ndarray of float64
    """
    out = np.asarray(raw, dtype=np.float64).copy()
    if n_nodes < 2:
        return out
    k_source = n_nodes if k is None else k
    # the scale in Python numbers, as networkx's: k=0 raises its ZeroDivisionError
    if normalized:
        return out * (1 / (k_source * (n_nodes - 1)))
    return out * (n_nodes / (k_source * (1 if directed else 2)))


def _on_dag(fields, edges, xp):
    """Which edges lie on a shortest path from the source (``dist[u] + w == dist[v]``
    from a reached ``u``), with the same float64 sums the operators compare.
    """
    dist = fields["dist"]
    du = dist[edges.src]
    return (du < xp.inf) & (du + edges.weight.astype(xp.float64) == dist[edges.dst])


def _brandes(edge_output: bool) -> type:
    """The class body shared by the node and edge algorithms (``edge_output``: the edge
    dependencies are summed into the ``edge_betweenness`` edge field).
    """

    class Brandes:
        if edge_output:
            edge_betweenness = gs.EdgeField(
                "float64", init=0.0,
                doc="raw edge betweenness per stored edge of the simple graph")
        dist = gs.NodeField("float64", init=gs.INF, output=False,
                            doc="distance from the source")
        hop = gs.NodeField("int32", init=0, output=False,
                           doc="most edges on a shortest path from the source")
        sigma = gs.NodeField("float64", init=0.0, output=False, doc="shortest paths")
        delta = gs.NodeField("float64", init=0.0, output=False, doc="dependency")
        if not edge_output:
            betweenness = gs.NodeField("float64", init=0.0, doc="raw betweenness")
        picked = gs.NodeField("int32", output=False, doc="1 at the sources",
                              init=gs.per_node_input("sources", default=1,
                                                     prepare=source_mask,
                                                     doc="source node ids", names="list"))
        preds = gs.NodeField("int32", init=0, output=False,
                             doc="shortest-path predecessors")
        arrived = gs.NodeField("int32", init=0, output=False,
                               doc="predecessors that have sent their counts")
        succs = gs.NodeField("int32", init=0, output=False,
                             doc="shortest-path successors (undirected graphs)")
        taken = gs.NodeField("int32", init=0, output=False,
                             doc="successors whose dependency has been taken")
        order = gs.NodeField("int32", init=0, output=False, doc="reached nodes by hop")
        bound = gs.NodeField("int32", init=0, output=False,
                             doc="where each hop level ends in order")
        if not edge_output:
            endpoints = gs.Param("int32", 0, low=0, high=1, doc="1: count the path ends")
        done = gs.Param("int32", 0, low=0, high=2**31 - 1, doc="sources finished")
        level = gs.Param("int32", 0, low=-1, high=2**31 - 1, doc="level a stage reads")
        deepest = gs.Param("int32", 0, low=0, high=2**31 - 1, doc="deepest hop level")
        undirected = gs.Param("int32", 0, low=0, high=1,
                              doc="1: dependencies flow back along stored reverse edges")

        @gs.host_step
        def next_source(fields, params, xp):
            ids = xp.flatnonzero(fields["picked"])
            if params["done"] >= ids.size:  # no source (left): nothing to start from
                return {"start": ids[:0]}
            s = ids[params["done"]]
            dist = xp.full_like(fields["dist"], xp.inf)
            dist[s] = 0.0
            sigma = xp.zeros_like(fields["sigma"])
            sigma[s] = 1.0
            return {"start": s.reshape(1), "dist": dist, "sigma": sigma,
                    "hop": xp.zeros_like(fields["hop"]),
                    "delta": xp.zeros_like(fields["delta"])}

        @gs.stage
        class forward:
            """Distances from the source."""

            start = gs.chosen_nodes()

            @gs.edge_op
            def relax(e):
                e.dst.dist.reduce_min(e.src.dist + e.weight)

        @gs.host_step(edges=True)
        def from_the_source(fields, params, xp, edges):
            if not edges.directed:  # the dependencies drain back without hop levels
                return {"start": fields["sigma"][:0].astype(xp.int32)}
            return {"start": xp.flatnonzero(fields["sigma"])}  # the source: sigma 1

        @gs.stage(config={"driving": "data", "direction": "push"},
                  supports={"driving": ("data",), "direction": ("push",)})
        class longest:
            """Each node's hop level: the most edges of a shortest path to it."""

            start = gs.chosen_nodes()

            @gs.edge_op
            def deeper(e):
                e.only_if(e.dst.dist.eq(e.src.dist + e.weight))
                e.dst.hop.reduce_max(e.src.hop + 1)

        @gs.host_step(edges=True)
        def by_hop(fields, params, xp, edges):
            reached = fields["dist"] < xp.inf
            hop = xp.where(reached, fields["hop"], _UNREACHED_HOP)
            order, bound, deepest = levels(hop, reached, fields["bound"], xp)
            n = fields["preds"].size
            preds = xp.bincount(edges.dst[_on_dag(fields, edges, xp)], minlength=n)
            preds = preds[:n]
            return {"order": order, "bound": bound, "deepest": deepest, "preds": preds,
                    "arrived": xp.zeros_like(fields["arrived"]),
                    "start": reached & (preds == 0)}  # the source

        @gs.stage(config={"driving": "data", "direction": "push"},
                  supports={"driving": ("data",), "direction": ("push",)})
        class count:
            """Path counts in topological order: a node sends once its last shortest-path
            predecessor has (its count is then complete).
            """

            start = gs.chosen_nodes()

            @gs.edge_op
            def paths(e):
                e.only_if(e.dst.dist.eq(e.src.dist + e.weight))
                e.dst.sigma.reduce_add(e.src.sigma, activate=False)
                e.dst.arrived.reduce_add(1, activate_above=e.dst.preds)

        @gs.host_step(edges=True)
        def from_the_sinks(fields, params, xp, edges):
            if edges.directed:  # no in-edges to send along: level by level instead
                return {"undirected": 0, "start": fields["order"][:0]}
            on = _on_dag(fields, edges, xp)
            succs = xp.bincount(edges.src[on], minlength=fields["succs"].size)
            succs = succs[: fields["succs"].size]
            sinks = (fields["dist"] < xp.inf) & (succs == 0)
            return {"undirected": 1, "succs": succs, "taken": xp.zeros_like(succs),
                    "start": sinks}

        @gs.stage(config={"driving": "data", "direction": "push"},
                  supports={"driving": ("data",), "direction": ("push",)})
        class drain:
            """Dependencies in reverse topological order on an undirected graph: each
            node gives its share back along the reverse of each shortest-path edge into
            it, and a node sends once its last successor has given.
            """

            start = gs.chosen_nodes()

            @gs.edge_op
            def give(e):
                e.only_if(e.src.dist.eq(e.dst.dist + e.weight))
                e.dst.delta.reduce_add(e.dst.sigma / e.src.sigma * (1.0 + e.src.delta),
                                       activate=False)
                e.dst.taken.reduce_add(1, activate_above=e.dst.succs)

        @gs.host_step
        def deepest_first(fields, params, xp):
            if params["undirected"]:  # drained: no level left to take
                return {"level": -1, "start": fields["order"][:0]}
            level = params["deepest"] - 1  # the deepest level with successors
            lo = int(fields["bound"][level - 1]) if level >= 1 else 0
            hi = int(fields["bound"][level]) if level >= 0 else 0
            return {"level": max(level, -1), "start": fields["order"][lo:hi]}

        @gs.stage(config={"driving": "data", "direction": "push"},
                  supports={"driving": ("data",), "direction": ("push",)})
        class backward:
            """One hop level's dependencies, from its shortest-path successors."""

            start = gs.chosen_nodes()

            @gs.edge_op
            def depend(e):
                e.only_if(e.dst.dist.eq(e.src.dist + e.weight))
                e.dst.delta.at(e.src.id).reduce_add(
                    e.src.sigma / e.dst.sigma * (1.0 + e.dst.delta), activate=False)

        @gs.host_step
        def up_a_level(fields, params, xp):
            level = params["level"] - 1
            if level < 0:
                return {"level": -1}
            lo = int(fields["bound"][level - 1]) if level >= 1 else 0
            hi = int(fields["bound"][level])
            return {"level": level, "start": fields["order"][lo:hi], "repeat": "backward"}

        if edge_output:
            @gs.host_step(edges=True)
            def accumulate(fields, params, xp, edges):
                ids = xp.flatnonzero(fields["picked"])
                out = {"done": params["done"] + 1}
                if params["done"] < ids.size:
                    on = _on_dag(fields, edges, xp)
                    sigma, delta = fields["sigma"], fields["delta"]
                    below = xp.where(on, sigma[edges.dst], 1.0)
                    share = xp.where(on, sigma[edges.src] / below
                                     * (1.0 + delta[edges.dst]), 0.0)
                    out["edge_betweenness"] = fields["edge_betweenness"] + share
                if params["done"] + 1 < ids.size:
                    out["repeat"] = "next_source"
                return out
        else:
            @gs.host_step
            def accumulate(fields, params, xp):
                return accumulate_source(fields, params, xp, fields["dist"] < xp.inf)

    return Brandes


_NOTES = """
    Per source, on the simple graph (self loops dropped; parallel edges merged into one
    of the lightest weight, as networkx reads a multigraph), an edge ``u -> v`` lies on
    a shortest path when ``dist[u] + w == dist[v]`` (float64 sums of the float32
    weights, the same test on both engines and in the host step):

    1. ``forward``: distances from the source (Bellman-Ford relaxation, any strategy);
    2. ``longest`` (directed graphs): each reached node's hop level, the most edges of a
       shortest path to it (an activating max along shortest-path edges); a node's
       successors on the shortest-path DAG all sit on deeper levels;
    3. ``count``: one data-driven run from the source in topological order: every node
       adds ``sigma[u]`` to each shortest-path successor and counts itself in at it
       (``arrived``); a node becomes active when its last predecessor (``preds``, counted
       by a host step over the edges) has sent, so its count is complete when it sends;
    4. on an undirected graph, ``drain``: one data-driven run from the nodes without
       shortest-path successors, each giving ``sigma[u] / sigma[v] * (1 + delta[v])``
       back along the stored reverse of each shortest-path edge ``u -> v``, a node
       sending once its last successor has given (``succs``, counted by a host step);
       on a directed graph (no reverse edges to send along), ``backward``, once per hop
       level from the deepest up: every node ``u`` takes that share from each
       successor ``v``, with an indirect, non-activating add;
    5. ``accumulate``: a host step sums the source's dependencies, then the next
       source.

    On an unweighted graph every edge weighs 1 and the answer is ``betweenness``'s.
"""


def _doc(summary: str, returns: str, extra: str, notes: str = _NOTES,
         raises: str = "", invalid: str = "") -> str:
    return inspect.cleandoc(f"""{summary}

    Parameters
    ----------
    sources : array of int, optional
        Source nodes (a run argument): every node by default, exact; ``k`` sampled
        nodes for the sampled estimate.
{extra}
    Returns
    -------
{returns}

    Raises
    ------
    InvalidInput
        A negative or zero edge weight{invalid}.
{raises}
    Notes
    -----
{notes}
    References
    ----------
    .. [1] Brandes, "A faster algorithm for betweenness centrality", J. Math. Sociol.
       25 (2001).
    .. [2] Brandes, "On variants of shortest-path betweenness centrality and their
       generic computation", Social Networks 30 (2008).
    """)


_NODE_SPEC = dict(name="weighted_betweenness", weights="nonnegative", simple=True,
                  reference="networkx.betweenness_centrality(weight=...) (unscaled)",
                  expected=expected_weighted_betweenness, compare=compare_betweenness,
                  check_graph=positive_weights_problem)
_EDGE_SPEC = dict(name="edge_betweenness", weights="nonnegative", simple=True,
                  reference="networkx.edge_betweenness_centrality (unscaled, per direction)",
                  expected=expected_edge_betweenness, compare=compare_edge_betweenness,
                  check_graph=positive_weights_problem)

WeightedBetweenness = gs.algorithm(**_NODE_SPEC, variant="per_source")(
    _brandes(edge_output=False))
_NODE_RETURNS = """    betweenness : ndarray of float64
        For each node, the sum over sources ``s`` and targets ``t`` of the share of
        shortest ``s``-``t`` paths through it (networkx's values before its rescaling;
        :func:`gswitch.algorithms.betweenness.rescale` applies it).
"""
_ENDPOINTS = """    endpoints : int
        1: count the path ends too (networkx's ``endpoints=True``); default 0.
"""
WeightedBetweenness.doc = _doc(
    "Betweenness centrality with edge weights as lengths (Brandes over Dijkstra order).",
    _NODE_RETURNS, _ENDPOINTS)

EdgeBetweenness = gs.algorithm(**_EDGE_SPEC, variant="per_source")(
    _brandes(edge_output=True))
_EDGE_RETURNS = """    edge_betweenness : ndarray of float64
        For each stored edge of the simple graph (its CSR order: ``graph.simple()``),
        the sum over sources ``s`` and targets ``t`` of the share of shortest
        ``s``-``t`` paths using it: ``sigma[u] / sigma[v] * (1 + delta[v])`` per source.
        An undirected edge has one value per direction; networkx adds them
        (:func:`rescale_edges` then applies networkx's scaling). A renumbered run
        returns them in the caller's edge order.
"""
EdgeBetweenness.doc = _doc(
    "Edge betweenness centrality (weights as lengths; 1 on an unweighted graph).",
    _EDGE_RETURNS, "")

_SOURCES = dict(prepare=source_mask, doc="source node ids", names="list")

_WHY_DAG = """
    Why array code and not the operator language (the escape hatch of ``direct=`` on
    :func:`gswitch.algorithm`): the operator formulation walks each source's
    shortest-path DAG level by level, one source at a time, so a run costs a few host
    steps and stages per hop level per source, which on the CPU engine is what a road
    network's hundreds of levels pay for. Here the whole batch of sources is one
    computation: the path counts and dependencies of every source are two sparse
    triangular systems over the (source, node) pairs, which the language cannot state
    (its fields hold one value per node). The distances come from SciPy's Dijkstra, the
    DAG's edges from the same float64 test ``dist[u] + w == dist[v]``, so the ties are
    the per-source variant's.

    Per batch of sources (as many as fit a quarter of the available memory, at most
    256 MiB of arrays), :func:`gswitch.algorithms._brandes_dag.brandes_dag`:

    1. distances by :func:`scipy.sparse.csgraph.dijkstra` from every source of the batch;
    2. the DAG: every (source, edge) whose edge is tight;
    3. each source's reached nodes ranked by distance, so every DAG edge points forwards
       and ``I - L`` (``L``: the DAG's adjacency over the batch's pairs) is unit lower
       triangular;
    4. path counts ``sigma = (I - L)^-1 e`` (``e``: 1 at each source), and
       ``c = delta / sigma`` from ``(I - L^T) c = L^T (1 / sigma)``: Brandes' recursion
       ``delta[u] = sum sigma[u] / sigma[v] (1 + delta[v])`` divided by ``sigma[u]``;
    5. the sums: each node's ``delta`` over the sources but itself (with ``endpoints``,
       networkx's path-end counts), or each DAG edge's ``sigma[u] (1 / sigma[v] + c[v])``.

    It is the default on the CPU backend; it has no GPU side (the GPU runs
    ``per_source``, and refuses ``variant=dag`` with the fix). No strategy applies:
    every axis stays at its default, and a config that picks a strategy runs
    ``per_source``. The statistics count batches as ``iterations`` and the edges tested
    against the distances as ``edges_processed``.
"""


@gs.algorithm(**_NODE_SPEC, variant="dag", default=False, default_on=("cpu",),
              backends=("cpu",), direct=_brandes_dag.run_variant)
class DagWeightedBetweenness:
    betweenness = gs.NodeField("float64", init=0.0, doc="raw betweenness")
    picked = gs.NodeField("int32", output=False, doc="1 at the sources",
                          init=gs.per_node_input("sources", default=1, **_SOURCES))
    endpoints = gs.Param("int32", 0, low=0, high=1, doc="1: count the path ends")


def _hops_problem(graph: gs.Graph) -> str | None:
    """Why batched edge betweenness refuses ``graph``: a zero weight, or any weight other
    than 1 (it counts hops); or ``None``.
    """
    return positive_weights_problem(graph) or hops_problem(graph)


@gs.algorithm(**{**_EDGE_SPEC, "check_graph": _hops_problem}, variant="batched",
              default=False, default_on=("cpu", "gpu"), default_if=fits_hops,
              direct=run_batched_edges)
class BatchedEdgeBetweenness:
    picked = gs.NodeField("int32", output=False, doc="1 at the sources",
                          init=gs.per_node_input("sources", default=1, **_SOURCES))
    edge_betweenness = gs.EdgeField(
        "float64", init=0.0, doc="raw edge betweenness per stored edge of the simple graph")


@gs.algorithm(**_EDGE_SPEC, variant="dag", default=False, default_on=("cpu",),
              backends=("cpu",), direct=_brandes_dag.run_edge_variant)
class DagEdgeBetweenness:
    picked = gs.NodeField("int32", output=False, doc="1 at the sources",
                          init=gs.per_node_input("sources", default=1, **_SOURCES))
    edge_betweenness = gs.EdgeField(
        "float64", init=0.0, doc="raw edge betweenness per stored edge of the simple graph")


_DAG_RAISES = """    InvalidConfig
        ``variant=dag`` on the GPU backend (it runs on the CPU only).
"""
_DAG_INVALID = (", a weight too small to lengthen a path in float64, or one source's "
                "DAG larger than the memory available")
DagWeightedBetweenness.doc = _doc(
    "Weighted betweenness for a batch of sources at once: Dijkstra, then path counts "
    "and dependencies as two sparse triangular solves (array code, CPU).",
    _NODE_RETURNS, _ENDPOINTS, _WHY_DAG, _DAG_RAISES, _DAG_INVALID)
DagEdgeBetweenness.doc = _doc(
    "Edge betweenness for a batch of sources at once: Dijkstra, then path counts and "
    "dependencies as two sparse triangular solves (array code, CPU).",
    _EDGE_RETURNS, "", _WHY_DAG, _DAG_RAISES, _DAG_INVALID)
BatchedEdgeBetweenness.doc = _doc(
    "Edge betweenness on hop lengths by batched Brandes: 64 sources per traversal, "
    "array code (both backends).",
    _EDGE_RETURNS, "", """
    Why array code and not the operator language: the traversal of the ``batched``
    variant of ``betweenness`` (64 path counts and dependencies per node, one per
    source, added lane by lane; the language's fields hold one value per node), summing
    each edge's share ``sigma[u] / sigma[v] * (1 + delta[v])`` as it goes:
    :func:`gswitch.algorithms.betweenness_batched.edge_betweenness`, on the GPU the
    kernels of ``_betweenness_gpu``, on the CPU the same levels in NumPy.

    It counts hops, so it applies where every edge weighs 1 (or the graph has no
    weights): there it is the default on both backends, for graphs of at most
    ``_brandes_batch.MAX_NODES`` nodes; elsewhere a config without ``variant`` runs
    ``dag`` on the CPU and ``per_source`` on the GPU, and ``variant=batched`` on a
    weighted graph is refused. No strategy applies: every axis stays at its default.
    The statistics count levels as ``iterations`` and the edges the levels scanned as
    ``edges_processed``; ``batches`` says how many traversals ran.
""", "", ", or (``variant=batched``) a weight other than 1")

# the order matters where several formulations are a backend's default: on both backends
# the batched edge betweenness comes first (hop lengths), then, on the CPU, ``dag``
SPECS = [WeightedBetweenness, DagWeightedBetweenness, EdgeBetweenness,
         BatchedEdgeBetweenness, DagEdgeBetweenness]


@gs.hookimpl
def gswitch_algorithms():
    return SPECS
