"""Minimum spanning forest: Boruvka's algorithm with hooking and pointer jumping."""

from __future__ import annotations

import numpy as np

import gswitch as gs

_REFERENCE = "networkx.minimum_spanning_tree (Kruskal)"
#: an int64 key no edge has (no lightest edge found)
_NONE = np.iinfo(np.int64).max


def expected_forest(graph: gs.Graph, source: int | None = None, **params) -> np.ndarray:
    """``[total weight, edge count]`` of networkx's minimum spanning forest of the
    symmetrised graph (the lightest of parallel edges, self-loops ignored, float64).
    """
    import networkx as nx

    g = graph.symmetrize()
    src, dst = g.edges()
    w = np.ones(src.size) if g.weights is None else np.asarray(g.weights, dtype=np.float64)
    h = nx.Graph()
    h.add_nodes_from(range(g.n_nodes))
    for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        if u != v and (not h.has_edge(u, v) or x < h[u][v]["weight"]):
            h.add_edge(u, v, weight=x)
    t = nx.minimum_spanning_tree(h)
    return np.array([t.size(weight="weight"), t.number_of_edges()], dtype=np.float64)


def compare_forest(got: np.ndarray, expected: np.ndarray) -> str | None:
    """``None`` when the per-node tree-edge weights ``got`` (NaN: no edge) sum to the
    reference forest's weight (relative 1e-5, float32 weights) over as many edges.
    """
    got = np.asarray(got, dtype=np.float64)
    edges = int((~np.isnan(got)).sum())
    total = float(np.nansum(got))
    want_total, want_edges = float(expected[0]), int(expected[1])
    if edges != want_edges:
        return f"{edges} forest edges, the reference has {want_edges}"
    if abs(total - want_total) > 1e-5 * max(1.0, abs(want_total)) + 1e-6 * edges:
        return f"forest weight {total!r} != reference {want_total!r}"
    return None


# ----------------------------------------------------------------------------- operators
def _leaving(e):
    return (e.src.comp.ne(e.dst.comp)) & e.src.id.ne(e.dst.id)


def _pair(e):
    # the undirected edge's identity: both directions give the same key
    lo = gs.minimum(e.src.id, e.dst.id).astype("int64")
    hi = gs.maximum(e.src.id, e.dst.id).astype("int64")
    return lo * e.n_nodes + hi


def _lightest_weight(e):
    e.only_if(_leaving(e))
    e.src.best_w.at(e.src.comp).reduce_min(e.weight, activate=False)


def _lightest_pair(e):
    # among the lightest edges leaving the component, the smallest (low id, high id):
    # one total order on edges, so the chosen edges never close a cycle
    e.only_if(_leaving(e) & e.weight.eq(e.src.best_w.at(e.src.comp)))
    e.src.best_pair.at(e.src.comp).reduce_min(_pair(e), activate=False)


_STAGE = {"supports": {"driving": ("topology",), "direction": ("push",)},
          "config": {"driving": "topology"}}


@gs.algorithm(name="minimum_spanning_forest", symmetric=True, reference=_REFERENCE,
              variant="boruvka", expected=expected_forest, compare=compare_forest,
              supports={"driving": ("topology",), "direction": ("push",)},
              defaults={"driving": "topology"})
class Boruvka:
    """Minimum spanning forest of the symmetrised graph by Boruvka's algorithm.

    Returns
    -------
    tree_w : ndarray of float32
        The weight of the forest edge through which a node's component was joined to
        another (NaN for one node per connected component): the forest's edges, one per
        node but one per component. Their sum is the forest's weight.
    tree_u, tree_v : ndarray of int32
        That edge's ends, -1 where ``tree_w`` is NaN: the smaller id first in the ids
        the run used, so under ``renumber=`` (whose ends come back in the caller's ids)
        a pair may come in either order. :func:`forest_edges` lists the ``(u, v, w)``
        triples with ``u < v``.

    Notes
    -----
    Every node starts as a component of its own (``comp`` is its root). A round:

    1. Two sweeps over every edge that leaves its source's component find each
       component's lightest leaving edge, in one total order: the smallest weight (an
       indirect ``min`` into the root, ``e.src.best_w.at(e.src.comp)``), then among
       those the smallest ``(low id, high id)``.
    2. ``hook`` (host step): the root across each component's edge is the component of
       the edge's end outside it (read from the key, per root: no third sweep over the
       edges). Each root with a lightest edge hangs under the root across it, except
       the smaller root of a pair that chose the same edge (each other's target); the
       edge joins the forest on the root that hangs. Pointer jumping then makes every
       node point at its new root.

    Rounds repeat while any component has a leaving edge; each at least halves the
    number of components that have one, so there are at most ``log2(n)`` rounds.
    Unweighted graphs take weight 1 per edge (a spanning forest). Parallel edges: the
    lightest counts; self-loops never leave a component.

    References
    ----------
    .. [1] Boruvka, "O jistem problemu minimalnim" (1926).
    .. [2] Vineet, Harish, Patidar, Narayanan, "Fast minimum spanning tree for large
       graphs on the GPU", HPG 2009.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 1, 0], [1, 2, 2], [1.0, 2.0, 5.0], directed=False)
    >>> sorted(forest_edges(gs.run("minimum_spanning_forest", g, backend="cpu")))
    [(0, 1, 1.0), (1, 2, 2.0)]

    """

    tree_w = gs.NodeField("float32", init=float("nan"),
                          doc="weight of the forest edge that joined the node's component")
    tree_u = gs.NodeField("int32", init=-1, ids="node", doc="that edge's smaller end")
    tree_v = gs.NodeField("int32", init=-1, ids="node", doc="that edge's larger end")
    comp = gs.NodeField("int32", init=gs.NODE_ID, output=False, doc="root of the component")
    best_w = gs.NodeField("float32", init=gs.INF, output=False,
                          doc="on a root: the lightest leaving weight")
    best_pair = gs.NodeField("int64", init=int(_NONE), output=False,
                             doc="on a root: the lightest leaving edge's (low, high) key")

    @gs.stage(**_STAGE)
    class lightest_weight:
        """Each component's lightest leaving weight."""

        start = gs.all_nodes()
        find = gs.edge_op(_lightest_weight)

    @gs.stage(**_STAGE)
    class lightest_pair:
        """Among those edges, the smallest (low id, high id)."""

        start = gs.all_nodes()
        find = gs.edge_op(_lightest_pair)

    @gs.host_step
    def hook(fields, params, xp):
        comp, pair = fields["comp"], fields["best_pair"]
        n = int(comp.size)
        ids = xp.arange(n, dtype=xp.int32)
        has = (comp == ids) & (pair != _NONE)  # a root with a lightest leaving edge
        if not bool(has.any()):
            return None  # no component has a leaving edge: the forest is complete
        # the root across that edge: its end outside the component (one end is inside)
        key = xp.where(has, pair, 0)
        lo, hi = (key // n).astype(xp.int32), (key % n).astype(xp.int32)
        near, far = comp[lo], comp[hi]
        safe = xp.where(has, xp.where(near == ids, far, near), ids)
        keep = has & (safe[safe] == ids) & (ids < safe)  # the smaller of a mutual pair
        hang = has & ~keep
        out = {
            "tree_w": xp.where(hang, fields["best_w"], fields["tree_w"]),
            "tree_u": xp.where(hang, lo, fields["tree_u"]),
            "tree_v": xp.where(hang, hi, fields["tree_v"]),
        }
        parent = xp.where(hang, safe, ids)
        comp = parent[comp]
        while True:  # pointer jumping: every node to its new root
            up = comp[comp]
            if not bool((up != comp).any()):
                break
            comp = up
        out.update({
            "comp": comp,
            "best_w": xp.full(n, np.inf, dtype=xp.float32),
            "best_pair": xp.full(n, _NONE, dtype=xp.int64),
            "repeat": "lightest_weight",
        })
        return out


def forest_edges(result: gs.Result) -> list[tuple[int, int, float]]:
    """The ``(u, v, weight)`` edges of a ``minimum_spanning_forest`` result, ``u < v``
    (also for a renumbered run, whose pairs come back in the caller's ids).
    """
    w = np.asarray(result.fields["tree_w"], dtype=np.float64)
    keep = ~np.isnan(w)
    a = np.asarray(result.fields["tree_u"])[keep]
    b = np.asarray(result.fields["tree_v"])[keep]
    u, v = np.minimum(a, b), np.maximum(a, b)
    return list(zip(u.tolist(), v.tolist(), w[keep].tolist()))


SPEC = Boruvka
VARIANTS = [Boruvka]


@gs.hookimpl
def gswitch_algorithms():
    return VARIANTS
