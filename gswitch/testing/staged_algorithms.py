"""A staged algorithm written as a user would: stages, host steps, a chosen start set.

``double_sweep`` runs a BFS from the source, lets a host step pick the farthest node it
reached, and runs a second BFS from there into another field: the two-sweep lower bound
of the diameter. The CPU and GPU suites check it against scipy.
"""

from __future__ import annotations

import gswitch as gs

__all__ = ["DoubleSweep", "FirstEdgesDepth", "StepSums", "SweepTheRest", "Walks"]


@gs.algorithm(name="double_sweep", reference="scipy.sparse.csgraph.shortest_path, twice")
class DoubleSweep:
    """Hop distances from the source, then from the farthest node the first sweep found.

    Returns
    -------
    there : ndarray of int32
        Hops from the source (``INF`` where unreached).
    back : ndarray of int32
        Hops from the farthest node reached by the first sweep (the smallest id among
        the farthest).
    """

    there = gs.NodeField("int32", init=gs.INF, at_source=0)
    back = gs.NodeField("int32", init=gs.INF)
    far = gs.Param("int32", 0, low=0, high=2**31 - 1, doc="set by pick_far")

    @gs.stage
    class forward:
        """BFS from the source into ``there``."""

        start = gs.from_source()

        @gs.edge_op
        def hop(e):
            e.dst.there.reduce_min(e.src.there + 1)

    @gs.host_step
    def pick_far(fields, params, xp):
        there = fields["there"]
        reached = xp.where(there < 2**30, there, -1)
        far = int(xp.argmax(reached))  # the smallest id among the farthest
        back = fields["back"].copy()
        back[far] = 0
        return {"far": far, "start": xp.asarray([far]), "back": back}

    @gs.stage
    class backward:
        """BFS from the farthest node into ``back``."""

        start = gs.chosen_nodes()

        @gs.edge_op
        def hop(e):
            e.dst.back.reduce_min(e.src.back + 1)


@gs.algorithm(name="sweep_the_rest", reference="scipy.sparse.csgraph.shortest_path")
class SweepTheRest:
    """Hop distances from the source, then, only where that left nodes unreached, from
    the smallest of them: a host step that ends the run (``"stop"``) when the first
    sweep reached every node.

    Returns
    -------
    there : ndarray of int32
        Hops from the source (``INF`` where unreached).
    rest : ndarray of int32
        Hops from the smallest node the first sweep left unreached (``INF`` everywhere
        where it left none).
    reached_all : ndarray of int32
        1 at every node where the first sweep reached every node, else 0.
    """

    there = gs.NodeField("int32", init=gs.INF, at_source=0)
    rest = gs.NodeField("int32", init=gs.INF)
    reached_all = gs.NodeField("int32", init=0)

    @gs.stage
    class forward:
        """BFS from the source into ``there``."""

        start = gs.from_source()

        @gs.edge_op
        def hop(e):
            e.dst.there.reduce_min(e.src.there + 1)

    @gs.host_step
    def unreached(fields, params, xp):
        left = fields["there"] >= 2**30
        if not bool(left.any()):  # what it returns with "stop" is applied first
            return {"stop": True, "reached_all": xp.ones_like(fields["reached_all"])}
        first = int(xp.argmax(left))
        rest = fields["rest"].copy()
        rest[first] = 0
        return {"start": xp.asarray([first]), "rest": rest}

    @gs.stage
    class others:
        """BFS from the smallest unreached node into ``rest``."""

        start = gs.chosen_nodes()

        @gs.edge_op
        def hop(e):
            e.dst.rest.reduce_min(e.src.rest + 1)


@gs.algorithm(name="walks", reference="numpy: (I + A^T)^k e_source", node_after_edges=True,
              max_iterations_param="steps", supports={"driving": ("topology",)},
              defaults={"driving": "topology"})
class Walks:
    """Walks of at most ``steps`` edges (a self-loop at every node) from the source: a
    Jacobi iteration ``x <- x + A^T x`` on a buffered field, which an in-place update
    (Gauss-Seidel, in whatever order the edges run) would get wrong.

    Returns
    -------
    count : ndarray of int64
        Number of such walks ending at each node.
    """

    count = gs.NodeField("int64", init=0, at_source=1, buffered=True)
    steps = gs.Param("int32", 4, low=1, high=30, doc="walk length")
    start = gs.from_source()  # topology driving sweeps every node anyway

    @gs.edge_op
    def extend(e):
        e.dst.count.reduce_add(e.src.count)


@gs.algorithm(name="step_sums", reference="closed form: every node is swept every step",
              node_after_edges=True, max_iterations_param="steps",
              supports={"driving": ("topology",)}, defaults={"driving": "topology"})
class StepSums:
    """Two step totals, read by the next step: ``stamp`` sums ``iteration + 1`` over the
    nodes (``n * (k + 1)`` in step ``k``), ``ids`` sums the node ids. Each step every
    node adds what the previous step summed, so after ``K`` steps
    ``a = n * K * (K - 1) / 2`` and ``b = (K - 1) * n * (n - 1) / 2`` everywhere; reading
    the current step's sum, or one two steps old, gives other numbers.

    Returns
    -------
    a, b : ndarray of float64
        The sums of ``stamp`` and of ``ids`` over the steps before the last.
    """

    a = gs.NodeField("float64", init=0.0)
    b = gs.NodeField("float64", init=0.0)
    hits = gs.NodeField("int64", init=0, output=False)
    steps = gs.Param("int32", 4, low=1, high=1000, doc="steps to run")
    stamp = gs.StepTotal(doc="iteration + 1, summed over the nodes")
    ids = gs.StepTotal(doc="node ids, summed")
    start = gs.all_nodes()

    @gs.edge_op
    def touch(e):
        e.dst.hits.reduce_add(1)

    @gs.node_op
    def note(n, p):
        n.a = n.a + p.stamp
        n.b = n.b + p.ids
        n.total(p.iteration + 1, into="stamp")
        n.total(n.id, into="ids")


@gs.algorithm(name="first_edges_depth", first_hit_final=True,
              reference="scipy.sparse.csgraph.shortest_path on the first k edges of each row")
class FirstEdgesDepth:
    """Hops from the source over only the first ``k`` out-edges of each node (CSR order):
    a BFS whose edge operator names a limit, ``edge_op(first="k")``.

    Returns
    -------
    depth : ndarray of int32
        Hops over such edges (``INF`` where unreached).
    """

    depth = gs.NodeField("int32", init=gs.INF, at_source=0)
    k = gs.Param("int32", 2, low=0, high=2**31 - 1, doc="out-edges each node expands")
    start = gs.from_source()

    @gs.edge_op(first="k")
    def hop(e):
        e.dst.depth.reduce_min(e.src.depth + 1)
