"""Connected components: label propagation and hook-and-compress (FastSV style)."""

from __future__ import annotations

import numpy as np
import scipy.sparse.csgraph as csgraph

import gswitch as gs
from gswitch.verify import canonical_labels, exact

_REFERENCE = "scipy.sparse.csgraph.connected_components(connection='weak')"


def expected_components(graph: gs.Graph, source: int | None = None, **params) -> np.ndarray:
    """Weak components by ``scipy.sparse.csgraph.connected_components``, each node
    labelled with the smallest id of its component.
    """
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
              expected=expected_components, compare=compare_components)
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


SPEC = ConnectedComponents
VARIANTS = [ConnectedComponents, HookCompress]


@gs.hookimpl
def gswitch_algorithms():
    return VARIANTS
