"""Label-propagation communities: semi-synchronous (Cordasco-Gargano) and asynchronous."""

from __future__ import annotations

import numpy as np

import gswitch as gs
from gswitch import expr as ex
from gswitch._hints import option
from gswitch.verify import canonical_labels, exact

_REFERENCE = "networkx.community.label_propagation_communities"


def _nx_graph(graph: gs.Graph):
    """The symmetrised ``graph`` as a networkx graph, node ``i`` for id ``i`` (self-loops
    kept, parallel edges merged, as the run sees it).
    """
    import networkx as nx

    g = graph.symmetrize()
    nxg = nx.Graph()
    nxg.add_nodes_from(range(g.n_nodes))
    src, dst = g.edges()
    nxg.add_edges_from(zip(src.tolist(), dst.tolist()))
    return nxg


def expected_communities(graph: gs.Graph, source: int | None = None,
                         **params) -> np.ndarray:
    """Communities by ``networkx.community.label_propagation_communities`` on the
    symmetrised graph, each node labelled with the smallest id of its community.
    """
    import networkx as nx

    labels = np.zeros(graph.n_nodes, dtype=np.int64)
    for k, members in enumerate(nx.community.label_propagation_communities(
            _nx_graph(graph))):
        labels[list(members)] = k
    return canonical_labels(labels)


def compare_communities(got: np.ndarray, expected: np.ndarray) -> str | None:
    """Exact, after relabelling ``got`` canonically (the same partition matches)."""
    return exact(canonical_labels(got), expected)


def expected_neighbours(graph: gs.Graph, source: int | None = None,
                        **params) -> np.ndarray:
    """The reference of an answer that is not unique: the symmetrised graph's adjacency
    packed into one int64 array ``[n, indptr (n + 1), indices]``, against which
    :func:`compare_most_frequent` checks the fixpoint of label propagation.
    """
    g = graph.symmetrize()
    return np.concatenate([[g.n_nodes], g.indptr, g.indices]).astype(np.int64)


def unhappy_nodes(labels: np.ndarray, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The nodes whose label is not among the most frequent labels of their neighbours
    (a node without neighbours is content), by counting ``(node, label)`` pairs.
    """
    labels = np.asarray(labels, dtype=np.int64)
    n = labels.size
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    if src.size == 0:
        return np.zeros(0, dtype=np.int64)
    _, lab = np.unique(labels, return_inverse=True)
    pairs, count = np.unique(src * n + lab[indices], return_counts=True)
    best = np.zeros(n, dtype=np.int64)
    np.maximum.at(best, pairs // n, count)
    own = np.zeros(n, dtype=np.int64)
    mine = pairs % n == lab[pairs // n]
    own[pairs[mine] // n] = count[mine]
    return np.flatnonzero(own < best)


def compare_most_frequent(got: np.ndarray, expected: np.ndarray) -> str | None:
    """``None`` when every node of the adjacency ``expected`` (:func:`expected_neighbours`)
    carries one of the most frequent labels of its neighbours in ``got``; else the
    first node that does not.
    """
    got, expected = np.asarray(got), np.asarray(expected)
    n = int(expected[0])
    if got.shape != (n,):
        return f"shape {got.shape} != reference {(n,)}"
    indptr, indices = expected[1:n + 2], expected[n + 2:]
    bad = unhappy_nodes(got, indptr, indices)
    if bad.size:
        return (f"node {int(bad[0])} holds label {got[bad[0]]}, which is not among the "
                f"most frequent labels of its neighbours ({bad.size} such nodes)")
    return None


def parallel_edge_problem(graph: gs.Graph) -> str | None:
    """Why ``graph`` (the symmetrised graph a run gets) has no label propagation here:
    a repeated edge, which would count its neighbour twice where networkx counts it
    once; ``None`` when every edge is single (self-loops are fine).
    """
    src, dst = graph.edges()
    if src.size < 2:
        return None
    key = np.sort(src.astype(np.int64) * max(graph.n_nodes, 1) + dst)
    dup = np.flatnonzero(key[1:] == key[:-1])
    if not dup.size:
        return None
    u, v = divmod(int(key[dup[0]]), graph.n_nodes)
    return (f"label propagation counts each neighbour once, but edge {u} - {v} is "
            f"repeated. Merge parallel edges first: {option('merge_duplicates')}")


# ---------------------------------------------------------------------- semi_synchronous
#: ``best`` packs a label's frequency above the label (labels are node ids, below 2**31)
_SHIFT = 32
_LOW = 2**32 - 1
#: colours a node's ``used`` mask holds at once (from its ``base``)
_WINDOW = 62
_ONE = ex.Const(1, "int64")


def _count_degree(e):
    # networkx's degree counts a self-loop twice
    e.dst.degree.reduce_add(gs.where(e.src.id.eq(e.dst.id), 2, 1), activate=False)


def _before(e):
    # largest_first: larger degree first, ties in id order
    return (e.src.degree > e.dst.degree) | (e.src.degree.eq(e.dst.degree)
                                            & (e.src.id < e.dst.id))


def _count_earlier(e):
    e.dst.remaining.reduce_add(gs.where(_before(e), -1, 0), activate=False)


def _bit(offset):
    # 1 << offset for an offset inside the window, else 0
    inside = (offset >= 0) & (offset < _WINDOW)
    shift = gs.minimum(gs.maximum(offset, 0), _WINDOW - 1).astype("int64")
    return gs.where(inside, _ONE << shift, 0)


#: bit k of a bit's index is set where its mask has a zero
_INDEX_MASKS = ((1, 0x5555555555555555), (2, 0x3333333333333333), (4, 0x0F0F0F0F0F0F0F0F),
                (8, 0x00FF00FF00FF00FF), (16, 0x0000FFFF0000FFFF), (32, 0x00000000FFFFFFFF))
_FULL = (1 << _WINDOW) - 1


def _lowest_bit(x):
    # the index of the lowest set bit of a non-zero int64: isolate it (x & -x), then
    # read its index's bits off six masks
    low = x & -x
    index = 0
    for k, mask in _INDEX_MASKS:
        index = index + gs.where((low & mask).eq(0), k, 0)
    return index


def _take_colour(n):
    # a node all of whose earlier neighbours hold a colour takes the smallest free one of
    # its window; a full window moves on and gathers its neighbours' colours again. The
    # flags are stored first: they read the colour as the step found it
    ready = (n.colour < 0) & n.remaining.eq(0)
    free = n.used ^ _FULL
    n.fresh = gs.where(ready & free.ne(0), 1, 0)
    n.gather = gs.where(ready & free.eq(0), 1, 0)
    n.colour = gs.where(n.fresh.eq(1), n.base + _lowest_bit(free), n.colour)
    n.base = gs.where(n.gather.eq(1), n.base + _WINDOW, n.base)
    n.used = gs.where(n.gather.eq(1), 0, n.used)
    n.pending.reduce_add(n.gather, activate=True)


def _spread_colour(e):
    fresh, gather = e.src.fresh.eq(1), e.src.gather.eq(1)
    earlier = _before(e)
    # a node coloured in this step tells its later neighbours (the last of whose earlier
    # neighbours to do so activates it); a node whose window moved gathers its earlier
    # neighbours' colours again
    e.only_if((fresh & earlier) | (gather & ~earlier & e.src.id.ne(e.dst.id)))
    e.dst.used.reduce_or(gs.where(fresh, _bit(e.src.colour - e.dst.base), 0), activate=False)
    e.dst.remaining.reduce_add(e.src.fresh, activate_above=0)
    e.only_if(gather)
    e.dst.used.at(e.src.id).reduce_or(_bit(e.dst.colour - e.src.base), activate=False)


def _count_labels(e):
    # the class's node (the source) counts each neighbour's label among its neighbours
    freq = e.label_frequency("label", row="src")
    at = e.src.id
    e.dst.best.at(at).reduce_max(
        (freq.astype("int64") << _SHIFT) | e.dst.label.astype("int64"), activate=False)
    e.dst.own.at(at).reduce_max(gs.where(e.src.label.eq(e.dst.label), freq, 0),
                                activate=False)


def _adopt(n):
    # the most frequent label, unless the own label is one of them (Prec-Max); the
    # ties go to the largest label
    change = n.own < (n.best >> _SHIFT).astype("int32")
    n.label = gs.where(change, (n.best & _LOW).astype("int32"), n.label)
    n.moved = gs.where(change, 1, 0)
    n.best = 0
    n.own = 0


_DATA = {"driving": "data", "direction": "push"}


@gs.algorithm(name="label_propagation", symmetric=True, reference=_REFERENCE,
              variant="semi_synchronous", expected=expected_communities,
              compare=compare_communities, check_graph=parallel_edge_problem,
              supports={"driving": ("data",), "direction": ("push",), "renumber": ("none",)},
              defaults=_DATA)
class SemiSynchronous:
    """Communities by semi-synchronous label propagation (Cordasco and Gargano).

    Returns
    -------
    label : ndarray of int32
        Every node's community label: the id of a node, the same for the members of one
        community. The partition is networkx's ``label_propagation_communities``.

    Raises
    ------
    InvalidInput
        If the symmetrised graph repeats an edge (an undirected :class:`~gswitch.Graph`
        built with duplicates kept): each neighbour counts once, as in networkx.

    Notes
    -----
    The graph is symmetrised (parallel edges merged; a self-loop makes a node its own
    neighbour, as in networkx). The parts run in turn, as networkx's function does:

    * ``degrees`` and ``order``: two sweeps count every node's degree as networkx does
      (a self-loop twice) and, in ``remaining``, minus the number of its earlier
      neighbours in networkx's ``largest_first`` order (larger degree first, ties by
      id).
    * ``colouring``: the greedy colouring in that order (networkx's ``greedy_color``),
      computed in parallel by Jones-Plassmann: a node whose earlier neighbours all
      hold a colour takes the smallest colour none of them holds, which is its greedy
      colour. Coloured nodes set their colour's bit in the ``used`` mask of each later
      neighbour and count its ``remaining`` up with an atomic add that activates it at
      zero, so every edge is crossed once and a node is visited when it is ready. The
      mask holds 62 colours from the node's ``base``; a node that finds them all taken
      moves ``base`` on and gathers its earlier neighbours' colours again
      (indirect reductions into itself).
    * ``propagate``, once per colour class in turn (the host step ``next_class``
      chooses the class): each node of the class counts, over its edges, the frequency
      of each neighbour's label among its own neighbours (the ``e.label_frequency``
      intrinsic) and keeps the largest ``(frequency << 32) | label`` and its own
      label's frequency with atomic maxima into itself; then it takes that label unless
      its own is among the most frequent (networkx's Prec-Max rule: ties go to the
      largest label, an own label among them is kept). Nodes of one class are not
      adjacent, so updating them at once is networkx's one-by-one update. The run ends
      when the last update of every class changed nothing, which is networkx's test
      that every label is among the most frequent of its neighbours.

    Work is one pass over the edges for the colouring and one per round of classes,
    plus the sort the CPU engine's intrinsic makes of the rows it reads. The answer is
    deterministic and is networkx's. The colouring order and the Prec-Max rule break
    ties by node id, so a renumbered copy of the graph would find other communities:
    this formulation supports ``renumber=none`` only (the tuner holds it there).

    References
    ----------
    .. [1] Cordasco, Gargano, "Community detection via semi-synchronous label propagation
       algorithms", BASNA 2010.
    .. [2] Jones, Plassmann, "A parallel graph coloring heuristic", SIAM J. Sci. Comput.
       14(3), 1993.

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 0, 1, 3, 3, 4, 2], [1, 2, 2, 4, 5, 5, 3])
    >>> labels = gs.run("label_propagation", g).fields["label"]
    >>> len(set(labels.tolist()))
    2

    """

    label = gs.NodeField("int32", init=gs.NODE_ID, ids="node", doc="community label")
    degree = gs.NodeField("int32", init=0, output=False, doc="networkx's degree")
    remaining = gs.NodeField("int32", init=0, output=False,
                             doc="minus the earlier neighbours without a colour")
    colour = gs.NodeField("int32", init=-1, output=False, doc="greedy colour (-1: none yet)")
    used = gs.NodeField("int64", init=0, output=False,
                        doc="colours of earlier neighbours, bit c for colour base + c")
    base = gs.NodeField("int32", init=0, output=False, doc="first colour of the mask")
    fresh = gs.NodeField("int32", init=0, output=False, doc="1 in the step it is coloured")
    gather = gs.NodeField("int32", init=0, output=False,
                          doc="1 in the step it gathers its neighbours' colours again")
    pending = gs.NodeField("int32", init=0, output=False, doc="keeps a node active")
    best = gs.NodeField("int64", init=0, output=False,
                        doc="largest (frequency << 32 | label) among the neighbours")
    own = gs.NodeField("int32", init=0, output=False, doc="frequency of the own label")
    moved = gs.NodeField("int32", init=1, output=False,
                         doc="1 when the last update of the node's class moved it")
    n_colours = gs.Param("int32", 1, low=1, high=2**31 - 1,
                         doc="colours of the colouring (set by the host step classes)")
    colour_class = gs.Param("int32", 0, low=0, high=2**31 - 1,
                            doc="the class updated next (set by the host step next_class)")

    @gs.stage(config=_DATA)
    class degrees:
        """Count every node's degree, a self-loop twice."""

        start = gs.all_nodes()
        count = gs.edge_op(_count_degree)

    @gs.stage(config=_DATA)
    class order:
        """Count every node's earlier neighbours (into ``remaining``, negated)."""

        start = gs.all_nodes()
        count = gs.edge_op(_count_earlier)

    @gs.stage(config=_DATA)
    class colouring:
        """Greedy largest-first colouring, by Jones-Plassmann."""

        start = gs.all_nodes()
        take = gs.node_op(_take_colour)
        spread = gs.edge_op(_spread_colour)

    @gs.host_step
    def classes(fields, params, xp):
        colour = fields["colour"]
        return {"n_colours": int(colour.max()) + 1 if colour.size else 1}

    @gs.host_step
    def next_class(fields, params, xp):
        c = params["colour_class"]
        return {"start": fields["colour"] == c,
                "colour_class": (c + 1) % params["n_colours"]}

    @gs.stage(config=_DATA, node_after_edges=True)
    class propagate:
        """Update one colour class: the most frequent label of each node's neighbours."""

        start = gs.chosen_nodes()
        count = gs.edge_op(_count_labels)
        adopt = gs.node_op(_adopt)

    @gs.host_step
    def again(fields, params, xp):
        # each node's `moved` is its class's last update: all zero, a fixpoint
        return {"repeat": "next_class"} if bool(fields["moved"].any()) else None


# ---------------------------------------------------------------------- asynchronous
#: ``choice`` packs a capped frequency, a 9-bit random key and the label
_FREQ_SHIFT, _KEY_SHIFT = 40, 31
_FREQ_CAP = 2**23 - 1
_LABEL_BITS = 2**31 - 1


def _mix(x):
    # MurmurHash3's finaliser on uint32 (a bijection)
    x = x ^ (x >> 16)
    x = x * 0x85EBCA6B
    x = x ^ (x >> 13)
    x = x * 0xC2B2AE35
    return x ^ (x >> 16)


def _step_word(p):
    return p.seed * 0x9E3779B1 + p.iteration.astype("uint32") * 0x85EBCA77


def _async_count(e, p):
    # the active node (the source) counts each neighbour's label among its neighbours
    # and keeps the most frequent, ties broken by a key hashed from the seed, the step,
    # itself and the label; a node that moved in the last step wakes its neighbours
    freq = gs.minimum(e.label_frequency("label", row="src"), _FREQ_CAP)
    key = _mix(e.dst.label.astype("uint32") ^ _step_word(p)
               ^ (e.src.id.astype("uint32") * 0x27D4EB2F)) & 511
    at = e.src.id
    e.dst.choice.at(at).reduce_max(
        (freq.astype("int64") << _FREQ_SHIFT) | (key.astype("int64") << _KEY_SHIFT)
        | e.dst.label.astype("int64"), activate=False)
    e.dst.own.at(at).reduce_max(gs.where(e.src.label.eq(e.dst.label), freq, 0),
                                activate=False)
    # the step that woke a node, not a count: the first wake of a step activates it
    # and later ones change nothing, so a queue worklist holds it once per step
    e.dst.woken.reduce_max(gs.where(e.src.moved.eq(1), p.iteration + 1, 0))


def _async_adopt(n, p):
    # an unhappy node takes its draw on a hashed coin (half of them each step) and
    # stays active until it is happy
    unhappy = n.own < (n.choice >> _FREQ_SHIFT).astype("int32")
    coin = (_mix(n.id.astype("uint32") ^ _step_word(p)) & 1).eq(1)
    n.woken.reduce_max(gs.where(unhappy, p.iteration + 1, 0), activate=True)
    n.moved = gs.where(unhappy & coin, 1, 0)
    n.label = gs.where(n.moved.eq(1), (n.choice & _LABEL_BITS).astype("int32"), n.label)
    n.choice = 0
    n.own = 0


@gs.algorithm(name="label_propagation", symmetric=True, variant="asynchronous",
              default=False,
              reference="invariant: every label among its neighbours' most frequent "
                        "(networkx.community.asyn_lpa_communities draws other such "
                        "partitions)",
              expected=expected_neighbours, compare=compare_most_frequent,
              node_after_edges=True, check_graph=parallel_edge_problem,
              supports={"driving": ("data",), "direction": ("push",), "renumber": ("none",)},
              defaults=_DATA)
class Asynchronous:
    """Communities by seeded label propagation with random tie breaks (Raghavan et al.).

    Parameters
    ----------
    seed : int
        Seed of the update order and the tie breaks, ``0 .. 2**32 - 1`` (default 0).
        The labels are a function of the graph and the seed under every engine and
        strategy. The keys hash the node ids, so a renumbered copy would draw other
        labels: this formulation supports ``renumber=none`` only.

    Returns
    -------
    label : ndarray of int32
        Every node's community label (the id of a node). At the end every node's label
        is among the most frequent labels of its neighbours.

    Raises
    ------
    InvalidInput
        If the symmetrised graph repeats an edge (see ``semi_synchronous``).

    Notes
    -----
    In the spirit of networkx's ``asyn_lpa_communities``: a node whose label is not
    among its neighbours' most frequent takes one of them at random. Each step, every
    active node counts over its edges the frequency of each neighbour's label among its
    own neighbours (``e.label_frequency("label", row="src")``) and keeps, with atomic
    maxima into itself, its own label's frequency and the largest
    ``(frequency, key, label)``, the key a 9-bit hash of the seed, the step, the node
    and the label (a random tie break). After the edges, an unhappy node adopts its
    draw on a hashed coin, so about half of them move each step: moving every unhappy
    node at once (synchronous propagation) can swap two labels back and forth forever
    on a bipartite piece, and the random half, like networkx's random order, breaks
    such cycles with probability one. An unhappy node stays active; a node that moved
    wakes its neighbours in its next step; the run ends when no node is active, when
    every node is happy. Frequencies above ``2**23 - 1`` compare as equal (a node of
    more than eight million neighbours).

    Random draws are not reproducible across implementations, so the answer is checked
    by the invariant, and its modularity against networkx's.

    References
    ----------
    .. [1] Raghavan, Albert, Kumara, "Near linear time algorithm to detect community
       structures in large-scale networks", Phys. Rev. E 76, 036106 (2007).

    Examples
    --------
    >>> import gswitch as gs
    >>> g = gs.Graph.from_edges([0, 0, 1, 3, 3, 4, 2], [1, 2, 2, 4, 5, 5, 3])
    >>> r = gs.run("label_propagation", g, config={"variant": "asynchronous"}, seed=3)
    >>> from gswitch.algorithms.lpa import compare_most_frequent, expected_neighbours
    >>> compare_most_frequent(r.fields["label"], expected_neighbours(g)) is None
    True

    """

    label = gs.NodeField("int32", init=gs.NODE_ID, ids="node", doc="community label")
    choice = gs.NodeField("int64", init=0, output=False,
                          doc="largest (frequency << 40 | key << 31 | label)")
    own = gs.NodeField("int32", init=0, output=False, doc="frequency of the own label")
    moved = gs.NodeField("int32", init=0, output=False, doc="1 in the step it moved")
    woken = gs.NodeField("int32", init=0, output=False,
                         doc="1 + the last step that woke the node")
    seed = gs.Param("uint32", 0, low=0, high=2**32 - 1, doc="seed of order and ties")
    start = gs.all_nodes()

    count = gs.edge_op(_async_count)
    adopt = gs.node_op(_async_adopt)


VARIANTS = [SemiSynchronous, Asynchronous]


@gs.hookimpl
def gswitch_algorithms():
    return VARIANTS
