"""Connected components: label propagation and hook-and-compress (FastSV style)."""

from __future__ import annotations

import numpy as np

import gswitch as gs
from gswitch.verify import canonical_labels, exact

_REFERENCE = "scipy.sparse.csgraph.connected_components(connection='weak')"


def expected_components(graph: gs.Graph, source: int | None = None, **params) -> np.ndarray:
    """Weak components by ``scipy.sparse.csgraph.connected_components``, each node
    labelled with the smallest id of its component.
    """
    import scipy.sparse.csgraph as csgraph  # imported on first use: 0.17 s

    if graph.n_nodes == 0:
        return np.zeros(0, dtype=np.int64)
    _, labels = csgraph.connected_components(graph.to_scipy(), directed=True,
                                             connection="weak")
    return canonical_labels(labels)


def compare_components(got: np.ndarray, expected: np.ndarray) -> str | None:
    """Exact, after relabelling ``got`` canonically (any labelling of the same partition
    matches).
    """
    return exact(canonical_labels(got), expected)


@gs.algorithm(name="cc", symmetric=True, reference=_REFERENCE, variant="label_propagation",
              default=False, expected=expected_components, compare=compare_components)
class ConnectedComponents:
    """Connected components of the symmetrised graph by minimum-label propagation.

    Returns
    -------
    comp : ndarray of int32
        For every node, the smallest node id of its (weakly) connected component.

    Notes
    -----
    Every node starts with its own id as label and offers it to its neighbours with an
    atomic ``min``; a node whose label drops becomes active. The graph is symmetrised
    first, so components are weak components of a directed input. Labels are
    canonical (the component's minimum id), so results compare directly across engines.
    Label propagation needs about diameter-many super-steps; it favours low-diameter
    graphs.

    References
    ----------
    .. [1] Soman, Kishore, Narayanan, "A fast GPU algorithm for graph connectivity",
       IPDPSW 2010.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([1, 3], [0, 2], n_nodes=5)
    >>> gs.run("cc", g).fields["comp"].tolist()
    [0, 0, 2, 2, 4]

    """

    comp = gs.NodeField("int32", init=gs.NODE_ID, doc="smallest id in the component")
    start = gs.all_nodes()

    @gs.edge_op
    def propagate(e):
        e.dst.comp.reduce_min(e.src.comp)


@gs.algorithm(name="cc", symmetric=True, reference=_REFERENCE, variant="hook_compress",
              default=False, node_after_edges=True,
              # the CPU engine's default: 2.8x scipy on road 512x512 where afforest's
              # stages cost 30x (a NumPy step pays for every edge it filters)
              default_on=("cpu",),
              supports={"driving": ("topology",), "direction": ("push",)},
              # the fastest strategies across RMAT-22, uniform 2^22 and the 2048x2048
              # road grid on an H100 (benchmarks/results/h100_s22_formulations_gpu.json)
              defaults={"driving": "topology", "driving.atomic_free": True,
                        "load_balance": "twc"})
class HookCompress:
    """Connected components by hooking and pointer jumping (Shiloach-Vishkin, FastSV).

    Returns
    -------
    comp : ndarray of int32
        For every node, the smallest node id of its (weakly) connected component.

    Notes
    -----
    ``comp`` is a forest of parent pointers with ``comp[v] <= v``. Each step, every edge
    ``(v, u)`` hooks: the grandparent ``g = comp[comp[v]]`` is offered with a ``min`` to
    the parent of ``u`` (stochastic hooking) and to ``u`` itself (aggressive hooking);
    then every node jumps to its grandparent (shortcutting). Every update is a monotone
    ``min`` of an id of the same component, so concurrent updates in any order reach
    the same fixpoint, at which each tree is a star rooted at the component's smallest
    id. The number of steps grows with the logarithm of the diameter rather than with
    the diameter itself, which is what label propagation needs; a step touches every
    edge, so the formulation needs topology driving and push (declared in
    ``supports``).

    References
    ----------
    .. [1] Shiloach, Vishkin, "An O(log n) parallel connectivity algorithm",
       J. Algorithms 3 (1982).
    .. [2] Zhang, Azad, Hu, "FastSV: a distributed-memory connected component algorithm
       with fast convergence", SIAM PP 2020.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([1, 3], [0, 2], n_nodes=5)
    >>> gs.run("cc", g, config={"variant": "hook_compress"}).fields["comp"].tolist()
    [0, 0, 2, 2, 4]

    """

    comp = gs.NodeField("int32", init=gs.NODE_ID, doc="smallest id in the component")
    start = gs.all_nodes()

    @gs.edge_op
    def hook(e):
        grand = e.src.comp.at(e.src.comp)
        e.dst.comp.at(e.dst.comp).reduce_min(grand)
        e.dst.comp.reduce_min(grand)

    @gs.node_op
    def shortcut(n):
        n.comp.reduce_min(n.comp.at(n.comp), activate=True)


def _link(e):
    # each end's parent goes under the other end's grandparent: both directions from
    # this side, because a finishing stage may run only one end of an edge
    pv, pu = e.src.comp, e.dst.comp
    gv, gu = e.src.comp.at(pv), e.dst.comp.at(pu)
    e.dst.comp.at(pu).reduce_min(gv)
    e.src.comp.at(pv).reduce_min(gu)


def _compress(n):
    n.comp.reduce_min(n.comp.at(n.comp), activate=True)


@gs.algorithm(name="cc", symmetric=True, reference=_REFERENCE, variant="afforest",
              expected=expected_components, compare=compare_components,
              supports={"driving": ("topology",), "direction": ("push",)},
              # the default: fastest geomean over RMAT-22, uniform 2^22 and road 2048^2
              # on an H100 (benchmarks/results/h100_s23choose_default_choice.md)
              defaults={"driving": "topology", "driving.atomic_free": True,
                        "load_balance": "twc", "launch": "persistent",
                        "launch.blocks_per_sm": 0})
class Afforest:
    """Connected components by Afforest: sampled linking, then only the other components.

    Parameters
    ----------
    neighbours : int
        Edges each node links in the sampling stage: the first of its row (default 2).

    Returns
    -------
    comp : ndarray of int32
        For every node, the smallest node id of its (weakly) connected component.

    Notes
    -----
    Four stages over one ``comp`` forest (``comp[v] <= v``):

    1. ``sample``: every node links the first ``neighbours`` edges of its row
       (``edge_op(first=...)``: the rest of the row is never read), hooking each end's
       parent under the other's grandparent, then jumps to its grandparent;
       topology-driven to a fixpoint, where every tree is a star. A step costs
       ``neighbours`` edges a node whatever the degrees.
    2. ``find_largest`` (host step): the most frequent root among 1,024 sampled nodes is
       the largest intermediate component; every node outside it, and its root, form
       the next start set.
    3. ``finish``: those nodes link all their edges and compress, driving ``subset``
       (the same nodes every step) to a fixpoint. Only parents are hooked, never a node
       of the largest component itself, so its star moves as a whole and its internal
       edges never need a look: on a power-law graph most edges are skipped.
    4. ``flatten`` (host step): pointer jumping until every node points at its root.

    Every hook is a monotone ``min`` of an id of the same component, so the roots are
    the components' smallest ids whatever the interleaving, as for ``hook_compress``.

    References
    ----------
    .. [1] Sutton, Ben-Nun, Barak, "Optimizing parallel graph connectivity computation
       via subgraph sampling", IPDPS 2018.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([1, 3], [0, 2], n_nodes=5)
    >>> gs.run("cc", g, config={"variant": "afforest"}).fields["comp"].tolist()
    [0, 0, 2, 2, 4]

    """

    comp = gs.NodeField("int32", init=gs.NODE_ID, doc="smallest id in the component")
    neighbours = gs.Param("int32", 2, low=1, high=1024, doc="edges each node samples")

    @gs.stage(node_after_edges=True, supports={"driving": ("topology",)},
              config={"driving": "topology"})
    class sample:
        """Link the sampled edges and compress, every node, to a fixpoint."""

        start = gs.all_nodes()

        link = gs.edge_op(_link, first="neighbours")

        compress = gs.node_op(_compress)

    @gs.host_step
    def find_largest(fields, params, xp):
        comp = fields["comp"]
        n = int(comp.size)
        if n == 0:
            return {"start": comp}
        if xp is not np:  # on the device, with no wait for it (algorithms/_cc_gpu.py)
            from ._cc_gpu import outside_largest

            return {"start": outside_largest(comp, _picks(n, xp))}
        roots, counts = np.unique(comp[_picks(n, xp)], return_counts=True)
        largest = int(roots[int(np.argmax(counts))])  # the smallest of the most frequent
        start = comp != largest
        start[largest] = True  # its root too: the component's hooks land there
        return {"start": start}

    @gs.stage(node_after_edges=True, supports={"driving": ("subset",)},
              config={"driving": "subset"})
    class finish:
        """Link every edge of the nodes outside the largest component, to a fixpoint."""

        start = gs.chosen_nodes()
        link = gs.edge_op(_link)
        compress = gs.node_op(_compress)

    @gs.host_step
    def flatten(fields, params, xp):
        # after finish every node is at most two hops from its root (the largest
        # component's nodes point at its old root, a star member)
        comp = fields["comp"]
        if xp is not np:  # each node walks to its root, in one pass on the device
            from ._cc_gpu import roots

            return {"comp": roots(comp)}
        # one double jump, then a check that loops only if a stage stopped short of its
        # fixpoint
        comp = comp[comp[comp]]
        while True:
            up = comp[comp]
            if not bool((up != comp).any()):
                return {"comp": comp}
            comp = up


_PICKS: dict[tuple[int, str, int], object] = {}


def _picks(n: int, xp) -> object:
    """The 1,024 (or ``n``) node ids ``find_largest`` samples, drawn once per size and
    array module (the same ones every run: the result never depends on them).
    """
    # a device array serves the GPU it was made on only
    key = (n, xp.__name__, xp.cuda.Device().id if hasattr(xp, "cuda") else -1)
    if key not in _PICKS:
        if len(_PICKS) > 64:
            _PICKS.clear()
        _PICKS[key] = xp.asarray(np.random.default_rng(0).integers(0, n, size=min(n, 1024)))
    return _PICKS[key]


SPEC = Afforest
VARIANTS = [Afforest, HookCompress, ConnectedComponents]


@gs.hookimpl
def gswitch_algorithms():
    return VARIANTS
