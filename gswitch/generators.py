"""Seeded synthetic graphs: RMAT/Kronecker, uniform random, grids, road-like grids, stars, paths.

Every generator is vectorised over all edges and takes a ``seed`` for a
:class:`numpy.random.Generator`, so the same arguments always give the same graph (and the
same :attr:`~gswitch.graph.Graph.fingerprint`). Weighted generators draw integer weights
in ``[1, 64)`` stored as float32 unless a docstring says otherwise.
:func:`parse_generator_spec` turns the short strings the command line accepts
(``rmat:16:8,seed=3,weighted``) into graphs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._memory import MemoryRefused, check_memory, graph_bytes
from .errors import InvalidInput
from .graph import DuplicatePolicy, Graph, SelfLoopPolicy

__all__ = [
    "rmat",
    "uniform_random",
    "grid2d",
    "road",
    "star",
    "path",
    "clique_chain",
    "parse_generator_spec",
    "GENERATORS",
    "WEIGHT_LOW",
    "WEIGHT_HIGH",
]

#: Inclusive lower bound of generated integer weights.
WEIGHT_LOW = 1
#: Exclusive upper bound of generated integer weights.
WEIGHT_HIGH = 64

_MAX_SCALE = 30  # 2**30 nodes still leaves int32 ids


_INT32_MAX = int(np.iinfo(np.int32).max)


class _TooLarge(InvalidInput):
    """A generator's arguments ask for more nodes or memory than can be had."""


def _require(what: str, n: int, stored_edges: int, weighted: bool,
             scratch_per_edge: int) -> None:
    """Refuse a graph whose size exceeds int32 ids or the memory available, before drawing it.

    ``scratch_per_edge`` counts the generator's own arrays (endpoints drawn, ids of a grid,
    a permutation) that live next to the graph being built.
    """
    if n > _INT32_MAX:
        raise _TooLarge(f"{what} has {n:,} nodes, but node ids are int32, so at most "
                        f"{_INT32_MAX:,} nodes are supported; use a smaller size")
    try:
        check_memory(f"{what} ({n:,} nodes, {stored_edges:,} stored edges)",
                     graph_bytes(n, stored_edges, weighted) + scratch_per_edge * stored_edges,
                     "use a smaller size or a machine with more memory")
    except MemoryRefused as exc:
        raise _TooLarge(str(exc)) from None


def _weights(rng: np.random.Generator, m: int) -> np.ndarray:
    return rng.integers(WEIGHT_LOW, WEIGHT_HIGH, size=m).astype(np.float32)


def _check_count(what: str, value: int, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidInput(f"{what} must be an integer, got {value!r}")
    if value < minimum:
        raise InvalidInput(f"{what} must be >= {minimum}, got {value}")
    return int(value)


def rmat(
    scale: int,
    edge_factor: int = 16,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    *,
    seed: int = 0,
    weighted: bool = False,
    directed: bool = True,
    permute: bool = True,
    duplicates: DuplicatePolicy = "keep",
    self_loops: SelfLoopPolicy = "keep",
) -> Graph:
    """Recursive-matrix (RMAT / Kronecker) power-law graph, as in Graph500.

    Each of the ``edge_factor * 2**scale`` edges picks one quadrant of the adjacency
    matrix per bit of its endpoints, with probabilities ``a`` (top left), ``b`` (top
    right), ``c`` (bottom left) and ``d = 1 - a - b - c`` (bottom right). The choice is
    vectorised over all edges, one bit level at a time.

    Parameters
    ----------
    scale : int
        ``log2`` of the node count (0..30).
    edge_factor : int
        Edges generated per node.
    a, b, c : float
        Quadrant probabilities; ``a + b + c`` must not exceed 1.
    seed : int
        Seed of the random generator.
    weighted : bool
        Add integer weights in ``[1, 64)`` as float32.
    directed : bool
        ``False`` stores every generated edge in both directions.
    permute : bool
        Relabel nodes with a random permutation so that the highest-degree node is not
        always node 0 (and degree is not correlated with id).
    duplicates : {"keep", "drop", "sum", "min", "reject"}
        Policy for the parallel edges RMAT naturally produces.
    self_loops : {"keep", "drop", "reject"}
        Policy for generated self loops.

    Returns
    -------
    Graph
        ``2**scale`` nodes and ``edge_factor * 2**scale`` generated edges (before the
        duplicate and self-loop policies; doubled when undirected).

    Raises
    ------
    InvalidInput
        If ``scale`` or ``edge_factor`` is out of range or the probabilities are invalid.

    References
    ----------
    D. Chakrabarti, Y. Zhan, C. Faloutsos, "R-MAT: A Recursive Model for Graph Mining",
    SDM 2004.

    """
    scale = _check_count("rmat scale", scale)
    if scale > _MAX_SCALE:
        raise InvalidInput(f"rmat scale must be <= {_MAX_SCALE}, got {scale}")
    edge_factor = _check_count("rmat edge_factor", edge_factor)
    probs = (a, b, c)
    if any(not np.isfinite(p) or p < 0 for p in probs) or sum(probs) > 1 + 1e-12:
        raise InvalidInput(
            f"rmat probabilities must be >= 0 with a + b + c <= 1, got a={a}, b={b}, c={c}"
        )
    n = 1 << scale
    m = edge_factor * n
    # endpoints, their shifted copies and the permuted copies
    _require(f"rmat scale {scale} with edge factor {edge_factor}", n,
             m * (1 if directed else 2), weighted, 24)
    rng = np.random.default_rng(seed)
    src = np.empty(m, dtype=np.uint32)  # scale <= 30: endpoints fit 32 bits
    dst = np.empty(m, dtype=np.uint32)
    ab, abc = a + b, a + b + c
    # chunks of edges small enough to stay in cache while all bit levels are drawn
    chunk = 1 << 15
    for lo in range(0, m, chunk):
        hi = min(lo + chunk, m)
        rows = rng.random((scale, hi - lo), dtype=np.float32)
        s_bits = np.zeros(hi - lo, dtype=np.uint32)
        d_bits = np.zeros(hi - lo, dtype=np.uint32)
        for r in rows:
            # quadrant: [0, a) top-left, [a, a+b) top-right, [a+b, a+b+c) bottom-left,
            # rest bottom-right; the row bit is set in the bottom half, the column bit on
            # the right
            s_bits <<= 1
            s_bits |= r >= ab
            d_bits <<= 1
            d_bits |= ((r >= a) & (r < ab)) | (r >= abc)
        src[lo:hi] = s_bits
        dst[lo:hi] = d_bits
    if permute and n > 1:
        perm = rng.permutation(n)
        src, dst = perm[src], perm[dst]
    w = _weights(rng, m) if weighted else None
    return Graph.from_edges(
        src, dst, w, n_nodes=n, directed=directed, duplicates=duplicates,
        self_loops=self_loops, name=f"rmat-{scale}-{edge_factor}",
    )


def uniform_random(
    n: int,
    m: int,
    *,
    seed: int = 0,
    weighted: bool = False,
    directed: bool = True,
) -> Graph:
    """Erdős–Rényi-style graph: ``m`` edges with endpoints drawn uniformly from ``n`` nodes.

    Parallel edges and self loops are kept (they are rare when ``m << n**2``).

    Parameters
    ----------
    n : int
        Number of nodes.
    m : int
        Number of generated edges (doubled in storage when undirected).
    seed : int
        Seed of the random generator.
    weighted : bool
        Add integer weights in ``[1, 64)`` as float32.
    directed : bool
        ``False`` stores every edge in both directions.

    Returns
    -------
    Graph

    Raises
    ------
    InvalidInput
        If ``n`` or ``m`` is negative, or ``m > 0`` with no nodes.

    """
    n = _check_count("uniform n", n)
    m = _check_count("uniform m", m)
    if m and not n:
        raise InvalidInput(f"uniform graph with {m} edges needs n >= 1, got n=0")
    _require("a uniform random graph", n, m * (1 if directed else 2),
             weighted, 16)
    rng = np.random.default_rng(seed)
    src = rng.integers(0, max(n, 1), size=m)
    dst = rng.integers(0, max(n, 1), size=m)
    w = _weights(rng, m) if weighted else None
    return Graph.from_edges(src, dst, w, n_nodes=n, directed=directed,
                            name=f"uniform-{n}-{m}")


def _grid_edge_count(rows: int, cols: int) -> int:
    return rows * max(cols - 1, 0) + cols * max(rows - 1, 0)


def _grid_edges(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    ids = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    right = (ids[:, :-1].ravel(), ids[:, 1:].ravel())
    down = (ids[:-1, :].ravel(), ids[1:, :].ravel())
    return np.concatenate([right[0], down[0]]), np.concatenate([right[1], down[1]])


def grid2d(rows: int, cols: int, *, weighted: bool = False, seed: int = 0) -> Graph:
    """Undirected 4-neighbour grid; node ``r * cols + c`` sits at row ``r``, column ``c``.

    Parameters
    ----------
    rows, cols : int
        Grid size (``rows * cols`` nodes, ``rows*(cols-1) + cols*(rows-1)`` undirected
        edges, each stored in both directions).
    weighted : bool
        Add integer weights in ``[1, 64)`` as float32, equal in both directions.
    seed : int
        Seed for the weights.

    Returns
    -------
    Graph

    Raises
    ------
    InvalidInput
        If a dimension is negative.

    """
    rows = _check_count("grid rows", rows)
    cols = _check_count("grid cols", cols)
    _require(f"a {rows:,}x{cols:,} grid", rows * cols, 2 * _grid_edge_count(rows, cols),
             weighted, 24)
    src, dst = _grid_edges(rows, cols)
    w = _weights(np.random.default_rng(seed), src.size) if weighted else None
    return Graph.from_edges(src, dst, w, n_nodes=rows * cols, directed=False,
                            name=f"grid-{rows}x{cols}")


def road(rows: int, cols: int, *, seed: int = 0, drop_fraction: float = 0.1) -> Graph:
    """Road-network-like graph: a weighted grid with a random share of its edges removed.

    Exactly ``round(drop_fraction * E)`` of the ``E`` grid edges are removed, chosen
    uniformly; the rest carry integer weights in ``[1, 64)`` (float32), equal in both
    directions. Like real road networks the result has low degree (at most 4) and a
    high diameter; it may be disconnected.

    Parameters
    ----------
    rows, cols : int
        Grid size.
    seed : int
        Seed for the removed edges and the weights.
    drop_fraction : float
        Share of grid edges to remove, in ``[0, 1]``.

    Returns
    -------
    Graph
        Undirected and weighted.

    Raises
    ------
    InvalidInput
        If a dimension is negative or ``drop_fraction`` is outside ``[0, 1]``.

    """
    rows = _check_count("road rows", rows)
    cols = _check_count("road cols", cols)
    if not (0.0 <= drop_fraction <= 1.0):
        raise InvalidInput(f"road drop_fraction must be in [0, 1], got {drop_fraction}")
    _require(f"a {rows:,}x{cols:,} road grid", rows * cols, 2 * _grid_edge_count(rows, cols),
             True, 32)
    rng = np.random.default_rng(seed)
    src, dst = _grid_edges(rows, cols)
    n_drop = int(round(drop_fraction * src.size))
    keep = np.ones(src.size, dtype=bool)
    keep[rng.permutation(src.size)[:n_drop]] = False
    src, dst = src[keep], dst[keep]
    return Graph.from_edges(src, dst, _weights(rng, src.size), n_nodes=rows * cols,
                            directed=False, name=f"road-{rows}x{cols}")


def star(n: int, *, weighted: bool = False, seed: int = 0) -> Graph:
    """Undirected star: node 0 is the hub, joined to nodes ``1 .. n-1``.

    Parameters
    ----------
    n : int
        Number of nodes (``n - 1`` undirected edges).
    weighted : bool
        Add integer weights in ``[1, 64)`` as float32.
    seed : int
        Seed for the weights.

    Returns
    -------
    Graph

    Raises
    ------
    InvalidInput
        If ``n`` is negative.

    """
    n = _check_count("star n", n)
    _require(f"a star of {n:,} nodes", n, 2 * max(n - 1, 0), weighted, 16)
    leaves = np.arange(1, max(n, 1), dtype=np.int64)
    w = _weights(np.random.default_rng(seed), leaves.size) if weighted else None
    return Graph.from_edges(np.zeros_like(leaves), leaves, w, n_nodes=n, directed=False,
                            name=f"star-{n}")


def path(n: int, directed: bool = False, *, weighted: bool = False, seed: int = 0) -> Graph:
    """Path ``0 - 1 - ... - (n-1)``: the graph of largest diameter for its size.

    Parameters
    ----------
    n : int
        Number of nodes.
    directed : bool
        ``True`` keeps only the edges ``i -> i + 1``.
    weighted : bool
        Add integer weights in ``[1, 64)`` as float32.
    seed : int
        Seed for the weights.

    Returns
    -------
    Graph

    Raises
    ------
    InvalidInput
        If ``n`` is negative.

    """
    n = _check_count("path n", n)
    _require(f"a path of {n:,} nodes", n, max(n - 1, 0) * (1 if directed else 2), weighted, 16)
    src = np.arange(max(n - 1, 0), dtype=np.int64)
    w = _weights(np.random.default_rng(seed), src.size) if weighted else None
    return Graph.from_edges(src, src + 1, w, n_nodes=n, directed=directed, name=f"path-{n}")


def clique_chain(n_cliques: int, size: int, *, weighted: bool = False,
                 seed: int = 0) -> Graph:
    """Undirected chain of cliques: ``n_cliques`` cliques of ``size`` consecutive ids,
    the last node of each joined to the first of the next.

    Dense local clusters in a long line: a traversal crosses each clique in one or two
    hops but needs about two steps per clique, and clique ``k`` holds exactly the ids
    ``[k * size, (k + 1) * size)``, so partitions of ``size`` ids are the cliques.

    Parameters
    ----------
    n_cliques : int
        Number of cliques.
    size : int
        Nodes per clique (``size * (size - 1) / 2`` undirected edges each).
    weighted : bool
        Add integer weights in ``[1, 64)`` as float32.
    seed : int
        Seed for the weights.

    Returns
    -------
    Graph

    Raises
    ------
    InvalidInput
        If ``n_cliques`` or ``size`` is negative.

    Examples
    --------
    >>> clique_chain(3, 4).n_nodes
    12

    """
    n_cliques = _check_count("clique_chain n_cliques", n_cliques)
    size = _check_count("clique_chain size", size)
    n = n_cliques * size
    per = size * (size - 1) // 2
    links = max(n_cliques - 1, 0) if size else 0
    _require(f"a chain of {n_cliques:,} cliques of {size:,} nodes", n,
             2 * (n_cliques * per + links), weighted, 16)
    a, b = np.triu_indices(size, 1)
    base = (np.arange(n_cliques, dtype=np.int64) * size)[:, None]
    src = (base + a).ravel()
    dst = (base + b).ravel()
    if links:
        ends = np.arange(links, dtype=np.int64) * size
        src = np.concatenate([src, ends + size - 1])
        dst = np.concatenate([dst, ends + size])
    w = _weights(np.random.default_rng(seed), src.size) if weighted else None
    return Graph.from_edges(src, dst, w, n_nodes=n, directed=False,
                            name=f"clique-chain-{n_cliques}x{size}")


# ---------------------------------------------------------------------------- specs
#: name -> (positional argument names, accepted options, usage)
_SPEC_FORMS: dict[str, tuple[tuple[str, ...], frozenset[str], str]] = {
    "rmat": (("scale", "edge_factor"),
             frozenset({"seed", "weighted", "directed", "permute", "a", "b", "c"}),
             "rmat:SCALE[:EDGE_FACTOR]"),
    "uniform": (("n", "m"), frozenset({"seed", "weighted", "directed"}), "uniform:N:M"),
    "grid": (("rows", "cols"), frozenset({"seed", "weighted"}), "grid:ROWSxCOLS"),
    "road": (("rows", "cols"), frozenset({"seed", "drop"}), "road:ROWSxCOLS"),
    "star": (("n",), frozenset({"seed", "weighted"}), "star:N"),
    "path": (("n",), frozenset({"seed", "weighted", "directed"}), "path:N"),
}

#: Generator names :func:`parse_generator_spec` accepts.
GENERATORS: tuple[str, ...] = tuple(_SPEC_FORMS)

_BOOL_WORDS = {"1": True, "true": True, "yes": True, "on": True,
               "0": False, "false": False, "no": False, "off": False}


class _SpecError(InvalidInput):
    """A spec refused with the list of valid forms already in its message."""


def _spec_error(spec: str, why: str) -> InvalidInput:
    forms = ", ".join(form for _, _, form in _SPEC_FORMS.values())
    return _SpecError(
        f"bad generator spec {spec!r}: {why}; expected one of {forms}, optionally followed "
        "by options like ',seed=3,weighted'"
    )


def _parse_int(spec: str, what: str, text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise _spec_error(spec, f"{what} must be an integer, got {text!r}") from None
    if value < 0:
        raise _spec_error(spec, f"{what} must be >= 0, got {value}")
    return value


def parse_generator_spec(spec: str) -> Graph:
    """Build a graph from a short generator spec, as the command line accepts them.

    Syntax: ``NAME:ARG[:ARG][,OPTION]...`` where an option is ``key=value`` or a bare
    flag (``weighted`` means ``weighted=true``; ``undirected`` means
    ``directed=false``). Grid sizes may be written ``ROWSxCOLS`` or ``ROWS:COLS``.

    ===========  ===========================  =====================================
    name         arguments                    options
    ===========  ===========================  =====================================
    ``rmat``     ``SCALE[:EDGE_FACTOR]``      seed, weighted, directed, permute,
                                              a, b, c
    ``uniform``  ``N:M``                      seed, weighted, directed
    ``grid``     ``ROWSxCOLS``                seed, weighted
    ``road``     ``ROWSxCOLS``                seed, drop (fraction removed)
    ``star``     ``N``                        seed, weighted
    ``path``     ``N``                        seed, weighted, directed
    ===========  ===========================  =====================================

    Parameters
    ----------
    spec : str
        For example ``"rmat:16"``, ``"rmat:16:8,seed=3,weighted"``,
        ``"uniform:1000:5000"``, ``"grid:64x64"``, ``"road:256x256,drop=0.2"``,
        ``"star:100"``, ``"path:1000,directed"``.

    Returns
    -------
    Graph
        Named after ``spec``.

    Raises
    ------
    InvalidInput
        On an unknown generator name (the message lists the valid ones), a wrong number
        of arguments, a non-integer argument, or an unknown or malformed option.

    Examples
    --------
    >>> parse_generator_spec("grid:3x4").n_nodes
    12

    """
    if not isinstance(spec, str) or not spec.strip():
        raise _spec_error(str(spec), "empty spec")
    text = spec.strip()
    head, *option_parts = text.split(",")
    name, _, arg_text = head.partition(":")
    name = name.strip().lower()
    if name not in _SPEC_FORMS:
        raise _spec_error(spec, f"unknown generator {name!r} (valid: {', '.join(GENERATORS)})")
    arg_names, allowed, form = _SPEC_FORMS[name]
    if name in ("grid", "road"):  # ROWSxCOLS; elsewhere an x is no separator ("rmat:0x10")
        arg_text = arg_text.replace("x", ":").replace("X", ":")
    raw_args = arg_text.split(":") if arg_text else []
    if name in ("grid", "road") and len(raw_args) == 1:
        raw_args = raw_args * 2  # grid:64 is a square
    n_required = 1 if name == "rmat" else len(arg_names)
    if not (n_required <= len(raw_args) <= len(arg_names)):
        raise _spec_error(spec, f"{name} takes {form}, got {len(raw_args)} argument(s)")
    args = [_parse_int(spec, arg_names[i], t.strip()) for i, t in enumerate(raw_args)]

    options: dict[str, str | bool] = {}
    for part in option_parts:
        part = part.strip()
        if not part:
            continue
        key, eq, value = part.partition("=")
        key = key.strip().lower()
        if not eq:
            if key == "undirected":
                key, flag = "directed", False
            else:
                flag = True
            options[key] = flag
        else:
            options[key] = value.strip()
        if key not in allowed:
            raise _spec_error(spec, f"option {key!r} does not apply to {name} "
                              f"(it takes: {', '.join(sorted(allowed))})")

    def flag(key: str, default: bool) -> bool:
        value = options.get(key, default)
        if isinstance(value, bool):
            return value
        if value.lower() not in _BOOL_WORDS:
            raise _spec_error(spec, f"option {key} must be true or false, got {value!r}")
        return _BOOL_WORDS[value.lower()]

    def number(key: str, default: float) -> float:
        value = options.get(key, default)
        if isinstance(value, bool):
            raise _spec_error(spec, f"option {key} needs a value, like {key}=0.5")
        try:
            return float(value)
        except ValueError:
            raise _spec_error(spec, f"option {key} must be a number, got {value!r}") from None

    seed_value = options.get("seed", "0")
    if isinstance(seed_value, bool):
        raise _spec_error(spec, "option seed needs a value, like seed=3")
    seed = _parse_int(spec, "seed", seed_value)

    build: dict[str, Callable[[], Graph]] = {
        "rmat": lambda: rmat(
            args[0], args[1] if len(args) > 1 else 16,
            number("a", 0.57), number("b", 0.19), number("c", 0.19),
            seed=seed, weighted=flag("weighted", False), directed=flag("directed", True),
            permute=flag("permute", True),
        ),
        "uniform": lambda: uniform_random(args[0], args[1], seed=seed,
                                          weighted=flag("weighted", False),
                                          directed=flag("directed", True)),
        "grid": lambda: grid2d(args[0], args[1], weighted=flag("weighted", False), seed=seed),
        "road": lambda: road(args[0], args[1], seed=seed, drop_fraction=number("drop", 0.1)),
        "star": lambda: star(args[0], weighted=flag("weighted", False), seed=seed),
        "path": lambda: path(args[0], directed=flag("directed", False),
                             weighted=flag("weighted", False), seed=seed),
    }
    try:
        graph = build[name]()
    except _TooLarge as exc:
        raise InvalidInput(f"generator spec {spec!r}: {exc}") from None
    except _SpecError:
        raise  # an option the builder read was malformed; the message is complete
    except InvalidInput as exc:
        raise _spec_error(spec, str(exc)) from None
    graph.name = text
    return graph
