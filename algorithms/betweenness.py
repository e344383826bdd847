"""Betweenness centrality by Brandes' algorithm, exact or from sampled sources."""

from __future__ import annotations

import math

import numpy as np

import gswitch as gs
from gswitch.errors import InvalidInput
from gswitch.verify import close

from ._brandes_batch import fits
from .betweenness_batched import run_variant

#: ``depth`` of a node the source does not reach (an int32 infinity with room for + 1)
UNREACHED = 2**30


def source_mask(values, params) -> np.ndarray:
    """The ``sources`` run argument (node ids, or a comma-separated string of them, as
    ``--param sources=0,5,9`` gives it) as a 0/1 mask over the nodes.
    """
    n = int(params["n_nodes"])
    if isinstance(values, str):
        values = [v for v in values.replace(",", " ").split()]
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


def sampled_sources(values, params):
    """The ``sources`` of a run with ``k`` set: ``k`` distinct node ids drawn by
    ``numpy.random.default_rng(seed).choice(n, k, replace=False)`` (the same on both
    backends, both variants and the reference); ``values`` unchanged without ``k``.
    """
    k = int(params.get("k", 0) or 0)
    if not k:
        return values
    if values is not None:
        raise InvalidInput("betweenness takes sources or k, not both: sources names the "
                           "sources, k draws that many at random (with seed)")
    n = int(params["n_nodes"])
    if k > n:
        raise InvalidInput(f"betweenness k={k} is more sources than the graph's {n} nodes; "
                           f"use k <= {n}, or k=0 for every node (exact)")
    return np.random.default_rng(int(params.get("seed", 0) or 0)).choice(
        n, size=k, replace=False)


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

    picked = sampled_sources(None, {**params, "n_nodes": graph.n_nodes})
    if sources is None and picked is not None:
        sources = source_mask(picked, {"n_nodes": graph.n_nodes})
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
    what a backward accumulation walks, deepest level first (the weighted variant's).
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
              simple=True, expected=expected_betweenness, compare=compare_betweenness,
              variant="per_source", default=False,
              priority=lambda n, p: p.deepest - n.depth, priority_width=1.0,
              # RMAT-22, 4 sources on an H200 (experiments/bc_configs.py,
              # h200_s34d_bc_configs.log): 133 ms, against 197 ms host loop and 160 ms
              # persistent with twc and a queue
              backend_defaults={"gpu": {"worklist": "bitmap", "load_balance": "twc",
                                        "launch": "persistent"}})
class Betweenness:
    """Betweenness centrality by Brandes' algorithm, one source at a time, in operators.

    The ``batched`` variant (the default) gives the same sums from one traversal per 64
    sources; this one runs where a batch would not fit (more than
    ``_brandes_batch.MAX_NODES`` nodes) and whenever a config picks a strategy.

    Parameters
    ----------
    sources : array of int, optional
        Source nodes (a run argument): every node by default, exact; ``k`` sampled
        nodes for the sampled estimate.
    endpoints : int
        1: count the path ends too (networkx's ``endpoints=True``); default 0.
    k, seed : int
        With ``k`` > 0 (and no ``sources``), ``k`` sources drawn at random by
        :func:`sampled_sources` (``default_rng(seed).choice(n, k, replace=False)``):
        pass the same draw to :func:`rescale` as ``sources``.

    Returns
    -------
    betweenness : ndarray of float64
        For each node, the sum over the sources ``s`` and targets ``t`` of the share of
        shortest ``s``-``t`` paths through it: networkx's values before its rescaling
        (:func:`rescale` applies it: normalisation, undirected pairs once, sampling).

    Notes
    -----
    Per source, two stages over the simple graph (self loops and parallel edges dropped,
    as networkx counts paths), each one run of device steps:

    1. ``paths``: a level-synchronous BFS from the source that counts shortest paths as
       it goes. Step ``t``'s frontier is level ``t``: its node operator records ``t`` as
       their ``depth``, and their path counts are complete (every parent sat in the
       previous frontier). Each edge from the frontier to a node without a level yet
       (one level deeper, reached in this step or not yet) adds the source's ``sigma``
       to it; the first add pushes it into the next frontier. That one add into the
       target has a pull form, so the stage runs push, pull or direction-optimizing
       (data-driven).
    2. ``backward``: the dependencies, deepest level first, on the driving ``priority``
       with a node's key its height above the deepest level (``deepest - depth``,
       ``priority_width=1``: one level per bucket). Its first step files every reached
       node in the far set; each later data step is one level, whose nodes ``v``, their
       dependencies complete since the level below ran before, send
       ``sigma[u] / sigma[v] * (1 + delta[v])`` to each predecessor ``u`` one level up
       (on the reverse graph, with a non-activating add: the adds into one node come
       from many rows, not all from one warp). A refill step on the device brings the
       next level up.

    Host steps start a source (its fields reset), find the deepest level between the
    stages, and add the dependencies into ``betweenness`` (with the endpoint counts)
    before the next source.

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
    >>> r = gs.run("betweenness", g, backend="cpu", config={"variant": "per_source"})
    >>> r.fields["betweenness"].tolist()
    [0.0, 2.0, 0.0]

    """

    depth = gs.NodeField("int32", init=gs.INF, output=False, doc="hops from the source")
    sigma = gs.NodeField("float64", init=0.0, output=False, doc="shortest paths")
    delta = gs.NodeField("float64", init=0.0, output=False, doc="dependency")
    betweenness = gs.NodeField("float64", init=0.0, doc="raw betweenness")
    picked = gs.NodeField("int32", output=False, doc="1 at the sources",
                          init=gs.per_node_input("sources", default=1, prepare=source_mask,
                                                 derive=sampled_sources,
                                                 doc="source node ids", names="list"))
    filed = gs.NodeField("int32", init=0, output=False,
                         doc="backward: 1 once filed in the far set by level")
    ready = gs.NodeField("int32", init=0, output=False,
                         doc="backward: 1 when the node's level is being processed")
    endpoints = gs.Param("int32", 0, low=0, high=1, doc="1: count the path ends")
    k = gs.Param("int32", 0, low=0, high=2**31 - 1,
                 doc="sources drawn at random (0: every node, exact)")
    seed = gs.Param("int32", 0, low=0, high=2**31 - 1, doc="seed of the k sources' draw")
    done = gs.Param("int32", 0, low=0, high=2**31 - 1, doc="sources finished")
    deepest = gs.Param("int32", 0, low=0, high=2**31 - 1,
                       doc="the source's deepest level (set by a host step)")

    @gs.host_step
    def next_source(fields, params, xp):
        ids = xp.flatnonzero(fields["picked"])
        if params["done"] >= ids.size:  # no source (left): nothing to start from
            return {"start": ids[:0]}
        s = ids[params["done"]]
        depth = xp.full_like(fields["depth"], fields["depth"].dtype.type(UNREACHED))
        depth[s] = 0
        sigma = xp.zeros_like(fields["sigma"])
        sigma[s] = 1.0
        return {"start": s.reshape(1), "depth": depth, "sigma": sigma,
                "delta": xp.zeros_like(fields["delta"]),
                "filed": xp.zeros_like(fields["filed"])}

    @gs.stage(config={"driving": "data"}, supports={"driving": ("data",)})
    class paths:
        """Hops and shortest-path counts from the source, level by level."""

        start = gs.chosen_nodes()

        @gs.node_op
        def level(n, p):
            n.depth = p.iteration  # step t's frontier is level t

        @gs.edge_op
        def count(e, p):
            # from a node of this level to one not yet given a level: one level deeper
            # (reached in this step or not yet); the first count pushes it (the next
            # frontier), once. One add into the target: it also pulls.
            e.only_if(e.src.depth.eq(p.iteration) & (e.dst.depth >= UNREACHED))
            e.dst.sigma.reduce_add(e.src.sigma, activate_above=0.5)

    @gs.host_step
    def by_depth(fields, params, xp):
        reached = fields["depth"] < UNREACHED
        deepest = int(xp.where(reached, fields["depth"], 0).max()) if reached.size else 0
        return {"deepest": deepest, "start": reached}

    @gs.stage(config={"driving": "priority", "direction": "push"},
              supports={"driving": ("priority",), "direction": ("push",)}, reverse=True)
    class backward:
        """Dependencies, one level per step from the deepest up, sent to predecessors."""

        start = gs.chosen_nodes()

        @gs.node_op
        def file(n, p):
            first = p.iteration.eq(0)
            # step 0 only files the reached nodes by level; later steps are levels
            n.filed.reduce_add(gs.where(first, 1, 0), activate=True)
            n.ready = gs.where(first, 0, 1)

        @gs.edge_op
        def depend(e):
            # on the reverse graph: e.src is a node of the level, e.dst a predecessor
            e.only_if(e.src.ready.eq(1) & e.dst.depth.eq(e.src.depth - 1))
            e.dst.delta.reduce_add(e.dst.sigma / e.src.sigma * (1.0 + e.src.delta),
                                   activate=False)

    @gs.host_step
    def accumulate(fields, params, xp):
        return accumulate_source(fields, params, xp, fields["depth"] < UNREACHED)


@gs.algorithm(name="betweenness", reference="networkx.betweenness_centrality (unscaled)",
              simple=True, expected=expected_betweenness, compare=compare_betweenness,
              variant="batched", direct=run_variant, default_if=fits)
class BatchedBetweenness:
    """Betweenness centrality by batched Brandes: 64 sources per traversal, array code.

    Parameters
    ----------
    sources : array of int, optional
        Source nodes (a run argument): every node by default, exact; ``k`` sampled
        nodes for the sampled estimate. Repeated ids count once.
    endpoints : int
        1: count the path ends too (networkx's ``endpoints=True``); default 0.
    k, seed : int
        ``k`` > 0 (without ``sources``): ``k`` sources drawn at random, as the
        per-source variant draws them (:func:`sampled_sources`).

    Returns
    -------
    betweenness : ndarray of float64
        The per-source variant's sums (networkx's values before its rescaling;
        :func:`rescale` applies it), equal within ``compare_betweenness``'s tolerance
        (float64 sums added in another order).

    Raises
    ------
    InvalidInput
        A source out of range or not a node id, or an ``endpoints`` other than 0 or 1.
    InvalidConfig
        A config that picks a strategy together with ``variant=batched``: no strategy
        applies to array code.

    Notes
    -----
    Why array code and not the operator language (the escape hatch of ``direct=`` on
    :func:`gswitch.algorithm`): a batch keeps 64 path counts and 64 dependencies per
    node, one per source, and a warp adds them lane by lane. The language's fields hold
    one value per node (or a 64-bit set), so it can state the traversal's sets but not
    the per-source counts that ride on them. The traversal is
    :func:`gswitch.algorithms.betweenness_batched.betweenness`: on the GPU a few CUDA
    kernels (``_betweenness_gpu.SOURCE``, compiled by CuPy on first use and with nvcc in
    the compile suite), on the CPU the same levels in NumPy.

    It is the default on both backends, for graphs of at most
    ``_brandes_batch.MAX_NODES`` nodes (one batch takes 1 KiB a node); larger graphs run
    ``per_source``. No strategy applies: every axis stays at its default, the tuner
    searches this variant against the per-source one without crossing it with
    strategies, and a config that picks a strategy (without ``variant``) runs
    ``per_source``. The statistics count levels as ``iterations`` and the edges the
    levels scanned as ``edges_processed``; ``batches`` says how many traversals ran.

    References
    ----------
    .. [1] Brandes, "A faster algorithm for betweenness centrality", J. Math. Sociol.
       25 (2001).
    .. [2] Then et al., "The more the merrier: efficient multi-source graph traversal",
       VLDB 2015.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 1, 1, 2], [1, 0, 2, 1])  # a path 0 - 1 - 2
    >>> r = gs.run("betweenness", g, backend="cpu")
    >>> r.fields["betweenness"].tolist(), r.stats["variant"]
    ([0.0, 2.0, 0.0], 'batched')

    """

    betweenness = gs.NodeField("float64", init=0.0, doc="raw betweenness")
    picked = gs.NodeField("int32", output=False, doc="1 at the sources",
                          init=gs.per_node_input("sources", default=1, prepare=source_mask,
                                                 derive=sampled_sources,
                                                 doc="source node ids", names="list"))
    endpoints = gs.Param("int32", 0, low=0, high=1, doc="1: count the path ends")
    k = gs.Param("int32", 0, low=0, high=2**31 - 1,
                 doc="sources drawn at random (0: every node, exact)")
    seed = gs.Param("int32", 0, low=0, high=2**31 - 1, doc="seed of the k sources' draw")


SPECS = [BatchedBetweenness, Betweenness]


@gs.hookimpl
def gswitch_algorithms():
    return SPECS
