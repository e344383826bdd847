"""The immutable CSR graph every engine runs on."""

from __future__ import annotations

import hashlib
import operator
import os
import weakref
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._hints import option
from ._memory import MemoryRefused, check_memory, graph_bytes
from .errors import InvalidGraph

#: what a graph keeps as its transpose, simple or sorted form when that form is the graph
#: itself: a reference to itself would make a cycle that only the cycle collector frees
_SAME: Any = "same graph"

if TYPE_CHECKING:  # scipy.sparse is imported where it is used: 0.2 s of every import
    import scipy.sparse as sp

__all__ = ["Graph", "DuplicatePolicy", "SelfLoopPolicy"]

DuplicatePolicy = Literal["keep", "drop", "sum", "min", "reject"]
SelfLoopPolicy = Literal["keep", "drop", "reject"]

_INT32_MAX = np.iinfo(np.int32).max


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


_DUPLICATE_POLICIES = ("keep", "drop", "sum", "min", "reject")
_SELF_LOOP_POLICIES = ("keep", "drop", "reject")


def _check_policy(what: str, value: object, choices: tuple[str, ...]) -> None:
    """Refuse a policy name that is not one of ``choices`` (a typo would silently keep all)."""
    if not isinstance(value, str) or value not in choices:
        raise InvalidGraph(f"{what} must be one of {', '.join(map(repr, choices))}; "
                           f"got {value!r}")


def _as_ids(what: str, values: Any) -> np.ndarray:
    """``values`` as a flat int64 array of node ids; fractional, non-finite, non-numeric
    or out-of-int64 ids are refused rather than truncated or wrapped.
    """
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise InvalidGraph(f"{what} must be a 1-d array of integer node ids ({exc})") from None
    kind = arr.dtype.kind
    if kind in "ib":
        return arr.astype(np.int64, copy=False).ravel()
    if kind == "u":
        if arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            raise InvalidGraph(f"node id {int(arr.max())} in {what} is too large; ids must "
                               "be below 2**63 (node ids are int32 unless renumbered)")
        return arr.astype(np.int64).ravel()
    if kind == "f":
        arr = arr.ravel()
        bad = ~np.isfinite(arr) | (arr != np.floor(arr)) | (np.abs(arr) >= 2.0**63)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidGraph(f"{what}[{i}] = {float(arr[i])!r} is not an integer node id")
        return arr.astype(np.int64)
    if kind == "O":
        try:
            return np.asarray(arr, dtype=np.int64).ravel()
        except (TypeError, ValueError, OverflowError):
            pass
    sample = arr.ravel()[:1].tolist()
    shown = f" such as {sample[0]!r}" if sample else ""
    raise InvalidGraph(f"{what} must hold integer node ids, got {arr.dtype.name} values{shown}; "
                       "map names to ids first (Graph.from_networkx keeps the names)")


def _as_weights(values: Any) -> np.ndarray:
    """``values`` as a flat float64 array of real, non-NaN edge weights."""
    try:
        w = np.asarray(values)
        if w.dtype.kind not in "biuf":
            raise TypeError(w.dtype.name)
        w = w.astype(np.float64, copy=False).ravel()
    except (TypeError, ValueError) as exc:
        raise InvalidGraph(f"weights must be real numbers, one per edge ({exc})") from None
    nan = np.isnan(w)
    if nan.any():
        raise InvalidGraph(f"weights[{int(np.flatnonzero(nan)[0])}] is NaN; weights must be "
                           "numbers (drop the edge or give it a weight)")
    big = float(np.finfo(np.float32).max)
    if w.size and not (np.abs(w) <= big).all():
        over = np.flatnonzero(np.isfinite(w) & (np.abs(w) > big))
        if over.size:  # stored as float32, it would become infinite
            e = int(over[0])
            raise InvalidGraph(f"weights[{e}] = {float(w[e]):g} does not fit float32, whose "
                               f"largest value is {big:.3g}; scale the weights down")
    return w


#: Weights of more values than this are scanned for the least by several host threads
#: (one thread takes about 9 ms for 32M float32 values on a GPU server's host).
_THREADED_MIN_VALUES = 1 << 23


def _least(w: np.ndarray) -> float:
    """``np.min(w)`` (NaN where any value is NaN), in slices on host threads where
    ``w`` is large and the host has four cores or more.
    """
    threads = min(8, (os.cpu_count() or 1) // 2)
    if w.size < _THREADED_MIN_VALUES or threads < 2:
        return float(np.min(w))
    from concurrent.futures import ThreadPoolExecutor

    step = -(-w.size // (2 * threads))
    with ThreadPoolExecutor(threads, thread_name_prefix="gswitch-min") as pool:
        parts = list(pool.map(lambda lo: np.min(w[lo: lo + step]), range(0, w.size, step)))
    return float(np.min(parts))


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays hold the same bytes (what :attr:`Graph.fingerprint` hashes):
    compared as unsigned integers of their item size, a slice at a time, so that a
    difference ends the pass and no comparison array larger than a slice is made.
    """
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    kind = np.dtype(f"u{a.dtype.itemsize}") if a.dtype.itemsize in (1, 2, 4, 8) else np.uint8
    a = np.ascontiguousarray(a).reshape(-1).view(kind)
    b = np.ascontiguousarray(b).reshape(-1).view(kind)
    step = 1 << 20
    return all(np.array_equal(a[lo: lo + step], b[lo: lo + step])
               for lo in range(0, a.size, step))


def _memory_fix(src: np.ndarray, dst: np.ndarray, n_nodes: int, renumber: bool) -> str:
    """The advice of a memory refusal: renumber sparse ids, else use a smaller graph."""
    if not renumber and src.size and n_nodes > 4 * (2 * src.size) + 1024:
        distinct = np.unique(np.concatenate([src, dst])).size
        return (f"the largest id is {n_nodes - 1:,} but only {distinct:,} distinct ids are "
                f"used; pass {option('renumber')} to number them 0..{distinct - 1}")
    return "use a smaller graph or a machine with more memory"


class Graph:
    """Immutable compressed-sparse-row graph.

    Node ids are ``0 .. n_nodes - 1`` (int32). Out-edges of node ``v`` are
    ``indices[indptr[v]:indptr[v + 1]]`` with optional float32 ``weights``. Offsets are
    int32 when the edge count allows it and int64 otherwise. An undirected graph stores
    each edge in both directions and has ``directed == False``.

    Parameters
    ----------
    indptr : array_like
        Row offsets, length ``n_nodes + 1``, non-decreasing, starting at 0.
    indices : array_like
        Column (destination) ids, length ``n_edges``.
    weights : array_like, optional
        Edge weights, length ``n_edges``; stored as float32.
    directed : bool
        Whether edges are one-way. ``False`` promises that the arrays are symmetric.
    validate : bool
        Check offsets and ids (cheap, vectorised). Disable only for arrays gswitch built.
    name : str
        A label shown by ``gswitch info``.
    node_labels : sequence, optional
        The original name of every node (``node_labels[i]`` is node ``i``), kept by
        :meth:`from_networkx` and by renumbering loaders so that :meth:`to_networkx` can
        give the names back. ``None`` means the ids are the names.

    Raises
    ------
    InvalidGraph
        If offsets are not monotone, ids are out of range or weights have the wrong length.

    Examples
    --------
    >>> g = Graph.from_edges([0, 1], [1, 2])
    >>> g.n_nodes, g.n_edges, list(g.out_degree)
    (3, 2, [1, 1, 0])

    """

    __slots__ = (
        "_indptr",
        "_indices",
        "_weights",
        "_directed",
        "_reverse",
        "_symmetric",
        "_fingerprint",
        "_hash",
        "_in_degree",
        "_out_degree",
        "_sorted_rows",
        "_simple",
        "_mean_weight",
        "_min_weight",
        "_selector_features",
        "_call_plans",
        "_derived",
        "name",
        "node_labels",
        "__weakref__",
    )

    def __init__(
        self,
        indptr: np.ndarray,
        indices: np.ndarray,
        weights: np.ndarray | None = None,
        *,
        directed: bool = True,
        validate: bool = True,
        name: str = "",
        node_labels: np.ndarray | list | tuple | None = None,
    ) -> None:
        indptr = np.asarray(indptr)
        indices = np.asarray(indices)
        if indptr.ndim != 1 or indptr.size < 1:
            raise InvalidGraph("indptr must be a 1-D array of length n_nodes + 1 >= 1")
        m = int(indptr[-1]) if indptr.size else 0
        offset_dtype = np.int32 if m <= _INT32_MAX else np.int64
        if validate:
            if int(indptr[0]) != 0:
                raise InvalidGraph(f"indptr must start at 0, got {int(indptr[0])}")
            if indptr.size > 1 and np.any(np.diff(indptr) < 0):
                raise InvalidGraph("indptr must be non-decreasing")
            if indices.shape != (m,):
                raise InvalidGraph(
                    f"indices has {indices.size} entries but indptr[-1] says {m} edges"
                )
            n = indptr.size - 1
            if m and (int(indices.min()) < 0 or int(indices.max()) >= n):
                bad = int(indices.min()) if int(indices.min()) < 0 else int(indices.max())
                raise InvalidGraph(f"edge destination {bad} out of range for {n} nodes")
        if indptr.size - 1 > _INT32_MAX:
            raise InvalidGraph(
                f"at most {_INT32_MAX} nodes are supported, got {indptr.size - 1}"
            )
        self._indptr = _readonly(indptr.astype(offset_dtype, copy=False))
        self._indices = _readonly(indices.astype(np.int32, copy=False))
        if weights is not None:
            with np.errstate(over="ignore"):  # weights past float32's range become inf
                weights = np.asarray(weights, dtype=np.float32)
            if validate and weights.shape != (m,):
                raise InvalidGraph(
                    f"weights has {weights.size} entries, expected {m} (one per edge)"
                )
            weights = _readonly(weights)
        self._weights = weights
        self._directed = bool(directed)
        self._reverse: Any = None  # a Graph, a weak reference to one, _SAME or None
        self._symmetric: Graph | None = None
        self._fingerprint: str | None = None
        self._hash: int | None = None
        self._in_degree: np.ndarray | None = None
        self._out_degree: np.ndarray | None = None
        self._sorted_rows: Any = None  # a Graph, _SAME or None
        self._simple: Any = None  # a Graph, _SAME or None
        self._mean_weight: float | None = None
        self._min_weight: float | None = None
        #: gswitch.selector.graph_features, computed on first use
        self._selector_features: dict[str, float] | None = None
        #: gswitch.runner's resolved calls (algorithm, configuration, backend), kept
        self._call_plans: dict | None = None
        #: Graph.cached's values
        self._derived: dict | None = None
        self.name = name
        if node_labels is not None and len(node_labels) != indptr.size - 1:
            raise InvalidGraph(f"node_labels has {len(node_labels)} entries, expected one per "
                               f"node ({indptr.size - 1})")
        self.node_labels = node_labels

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_edges(
        cls,
        src: np.ndarray | list[int],
        dst: np.ndarray | list[int],
        weights: np.ndarray | list[float] | None = None,
        *,
        n_nodes: int | None = None,
        directed: bool = True,
        duplicates: DuplicatePolicy = "keep",
        self_loops: SelfLoopPolicy = "keep",
        renumber: bool = False,
        name: str = "",
    ) -> Graph:
        """Build a graph from parallel arrays of edge endpoints.

        Parameters
        ----------
        src, dst : array_like of int
            Edge endpoints, 0-based unless ``renumber`` is set.
        weights : array_like of float, optional
            One weight per edge.
        n_nodes : int, optional
            Number of nodes; defaults to ``max id + 1``.
        directed : bool
            If ``False`` every edge is also added in the reverse direction.
        duplicates : {"keep", "drop", "sum", "min", "reject"}
            What to do with repeated ``(src, dst)`` pairs: keep all copies, keep the
            first, sum or take the minimum of their weights, or raise. Undirected, the
            first edge joining two nodes (either way round) is kept in both directions.
        self_loops : {"keep", "drop", "reject"}
            What to do with edges ``v -> v``.
        renumber : bool
            Map arbitrary (sparse, non-contiguous) ids to ``0 .. k-1`` in sorted order;
            ``numpy.unique`` of the original ids gives the mapping back.
        name : str
            A label shown by ``gswitch info``.

        Returns
        -------
        Graph

        Raises
        ------
        InvalidGraph
            On negative, out-of-range, fractional or non-numeric ids, mismatched lengths,
            NaN or non-real weights, an unknown policy name, or a ``reject`` policy hit.

        """
        _check_policy("duplicates", duplicates, _DUPLICATE_POLICIES)
        _check_policy("self_loops", self_loops, _SELF_LOOP_POLICIES)
        src = _as_ids("src", src)
        dst = _as_ids("dst", dst)
        if src.shape != dst.shape:
            raise InvalidGraph(f"src has {src.size} entries but dst has {dst.size}")
        if n_nodes is not None:
            try:
                n_nodes = operator.index(n_nodes)
            except TypeError:
                raise InvalidGraph(f"n_nodes must be an integer, got {n_nodes!r}") from None
        w = None
        if weights is not None:
            w = _as_weights(weights)
            if w.shape != src.shape:
                raise InvalidGraph(f"weights has {w.size} entries, expected {src.size}")
        labels = None
        if renumber and src.size:
            ids, inv = np.unique(np.concatenate([src, dst]), return_inverse=True)
            src, dst = inv[: src.size], inv[src.size :]
            if n_nodes is None:
                n_nodes = ids.size
            labels = ids
        if src.size:
            lo = min(int(src.min()), int(dst.min()))
            if lo < 0:
                raise InvalidGraph(f"node id {lo} is negative; ids must be >= 0")
            hi = max(int(src.max()), int(dst.max()))
        else:
            hi = -1
        if n_nodes is None:
            n_nodes = hi + 1
        if n_nodes < 0:
            raise InvalidGraph(f"n_nodes must be >= 0, got {n_nodes}")
        if hi >= n_nodes:
            raise InvalidGraph(
                f"node id {hi} out of range for n_nodes={n_nodes}; pass a larger n_nodes"
            )
        if n_nodes > _INT32_MAX:
            raise InvalidGraph(
                f"a graph of {n_nodes:,} nodes is too large: node ids are int32, so at most "
                f"{_INT32_MAX:,} nodes are supported"
                + ("" if renumber else f"; if the ids are sparse, pass {option('renumber')}")
            )
        stored = src.size * (1 if directed else 2)
        try:
            check_memory(f"a graph of {n_nodes:,} nodes and {stored:,} edges",
                         graph_bytes(n_nodes, stored, w is not None),
                         _memory_fix(src, dst, n_nodes, renumber))
        except MemoryRefused as exc:
            raise InvalidGraph(str(exc)) from None
        loops = src == dst
        if self_loops == "reject" and loops.any():
            v = int(src[loops][0])
            raise InvalidGraph(f"self loop at node {v}; pass self_loops='keep' or 'drop'")
        if self_loops == "drop" and loops.any():
            keep = ~loops
            src, dst = src[keep], dst[keep]
            w = None if w is None else w[keep]
        if not directed and duplicates == "drop" and w is not None:
            # the first edge joining u and v in either orientation is the one kept, in
            # both directions: dropped per direction, u -> v could keep one edge's weight
            # and v -> u another's
            src, dst, w = _first_per_pair(src, dst, w, n_nodes)
        if not directed:
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
            if w is not None:
                w = np.concatenate([w, w])
            # an undirected self loop is one edge, not two
            if self_loops == "keep":
                half = src.size // 2
                dup_loop = np.zeros(src.size, dtype=bool)
                dup_loop[half:] = src[half:] == dst[half:]
                if dup_loop.any():
                    src, dst = src[~dup_loop], dst[~dup_loop]
                    w = None if w is None else w[~dup_loop]
        g = cls._from_coo(src, dst, w, n_nodes, directed, duplicates, name)
        g.node_labels = labels
        return g

    @classmethod
    def _from_coo(
        cls,
        src: np.ndarray,
        dst: np.ndarray,
        w: np.ndarray | None,
        n_nodes: int,
        directed: bool,
        duplicates: DuplicatePolicy,
        name: str,
    ) -> Graph:
        # stable sort by (src, dst) keeps the input order among equal keys
        width = max(n_nodes, 1)
        key = src.astype(np.int64) * width + dst
        if w is None:
            # without weights equal keys are indistinguishable: sorting the keys alone and
            # decoding them is about twice as fast as argsort plus two gathers
            key = np.sort(key)
            src = key // width
            dst = key - src * width
        else:
            m = key.size
            shift = max(m - 1, 1).bit_length()
            if m and (width * width) << shift < 2**63:
                # pack the input position into the low bits: one plain sort is then stable
                # and about twice as fast as a stable argsort plus gathers
                packed = np.sort((key << shift) | np.arange(m, dtype=np.int64))
                order = packed & ((1 << shift) - 1)
                key = packed >> shift
                src = key // width
                dst = key - src * width
            else:
                order = np.argsort(key, kind="stable")
                key = key[order]
                src, dst = src[order], dst[order]
            w = w[order]
        if duplicates != "keep" and key.size:
            first = np.ones(key.size, dtype=bool)
            first[1:] = key[1:] != key[:-1]
            if not first.all():
                if duplicates == "reject":
                    i = int(np.flatnonzero(~first)[0])
                    raise InvalidGraph(
                        f"duplicate edge {int(src[i])} -> {int(dst[i])}; pass duplicates="
                        "'keep', 'drop', 'sum' or 'min'"
                    )
                if w is not None and duplicates in ("sum", "min"):
                    starts = np.flatnonzero(first)
                    ufunc = np.add if duplicates == "sum" else np.minimum
                    w = ufunc.reduceat(w, starts)
                elif w is not None:
                    w = w[first]
                src, dst = src[first], dst[first]
        counts = np.bincount(src, minlength=n_nodes) if src.size else np.zeros(n_nodes, np.int64)
        indptr = np.zeros(n_nodes + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return cls(indptr, dst, w, directed=directed, validate=False, name=name)

    @classmethod
    def from_scipy(cls, matrix: sp.spmatrix | sp.sparray, *, directed: bool = True,
                   weighted: bool = True, name: str = "") -> Graph:
        """Build a graph from any square scipy.sparse matrix (entry ``(i, j)`` is ``i -> j``).

        Duplicate entries of COO input are kept as parallel edges; explicit zeros are kept
        as edges of weight 0.

        Parameters
        ----------
        matrix : scipy.sparse matrix or array
            Square adjacency matrix.
        directed : bool
            Set ``False`` only when the matrix is symmetric.
        weighted : bool
            Keep the matrix values as float32 edge weights.
        name : str
            A label.

        Returns
        -------
        Graph

        """
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise InvalidGraph(f"adjacency matrix must be square, got shape {matrix.shape}")
        n = int(matrix.shape[0])
        if n > _INT32_MAX:
            raise InvalidGraph(f"a {n:,}x{n:,} matrix is too large: node ids are int32, so at "
                               f"most {_INT32_MAX:,} nodes are supported")
        try:
            check_memory(f"a graph of {n:,} nodes and {matrix.nnz:,} edges",
                         graph_bytes(n, matrix.nnz, weighted),
                         "use a smaller matrix or a machine with more memory")
        except MemoryRefused as exc:
            raise InvalidGraph(str(exc)) from None
        import scipy.sparse as sp

        coo = sp.coo_array(matrix)
        if weighted and coo.data.dtype.kind not in "biuf":
            raise InvalidGraph(f"matrix values must be real numbers to become edge weights, got "
                               f"dtype {coo.data.dtype}; pass weighted=False")
        w = np.asarray(coo.data, dtype=np.float64) if weighted else None
        return cls._from_coo(np.asarray(coo.row, np.int64), np.asarray(coo.col, np.int64),
                             w, n, directed, "keep", name)

    @classmethod
    def from_networkx(cls, nx_graph: Any, *, weight: str | None = "weight",
                      default_weight: float = 1.0, name: str | None = None) -> Graph:
        """Build a graph from a networkx graph, keeping its node names in :attr:`node_labels`.

        Node ``i`` of the result is the ``i``-th node of ``nx_graph.nodes`` (insertion
        order), so ``dict(zip(nx_graph.nodes, array))`` maps any per-node result back to
        the networkx names, and :meth:`to_networkx` restores them.

        Parameters
        ----------
        nx_graph : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph
            The graph. Undirected graphs become undirected (each edge stored both ways);
            parallel edges of multigraphs stay parallel edges.
        weight : str or None
            Edge attribute read as the weight. The graph is weighted when at least one
            edge has it; edges without it get ``default_weight``. ``None`` ignores weights.
        default_weight : float
            Weight of edges that lack the attribute (networkx's convention is 1).
        name : str, optional
            Graph label; defaults to ``nx_graph.name``.

        Returns
        -------
        Graph

        Raises
        ------
        InvalidGraph
            If a weight is not a real number, or the graph is too large for int32 ids
            or for the memory available.

        Examples
        --------
        >>> import networkx as nx
        >>> g = Graph.from_networkx(nx.path_graph(["a", "b", "c"]))
        >>> g.n_nodes, g.n_edges, list(g.node_labels)
        (3, 4, ['a', 'b', 'c'])

        """
        nodes = list(nx_graph.nodes)
        n = len(nodes)
        m = nx_graph.number_of_edges()
        directed = bool(nx_graph.is_directed())
        weighted = weight is not None and any(
            weight in d for _, _, d in nx_graph.edges(data=True))
        try:
            check_memory(f"a graph of {n:,} nodes and {m:,} edges",
                         graph_bytes(n, m * (1 if directed else 2), weighted) + 200 * n,
                         "convert a smaller graph or use a machine with more memory")
        except MemoryRefused as exc:
            raise InvalidGraph(str(exc)) from None
        index = {v: i for i, v in enumerate(nodes)}
        src = np.fromiter((index[u] for u, _ in nx_graph.edges()), dtype=np.int64, count=m)
        dst = np.fromiter((index[v] for _, v in nx_graph.edges()), dtype=np.int64, count=m)
        w = None
        if weighted:
            values = []
            for u, v, d in nx_graph.edges(data=weight, default=default_weight):
                try:
                    values.append(float(d))
                except (TypeError, ValueError):
                    raise InvalidGraph(f"edge {u!r} -> {v!r} has {weight}={d!r}, which is not "
                                       "a number; fix it or pass weight=None") from None
            w = np.asarray(values, dtype=np.float64)
        label = name if name is not None else str(getattr(nx_graph, "name", "") or "")
        g = cls.from_edges(src, dst, w, n_nodes=n, directed=directed, name=label)
        g.node_labels = nodes
        return g

    def to_networkx(self, labels: Any = None, *, weight: str = "weight",
                    multigraph: bool | None = None) -> Any:
        """The graph as a networkx graph (needs networkx).

        Parameters
        ----------
        labels : sequence or mapping, optional
            Name of each node: ``labels[i]`` names node ``i``. Defaults to
            :attr:`node_labels` (set by :meth:`from_networkx` and renumbering loaders),
            else the ids ``0 .. n_nodes - 1``.
        weight : str
            Edge attribute that receives the weights (unweighted graphs get none).
        multigraph : bool, optional
            Return a ``MultiGraph``/``MultiDiGraph``. By default only when the graph has
            parallel edges, which a plain networkx graph would merge.

        Returns
        -------
        networkx.DiGraph, networkx.Graph, or their multigraph variants
            Directed when :attr:`directed`; every node is present, isolated ones too.

        Raises
        ------
        InvalidGraph
            If ``labels`` does not name every node exactly once.

        """
        import networkx as nx

        n = self.n_nodes
        if labels is None:
            labels = self.node_labels if self.node_labels is not None else range(n)
        if isinstance(labels, dict):
            names = [labels.get(i, i) for i in range(n)]
        else:
            names = list(labels)
        if len(names) != n:
            raise InvalidGraph(f"labels has {len(names)} entries, expected one per node ({n})")
        names = [x.item() if isinstance(x, np.generic) else x for x in names]
        if len(set(names)) != n:
            raise InvalidGraph("labels must name every node differently; two nodes share a name")
        src, dst = self.edges()
        if not self._directed:
            keep = src <= dst
            src, dst = src[keep], dst[keep]
            w = None if self._weights is None else self._weights[keep]
        else:
            w = self._weights
        if multigraph is None:
            key = src.astype(np.int64) * max(n, 1) + dst
            multigraph = bool(key.size > 1 and np.unique(key).size < key.size)
        if self._directed:
            out = nx.MultiDiGraph() if multigraph else nx.DiGraph()
        else:
            out = nx.MultiGraph() if multigraph else nx.Graph()
        out.graph["name"] = self.name
        out.add_nodes_from(names)
        s_names = [names[i] for i in src.tolist()]
        d_names = [names[i] for i in dst.tolist()]
        if w is None:
            out.add_edges_from(zip(s_names, d_names))
        else:
            out.add_weighted_edges_from(zip(s_names, d_names, w.astype(float).tolist()),
                                        weight=weight)
        return out

    # ------------------------------------------------------------------ properties
    @property
    def indptr(self) -> np.ndarray:
        """Row offsets (int32, or int64 past 2**31 - 1 edges)."""
        return self._indptr

    @property
    def indices(self) -> np.ndarray:
        """Destination id of each edge (int32)."""
        return self._indices

    @property
    def weights(self) -> np.ndarray | None:
        """Edge weights (float32) or ``None`` for an unweighted graph."""
        return self._weights

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return self._indptr.size - 1

    @property
    def n_edges(self) -> int:
        """Number of stored (directed) edges."""
        return int(self._indptr[-1])

    @property
    def directed(self) -> bool:
        """``False`` when every edge is stored in both directions."""
        return self._directed

    @property
    def weighted(self) -> bool:
        """Whether the graph carries edge weights."""
        return self._weights is not None

    @property
    def out_degree(self) -> np.ndarray:
        """Out-degree of every node (int64, read-only), computed once."""
        if self._out_degree is None:
            d = np.diff(self._indptr).astype(np.int64)
            d.flags.writeable = False
            self._out_degree = d
        return self._out_degree

    @property
    def in_degree(self) -> np.ndarray:
        """In-degree of every node (int64): the reverse graph's out-degree where that is
        built already, else a count of the edges' targets.
        """
        if self._in_degree is None:
            rev = self.built_reverse()
            if rev is not None and rev is not self:
                d = np.diff(rev._indptr).astype(np.int64)
            else:
                d = np.bincount(self._indices, minlength=self.n_nodes).astype(np.int64)
            d.flags.writeable = False
            self._in_degree = d
        return self._in_degree

    @property
    def mean_weight(self) -> float:
        """Mean edge weight (1.0 without weights or edges), computed once."""
        if self._mean_weight is None:
            w = self._weights
            self._mean_weight = 1.0 if w is None or w.size == 0 else float(
                np.mean(w, dtype=np.float64))
        return self._mean_weight

    @property
    def min_weight(self) -> float:
        """Smallest edge weight, NaN if any weight is NaN (0.0 without weights or edges),
        computed once: algorithms that need non-negative weights check it on every run.
        """
        if self._min_weight is None:
            w = self._weights
            self._min_weight = 0.0 if w is None or w.size == 0 else _least(w)
        return self._min_weight

    def cached(self, key: Any, build: Any = None) -> Any:
        """What ``build()`` returns, computed once per graph and ``key`` and kept with
        the graph (which never changes): structure that algorithms derive from it, such
        as the boundary of a partition (:mod:`gswitch.algorithms.overlay`).

        Parameters
        ----------
        key : hashable
            Names the value; include everything it depends on besides the graph.
        build : callable, optional
            ``build()`` computes it. Two threads asking at once may both build it; one
            result is kept, and both are the same. Without it, nothing is built or kept.

        Returns
        -------
        object
            The kept value; ``None`` when there is none and no ``build``.

        Examples
        --------
        >>> import gswitch as gs
        >>> g = gs.Graph.from_edges([0, 1], [1, 2])
        >>> g.cached("edges", lambda: g.n_edges) is g.cached("edges", lambda: -1)
        True

        """
        kept = self._derived
        if kept is None:
            kept = self._derived = {}
        if key not in kept:
            if build is None:
                return None
            kept.setdefault(key, build())
        return kept[key]

    def simple(self) -> Graph:
        """The graph without self loops and parallel edges, built once; itself when it
        has neither. Parallel edges merge into one of the lightest weight: the edge a
        shortest path takes (as SSSP and networkx's weighted functions read a
        multigraph), and the same in both directions of an undirected edge listed twice
        with different weights.
        """
        if self._simple is None:
            g = self.remove_self_loops().deduplicate("min")
            same = g.n_edges == self.n_edges
            self._simple = _SAME if same else g
            if not same:
                g._simple = _SAME
        return self if self._simple is _SAME else self._simple

    def with_sorted_rows(self) -> Graph:
        """The graph with each row's destinations in ascending order (itself when they
        already are; weights follow their edges), built once.
        """
        if self._sorted_rows is None:
            idx = self._indices
            descents = np.flatnonzero(idx[1:] < idx[:-1])  # i: idx[i + 1] < idx[i]
            # a descent across a row boundary (the last edge of one row, the first of
            # the next) is not out of order
            starts = self._indptr[1:-1]
            if descents.size and np.isin(descents + 1, starts, invert=True).any():
                src = self.sources().astype(np.int64)
                order = np.lexsort((idx, src))
                w = None if self._weights is None else self._weights[order]
                g = Graph(self._indptr, idx[order], w, directed=self._directed,
                          validate=False, name=self.name, node_labels=self.node_labels)
                g._sorted_rows = _SAME
                self._sorted_rows = g
            else:
                self._sorted_rows = _SAME
        return self if self._sorted_rows is _SAME else self._sorted_rows

    def sources(self) -> np.ndarray:
        """Source id of every edge, aligned with :attr:`indices` (int32)."""
        return np.repeat(np.arange(self.n_nodes, dtype=np.int32), np.diff(self._indptr))

    @property
    def reverse(self) -> Graph:
        """The transposed graph (in-edges as CSR), built once on first use.

        The transpose of a directed graph refers back to it weakly (its own ``reverse``
        is this graph while it lives), and a graph that is its own transpose or its own
        simple or sorted form records so without a reference to itself: a graph the
        caller drops is freed at once, with its device copy, not at the next cycle
        collection.
        """
        rev = self.built_reverse()
        if rev is None:
            if not self._directed:
                self._reverse = _SAME
                return self
            rev = Graph(*_transpose(self._indptr, self._indices, self._weights,
                                    self.n_nodes),
                        directed=True, validate=False,
                        name=f"{self.name}^T" if self.name else "")
            rev._reverse = weakref.ref(self)
            self._reverse = rev
        return rev

    def built_reverse(self) -> Graph | None:
        """The transposed graph where it is built (and, for a transpose, its original is
        alive), else ``None``; builds nothing.
        """
        rev = self._reverse
        if rev is _SAME:
            return self
        if isinstance(rev, weakref.ref):
            return rev()
        return rev

    @property
    def n_self_loops(self) -> int:
        """Number of edges ``v -> v``."""
        return int(np.count_nonzero(self.sources() == self._indices))

    @property
    def fingerprint(self) -> str:
        """Stable hex digest of the structure and weights; the tuning key of a graph."""
        if self._fingerprint is None:
            h = hashlib.blake2b(digest_size=16)
            h.update(f"gswitch-graph-v1:{self.n_nodes}:{self.n_edges}:{int(self._directed)}"
                     .encode())
            h.update(self._indptr.astype(np.int64).tobytes())
            h.update(self._indices.tobytes())
            if self._weights is not None:
                h.update(self._weights.tobytes())
            self._fingerprint = h.hexdigest()
        return self._fingerprint

    def __repr__(self) -> str:
        kind = "directed" if self._directed else "undirected"
        w = ", weighted" if self.weighted else ""
        label = f" {self.name!r}" if self.name else ""
        return f"<Graph{label} {kind}{w}: {self.n_nodes} nodes, {self.n_edges} edges>"

    def __eq__(self, other: object) -> bool:
        if other is self:  # a weak-keyed lookup of the same graph compares it to itself
            return True
        if not isinstance(other, Graph):
            return NotImplemented
        if self._fingerprint is not None and other._fingerprint is not None:
            return self._fingerprint == other._fingerprint
        # what equal fingerprints mean, compared directly: one pass over the arrays, where
        # hashing two graphs of 30M edges takes over a second (a resident-copy lookup
        # of a graph loaded again compares it with the copy's graph)
        if (self.n_nodes, self.n_edges, self._directed) != (
                other.n_nodes, other.n_edges, other._directed):
            return False
        if self.n_edges == 0:  # no bytes of indices or weights hashed
            return bool(np.array_equal(self._indptr, other._indptr))
        if (self._weights is None) != (other._weights is None):
            return False
        return bool(np.array_equal(self._indptr, other._indptr)
                    and _same_bytes(self._indices, other._indices)
                    and (self._weights is None or _same_bytes(self._weights, other._weights)))

    def __hash__(self) -> int:
        # from the sizes and a fixed sample of the arrays, not the fingerprint: equal
        # graphs have equal arrays, so equal samples (hashes agree with ==), and a
        # graph's first use as a key (the GPU engine's resident copies) no longer
        # hashes every byte of it (264 ms on 15M edges); == compares fingerprints only
        # between different objects whose samples collide
        if self._hash is None:
            picks = [self._indptr[np.linspace(0, self.n_nodes, 17).astype(np.int64)]]
            if self.n_edges:
                at = np.linspace(0, self.n_edges - 1, 64).astype(np.int64)
                picks.append(self._indices[at])
                if self._weights is not None:
                    picks.append(self._weights[at])
            self._hash = hash((self.n_nodes, self.n_edges, self._directed,
                               self._weights is not None,
                               *(p.astype(np.float64).tobytes() for p in picks)))
        return self._hash

    # ------------------------------------------------------------------ transforms
    def to_scipy(self) -> sp.csr_array:
        """Adjacency as a ``scipy.sparse.csr_array`` (weights, or ones when unweighted).

        Parallel edges stay separate entries; scipy sums them on most operations.
        """
        data = self._weights.copy() if self._weights is not None else np.ones(self.n_edges,
                                                                              np.float32)
        import scipy.sparse as sp

        return sp.csr_array((data, self._indices.copy(), self._indptr.copy()),
                            shape=(self.n_nodes,) * 2)

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """``(src, dst)`` arrays of every stored edge."""
        return self.sources(), self._indices

    def with_weights(self, weights: np.ndarray | None) -> Graph:
        """Return the same structure with other edge weights (``None`` drops them)."""
        return Graph(self._indptr, self._indices, weights, directed=self._directed, name=self.name,
                     node_labels=self.node_labels)

    def symmetrize(self) -> Graph:
        """Undirected version: the union of each edge and its reverse, parallel edges merged.

        Weights of merged edges take the minimum. Built once and kept (a graph is
        immutable), so algorithms that need it, and the GPU arrays uploaded for it, are
        not rebuilt on every run.
        """
        if not self._directed:
            return self
        if self._symmetric is not None:
            return self._symmetric
        src, dst = self.edges()
        w = self._weights
        g = Graph._from_coo(
            np.concatenate([src, dst]).astype(np.int64),
            np.concatenate([dst, src]).astype(np.int64),
            None if w is None else np.concatenate([w, w]).astype(np.float64),
            self.n_nodes, False, "min", self.name,
        )
        g.node_labels = self.node_labels
        self._symmetric = g
        return g

    def remove_self_loops(self) -> Graph:
        """Copy without edges ``v -> v``."""
        src, dst = self.edges()
        keep = src != dst
        if keep.all():
            return self
        w = None if self._weights is None else self._weights[keep]
        g = Graph._from_coo(src[keep].astype(np.int64), dst[keep].astype(np.int64), w,
                            self.n_nodes, self._directed, "keep", self.name)
        g.node_labels = self.node_labels
        return g

    def deduplicate(self, policy: DuplicatePolicy = "drop") -> Graph:
        """Copy with parallel edges merged by ``policy`` (drop, sum, min or reject).

        ``drop`` keeps the first parallel edge; on an undirected graph, the first in the
        row of the smaller end, in both directions.
        """
        _check_policy("policy", policy, _DUPLICATE_POLICIES)
        src, dst = self.edges()
        w = None if self._weights is None else self._weights.astype(np.float64)
        if not self._directed and policy == "drop" and w is not None:
            # each undirected edge once (a self loop is stored once), then both ways again
            src, dst, w = _first_per_pair(src, dst, w, self.n_nodes, canonical=True)
            mirror = src != dst
            src, dst, w = (np.concatenate([src, dst[mirror]]),
                           np.concatenate([dst, src[mirror]]), np.concatenate([w, w[mirror]]))
        g = Graph._from_coo(src.astype(np.int64), dst.astype(np.int64), w, self.n_nodes,
                            self._directed, policy, self.name)
        g.node_labels = self.node_labels
        return g

    def is_symmetric(self) -> bool:
        """Whether every edge ``u -> v`` has a matching ``v -> u`` (pattern only)."""
        if not self._directed:
            return True
        # compare patterns, not values: an explicit zero weight is still an edge and
        # parallel edges count once
        ones = np.ones(self.n_edges, dtype=np.int8)
        import scipy.sparse as sp

        a = sp.csr_array((ones, self._indices, self._indptr), shape=(self.n_nodes,) * 2,
                         copy=True)
        a.sum_duplicates()
        t = a.T.tocsr()
        t.sum_duplicates()
        return bool(np.array_equal(a.indptr, t.indptr) and np.array_equal(a.indices, t.indices))


def _first_per_pair(src: np.ndarray, dst: np.ndarray, w: np.ndarray, n_nodes: int,
                    canonical: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first edge, in input order, of each unordered pair ``{u, v}``; ``canonical``:
    the edges ``u -> v`` with ``u <= v`` only (an undirected graph's stored edges, each
    of which appears both ways).
    """
    if canonical:
        keep = src <= dst
        src, dst, w = src[keep], dst[keep], w[keep]
    lo = np.minimum(src, dst).astype(np.int64)
    key = lo * max(n_nodes, 1) + np.maximum(src, dst)
    _, first = np.unique(key, return_index=True)
    first.sort()
    return src[first], dst[first], w[first]


def _transpose(indptr: np.ndarray, indices: np.ndarray, weights: np.ndarray | None,
               n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The CSR arrays of the transposed graph: scipy's CSR-to-CSC transpose, one
    counting pass in C that keeps each in-edge list in source order (what a stable sort
    by target gives) and carries the weights along, 3 to 9 times faster than a stable
    argsort of the targets. Unweighted, it carries a byte per edge that nothing reads.
    """
    import scipy.sparse as sp

    m = indices.size
    data = np.zeros(m, dtype=bool) if weights is None else weights
    try:  # the kernel behind tocsc(), into arrays of the graph's own index type
        from scipy.sparse._sparsetools import csr_tocsc
    except ImportError:  # pragma: no cover
        csr_tocsc = None
    if csr_tocsc is not None and indptr.dtype == indices.dtype:
        out_ptr = np.empty(n + 1, dtype=indptr.dtype)
        out_idx = np.empty(m, dtype=indices.dtype)
        out_w = np.empty(m, dtype=data.dtype)
        csr_tocsc(n, n, indptr, indices, data, out_ptr, out_idx, out_w)
    else:
        csc = sp.csr_array((data, indices, indptr), shape=(n, n)).tocsc()
        out_ptr, out_idx, out_w = csc.indptr, csc.indices, csc.data
    return out_ptr, out_idx, None if weights is None else out_w
