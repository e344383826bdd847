"""Betweenness centrality by Brandes' algorithm, exact or from sampled sources."""

from __future__ import annotations

import math

import numpy as np

import gswitch as gs
from gswitch.errors import InvalidInput
from gswitch.verify import close


def source_mask(values, params) -> np.ndarray:
    """The ``sources`` run argument (node ids) as a 0/1 mask over the nodes."""
    n = int(params["n_nodes"])
    try:
        ids = np.unique(np.asarray(values, dtype=np.int64).ravel())
    except (TypeError, ValueError):
        raise InvalidInput("betweenness sources must be node ids") from None
    if ids.size and (ids[0] < 0 or ids[-1] >= n):
        bad = int(ids[0] if ids[0] < 0 else ids[-1])
        raise InvalidInput(f"betweenness source {bad} is out of range: the graph has {n} "
                           "nodes")
    mask = np.zeros(n)
    mask[ids] = 1.0
    return mask


def rescale(raw: np.ndarray, *, directed: bool, normalized: bool = True,
            endpoints: bool = False, sources: np.ndarray | None = None) -> np.ndarray:
    """Rescale the raw sums as networkx does: (``betweenness`` field) over ordered pairs.

    Parameters
    ----------
    raw : ndarray
        The ``betweenness`` field of a run.
    directed : bool
        Whether the graph is directed (undirected pairs count once: halved unless
        normalised).
    normalized : bool
        Divide by the number of (source, target) pairs, as networkx's ``normalized``.
    endpoints : bool
        Whether the run counted endpoints (its ``endpoints`` parameter).
    sources : ndarray of int, optional
        The sampled sources of a sampled run (``k`` sources); ``None`` for exact.

    Returns
    -------
    ndarray of float64
    """
    out = np.asarray(raw, dtype=np.float64).copy()
    n = out.size
    big_n = n if endpoints else n - 1
    if big_n < 2:
        return out
    k = None if sources is None else len(sources)
    k_source = big_n if k is None else k
    correction = 1 if directed else 2
    if k is None or endpoints:
        scale = 1 / (k_source * (big_n - 1)) if normalized else big_n / (k_source * correction)
        return out * scale
    if normalized:
        s_src = 1 / ((k_source - 1) * (big_n - 1)) if k_source > 1 else math.nan
        s_other = 1 / (k_source * (big_n - 1))
    else:
        s_src = big_n / ((k_source - 1) * correction) if k_source > 1 else math.nan
        s_other = big_n / (k_source * correction)
    scale = np.full(n, s_other)
    scale[np.asarray(sources, dtype=np.int64)] = s_src
    return out * scale


def expected_betweenness(graph: gs.Graph, source: int | None = None, *,
                         endpoints: int = 0, sources=None, **params) -> np.ndarray:
    """Raw Brandes sums by networkx (``normalized=False`` undone: ordered pairs) over
    the given sources (every node without them), on the simple graph.
    """
    import networkx as nx

    src, dst = graph.edges()
    g = nx.DiGraph()
    g.add_nodes_from(range(graph.n_nodes))
    g.add_edges_from((int(a), int(b)) for a, b in zip(src.tolist(), dst.tolist()) if a != b)
    from networkx.algorithms.centrality.betweenness import (
        _accumulate_basic,
        _accumulate_endpoints,
        _single_source_shortest_path_basic,
    )

    ids = range(graph.n_nodes) if sources is None else np.flatnonzero(sources).tolist()
    acc = dict.fromkeys(g, 0.0)
    accumulate = _accumulate_endpoints if endpoints else _accumulate_basic
    for s in ids:  # networkx's own per-source accumulation, before its rescaling
        s_list, pred, sigma, _ = _single_source_shortest_path_basic(g, s)
        acc, _ = accumulate(acc, s_list, pred, sigma, s)
    return np.array([acc[v] for v in range(graph.n_nodes)])


def levels(key, reached, like, xp):
    """Nodes in order of their level ``key`` (int32 ``order``), where each level ends in
    that order (``bound[L]``, an array like ``like``) and the deepest reached level:
    what the backward accumulation walks, deepest level first.
    """
    deepest = int(key[reached].max()) if bool(reached.any()) else 0
    order = xp.argsort(key).astype(xp.int32)
    bound = xp.zeros_like(like)
    # bound[L]: where level L ends in order (deepest + 1 <= n entries)
    bound[: deepest + 1] = xp.searchsorted(key[order], xp.arange(1, deepest + 2))
    return order, bound, deepest


def accumulate_source(fields, params, xp, reached) -> dict:
    """The host step after one source's dependencies: they join the running sums (with
    networkx's ``endpoints`` counting, ``reached`` the nodes the source reaches), and
    the next source follows while any is left.
    """
    ids = xp.flatnonzero(fields["picked"])
    out = {"done": params["done"] + 1}
    if params["done"] < ids.size:
        s = ids[params["done"]]
        delta = fields["delta"].copy()
        delta[s] = 0.0
        bc = fields["betweenness"] + delta
        if params["endpoints"]:
            bc = bc + reached  # every other reached node is a path's end ...
            bc[s] += float(reached.sum()) - 2.0  # ... and the source starts each
        out["betweenness"] = bc
    if params["done"] + 1 < ids.size:
        out["repeat"] = "next_source"
    return out


def compare_betweenness(got: np.ndarray, expected: np.ndarray) -> str | None:
    """Float64 sums of float64 path counts: ``rtol=1e-6, atol=1e-6``."""
    return close(got, expected, rtol=1e-6, atol=1e-6, what="betweenness")


@gs.algorithm(name="betweenness", reference="networkx.betweenness_centrality (unscaled)",
              simple=True, expected=expected_betweenness, compare=compare_betweenness)
class Betweenness:
    """Betweenness centrality by Brandes' algorithm, one source at a time.

    Parameters
    ----------
    sources : array of int, optional
        Source nodes (a run argument): every node by default, exact; ``k`` sampled
        nodes for the sampled estimate.
    endpoints : int
        1: count the path ends too (networkx's ``endpoints=True``); default 0.

    Returns
    -------
    betweenness : ndarray of float64
        For each node, the sum over the sources ``s`` and targets ``t`` of the share of
        shortest ``s``-``t`` paths through it: networkx's values before its rescaling
        (:func:`rescale` applies it: normalisation, undirected pairs once, sampling).

    Notes
    -----
    Per source, four parts of a staged algorithm over the simple graph (self loops and
    parallel edges dropped, as networkx counts paths):

    1. ``forward``: a BFS from the source into ``depth``;
    2. ``count``: a level-synchronous sweep from the source that adds ``sigma[u]`` to
       each successor one level deeper, so each level's path counts are complete when
       it sends (data-driven, push: the next frontier is exactly the next level);
    3. ``backward``, once per level from the deepest up: every node ``u`` of the level
       takes ``sigma[u] / sigma[v] * (1 + delta[v])`` from each successor ``v`` one
       level deeper, with an indirect, non-activating add into ``u``; host steps sort
       the nodes by depth once and hand each level to the stage;
    4. ``accumulate``: ``betweenness += delta`` (and the endpoint counts), then the next
       source.

    References
    ----------
    .. [1] Brandes, "A faster algorithm for betweenness centrality", J. Math. Sociol.
       25 (2001).
    .. [2] Brandes, Pich, "Centrality estimation in large networks", Int. J. Bifurcation
       and Chaos 17 (2007).

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 1, 1, 2], [1, 0, 2, 1])  # a path 0 - 1 - 2
    >>> gs.run("betweenness", g, backend="cpu").fields["betweenness"].tolist()
    [0.0, 2.0, 0.0]

    """

    depth = gs.NodeField("int32", init=gs.INF, output=False, doc="hops from the source")
    sigma = gs.NodeField("float64", init=0.0, output=False, doc="shortest paths")
    delta = gs.NodeField("float64", init=0.0, output=False, doc="dependency")
    betweenness = gs.NodeField("float64", init=0.0, doc="raw betweenness")
    picked = gs.NodeField("int32", output=False, doc="1 at the sources",
                          init=gs.per_node_input("sources", default=1, prepare=source_mask,
                                                 doc="source node ids"))
    order = gs.NodeField("int32", init=0, output=False, doc="nodes by depth")
    bound = gs.NodeField("int32", init=0, output=False,
                         doc="where each level ends in order (levels 0 .. deepest)")
    endpoints = gs.Param("int32", 0, low=0, high=1, doc="1: count the path ends")
    done = gs.Param("int32", 0, low=0, high=2**31 - 1, doc="sources finished")
    level = gs.Param("int32", 0, low=-1, high=2**31 - 1, doc="level the backward stage reads")

    @gs.host_step
    def next_source(fields, params, xp):
        ids = xp.flatnonzero(fields["picked"])
        if params["done"] >= ids.size:  # no source (left): nothing to start from
            return {"start": ids[:0]}
        s = ids[params["done"]]
        depth = xp.full_like(fields["depth"], fields["depth"].dtype.type(2**30))
        depth[s] = 0
        sigma = xp.zeros_like(fields["sigma"])
        sigma[s] = 1.0
        return {"start": s.reshape(1), "depth": depth, "sigma": sigma,
                "delta": xp.zeros_like(fields["delta"])}

    @gs.stage
    class forward:
        """Hops from the source."""

        start = gs.chosen_nodes()

        @gs.edge_op
        def hop(e):
            e.dst.depth.reduce_min(e.src.depth + 1)

    @gs.host_step
    def count_from_source(fields, params, xp):
        return {"start": xp.flatnonzero(fields["sigma"])}  # the source: sigma 1

    @gs.stage(config={"driving": "data", "direction": "push"},
              supports={"driving": ("data",), "direction": ("push",)})
    class count:
        """Shortest-path counts, level by level."""

        start = gs.chosen_nodes()

        @gs.edge_op
        def paths(e):
            e.only_if(e.dst.depth.eq(e.src.depth + 1))
            # activates once, when the first count reaches the node (sigma, 0 before,
            # reaches 0.5): a queue worklist then holds each node of the next level once,
            # not once per path into it
            e.dst.sigma.reduce_add(e.src.sigma, activate_above=0.5)

    @gs.host_step
    def by_depth(fields, params, xp):
        depth = fields["depth"]
        reached = depth < 2**30
        order, bound, deepest = levels(depth, reached, fields["bound"], xp)
        level = deepest - 1  # the deepest level with successors one deeper
        lo, hi = (int(bound[level - 1]), int(bound[level])) if level >= 1 else (0, 0)
        return {"order": order, "bound": bound, "level": level, "start": order[lo:hi]}

    @gs.stage(config={"driving": "data", "direction": "push"},
              supports={"driving": ("data",), "direction": ("push",)})
    class backward:
        """One level's dependencies, from the level below it."""

        start = gs.chosen_nodes()

        @gs.edge_op
        def depend(e):
            e.only_if(e.dst.depth.eq(e.src.depth + 1))
            e.dst.delta.at(e.src.id).reduce_add(
                e.src.sigma / e.dst.sigma * (1.0 + e.dst.delta), activate=False)

    @gs.host_step
    def up_a_level(fields, params, xp):
        level = params["level"] - 1
        if level < 1:
            return {"level": max(level, 0)}
        lo, hi = int(fields["bound"][level - 1]), int(fields["bound"][level])
        return {"level": level, "start": fields["order"][lo:hi], "repeat": "backward"}

    @gs.host_step
    def accumulate(fields, params, xp):
        return accumulate_source(fields, params, xp, fields["depth"] < 2**30)


SPECS = [Betweenness]


@gs.hookimpl
def gswitch_algorithms():
    return SPECS
