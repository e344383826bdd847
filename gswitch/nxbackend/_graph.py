"""networkx graphs as gswitch graphs and back: the backend's graph type and its conversions.

A networkx graph is read once through its adjacency (``G._adj``), which already lists
every node's neighbours in order: the CSR arrays come out of that walk without a sort,
and each row keeps networkx's neighbour order, which the breadth-first functions need
to reproduce networkx's discovery order. Parallel edges of a multigraph stay separate
entries, so a shortest path takes the lightest of them (networkx's rule) and PageRank
counts them with multiplicity (networkx's rule too).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

import numpy as np

from gswitch.errors import InvalidGraph
from gswitch.graph import Graph

__all__ = ["NxGraph", "ViewWatch", "from_networkx", "to_networkx", "NonNumericWeight"]


class NonNumericWeight(InvalidGraph, TypeError, NotImplementedError):
    """An edge attribute read as a weight holds something that is not a real number.

    Also a ``NotImplementedError``, networkx's signal that a backend cannot take a call:
    with ``backend_priority`` networkx then runs it itself, and answers as it would (it
    may never read that edge's weight); with ``backend="gswitch"`` its error names this
    one as the cause.
    """


class NxGraph:
    """A networkx graph converted for gswitch: CSR arrays, node names and edge weights.

    Node ``i`` is the ``i``-th node of the networkx graph. Row ``i`` of the CSR lists
    the neighbours of node ``i`` in networkx's adjacency order (successors for a
    directed graph; both directions of each edge for an undirected one, a self loop
    once), one entry per parallel edge of a multigraph.

    Parameters
    ----------
    nodes : list
        Node names, in the graph's order.
    indptr, indices : numpy.ndarray
        CSR row offsets (int64) and neighbour ids (int32).
    weights : dict of str to numpy.ndarray
        Edge attribute name to its values, one per CSR entry (float64, or int64 when
        every value was an integer).
    directed, multigraph : bool
        What the networkx graph was.
    graph_attrs : dict, optional
        The networkx graph's ``G.graph``.

    """

    __networkx_backend__ = "gswitch"

    def __init__(self, nodes: list, indptr: np.ndarray, indices: np.ndarray,
                 weights: dict[str, np.ndarray], *, directed: bool, multigraph: bool,
                 graph_attrs: dict | None = None) -> None:
        self.nodes = nodes
        self.indptr = indptr
        self.indices = indices
        self.weights = weights
        self.directed = directed
        self.multigraph = multigraph
        self.graph = dict(graph_attrs or {})
        #: a multigraph's edge key of every CSR entry (``None`` for other graphs)
        self.edge_keys: list | None = None
        self._index: dict[Hashable, int] | None = None
        self._names: np.ndarray | None = None
        #: gswitch graphs made from this one, by weight attribute (and derived graphs,
        #: such as PageRank's row-stochastic one, by a tuple key)
        self._graphs: dict[Any, Graph] = {}
        #: the networkx graph itself, kept by a conversion for a function whose answer
        #: is a subgraph of it with every attribute (``k_core``, spanning trees); ``None``
        #: otherwise
        self.source: Any = None
        #: for the conversion of a graph view, how to notice that the graph it shows
        #: has changed (:class:`ViewWatch`); ``None`` otherwise
        self.watch: ViewWatch | None = None

    def refresh(self) -> None:
        """Convert the view again, in place, if the graph it shows has changed since the
        conversion (networkx keeps this conversion in the view's cache, which the
        change does not clear); nothing for a graph that is not a view.
        """
        if self.watch is not None and self.watch.changed():
            self.__dict__.update(self.watch.convert().__dict__)

    # networkx's decorators (not_implemented_for) and membership tests read these
    def is_directed(self) -> bool:
        """Whether the networkx graph was directed."""
        return self.directed

    def is_multigraph(self) -> bool:
        """Whether the networkx graph was a multigraph."""
        return self.multigraph

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator:
        return iter(self.nodes)

    def __contains__(self, node: object) -> bool:
        try:
            return node in self.index
        except TypeError:  # unhashable: not a node, as networkx answers
            return False

    def __repr__(self) -> str:
        kind = ("Multi" if self.multigraph else "") + ("DiGraph" if self.directed else "Graph")
        return (f"<gswitch networkx backend graph ({kind}): {len(self.nodes)} nodes, "
                f"{self.indices.size} adjacency entries>")

    def member_sets(self, groups: list[np.ndarray]) -> list[set]:
        """The node names of each group of node ids, as sets, in the order given.

        A group holding more than half of the nodes is built as every node name (the
        keys of :attr:`index`, whose hashes the dict keeps) less the other groups' names:
        for one giant component that is about three times faster than a set of its
        hundreds of thousands of names.
        """
        names = self.names
        sizes = [g.size for g in groups]
        big = int(np.argmax(sizes)) if sizes else -1
        if big < 0 or 2 * sizes[big] <= len(self.nodes):
            return [set(names[g].tolist()) for g in groups]
        others = [g for i, g in enumerate(groups) if i != big]
        outside = names[np.concatenate(others)].tolist() if others else []
        giant = set(self.index)
        giant.difference_update(outside)
        if len(giant) != sizes[big]:  # the groups do not cover every node: plainly
            giant = set(names[groups[big]].tolist())
        return [giant if i == big else set(names[g].tolist()) for i, g in enumerate(groups)]

    @property
    def index(self) -> dict[Hashable, int]:
        """Node name to node id, built on first use."""
        if self._index is None:
            self._index = dict(zip(self.nodes, range(len(self.nodes))))
        return self._index

    @property
    def names(self) -> np.ndarray:
        """Node names as an object array, for fancy indexing by node ids."""
        if self._names is None:
            names = np.empty(len(self.nodes), dtype=object)
            names[:] = self.nodes
            self._names = names
        return self._names

    def node_id(self, node: Hashable) -> int:
        """The id of ``node``; ``KeyError`` when it is not in the graph."""
        return self.index[node]

    def nbunch_ids(self, nbunch: Iterable) -> list[int]:
        """The ids of the nodes of ``nbunch`` that are in the graph, in its order, with
        networkx's ``G.nbunch_iter`` errors (for ``nbunch`` that is not one node).

        Raises
        ------
        networkx.NetworkXError
            ``nbunch`` is not iterable, or holds something unhashable.

        """
        import networkx as nx

        index, ids = self.index, []
        node = None
        try:
            for node in nbunch:
                if node in index:
                    ids.append(index[node])
        except TypeError as err:
            message = err.args[0] if err.args and isinstance(err.args[0], str) else ""
            if "object is not iterable" in message:
                raise nx.NetworkXError(f"Node {nbunch} is not in the graph.") from None
            if "iter" in message:
                raise nx.NetworkXError("nbunch is not a node or a sequence of nodes.") from None
            if "hashable" in message:
                raise nx.NetworkXError(f"Node {node} in sequence nbunch is not a valid "
                                       "node.") from None
            raise
        return ids

    def out_entries(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(owners, entries)``: the CSR positions of every out-entry of ``nodes``, row by
        row in order, and the node each belongs to.
        """
        starts = self.indptr[nodes]
        counts = self.indptr[nodes + 1] - starts
        total = int(counts.sum())
        offsets = np.repeat(starts - np.cumsum(counts) + counts, counts)
        return np.repeat(nodes, counts), offsets + np.arange(total)

    def weighted_by(self, weight: str | None) -> np.ndarray | None:
        """The values of edge attribute ``weight`` (``None`` for ``weight=None``).

        Raises
        ------
        NotImplementedError
            The graph was converted without that attribute (networkx then runs).

        """
        if weight is None:
            return None
        try:
            return self.weights[weight]
        except KeyError:
            raise NotImplementedError(
                f"this gswitch graph was converted without edge attribute {weight!r} "
                f"(it has {sorted(self.weights) or 'none'})") from None

    def gswitch_graph(self, weight: str | None = None) -> Graph:
        """The :class:`gswitch.Graph` of this graph, weighted by ``weight``; made once."""
        g = self._graphs.get(weight)
        if g is None:
            w = self.weighted_by(weight)
            g = Graph(self.indptr, self.indices, w, directed=self.directed, validate=False,
                      name=str(self.graph.get("name", "") or ""))
            self._graphs[weight] = g
        return g

    def derived_graph(self, key: tuple, make: Callable[[], Graph]) -> Graph:
        """A gswitch graph derived from this one (PageRank's row-stochastic graph), made
        by ``make`` on first use and kept under ``key``, so that later calls reuse it,
        its reverse and its device copy.
        """
        g = self._graphs.get(key)
        if g is None:
            g = self._graphs[key] = make()
        return g


#: The key of :class:`ViewWatch`'s token in a networkx graph's ``__networkx_cache__``
_VIEW_TOKEN = "gswitch view token"


class ViewWatch:
    """Notices that the graph a networkx view shows has changed since a conversion.

    networkx keeps a conversion in the ``__networkx_cache__`` of the graph converted and
    clears that cache when the graph changes through its methods; a view (``subgraph``,
    ``reverse(copy=False)``, ``to_undirected(as_view=True)``) has a cache of its own,
    which a change of the graph it shows leaves alone. The watch puts a token in the
    shown graph's cache: when networkx clears that cache, the token is gone.

    Parameters
    ----------
    view : networkx graph
        The view converted (views of views show the same graph).
    convert : callable
        Converts the view again, as the first conversion did.

    """

    def __init__(self, view: Any, convert: Callable[[], NxGraph]) -> None:
        shown = view
        while getattr(shown, "_graph", None) is not None:
            shown = shown._graph
        self.convert = convert
        #: the shown graph's cache; ``None`` where it keeps none (then every call
        #: converts again: nothing tells a change)
        self.cache: dict | None = getattr(shown, "__networkx_cache__", None)
        self.token = None if self.cache is None else self.cache.setdefault(_VIEW_TOKEN,
                                                                           object())

    @staticmethod
    def of(G: Any, convert: Callable[[], NxGraph]) -> ViewWatch | None:
        """A watch for ``G`` if it is a view, else ``None``."""
        return None if getattr(G, "_graph", None) is None else ViewWatch(G, convert)

    def changed(self) -> bool:
        """Whether the shown graph's cache was cleared since (a change, as far as
        networkx tells).
        """
        return self.cache is None or self.cache.get(_VIEW_TOKEN) is not self.token


def _numeric(attr: str, values: list, edges: Iterable[tuple[Any, Any]]) -> np.ndarray:
    """``values`` as int64 (all integers) or float64; one clear line otherwise."""
    try:
        arr = np.asarray(values)
        if arr.dtype.kind == "b":
            arr = arr.astype(np.int64)
        if arr.dtype.kind in "iu":
            return arr.astype(np.int64, copy=False)
        if arr.dtype.kind == "f":
            return arr.astype(np.float64, copy=False)
    except (TypeError, ValueError, OverflowError):
        pass
    for (u, v), x in zip(edges, values):
        if not isinstance(x, (int, float, np.integer, np.floating)):
            raise NonNumericWeight(f"edge ({u!r}, {v!r}) has {attr}={x!r}, which is not a "
                                   f"number; gswitch reads {attr!r} as an edge weight")
    return np.asarray(values, dtype=np.float64)


def _edge_pairs(adj: Mapping, multigraph: bool) -> Iterator[tuple[Any, Any]]:
    """(u, v) of every adjacency entry, in CSR order (only to name a bad edge)."""
    for u, nbrs in adj.items():
        for v, d in nbrs.items():
            for _ in (d.values() if multigraph else (d,)):
                yield u, v


def from_networkx(G: Any, edge_attrs: Mapping[str, Any] | None = None, *,
                  preserve_graph_attrs: bool = True) -> NxGraph:
    """Convert a networkx graph (one walk over ``G._adj``).

    Parameters
    ----------
    G : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph
        The graph (graph views too).
    edge_attrs : mapping of str to number, optional
        Edge attributes to read as weights, each with the value of edges that lack it.
    preserve_graph_attrs : bool
        Keep a copy of ``G.graph``.

    Returns
    -------
    NxGraph

    Raises
    ------
    NonNumericWeight
        An edge attribute in ``edge_attrs`` holds a value that is not a real number.
    InvalidGraph
        The graph is too large for int32 node ids.

    """
    adj = G._adj
    multigraph = bool(G.is_multigraph())
    nodes = list(adj)
    n = len(nodes)
    if n > np.iinfo(np.int32).max:
        raise InvalidGraph(f"a graph of {n:,} nodes is too large for gswitch's int32 node ids")
    index = dict(zip(nodes, range(n)))
    indptr = np.zeros(n + 1, dtype=np.int64)
    if multigraph:
        np.cumsum(np.fromiter((sum(map(len, nbrs.values())) for nbrs in adj.values()),
                              dtype=np.int64, count=n), out=indptr[1:])
        m = int(indptr[-1])
        indices = np.fromiter((index[v] for nbrs in adj.values()
                               for v, keys in nbrs.items() for _ in keys),
                              dtype=np.int32, count=m)
    else:
        np.cumsum(np.fromiter(map(len, adj.values()), dtype=np.int64, count=n), out=indptr[1:])
        m = int(indptr[-1])
        indices = np.fromiter(map(index.__getitem__, chain.from_iterable(adj.values())),
                              dtype=np.int32, count=m)
    weights: dict[str, np.ndarray] = {}
    for attr, default in (edge_attrs or {}).items():
        if multigraph:
            datas = (d for nbrs in adj.values() for keys in nbrs.values() for d in keys.values())
        else:
            datas = chain.from_iterable(nbrs.values() for nbrs in adj.values())
        values = [d.get(attr, default) for d in datas]
        weights[attr] = _numeric(attr, values, _edge_pairs(adj, multigraph))
    out = NxGraph(nodes, indptr, indices, weights, directed=bool(G.is_directed()),
                  multigraph=multigraph, graph_attrs=G.graph if preserve_graph_attrs else None)
    if multigraph:
        out.edge_keys = [k for nbrs in adj.values() for keys in nbrs.values() for k in keys]
    return out


def to_networkx(graph: NxGraph) -> Any:
    """The networkx graph of a converted one: nodes, edges, weight attributes, ``G.graph``.

    Multigraph edge keys are renumbered ``0, 1, ...`` per node pair.
    """
    import networkx as nx

    cls = {(False, False): nx.Graph, (True, False): nx.DiGraph,
           (False, True): nx.MultiGraph, (True, True): nx.MultiDiGraph}
    out = cls[(graph.directed, graph.multigraph)]()
    out.graph.update(graph.graph)
    out.add_nodes_from(graph.nodes)
    src = np.repeat(np.arange(len(graph.nodes)), np.diff(graph.indptr))
    dst = graph.indices
    # an undirected edge is listed from both ends (a self loop once): keep one
    keep = slice(None) if graph.directed else src <= dst
    names = graph.names
    us, vs = names[src[keep]].tolist(), names[dst[keep]].tolist()
    attrs = {a: w[keep].tolist() for a, w in graph.weights.items()}
    if attrs:
        keys = list(attrs)
        datas = [dict(zip(keys, vals)) for vals in zip(*(attrs[k] for k in keys))]
        out.add_edges_from(zip(us, vs, datas))
    else:
        out.add_edges_from(zip(us, vs))
    return out
