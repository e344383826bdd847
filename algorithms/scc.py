"""Strongly connected components of a directed graph: trimming and colouring."""

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
    # a remaining node with an edge into its colour's component belongs to it (it reaches
    # the root, which reaches it): the backward search from each root within its colour
    e.only_if((e.src.scc < 0) & e.dst.scc.eq(e.src.colour))
    e.src.scc.at(e.src.id).reduce_max(e.src.colour)


def _remaining(fields, xp):
    return fields["scc"] < 0


@gs.algorithm(name="scc", reference=_REFERENCE, variant="coloring",
              expected=expected_strong, compare=compare_components,
              check_graph=directed_only,
              supports={"direction": ("push",)})
class StrongComponents:
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
       repeated while it trims, at most ``trim_passes`` times a round.
    2. ``colouring``: every remaining node starts with its own id as colour and offers it
       along its out-edges with an atomic ``min`` to remaining nodes: a node's colour
       becomes the smallest remaining id that reaches it. A node whose colour is its own
       id is a root: nothing smaller reaches it.
    3. ``backward_search``: the component of root ``r`` is the set of nodes of colour ``r`` that
       reach ``r``. Every remaining node with an edge into an assigned node labelled with
       its own colour joins (``max`` of its colour into its label, through ``.at()``),
       until nothing joins: a backward search from every root at once, within colours.

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
    has_in = gs.NodeField("int32", init=0, output=False, doc="1: a remaining in-neighbour")
    has_out = gs.NodeField("int32", init=0, output=False,
                           doc="1: a remaining out-neighbour")
    trim_passes = gs.Param("int32", 8, low=1, high=2**31 - 1,
                           doc="trimming sweeps at most per round")
    left = gs.Param("int32", 0, low=0, high=2**31 - 1,
                    doc="remaining nodes before the sweep (set by the host steps)")
    passes = gs.Param("int32", 0, low=0, high=2**31 - 1,
                      doc="trimming sweeps so far this round (set by the host steps)")

    @gs.host_step
    def begin(fields, params, xp):
        remaining = _remaining(fields, xp)
        return {"start": remaining, "left": int(remaining.sum()), "passes": 0}

    @gs.stage(node_after_edges=True, supports={"direction": ("push",)})
    class trimming:
        """One sweep: mark remaining neighbours, assign the nodes that lack either."""

        start = gs.chosen_nodes()
        mark = gs.edge_op(_mark_neighbours)
        trim = gs.node_op(_trim)

    @gs.host_step
    def after_trim(fields, params, xp):
        remaining = _remaining(fields, xp)
        now = int(remaining.sum())
        passes = int(params["passes"]) + 1
        if 0 < now < int(params["left"]) and passes < int(params["trim_passes"]):
            return {"repeat": "trimming", "start": remaining, "left": now, "passes": passes}
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
        return {"scc": xp.where(root, ids, fields["scc"]), "start": remaining & ~root}

    @gs.stage(supports={"driving": ("subset",), "direction": ("push",)},
              config={"driving": "subset"})
    class backward_search:
        """Remaining nodes join the component of their colour's root, to a fixpoint."""

        start = gs.chosen_nodes()
        join = gs.edge_op(_backward)

    @gs.host_step
    def next_round(fields, params, xp):
        remaining = _remaining(fields, xp)
        if not bool(remaining.any()):
            return None
        return {"repeat": "trimming", "start": remaining, "left": int(remaining.sum()),
                "passes": 0}


SPEC = StrongComponents
VARIANTS = [StrongComponents]


@gs.hookimpl
def gswitch_algorithms():
    return VARIANTS
