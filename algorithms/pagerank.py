"""PageRank: data-driven residual pushing, and a Jacobi power iteration over in-edges."""

from __future__ import annotations

import numpy as np

import gswitch as gs
from gswitch.arrayops import divide_by_sum
from gswitch.verify import l1_within

#: Allowed L1 distance between a PageRank vector and the reference.
L1_TOLERANCE = 1e-4


def expected_ranks(graph: gs.Graph, source: int | None = None, *, alpha: float = 0.85,
                   **params) -> np.ndarray:
    """PageRank by scipy power iteration, with networkx's definition and stopping rule.

    As :func:`networkx.pagerank` (``tol=1e-12``): parallel edges count with multiplicity,
    rows are normalised by out-degree, dangling nodes spread their rank uniformly and the
    iteration stops when the L1 change falls below ``n * tol``. Building a networkx graph
    first takes minutes on graphs of millions of nodes; this takes seconds. The run's
    ``tolerance`` and ``max_iterations`` are the engine's business, not the reference's.
    """
    alpha = float(alpha)
    n = graph.n_nodes
    if n == 0:
        return np.zeros(0)
    # parallel edges stay separate entries; products and row sums count each of them
    import scipy.sparse as sp  # here: importing it costs 0.4 s, and a GPU run needs none

    a = sp.csr_array((np.ones(graph.n_edges), graph.indices, graph.indptr), shape=(n, n))
    out = np.asarray(a.sum(axis=1)).ravel()
    dangling = out == 0
    scale = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, out))
    at = (sp.diags_array(scale) @ a).T.tocsr()
    x = np.full(n, 1.0 / n)
    tol = 1e-12
    for _ in range(10000):
        last = x
        x = alpha * (at @ x + x[dangling].sum() / n) + (1 - alpha) / n
        if np.abs(x - last).sum() < n * tol:
            return x
    raise RuntimeError("reference PageRank did not converge in 10000 iterations")


def compare_ranks(got: np.ndarray, expected: np.ndarray) -> str | None:
    """L1 distance to the reference at most :data:`L1_TOLERANCE`."""
    return l1_within(got, expected, L1_TOLERANCE)


def pagerank_spec(residual_dtype: str = "float64", name: str = "pagerank",
                  default: bool = True) -> gs.AlgorithmSpec:
    """The PageRank algorithm with its residual held in ``residual_dtype``.

    The registered ``pagerank`` holds it in float64; ``benchmarks/ab_pagerank_residual.py``
    builds the float32 variant under another name to measure what that costs.

    Parameters
    ----------
    residual_dtype : str
        Field dtype of the unpushed mass (``"float64"`` or ``"float32"``).
    name : str
        Registry name of the returned algorithm.
    default : bool
        Whether this formulation is its name's default (the built-in ``pagerank``
        defaults to ``power_pull``).

    Returns
    -------
    AlgorithmSpec
        The algorithm, not registered (the module's hook registers ``SPEC``).
    """

    @gs.algorithm(name=name, max_iterations_param="max_iterations",
                  reference="networkx.pagerank", finalize_on_device=True,
                  variant="residual_push", default=default, expected=expected_ranks,
                  compare=compare_ranks)
    class PageRank:
        """PageRank computed by pushing residuals (Gauss-Seidel style push PageRank).

        Parameters
        ----------
        alpha : float
            Damping factor (probability of following an edge), default 0.85.
        tolerance : float
            Total residual mass allowed to remain unpushed; a node is active while its
            residual is at least ``tolerance / n_nodes``. Default 1e-6.
        max_iterations : int
            Upper bound on super-steps, default 10000.

        Returns
        -------
        rank : ndarray of float32
            PageRank of every node; sums to 1.

        Notes
        -----
        Each node holds a rank and a residual (initially ``(1 - alpha) / n``). An active
        node takes its whole residual with an atomic exchange, adds it to its rank and
        sends ``alpha * r / out_degree`` to each out-neighbour with ``reduce_add``; a
        neighbour becomes active when its residual crosses the threshold. Mass sent into
        dangling nodes (no out-edges) leaves the system; the fixpoint is then proportional
        to PageRank with dangling mass spread uniformly (networkx's convention), and the
        final normalisation recovers it exactly. Parallel edges count with multiplicity.
        The residual is float64: on the GPU a node of high in-degree sums its in-coming
        shares one atomic add at a time, and a float32 sum of 10^5 nearly equal shares
        rounds every add the same way.

        References
        ----------
        .. [1] Whang, Lenharth, Dhillon, Pingali, "Scalable data-driven PageRank:
           algorithms, system issues and lessons learned", Euro-Par 2015.

        Examples
        --------
        >>> import gswitch as gs
        >>> g = gs.Graph.from_edges([0, 1], [1, 0])
        >>> [round(x, 3) for x in gs.run("pagerank", g).fields["rank"].tolist()]
        [0.5, 0.5]

        """

        alpha = gs.Param("float32", 0.85, low=0.0, high=0.999, doc="damping factor")
        tolerance = gs.Param("float32", 1e-6, low=1e-9, high=1.0,
                             doc="residual mass left unpushed")
        max_iterations = gs.Param("int32", 10000, low=1, high=10**8, doc="super-step limit")
        rank = gs.NodeField("float32", init=0.0, doc="PageRank")
        # float64: a node of in-degree 10^5 receives 10^5 atomic adds of nearly equal small
        # shares, and a float32 accumulator rounds each of them the same way (an L1 error of
        # 1.3e-4 on a star of 10^5 leaves); the shares themselves stay float32
        residual = gs.NodeField(residual_dtype,
                                init=lambda p: (1.0 - p["alpha"]) / max(p["n_nodes"], 1),
                                output=False, doc="mass not yet pushed")
        send = gs.NodeField("float32", init=0.0, output=False, doc="share pushed per edge")
        start = gs.all_nodes()

        @gs.node_op
        def take(n, p):
            r = n.residual.exchange(0.0)
            n.rank = n.rank + r
            n.send = gs.where(n.out_degree > 0, p.alpha * r / n.out_degree, 0.0)

        @gs.edge_op
        def push(e, p):
            e.dst.residual.reduce_add(e.src.send, activate_above=p.tolerance / p.n_nodes)

        @staticmethod
        def finalize(fields, params):
            # rank + residual in float64, summed and divided in two passes
            return _normalised(fields, fields["rank"], plus=fields["residual"])

    return PageRank


def _normalised(fields: dict, rank, plus=None) -> dict:
    """``fields`` with ``rank`` (any float dtype and array module; plus ``plus`` in
    float64, where given) scaled to sum 1, as float32 (left as it is when it sums to
    zero); on the device nothing waits for the sum
    (:func:`gswitch.arrayops.divide_by_sum`).
    """
    fields["rank"] = divide_by_sum(rank, plus=plus)
    return fields


@gs.algorithm(name="pagerank", max_iterations_param="max_iterations",
              reference="networkx.pagerank", finalize_on_device=True, variant="power_pull",
              expected=expected_ranks, compare=compare_ranks,
              node_after_edges=True, converge_below="tolerance",
              supports={"driving": ("topology",)},
              # the default: fastest geomean over RMAT-22, uniform 2^22 and road 2048^2 on an
              # H100 (benchmarks/results/h100_s24chooseA_default_choice.md): a persistent
              # kernel with every block that fits, 0.1% behind the host loop there, which
              # took 21 ms instead of 11 on the road grid on another H100 host
              # (h100_s24final): the persistent kernel does not depend on the host
              defaults={"driving": "topology", "direction": "pull", "launch": "persistent",
                        "launch.blocks_per_sm": 0})
class PowerPull:
    """PageRank by Jacobi power iteration: every node gathers over its in-edges.

    Parameters
    ----------
    alpha : float
        Damping factor, default 0.85.
    tolerance : float
        The iteration stops after a step whose L1 change of the ranks is below it
        (networkx stops below ``n * tol``); default 1e-6.
    max_iterations : int
        Upper bound on steps, default 10000.

    Returns
    -------
    rank : ndarray of float32
        PageRank of every node; sums to 1.

    Notes
    -----
    Each step every node's ``acc`` receives ``rank[v] / out_degree(v)`` of each
    in-neighbour ``v`` (``contrib``, written by the previous step: the buffered, Jacobi
    half of the iteration; ``acc`` starts at ``1 / n`` and ``contrib`` at zero, so the
    first step sets every rank to ``1 / n``, networkx's start vector); with direction
    ``pull`` a node sums its in-edges in registers and stores once, without atomics per
    edge. Then the node operator, placed after the edge expansion, sets
    ``rank = (1 - alpha) / n + alpha * (acc + dangling / n)``, adds ``|change|`` to the
    step's total, and writes the next ``contrib``. ``dangling`` is a step total: the rank
    that nodes without out-edges held after the previous step, summed on the device and
    spread over every node, as networkx does. The run ends on the device when the total
    falls below ``tolerance``. This is networkx's iteration step for step, so it takes
    networkx's number of steps: leaving the dangling rank out would make the fixpoint
    only proportional to PageRank and, where many nodes are dangling (RMAT-22), converge
    at the damping factor's rate instead of the graph's (64 steps instead of 18). The
    same answer as ``residual_push`` to the tolerance; it does a full sweep per step, so
    it wins where most nodes stay active (power-law graphs).

    References
    ----------
    .. [1] Page, Brin, Motwani, Winograd, "The PageRank citation ranking: bringing order
       to the web", Stanford InfoLab 1999.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 1], [1, 0])
    >>> r = gs.run("pagerank", g, config={"variant": "power_pull"})
    >>> [round(x, 3) for x in r.fields["rank"].tolist()]
    [0.5, 0.5]

    """

    alpha = gs.Param("float32", 0.85, low=0.0, high=0.999, doc="damping factor")
    tolerance = gs.Param("float32", 1e-6, low=1e-12, high=1.0,
                         doc="L1 change of the ranks at which the iteration stops")
    max_iterations = gs.Param("int32", 10000, low=1, high=10**8, doc="step limit")
    rank = gs.NodeField("float32", init=0.0, doc="PageRank")
    contrib = gs.NodeField("float32", init=0.0, output=False,
                           doc="rank / out-degree, as of the previous step")
    # float64: a hub sums 10^5 or more nearly equal shares. It starts at 1/n, so the first
    # step sets every rank to 1/n: the iteration starts from the uniform vector, as
    # networkx's does (from zero ranks: 89 steps instead of 69 on the 512x512 road grid
    # at tolerance 1e-7)
    acc = gs.NodeField("float64", init=lambda p: 1.0 / max(p["n_nodes"], 1), output=False,
                       doc="sum over in-edges")
    dangling = gs.StepTotal(doc="rank held by nodes without out-edges after a step")
    start = gs.all_nodes()

    @gs.edge_op
    def gather(e):
        e.dst.acc.reduce_add(e.src.contrib)

    @gs.node_op
    def update(n, p):
        new = ((1.0 - p.alpha) / p.n_nodes
               + p.alpha * (n.acc + p.dangling / p.n_nodes)).astype("float32")
        n.total(abs(new - n.rank))
        n.total(gs.where(n.out_degree < 1, new, 0.0), into="dangling")
        n.rank = new
        n.contrib = gs.where(n.out_degree > 0, new / n.out_degree, 0.0)
        n.acc = 0.0

    @staticmethod
    def finalize(fields, params):
        return _normalised(fields, fields["rank"])


@gs.algorithm(name="pagerank_weighted", max_iterations_param="max_iterations",
              reference="networkx.pagerank(weight=...)", variant="power_pull_weighted",
              node_after_edges=True, converge_below="tolerance",
              supports={"driving": ("topology",)},
              defaults={"driving": "topology", "direction": "pull", "launch": "persistent",
                        "launch.blocks_per_sm": 0})
class WeightedPowerPull:
    """PageRank over a row-stochastic weighted graph, by Jacobi power iteration.

    Parameters
    ----------
    alpha : float
        Damping factor, default 0.85.
    tolerance : float
        The iteration stops after a step whose L1 change of the ranks is below it.
    max_iterations : int
        Upper bound on steps.

    Returns
    -------
    rank : ndarray of float32
        PageRank of every node.

    Notes
    -----
    ``power_pull`` with each in-coming share scaled by the edge's weight; the graph's
    weights must already be divided by their row sums, and nodes without out-edges are
    dangling. Each node gathers ``rank[v] * w(v, u)`` over its in-edges.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 1], [1, 0], [1.0, 1.0])
    >>> r = gs.run(WEIGHTED, g)
    >>> [round(x, 3) for x in r.fields["rank"].tolist()]
    [0.5, 0.5]

    """

    alpha = gs.Param("float32", 0.85, low=0.0, high=0.999, doc="damping factor")
    tolerance = gs.Param("float32", 1e-6, low=1e-12, high=1.0,
                         doc="L1 change of the ranks at which the iteration stops")
    max_iterations = gs.Param("int32", 10000, low=1, high=10**8, doc="step limit")
    rank = gs.NodeField("float32", init=0.0, doc="PageRank")
    contrib = gs.NodeField("float32", init=0.0, output=False,
                           doc="rank of a node with out-edges, as of the previous step")
    acc = gs.NodeField("float64", init=lambda p: 1.0 / max(p["n_nodes"], 1), output=False,
                       doc="weighted sum over in-edges")
    dangling = gs.StepTotal(doc="rank held by nodes without out-edges after a step")
    start = gs.all_nodes()

    @gs.edge_op
    def gather(e):
        e.dst.acc.reduce_add(e.src.contrib * e.weight)

    @gs.node_op
    def update(n, p):
        new = ((1.0 - p.alpha) / p.n_nodes
               + p.alpha * (n.acc + p.dangling / p.n_nodes)).astype("float32")
        n.total(abs(new - n.rank))
        n.total(gs.where(n.out_degree < 1, new, 0.0), into="dangling")
        n.rank = new
        n.contrib = gs.where(n.out_degree > 0, new, 0.0)
        n.acc = 0.0


#: Not registered (not a formulation of ``pagerank``: it needs row-stochastic weights);
#: the networkx backend runs it for ``nx.pagerank(G, weight=...)``.
WEIGHTED = WeightedPowerPull


SPEC = pagerank_spec(default=False)
VARIANTS = [SPEC, PowerPull]


@gs.hookimpl
def gswitch_algorithms():
    return VARIANTS
