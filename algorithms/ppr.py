"""Personalised PageRank: PageRank whose random jumps land by a personalisation vector."""

from __future__ import annotations

import numpy as np

import gswitch as gs
from gswitch.algorithm import AlgorithmSpec
from gswitch.errors import InvalidInput

from .pagerank import _normalised, compare_ranks


def personalization_vector(values, params) -> np.ndarray:
    """A personalisation as one weight per node summing to 1: a node id (all weight on
    it), or non-negative weights with a positive sum (normalised).
    """
    n = int(params["n_nodes"])
    if isinstance(values, str) and values.strip().isdigit():  # --param personalization=3
        values = int(values)
    if isinstance(values, (int, np.integer)) and not isinstance(values, bool):
        if not 0 <= int(values) < n:
            raise InvalidInput(f"personalization node {int(values)} is out of range: the "
                               f"graph has {n} nodes")
        out = np.zeros(n)
        out[int(values)] = 1.0
        return out
    try:
        w = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput("personalization must be a node id or one non-negative weight "
                           "per node (on the command line: --param personalization=ID); "
                           f"got {values!r}"[:200]) from None
    if w.shape != (n,):
        raise InvalidInput(f"personalization must hold one weight per node ({n}); got "
                           f"shape {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any() or not w.sum() > 0:
        raise InvalidInput("personalization weights must be finite, non-negative and not "
                           "all zero")
    return w / w.sum()


def expected_personalized(graph: gs.Graph, source: int | None = None, *,
                          alpha: float = 0.85, personalization=None, **params) -> np.ndarray:
    """Personalised PageRank by a scipy power iteration with networkx's definition:
    jumps and the rank of dangling nodes land by the personalisation (uniform without
    one), stopping below ``n * 1e-12``.
    """
    n = graph.n_nodes
    if n == 0:
        return np.zeros(0)
    p = np.full(n, 1.0 / n) if personalization is None else np.asarray(
        personalization, dtype=np.float64)
    p = p / p.sum()
    import scipy.sparse as sp  # here: importing it costs 0.4 s, and a GPU run needs none

    a = sp.csr_array((np.ones(graph.n_edges), graph.indices, graph.indptr), shape=(n, n))
    out = np.asarray(a.sum(axis=1)).ravel()
    dangling = out == 0
    scale = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, out))
    at = (sp.diags_array(scale) @ a).T.tocsr()
    x = p.copy()
    for _ in range(10000):
        last = x
        x = alpha * (at @ x + x[dangling].sum() * p) + (1 - alpha) * p
        if np.abs(x - last).sum() < n * 1e-12:
            return x
    raise RuntimeError("reference personalised PageRank did not converge")


_REF = "networkx.pagerank(personalization=...)"


@gs.algorithm(name="personalized_pagerank", max_iterations_param="max_iterations",
              reference=_REF, finalize_on_device=True, variant="power_pull",
              expected=expected_personalized, compare=compare_ranks,
              node_after_edges=True, converge_below="tolerance",
              supports={"driving": ("topology",)},
              defaults={"driving": "topology", "direction": "pull", "launch": "persistent",
                        "launch.blocks_per_sm": 0})
class PersonalizedPowerPull:
    """Personalised PageRank by Jacobi power iteration over in-edges.

    Parameters
    ----------
    personalization : int or array of float, optional
        A node id, or one non-negative weight per node (normalised to sum 1): where
        random jumps, and the rank of dangling nodes, land. Uniform without it (then
        this is PageRank).
    alpha : float
        Damping factor, default 0.85.
    tolerance : float
        The iteration stops after a step whose L1 change is below it; default 1e-6.
    max_iterations : int
        Upper bound on steps, default 10000.
    uniform_start : int
        1: start from the uniform vector, as networkx does; 0 (default): from the
        personalisation.

    Returns
    -------
    rank : ndarray of float32
        The personalised PageRank of every node; sums to 1.

    Notes
    -----
    ``pagerank``'s ``power_pull`` with the uniform jump ``1 / n`` replaced by the node's
    weight ``teleport[v]``, a field initialised from the run (``gs.per_node_input``):
    ``rank = (1 - alpha) * teleport + alpha * (acc + dangling * teleport)``, networkx's
    iteration with ``personalization`` and ``dangling`` both the given vector. The first
    step only sets the start vector; with ``uniform_start=1`` that is networkx's, and
    step ``k + 1`` is networkx's iteration ``k`` (the same number of steps to converge).

    References
    ----------
    .. [1] Haveliwala, "Topic-sensitive PageRank", WWW 2002.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 1, 2], [1, 2, 0])
    >>> r = gs.run("personalized_pagerank", g, personalization=0, backend="cpu")
    >>> int(r.fields["rank"].argmax())
    0

    """

    alpha = gs.Param("float32", 0.85, low=0.0, high=0.999, doc="damping factor")
    tolerance = gs.Param("float32", 1e-6, low=1e-12, high=1.0,
                         doc="L1 change of the ranks at which the iteration stops")
    max_iterations = gs.Param("int32", 10000, low=1, high=10**8, doc="step limit")
    uniform_start = gs.Param("int32", 0, low=0, high=1,
                             doc="1: start from the uniform vector (networkx's start)")
    rank = gs.NodeField("float32", init=0.0, doc="personalised PageRank")
    teleport = gs.NodeField(
        "float32", output=False, doc="where jumps land (sums to 1)",
        init=gs.per_node_input("personalization", default=lambda p: 1.0 / max(
            p["n_nodes"], 1), prepare=personalization_vector,
            doc="a node id or one weight per node", names="one"))
    contrib = gs.NodeField("float32", init=0.0, output=False,
                           doc="rank / out-degree, as of the previous step")
    acc = gs.NodeField("float64", init=0.0, output=False, doc="sum over in-edges")
    dangling = gs.StepTotal(doc="rank held by nodes without out-edges after a step")
    start = gs.all_nodes()

    @gs.edge_op
    def gather(e):
        e.dst.acc.reduce_add(e.src.contrib)

    @gs.node_op
    def update(n, p):
        # the first step sets the start vector: the personalisation itself, or the
        # uniform vector networkx starts from; both converge to the same vector
        start = gs.where(p.uniform_start > 0, 1.0 / p.n_nodes, n.teleport).astype("float32")
        prev = gs.where(p.iteration < 1, start, n.rank)
        new = gs.where(p.iteration < 1, start,
                       ((1.0 - p.alpha) * n.teleport
                        + p.alpha * (n.acc + p.dangling * n.teleport)).astype("float32"))
        n.total(abs(new - prev) + gs.where(p.iteration < 1, 1.0, 0.0))
        n.total(gs.where(n.out_degree < 1, new, 0.0), into="dangling")
        n.rank = new
        n.contrib = gs.where(n.out_degree > 0, new / n.out_degree, 0.0)
        n.acc = 0.0

    @staticmethod
    def finalize(fields, params):
        return _normalised(fields, fields["rank"])


def _residual_start(values, params) -> np.ndarray:
    return (1.0 - float(params["alpha"])) * personalization_vector(values, params)


@gs.algorithm(name="personalized_pagerank", max_iterations_param="max_iterations",
              reference=_REF, finalize_on_device=True, variant="residual_push",
              default=False, expected=expected_personalized, compare=compare_ranks)
class PersonalizedResidualPush:
    """Personalised PageRank by pushing residuals.

    Parameters
    ----------
    personalization : int or array of float, optional
        A node id, or one non-negative weight per node: where random jumps land.
    alpha : float
        Damping factor, default 0.85.
    tolerance : float
        Total residual mass allowed to remain unpushed; default 1e-6.
    max_iterations : int
        Upper bound on super-steps, default 10000.

    Returns
    -------
    rank : ndarray of float32
        The personalised PageRank of every node; sums to 1.

    Notes
    -----
    ``pagerank``'s ``residual_push`` with each node's first residual
    ``(1 - alpha) * teleport[v]`` instead of ``(1 - alpha) / n``. Mass pushed into
    dangling nodes leaves; the fixpoint is then proportional to the personalised
    PageRank whose dangling rank lands by the same vector (networkx's default), and the
    final normalisation recovers it.

    References
    ----------
    .. [1] Andersen, Chung, Lang, "Local graph partitioning using PageRank vectors",
       FOCS 2006.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 1, 2], [1, 2, 0])
    >>> cfg = {"variant": "residual_push"}
    >>> r = gs.run("personalized_pagerank", g, personalization=[0, 0, 1], config=cfg)
    >>> int(r.fields["rank"].argmax())
    2

    """

    alpha = gs.Param("float32", 0.85, low=0.0, high=0.999, doc="damping factor")
    tolerance = gs.Param("float32", 1e-6, low=1e-9, high=1.0,
                         doc="residual mass left unpushed")
    max_iterations = gs.Param("int32", 10000, low=1, high=10**8, doc="super-step limit")
    rank = gs.NodeField("float32", init=0.0, doc="personalised PageRank")
    residual = gs.NodeField(
        "float64", output=False, doc="mass not yet pushed",
        init=gs.per_node_input("personalization", prepare=_residual_start,
                               default=lambda p: (1.0 - p["alpha"]) / max(p["n_nodes"], 1),
                               doc="a node id or one weight per node", names="one"))
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
        return _normalised(fields, fields["rank"], plus=fields["residual"])


SPECS: list[AlgorithmSpec] = [PersonalizedPowerPull, PersonalizedResidualPush]


@gs.hookimpl
def gswitch_algorithms():
    return SPECS
