"""Graph files: :func:`load_graph` and :func:`save_graph` over the registered formats.

One module per format (Matrix Market, edge lists, DIMACS, METIS, gswitch's npz cache)
registers its extensions, aliases, title, loader and writer with :mod:`.formats`. Every
loader returns an immutable :class:`~gswitch.graph.Graph`; every problem with a file
raises :class:`~gswitch.errors.GraphFormatError` with one line saying what is wrong,
where (``file:line`` when it is known) and how to fix it.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._hints import option
from ..errors import GraphFormatError
from ..graph import (
    _DUPLICATE_POLICIES,
    _SELF_LOOP_POLICIES,
    DuplicatePolicy,
    Graph,
    SelfLoopPolicy,
    _check_policy,
)
from . import dimacs, edgelist, metis, mtx, npz  # noqa: F401  (each registers its format)
from .formats import (
    LoadOptions,
    default_name,
    extension_of,
    format_of,
    registered,
)
from .npz import NPZ_FORMAT_VERSION, save_npz

__all__ = ["load_graph", "save_graph", "save_npz", "FORMATS", "WRITE_FORMATS", "EXTENSIONS",
           "NPZ_FORMAT_VERSION", "extension_of"]

#: Canonical format names accepted by ``load_graph(fmt=...)``.
FORMATS = tuple(f.name for f in registered())

#: Formats :func:`save_graph` writes.
WRITE_FORMATS = tuple(f.name for f in registered() if f.save is not None)

#: File extension (without ``.gz``) -> format name.
EXTENSIONS: dict[str, str] = {e: f.name for f in registered() for e in f.extensions}



def load_graph(
    path: str | os.PathLike[str],
    *,
    fmt: str | None = None,
    directed: bool | None = None,
    weighted: bool = True,
    duplicates: DuplicatePolicy = "keep",
    self_loops: SelfLoopPolicy = "keep",
    renumber: bool = False,
    name: str | None = None,
) -> Graph:
    """Load a graph file, choosing the parser by extension.

    ============================================  ==========  ==============================
    extension (each may end in ``.gz``)           format      directed by default
    ============================================  ==========  ==============================
    ``.mtx`` ``.mm``                              Matrix      ``general``: yes;
                                                  Market      ``symmetric``: no
    ``.txt`` ``.el`` ``.edges`` ``.edgelist``     edge list   yes
    ``.tsv`` ``.csv`` ``.snap``                   (SNAP)
    ``.gr``                                       DIMACS sp   yes
    ``.graph`` ``.metis``                         METIS       no
    ``.npz``                                      gswitch     as saved
    ============================================  ==========  ==============================

    Edge lists hold ``src dst [weight]`` per line, separated by whitespace or commas, ids
    0-based as written; lines whose first non-blank character is ``#`` or ``%`` are
    comments. An edge list :func:`save_graph` wrote keeps its node count (isolated nodes
    after the largest id) and, with ``directed=None``, its directedness, from its first
    line; so does a ``.gr`` file it wrote of an undirected graph, from a comment before
    the problem line. DIMACS ``.gr`` files (``c`` comments, ``p sp n m``, ``a u v w``)
    and METIS files use 1-based ids, converted to 0-based. Compressed files are recognised by their
    gzip signature, whatever the name; a name ending in ``.gz`` that does not hold gzip
    data is refused.

    Parameters
    ----------
    path : str or path-like
        The file.
    fmt : {"mtx", "edgelist", "dimacs", "metis", "npz"}, optional
        Override the extension (``"snap"``, ``"gr"``, ``"graph"`` ... are accepted too).
    directed : bool, optional
        ``None`` keeps what the format says (table above). ``False`` on a directed format
        treats every listed edge as undirected, i.e. adds its reverse (files that already
        list both directions then hold each edge twice; combine with
        ``duplicates="drop"``). ``True`` on an undirected format keeps both stored
        directions but marks the graph directed.
    weighted : bool
        Keep edge weights when the file has them; ``False`` drops them.
    duplicates : {"keep", "drop", "sum", "min", "reject"}
        Policy for parallel edges, as in :meth:`Graph.from_edges`.
    self_loops : {"keep", "drop", "reject"}
        Policy for edges ``v -> v``.
    renumber : bool
        Edge lists only: number the ids that occur ``0 .. k-1`` in sorted order, so
        sparse or huge ids (up to ``2**63 - 1``) load without a node per possible id.
        The original ids are kept in :attr:`Graph.node_labels`.
    name : str, optional
        Graph label; defaults to the file name without extensions.

    Returns
    -------
    Graph

    Raises
    ------
    GraphFormatError
        If the file is missing or unreadable, the extension or ``fmt`` is unknown, the
        content is malformed (with ``file:line`` where known), ids are out of range,
        header counts disagree with the content, a weight is NaN, a ``reject`` policy
        is hit, or the graph would not fit in the memory available (estimated from the
        header or the largest id before anything is allocated). Negative weights are
        accepted here; algorithms that forbid them say so.
    InvalidGraph
        If ``duplicates`` or ``self_loops`` is not one of the policies listed above.

    Notes
    -----
    Ids as written: edge lists are 0-based, DIMACS, METIS and Matrix Market files are
    1-based; the graph is always 0-based, so line ``a 1 2 5`` of a ``.gr`` file is the
    edge ``0 -> 1``.

    Examples
    --------
    >>> g = load_graph("roadNet-CA.txt.gz", directed=False)  # doctest: +SKIP

    """
    _check_policy("duplicates", duplicates, _DUPLICATE_POLICIES)
    _check_policy("self_loops", self_loops, _SELF_LOOP_POLICIES)
    p = Path(path)
    if p.is_dir():
        raise GraphFormatError(f"{p} is a directory, expected a graph file")
    if not p.exists():
        raise GraphFormatError(f"graph file not found: {p}; check the path")
    kind = format_of(p, fmt)
    if renumber and not kind.renumbers:
        raise GraphFormatError(
            f"{p}: {option('renumber')} applies to edge lists only; a {kind.title} "
            "file declares its node count, so its ids are already compact"
        )
    label = name if name is not None else default_name(p)
    return kind.load(p, LoadOptions(directed, weighted, duplicates, self_loops, renumber,
                                    label, name))



def save_graph(graph: Graph, path: str | os.PathLike[str], *, fmt: str | None = None) -> Path:
    """Write a graph to a file in any format gswitch writes, atomically.

    ==============================================  ==========  ===========================
    extension (each may end in ``.gz``)             format      ids as written
    ==============================================  ==========  ===========================
    ``.mtx`` ``.mm``                                Matrix      1-based; ``symmetric`` for
                                                    Market      undirected graphs
    ``.txt`` ``.el`` ``.edges`` ``.tsv`` ``.snap``  edge list   0-based, ``src dst [w]``
    ``.gr``                                         DIMACS sp   1-based (unweighted graphs
                                                                get weight 1)
    ``.npz``                                        gswitch     exact arrays, fastest load
    ==============================================  ==========  ===========================

    :func:`load_graph` reads every one of them back to an equal graph (the same
    :attr:`~Graph.fingerprint`), except that DIMACS gives unweighted graphs weights. The
    file appears in one step (a temporary file in the same directory is renamed), so a
    reader never sees half of it.

    Parameters
    ----------
    graph : Graph
        The graph.
    path : str or path-like
        Destination; the extension picks the format unless ``fmt`` is given.
    fmt : {"mtx", "edgelist", "dimacs", "npz"}, optional
        Override the extension.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    GraphFormatError
        If the format is unknown or not writable (METIS), or the file cannot be written.

    Examples
    --------
    >>> from gswitch.generators import grid2d
    >>> import tempfile, os
    >>> out = save_graph(grid2d(3, 3), os.path.join(tempfile.mkdtemp(), "grid.mtx"))
    >>> load_graph(out) == grid2d(3, 3)
    True

    """
    p = Path(path)
    kind = format_of(p, fmt)
    if kind.save is None:
        writable = [f for f in registered() if f.save is not None]
        raise GraphFormatError(
            f"writing {kind.title} is not supported; choose one of "
            f"{', '.join(f.name for f in writable)} "
            f"({', '.join(f.extensions[0] for f in writable)})")
    if not isinstance(graph, Graph):
        raise GraphFormatError(f"save_graph needs a gswitch.Graph, got {type(graph).__name__}")
    return kind.save(graph, p)

