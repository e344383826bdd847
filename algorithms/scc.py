"""Strongly connected components of a directed graph: trimming, then colouring or
forward-backward searches.
"""

from __future__ import annotations

import numpy as np
from gswitch.algorithms.cc import compare_components

import gswitch as gs
from gswitch.verify import canonical_labels

_REFERENCE = "scipy.sparse.csgraph.connected_components(connection='strong')"


def expected_strong(graph: gs.Graph, source: int | None = None, **params) -> np.ndarray:
    """Strong components by scipy, each node labelled with the smallest id of its
    component.
    """
    import scipy.sparse.csgraph as csgraph

    if graph.n_nodes == 0:
        return np.zeros(0, dtype=np.int64)
    _, labels = csgraph.connected_components(graph.to_scipy(), directed=True,
                                             connection="strong")
    return canonical_labels(labels)


def directed_only(graph: gs.Graph) -> str | None:
    """Why an undirected graph gets no strong components here (they are its connected
    components: ``cc``).
    """
    if not graph.directed:
        return ("strongly connected components need a directed graph; on an undirected "
                "graph they are the connected components: run cc instead")
    return None


# ----------------------------------------------------------------------------- operators
def _mark_neighbours(e):
    # which remaining nodes still have a remaining in-neighbour and out-neighbour
    e.only_if((e.src.scc < 0) & (e.dst.scc < 0) & e.src.id.ne(e.dst.id))
    e.dst.has_in.reduce_max(1, activate=False)
    e.src.has_out.at(e.src.id).reduce_max(1, activate=False)


def _mark_within_parts(e):
    # as _mark_neighbours, counting only neighbours of the same partition: a component
    # never spans two
    e.only_if((e.src.scc < 0) & (e.dst.scc < 0) & e.src.id.ne(e.dst.id)
              & e.src.part.eq(e.dst.part))
    e.dst.has_in.reduce_max(1, activate=False)
    e.src.has_out.at(e.src.id).reduce_max(1, activate=False)


def _trim(n):
    # a remaining node without a remaining in- or out-neighbour is a component alone
    alone = (n.scc < 0) & ((n.has_in < 1) | (n.has_out < 1))
    n.scc = gs.where(alone, n.id, n.scc)
    n.has_in = 0
    n.has_out = 0


def _colour(e):
    # colour: the smallest remaining id that reaches a node through remaining nodes
    e.only_if((e.src.scc < 0) & (e.dst.scc < 0))
    e.dst.colour.reduce_min(e.src.colour)


def _backward(e):
    # on the reverse graph: e.dst has an edge into e.src, which reaches its root; of the
    # root's colour, it reaches the root (which reaches it) and joins its component
    e.only_if((e.dst.scc < 0) & e.dst.colour.eq(e.src.colour))
    e.dst.bw.reduce_max(e.src.bw)


def _forward_reach(e):
    # the pivot's id spreads to the remaining nodes of its partition it reaches
    e.only_if((e.dst.scc < 0) & e.dst.part.eq(e.src.part))
    e.dst.fw.reduce_max(e.src.fw)


def _backward_reach(e):
    # on the reverse graph: the nodes of the pivot's partition that reach it
    e.only_if((e.dst.scc < 0) & e.dst.part.eq(e.src.part))
    e.dst.bw.reduce_max(e.src.bw)


def _remaining(fields, xp):
    return fields["scc"] < 0


def _trim_passes() -> gs.Param:
    return gs.Param("int32", 8, low=1, high=2**31 - 1, doc="trimming sweeps at most per round")


def _left() -> gs.Param:
    return gs.Param("int32", 0, low=0, high=2**31 - 1,
                    doc="remaining nodes before the sweep (set by the host steps)")


def _passes() -> gs.Param:
    return gs.Param("int32", 0, low=0, high=2**31 - 1,
                    doc="trimming sweeps so far this round (set by the host steps)")


def _first_sweep(remaining) -> dict:
    """A round's first trimming sweep, over the ``remaining`` nodes."""
    return {"start": remaining, "left": int(remaining.sum()), "passes": 0}


def _begin(fields, params, xp):
    return _first_sweep(_remaining(fields, xp))


def _round(remaining) -> dict:
    """Back to trimming for a new round over the ``remaining`` nodes."""
    return {"repeat": "trimming", **_first_sweep(remaining)}


#: A trimming sweep that assigns fewer than 1 / _TRIM_GAIN of the nodes it swept ends
#: the round's trimming: another would cost a pass over the edges for a few nodes,
#: which the colouring takes anyway.
_TRIM_GAIN = 16


def _trim_again(fields, params, xp):
    """After a trimming sweep: the answer that sweeps again while sweeps trim enough (at
    least 1 / ``_TRIM_GAIN`` of the nodes, at most ``trim_passes`` sweeps a round), else
    ``None``; and the remaining nodes and their count.
    """
    remaining = _remaining(fields, xp)
    now = int(remaining.sum())
    left = int(params["left"])
    passes = int(params["passes"]) + 1
    if 0 < now and _TRIM_GAIN * (left - now) >= left and passes < int(params["trim_passes"]):
        return {"repeat": "trimming", "start": remaining, "left": now,
                "passes": passes}, remaining, now
    return None, remaining, now


def _smallest_per_group(key, keep, xp):
    """For every node where ``keep`` holds, the smallest such node id with its ``key``
    (int32; -1 elsewhere): array operations only, so it runs where the fields are.
    """
    n = keep.size
    out = xp.full(n, -1, dtype=xp.int32)
    ids = xp.flatnonzero(keep)
    if ids.size == 0:
        return out
    packed = xp.sort(key[ids].astype(xp.int64) * n + ids)
    group = packed // n
    first = xp.ones(packed.size, dtype=bool)
    first[1:] = group[1:] != group[:-1]
    smallest = (packed % n)[first]
    run = xp.cumsum(first) - 1
    out[packed % n] = smallest[run].astype(xp.int32)
    return out


@gs.algorithm(name="scc", reference=_REFERENCE, variant="coloring",
              expected=expected_strong, compare=compare_components,
              check_graph=directed_only,
              supports={"direction": ("push",)})
class ColouringComponents:
    """Strongly connected components by trimming and colouring.

    Returns
    -------
    scc : ndarray of int32
        For every node, the smallest node id of its strongly connected component.

    Raises
    ------
    InvalidInput
        If the graph is undirected (its strong components are its connected components:
        run ``cc``).

    Notes
    -----
    Rounds of three parts over the nodes not yet assigned ("remaining"):

    1. ``trimming``: a remaining node with no remaining in-neighbour or no remaining
       out-neighbour is a component of its own (self-loops aside). One sweep marks both
       kinds of neighbour with non-activating ``max`` reductions (the out-neighbour mark
       through ``.at()`` on the edge's source) and assigns the lonely nodes; the sweep is
       repeated while it assigns at least 1/16 of the nodes it swept, at most
       ``trim_passes`` times a round (a sweep that trims a few nodes costs as much as
       one that trims many, and the colouring takes the few). Where it assigns every
       node, the run ends there (the host step returns ``"stop"``).
    2. ``colouring``: every remaining node starts with its own id as colour and offers it
       along its out-edges with an atomic ``min`` to remaining nodes: a node's colour
       becomes the smallest remaining id that reaches it. A node whose colour is its own
       id is a root: nothing smaller reaches it.
    3. ``backward_search``: the component of root ``r`` is the set of nodes of colour
       ``r`` that reach ``r``. A search from every root at once on the reverse graph
       (``stage(reverse=True)``: pushes walk in-edges) spreads ``r`` into ``bw`` over the
       edges between nodes of one colour; the nodes it reaches join ``r``'s component.

    Labels are the components' smallest ids (every member reaches the root and is
    reached by it, so no member is smaller than the root), whatever the interleaving of
    the monotone reductions. Rounds repeat while nodes remain; each assigns at least the
    component of the smallest remaining id. A chain of components (a long path) costs
    one round per component that trimming cannot remove.

    References
    ----------
    .. [1] Orzan, "On distributed verification and verified distribution", PhD thesis,
       Vrije Universiteit Amsterdam (2004): colouring.
    .. [2] McLendon, Hendrickson, Plimpton, Rauchwerger, "Finding strongly connected
       components in distributed graphs", JPDC 65 (2005): trimming.
    .. [3] Hong, Rodia, Olukotun, "On fast parallel detection of strongly connected
       components (SCC) in small-world graphs", SC 2013.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 1, 2, 3], [1, 2, 0, 2], n_nodes=5)
    >>> gs.run("scc", g, backend="cpu").fields["scc"].tolist()
    [0, 0, 0, 3, 4]

    """

    scc = gs.NodeField("int32", init=-1, ids="min_label",
                       doc="smallest id of the strong component (-1 until assigned)")
    colour = gs.NodeField("int32", init=gs.NODE_ID, output=False,
                          doc="smallest remaining id that reaches the node")
    bw = gs.NodeField("int32", init=-1, output=False,
                      doc="root the node reaches within its colour (-1: none)")
    has_in = gs.NodeField("int32", init=0, output=False, doc="1: a remaining in-neighbour")
    has_out = gs.NodeField("int32", init=0, output=False,
                           doc="1: a remaining out-neighbour")
    trim_passes = _trim_passes()
    left = _left()
    passes = _passes()
    begin = gs.host_step(_begin)

    @gs.stage(node_after_edges=True, supports={"direction": ("push",)})
    class trimming:
        """One sweep: mark remaining neighbours, assign the nodes that lack either."""

        start = gs.chosen_nodes()
        mark = gs.edge_op(_mark_neighbours)
        trim = gs.node_op(_trim)

    @gs.host_step
    def after_trim(fields, params, xp):
        again, remaining, now = _trim_again(fields, params, xp)
        if again is not None:
            return again
        if now == 0:  # trimming assigned every node: no colouring, no search
            return {"stop": True}
        ids = xp.arange(remaining.size, dtype=xp.int32)
        return {"colour": xp.where(remaining, ids, fields["colour"]), "start": remaining,
                "left": now}

    @gs.stage(supports={"direction": ("push",)})
    class colouring:
        """Smallest remaining id that reaches each remaining node."""

        start = gs.chosen_nodes()
        spread = gs.edge_op(_colour)

    @gs.host_step
    def roots(fields, params, xp):
        remaining = _remaining(fields, xp)
        ids = xp.arange(remaining.size, dtype=xp.int32)
        root = remaining & (fields["colour"] == ids)
        return {"bw": xp.where(root, ids, -1).astype(xp.int32), "start": root}

    @gs.stage(reverse=True, supports={"direction": ("push",)})
    class backward_search:
        """From every root at once, over in-edges: the nodes of its colour that reach it."""

        start = gs.chosen_nodes()
        join = gs.edge_op(_backward)

    @gs.host_step
    def next_round(fields, params, xp):
        remaining = _remaining(fields, xp)
        joined = remaining & (fields["bw"] >= 0)
        scc = xp.where(joined, fields["bw"], fields["scc"])
        remaining &= ~joined
        if not bool(remaining.any()):
            return {"scc": scc}
        return {"scc": scc, **_round(remaining)}

@gs.algorithm(name="scc", reference=_REFERENCE, variant="forward_backward",
              default=False, expected=expected_strong, compare=compare_components,
              check_graph=directed_only, supports={"direction": ("push",)})
class ForwardBackwardComponents:
    """Strongly connected components by trimming and forward-backward searches.

    Returns
    -------
    scc : ndarray of int32
        For every node, the smallest node id of its strongly connected component.

    Raises
    ------
    InvalidInput
        If the graph is undirected (its strong components are its connected components:
        run ``cc``).

    Notes
    -----
    The remaining nodes are split into partitions (``part``: the smallest id of the
    partition; one partition at first); no component spans two. Rounds of:

    1. ``trimming``: a remaining node without a remaining in- or out-neighbour in its
       own partition is a component alone, repeated while a sweep assigns at least 1/16
       of the nodes it swept (at most ``trim_passes`` sweeps a round); then every
       partition's pivot is its smallest remaining id (or, where trimming assigned
       every node, the run ends).
    2. ``forward``: a data-driven search from every pivot at once, within partitions:
       ``fw`` becomes the pivot's id on the nodes it reaches.
    3. ``backward``: the same on the reverse graph (``stage(reverse=True)``) into ``bw``:
       the nodes that reach the pivot.
    4. ``split`` (host step): the nodes both searches reached are the pivot's component,
       labelled with the pivot (its smallest id). The others of the partition fall into
       three new partitions, reached forward only, backward only, or neither, as no
       component crosses between them; all partitions go on at once (the colouring
       trick of Fleischer, Hendrickson and Pinar's recursion).

    Each round assigns the component of every partition's pivot. Few rounds on graphs
    with a giant component; one round per component along a chain of them.

    References
    ----------
    .. [1] Fleischer, Hendrickson, Pinar, "On identifying strongly connected components
       in parallel", IPDPS Workshops 2000.
    .. [2] McLendon, Hendrickson, Plimpton, Rauchwerger, "Finding strongly connected
       components in distributed graphs", JPDC 65 (2005): trimming.
    .. [3] Barnat, Bauch, Brim, Ceska, "Computing strongly connected components in
       parallel on CUDA", IPDPS 2011: partitions searched at once.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 1, 2, 3], [1, 2, 0, 2], n_nodes=5)
    >>> gs.run("scc", g, backend="cpu",
    ...        config={"variant": "forward_backward"}).fields["scc"].tolist()
    [0, 0, 0, 3, 4]

    """

    scc = gs.NodeField("int32", init=-1, ids="min_label",
                       doc="smallest id of the strong component (-1 until assigned)")
    part = gs.NodeField("int32", init=0, output=False,
                        doc="partition: its smallest remaining id")
    fw = gs.NodeField("int32", init=-1, output=False,
                      doc="pivot that reaches the node (-1: none)")
    bw = gs.NodeField("int32", init=-1, output=False,
                      doc="pivot the node reaches (-1: none)")
    has_in = gs.NodeField("int32", init=0, output=False,
                          doc="1: a remaining in-neighbour in the partition")
    has_out = gs.NodeField("int32", init=0, output=False,
                           doc="1: a remaining out-neighbour in the partition")
    trim_passes = _trim_passes()
    left = _left()
    passes = _passes()
    begin = gs.host_step(_begin)

    @gs.stage(node_after_edges=True, supports={"direction": ("push",)})
    class trimming:
        """One sweep: mark remaining neighbours in the partition, assign the lonely."""

        start = gs.chosen_nodes()
        mark = gs.edge_op(_mark_within_parts)
        trim = gs.node_op(_trim)

    @gs.host_step
    def pivots(fields, params, xp):
        again, remaining, now = _trim_again(fields, params, xp)
        if again is not None:
            return again
        if now == 0:  # trimming assigned every node: no searches
            return {"stop": True}
        part = _smallest_per_group(fields["part"], remaining, xp)
        ids = xp.arange(remaining.size, dtype=xp.int32)
        pivot = remaining & (part == ids)
        mark = xp.where(pivot, ids, -1).astype(xp.int32)
        return {"part": part, "fw": mark, "bw": mark, "start": pivot, "left": now}

    @gs.stage(supports={"direction": ("push",)})
    class forward:
        """Every pivot's id to the nodes of its partition it reaches."""

        start = gs.chosen_nodes()
        reach = gs.edge_op(_forward_reach)

    @gs.host_step
    def from_pivots(fields, params, xp):
        return {"start": fields["bw"] >= 0}  # only the pivots so far

    @gs.stage(reverse=True, supports={"direction": ("push",)})
    class backward:
        """Every pivot's id to the nodes of its partition that reach it."""

        start = gs.chosen_nodes()
        reach = gs.edge_op(_backward_reach)

    @gs.host_step
    def split(fields, params, xp):
        remaining = _remaining(fields, xp)
        fw, bw = fields["fw"] >= 0, fields["bw"] >= 0
        both = remaining & fw & bw
        scc = xp.where(both, fields["part"], fields["scc"])
        remaining &= ~both
        if not bool(remaining.any()):
            return {"scc": scc}
        key = fields["part"].astype(xp.int64) * 4 + fw + 2 * bw.astype(xp.int64)
        return {"scc": scc, "part": _smallest_per_group(key, remaining, xp),
                **_round(remaining)}


SPEC = ColouringComponents
VARIANTS = [ColouringComponents, ForwardBackwardComponents]


@gs.hookimpl
def gswitch_algorithms():
    return VARIANTS
