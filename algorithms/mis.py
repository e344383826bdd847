"""Maximal independent set by Luby's algorithm, with priorities hashed from a seed."""

from __future__ import annotations

import numpy as np

import gswitch as gs

_REFERENCE = ("invariants: independent and maximal in the symmetrised graph, self-loops "
              "ignored (networkx.maximal_independent_set returns another such set)")

#: what a neighbour that joined the set adds to ``higher``: more than any count of
#: undecided neighbours can reach
_BLOCKED = 2**32


def expected_neighbours(graph: gs.Graph, source: int | None = None,
                        **params) -> np.ndarray:
    """The reference of an answer that is not unique: the symmetrised graph's adjacency,
    self-loops left out, packed into one int64 array ``[n, indptr (n + 1), indices]``,
    against which :func:`compare_independent_maximal` checks the two invariants.
    """
    g = graph.symmetrize()
    src, dst = g.edges()
    keep = src != dst
    indptr = np.zeros(g.n_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(src[keep], minlength=g.n_nodes), out=indptr[1:])
    return np.concatenate([[g.n_nodes], indptr, dst[keep]]).astype(np.int64)


def compare_independent_maximal(got: np.ndarray, expected: np.ndarray) -> str | None:
    """``None`` when ``got`` (one 0/1 value per node) marks an independent set that is
    maximal in the adjacency ``expected`` (:func:`expected_neighbours`); else the first
    violation: a value other than 0 or 1, an edge with both ends in the set, or a node
    outside the set none of whose neighbours is in it.
    """
    got, expected = np.asarray(got), np.asarray(expected)
    n = int(expected[0])
    if got.shape != (n,):
        return f"shape {got.shape} != reference {(n,)}"
    indptr, dst = expected[1:n + 2], expected[n + 2:]
    bad = np.flatnonzero((got != 0) & (got != 1))
    if bad.size:
        return f"node {int(bad[0])} holds {got[bad[0]]}, not 0 or 1"
    src = np.repeat(np.arange(n), np.diff(indptr))
    inside = got == 1
    both = np.flatnonzero(inside[src] & inside[dst])
    if both.size:
        e = int(both[0])
        return (f"not independent: edge {int(src[e])} - {int(dst[e])} has both ends in the "
                "set")
    covered = inside.copy()
    covered[src[inside[dst]]] = True
    lonely = np.flatnonzero(~covered)
    if lonely.size:
        return (f"not maximal: node {int(lonely[0])} is outside the set and so is every "
                f"neighbour of it ({lonely.size} such nodes)")
    return None


def _priority(n, p):
    # a bijection of the node id for each seed (an odd multiplier, an xor with a seed
    # word), then MurmurHash3's finaliser, a bijection too: the priorities of distinct
    # nodes are distinct, so no two neighbours ever tie
    x = (n.id.astype("uint32") * 0x9E3779B1) ^ (p.seed * 0x85EBCA77 + 0x27D4EB2F)
    x = x ^ (x >> 16)
    x = x * 0x85EBCA6B
    x = x ^ (x >> 13)
    x = x * 0xC2B2AE35
    return x ^ (x >> 16)


@gs.algorithm(name="maximal_independent_set", symmetric=True, reference=_REFERENCE,
              expected=expected_neighbours, compare=compare_independent_maximal,
              finalize_on_device=True,
              supports={"driving": ("data", "topology", "temporal"), "renumber": ("none",)},
              defaults={"driving": "data", "direction": "push"})
class Luby:
    """A maximal independent set by Luby's algorithm (random priorities, in rounds).

    Parameters
    ----------
    seed : int
        Seed of the node priorities, ``0 .. 2**32 - 1`` (default 0). The set is a
        function of the graph and the seed, the same under every engine and strategy.
        The priorities hash the node ids, so a renumbered copy would draw another set:
        this formulation supports ``renumber=none`` only.

    Returns
    -------
    in_set : ndarray of int32
        ``1`` for the nodes of the set, ``0`` for the others. No edge joins two nodes of
        the set, and every node outside it has a neighbour inside.

    Notes
    -----
    The graph is symmetrised; a self-loop does not keep its node out of the set, as in
    networkx's ``maximal_independent_set``. Every node gets a 32-bit priority hashed
    from its id and the seed with integer operations of the operator language
    (multiply, xor, shift on ``uint32``; distinct for distinct ids). In each step every
    undecided node tells each undecided neighbour of lower priority, with an atomic add
    into the neighbour's ``higher``, and a node that joined the set in the step tells
    each undecided neighbour that it is blocked (a large add). In the next step a node
    that heard nothing joins the set, a blocked one leaves, and the others reset
    ``higher`` and stay active (the node operator activates them). Two neighbours never
    join in one step, since the lower one heard from the higher; the undecided node of
    highest priority always joins, so every step decides at least one node, and in
    expectation a constant fraction of the edges goes each round [1]_. Work shrinks
    with the undecided nodes under data driving; topology driving sweeps every node
    and gives the same set.

    References
    ----------
    .. [1] Luby, "A simple parallel algorithm for the maximal independent set problem",
       SIAM J. Computing 15(4), 1986.
    .. [2] Blelloch, Fineman, Shun, "Greedy sequential maximal independent set and
       matching are parallel on average", SPAA 2012.

    Examples
    --------
    >>> import gswitch as gs
    >>> from gswitch.testing.reference import compare, reference
    >>> g = gs.Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 4])
    >>> got = gs.run("maximal_independent_set", g, seed=1).fields["in_set"]
    >>> compare("maximal_independent_set", got, reference("maximal_independent_set", g))
    >>> int(got.sum()) in (2, 3)
    True

    """

    in_set = gs.NodeField("int32", init=0,
                          doc="1 in the set, -1 out of it, 0 undecided (0/1 when done)")
    prio = gs.NodeField("uint32", init=0, output=False, doc="hashed priority")
    higher = gs.NodeField("int64", init=0, output=False,
                          doc="undecided neighbours of higher priority, plus blocks")
    waiting = gs.NodeField("int32", init=0, output=False,
                           doc="steps the node has been undecided")
    seed = gs.Param("uint32", 0, low=0, high=2**32 - 1, doc="seed of the priorities")
    start = gs.all_nodes()

    @gs.node_op
    def decide(n, p):
        ready = n.in_set.eq(0) & (n.waiting > 0)  # it has heard a step of its neighbours
        join = ready & n.higher.eq(0)
        leave = ready & (n.higher >= _BLOCKED)
        n.prio = gs.where(n.waiting.eq(0), _priority(n, p), n.prio)
        n.in_set = gs.where(join, 1, gs.where(leave, -1, n.in_set))
        n.higher = 0
        # reads the state just stored: a node still undecided stays active
        n.waiting.reduce_add(gs.where(n.in_set.eq(0), 1, 0), activate=True)

    @gs.edge_op
    def compete(e):
        joined = e.src.in_set.eq(1)
        e.only_if(e.dst.in_set.eq(0) & e.src.id.ne(e.dst.id)
                  & (joined | (e.src.in_set.eq(0) & (e.src.prio > e.dst.prio))))
        # activate=False: a node in the next active set is there by its own decide; a
        # queue worklist would otherwise hold it once per message, and a second decide
        # in one step would read ``higher`` just reset and join beside a neighbour
        e.dst.higher.reduce_add(gs.where(joined, _BLOCKED, 1), activate=False)

    @staticmethod
    def finalize(fields, params):
        s = fields["in_set"]
        np.maximum(s, 0, out=s)  # out of the set (-1) -> 0
        return fields


SPEC = Luby


@gs.hookimpl
def gswitch_algorithms():
    return [SPEC]
