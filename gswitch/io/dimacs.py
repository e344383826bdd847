"""DIMACS shortest-path files (``.gr``: ``p sp n m``, ``a u v w``), 1-based ids."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .._memory import graph_bytes
from ..graph import (
    DuplicatePolicy,
    Graph,
    SelfLoopPolicy,
)
from ._common import (
    _MAX_ID,
    _build_as_written,
    _check_declared,
    _check_ids,
    _check_text,
    _check_weights,
    _comment_name,
    _count_lines,
    _fail,
    _float_ids,
    _format_weights,
    _id_token,
    _int_token,
    _parse_numbers,
    _read_bytes,
    _show,
    _SlowPath,
    _strip_comment_lines,
    _token_number,
    _write_lines,
    text_writer,
)
from .formats import Format, LoadOptions, register


# ---------------------------------------------------------------------------- DIMACS .gr
def _dimacs_header(data: bytes, path: Path) -> tuple[int, int, int]:
    """Return ``(n, m, line number)`` of the ``p sp n m`` line."""
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        s = raw.strip()
        if not s or s[:1] == b"c":
            continue
        toks = s.split()
        if toks[0] != b"p":
            raise _fail(path, "expected the problem line 'p sp <nodes> <arcs>' before any "
                        "arc; add it", lineno)
        if len(toks) != 4 or toks[1] != b"sp":
            raise _fail(path, f"malformed problem line {_show(s)}; "
                        "expected 'p sp <nodes> <arcs>'", lineno)
        n = _int_token(toks[2], path, lineno, "node count")
        m = _int_token(toks[3], path, lineno, "arc count")
        if n < 0 or m < 0 or n > _MAX_ID + 1:
            raise _fail(path, f"node/arc counts must be non-negative and nodes <= {_MAX_ID + 1},"
                        f" got n={n} m={m}", lineno)
        return n, m, lineno
    raise _fail(path, "no problem line 'p sp <nodes> <arcs>' found; is this a DIMACS .gr file?")


def _dimacs_slow(data: bytes, path: Path, n: int, m: int) -> tuple[np.ndarray, ...]:
    src: list[int] = []
    dst: list[int] = []
    wts: list[float] = []
    seen_p = False
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        s = raw.strip()
        if not s or s[:1] == b"c":
            continue
        toks = s.split()
        if toks[0] == b"p":
            if seen_p:
                raise _fail(path, "second problem line; a .gr file has exactly one", lineno)
            seen_p = True
            continue
        if toks[0] != b"a":
            raise _fail(path, f"unknown line type {_show(toks[0])}; "
                        "DIMACS .gr lines start with 'c', 'p' or 'a'", lineno)
        if len(toks) != 4:
            raise _fail(path, f"arc line needs 'a <from> <to> <weight>', got "
                        f"{_show(s)}", lineno)
        u = _id_token(toks[1], path, lineno, "arc tail")
        v = _id_token(toks[2], path, lineno, "arc head")
        for x in (u, v):
            if x < 1 or x > n:
                raise _fail(path, f"node id {x} out of range: the header declares {n} nodes, so "
                            f"ids must be in 1..{n}; fix the id or the header", lineno)
        wv = float(_token_number(toks[3], path, lineno, "arc weight"))
        if wv != wv:
            raise _fail(path, "edge weight is NaN; weights must be numbers", lineno)
        src.append(u - 1)
        dst.append(v - 1)
        wts.append(wv)
    if len(src) != m:
        raise _fail(path, f"the problem line declares {m} arcs but the file has {len(src)}; "
                    "fix the header or restore the missing arcs")
    return (np.asarray(src, np.int64), np.asarray(dst, np.int64), np.asarray(wts, np.float64))


def _dimacs_fast(data: bytes, path: Path, n: int, m: int, p_line: int) -> tuple[np.ndarray, ...]:
    # everything after the problem line must be comment lines or arc lines
    start = 0
    for _ in range(p_line):
        nl = data.find(b"\n", start)
        start = len(data) if nl < 0 else nl + 1
    body = data[start:]
    if b"c" in body or b"p" in body:
        body = _strip_comment_lines(body, b"c")
        if b"p" in body:
            raise _SlowPath
    n_lines = _count_lines(body)
    # every line an arc, and its 'a' the only one, standing apart: the 'a's are blanked
    # below, so one anywhere else ("a1 2 3", "a 1 2 3a") would pass for a separator
    n_arcs = (body.count(b"\na ") + body.count(b"\na\t")
              + (1 if body[:2] in (b"a ", b"a\t") else 0))
    if n_arcs != n_lines or body.count(b"a") != n_lines:
        raise _SlowPath
    values = _parse_numbers(body.replace(b"a", b" "))
    if values.size != 3 * n_lines or n_lines != m or m == 0:
        raise _SlowPath
    table = values.reshape(n_lines, 3)
    line_of = _edgelist_line_of_dimacs(data)
    src = _float_ids(path, table[:, 0], line_of)
    dst = _float_ids(path, table[:, 1], line_of)
    w = table[:, 2].astype(np.float64)
    _check_ids(path, src, n, 1, line_of)
    _check_ids(path, dst, n, 1, line_of)
    _check_weights(path, w, line_of)
    return src - 1, dst - 1, w


def _edgelist_line_of_dimacs(data: bytes) -> Callable[[int], int | None]:
    def line_of(arc: int) -> int | None:
        count = -1
        for lineno, raw in enumerate(data.split(b"\n"), start=1):
            if raw.strip()[:1] == b"a":
                count += 1
                if count == arc:
                    return lineno
        return None

    return line_of


#: The comment :func:`_write_dimacs` puts before the problem line of an undirected graph,
#: whose arcs list both directions: a loader that finds it keeps the graph undirected.
_UNDIRECTED = b"c undirected: both directions of every edge are listed"


def _load_dimacs(
    path: Path, data: bytes, *, directed: bool | None, weighted: bool,
    duplicates: DuplicatePolicy, self_loops: SelfLoopPolicy, name: str,
) -> Graph:
    _check_text(path, data, "dimacs")
    n, m, p_line = _dimacs_header(data, path)
    _check_declared(path, data, n, m, "arcs", "problem line", p_line,
                    graph_bytes(n, m * (1 if directed is not False else 2), weighted))
    try:
        src, dst, w = _dimacs_fast(data, path, n, m, p_line)
    except _SlowPath:
        src, dst, w = _dimacs_slow(data, path, n, m)
    header = data[:_line_offset(data, p_line)]
    as_written = directed is None and any(
        line.rstrip() == _UNDIRECTED for line in header.split(b"\n"))
    return _build_as_written(path, src, dst, w if weighted else None,
                             undirected_as_written=as_written, n_nodes=n,
                             directed=directed is not False, duplicates=duplicates,
                             self_loops=self_loops, name=name)


def _line_offset(data: bytes, line: int) -> int:
    """The offset at which (1-based) line ``line`` of ``data`` starts."""
    start = 0
    for _ in range(line - 1):
        nl = data.find(b"\n", start)
        start = len(data) if nl < 0 else nl + 1
    return start


def _write_dimacs(graph: Graph, f: BinaryIO) -> None:
    src, dst = graph.edges()
    f.write(f"c gswitch graph {_comment_name(graph)}\nc ids are 1-based\n".encode())
    if not graph.directed:
        f.write(_UNDIRECTED + b"\n")
    f.write(f"p sp {graph.n_nodes} {graph.n_edges}\n".encode())
    w = graph.weights if graph.weights is not None else np.ones(graph.n_edges, np.float32)
    _write_lines(f, [src.astype(np.int64) + 1, dst.astype(np.int64) + 1, _format_weights(w)],
                 prefix="a ")

def _load(path: Path, o: LoadOptions) -> Graph:
    return _load_dimacs(path, _read_bytes(path), directed=o.directed,
                        weighted=o.weighted, duplicates=o.duplicates,
                        self_loops=o.self_loops, name=o.name)


FORMAT = register(Format("dimacs", "DIMACS .gr", (".gr",), ("gr",), load=_load,
                         save=text_writer(_write_dimacs)))
