"""Edge lists (``src dst [weight]`` per line, SNAP files): 0-based ids as written."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .._hints import option
from ..graph import (
    DuplicatePolicy,
    Graph,
    SelfLoopPolicy,
)
from ._common import (
    _MAX_ID,
    _build_as_written,
    _check_ids,
    _check_text,
    _check_weights,
    _comment_name,
    _count_lines,
    _fail,
    _float_ids,
    _format_weights,
    _id_token,
    _parse_numbers,
    _read_after_header,
    _show,
    _SlowPath,
    _strip_comment_lines,
    _token_number,
    _write_lines,
    text_writer,
)
from .formats import Format, LoadOptions, register


# ---------------------------------------------------------------------------- edge lists
def _edgelist_line_of(data: bytes, first_line: int) -> Callable[[int], int | None]:
    """Map an edge index to its 1-based line number (scans lazily; used on errors only)."""

    def line_of(edge: int) -> int | None:
        count = -1
        for lineno, raw in enumerate(data.split(b"\n"), start=first_line):
            s = raw.strip()
            if not s or s[:1] in b"#%":
                continue
            count += 1
            if count == edge:
                return lineno
        return None

    return line_of


def _edgelist_slow(
    data: bytes, path: Path, weighted: bool, first_line: int, max_id: int
) -> tuple[np.ndarray, ...]:
    src: list[int] = []
    dst: list[int] = []
    wts: list[float] = []
    ncols = 0
    for lineno, raw in enumerate(data.split(b"\n"), start=first_line):
        s = raw.strip()
        if not s or s[:1] in b"#%":
            continue
        toks = s.replace(b",", b" ").split()
        if ncols == 0:
            if len(toks) not in (2, 3):
                raise _fail(
                    path,
                    f"expected 'src dst' or 'src dst weight', got {len(toks)} fields "
                    f"{_show(s)}",
                    lineno,
                )
            ncols = len(toks)
        elif len(toks) != ncols:
            raise _fail(
                path,
                f"expected {ncols} fields like the first edge line, got {len(toks)}: "
                f"{_show(s)}",
                lineno,
            )
        u = _id_token(toks[0], path, lineno, "source id")
        v = _id_token(toks[1], path, lineno, "destination id")
        for x in (u, v):
            if x < 0 or x > max_id:
                fix = (f"; pass {option('renumber')} to number sparse ids compactly"
                       if max_id == _MAX_ID else "")
                raise _fail(path, f"node id {x} out of range (ids must be in 0..{max_id})"
                            + fix, lineno)
        src.append(u)
        dst.append(v)
        if ncols == 3:
            wv = float(_token_number(toks[2], path, lineno, "weight"))
            if wv != wv:
                raise _fail(path, "edge weight is NaN; weights must be numbers", lineno)
            wts.append(wv)
    s_arr = np.asarray(src, dtype=np.int64)
    d_arr = np.asarray(dst, dtype=np.int64)
    w_arr = np.asarray(wts, dtype=np.float64) if (ncols == 3 and weighted) else None
    return s_arr, d_arr, w_arr


def _edgelist_fast(
    data: bytes, path: Path, weighted: bool, first_line: int, max_id: int
) -> tuple[np.ndarray, ...]:
    # ``data`` starts at the first edge line; comments further down are rare, and only
    # then is the buffer rewritten
    body = data
    if b"#" in body or b"%" in body:
        body = _strip_comment_lines(body, b"#%")
    if b"," in body:
        body = body.replace(b",", b" ")
    first_end = body.find(b"\n")
    ncols = len(body[: first_end if first_end >= 0 else len(body)].split())
    if ncols == 0:
        if body.strip():
            raise _SlowPath
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, None
    if ncols not in (2, 3):
        raise _SlowPath
    values = _parse_numbers(body)
    # blank lines, ragged rows or tokens numpy skipped all break this equality; the line
    # parser then finds the culprit
    if values.size != ncols * _count_lines(body):
        raise _SlowPath
    table = values.reshape(-1, ncols)
    line_of = _edgelist_line_of(data, first_line)
    src = _float_ids(path, table[:, 0], line_of)
    dst = _float_ids(path, table[:, 1], line_of)
    w = None
    if ncols == 3 and weighted:
        w = table[:, 2].astype(np.float64)
        _check_weights(path, w, line_of)
    _check_ids(path, src, None, 0, line_of, max_id)
    _check_ids(path, dst, None, 0, line_of, max_id)
    return src, dst, w


#: The first line :func:`_write_edgelist` writes: the node count and directedness that an
#: edge list cannot say otherwise (isolated nodes after the largest id, both directions).
_EDGELIST_HEADER = re.compile(
    rb"^# gswitch edge list .*: (\d+) nodes, (\d+) edges \((directed|undirected)[,)]")


def _edgelist_header(path: Path, first: bytes) -> tuple[int | None, bool | None]:
    """``(n_nodes, directed)`` from a header gswitch wrote, else ``(None, None)``."""
    match = _EDGELIST_HEADER.match(first)
    if match is None:
        return None, None
    n = int(match.group(1))
    if n > _MAX_ID + 1:
        raise _fail(path, f"the gswitch header declares {n:,} nodes, but node ids are int32, "
                    f"so at most {_MAX_ID + 1:,} nodes are supported; fix the header", 1)
    return n, match.group(3) == b"directed"


def _load_edgelist(
    path: Path, *, directed: bool | None, weighted: bool, duplicates: DuplicatePolicy,
    self_loops: SelfLoopPolicy, renumber: bool, name: str,
) -> Graph:
    data, first_line, first = _read_after_header(path, b"#%")
    _check_text(path, data, "edgelist")
    # a file gswitch wrote keeps its node count (ids are compact unless renumbered) and,
    # unless the caller says otherwise, its directedness
    declared_n, declared_directed = _edgelist_header(path, first)
    max_id = np.iinfo(np.int64).max if renumber else _MAX_ID
    try:
        src, dst, w = _edgelist_fast(data, path, weighted, first_line, max_id)
    except _SlowPath:
        src, dst, w = _edgelist_slow(data, path, weighted, first_line, max_id)
    del data
    n_nodes = None
    if declared_n is not None and not renumber:
        n_nodes = max(declared_n, int(src.max(initial=-1)) + 1, int(dst.max(initial=-1)) + 1)
    return _build_as_written(
        path, src, dst, w, undirected_as_written=directed is None and declared_directed is False,
        n_nodes=n_nodes, directed=directed is not False, duplicates=duplicates,
        self_loops=self_loops, renumber=renumber, name=name)


def _write_edgelist(graph: Graph, f: BinaryIO) -> None:
    src, dst = graph.edges()
    kind = "directed" if graph.directed else "undirected, both directions listed"
    f.write(f"# gswitch edge list {_comment_name(graph)}: {graph.n_nodes} nodes, "
            f"{graph.n_edges} edges "
            f"({kind}), 0-based ids: src dst{' weight' if graph.weighted else ''}\n"
            .encode())
    columns = [src, dst]
    if graph.weights is not None:
        columns.append(_format_weights(graph.weights))
    _write_lines(f, columns)

def _load(path: Path, o: LoadOptions) -> Graph:
    return _load_edgelist(path, directed=o.directed, weighted=o.weighted,
                          duplicates=o.duplicates, self_loops=o.self_loops,
                          renumber=o.renumber, name=o.name)


FORMAT = register(Format(
    "edgelist", "edge list", (".txt", ".el", ".edges", ".edgelist", ".tsv", ".csv", ".snap"),
    ("snap", "txt", "el", "csv", "tsv", "edges"), load=_load,
    save=text_writer(_write_edgelist), renumbers=True))
