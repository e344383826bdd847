"""Graph file loaders (Matrix Market, edge lists, DIMACS, METIS, npz cache) and the npz writer.

Every loader returns an immutable :class:`~gswitch.graph.Graph`; every problem with a
file raises :class:`~gswitch.errors.GraphFormatError` with one line saying what is
wrong, where (``file:line`` when it is known) and how to fix it.

Text formats are parsed in two tiers. A vectorised fast path reads the whole file and
hands it to NumPy's C number parser; it accepts the file only when the counts it can
check cheaply agree (numbers per line, lines per header). Anything it cannot vouch for
goes to a plain line-by-line parser, which is the reference: it either produces the same
graph or names the first bad line.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ._hints import option
from ._memory import MemoryRefused, available_bytes, check_memory, format_bytes, graph_bytes
from .errors import GraphFormatError, InvalidGraph
from .graph import (
    _DUPLICATE_POLICIES,
    _SELF_LOOP_POLICIES,
    DuplicatePolicy,
    Graph,
    SelfLoopPolicy,
    _check_policy,
)

__all__ = ["load_graph", "save_graph", "save_npz", "FORMATS", "WRITE_FORMATS", "EXTENSIONS",
           "NPZ_FORMAT_VERSION"]

#: Version written into (and required of) ``.npz`` caches.
NPZ_FORMAT_VERSION = 1

#: Canonical format names accepted by ``load_graph(fmt=...)``.
FORMATS = ("mtx", "edgelist", "dimacs", "metis", "npz")

#: Formats :func:`save_graph` writes.
WRITE_FORMATS = ("mtx", "edgelist", "dimacs", "npz")

#: File extension (without ``.gz``) -> format name.
EXTENSIONS: dict[str, str] = {
    ".mtx": "mtx",
    ".mm": "mtx",
    ".txt": "edgelist",
    ".el": "edgelist",
    ".edges": "edgelist",
    ".edgelist": "edgelist",
    ".tsv": "edgelist",
    ".csv": "edgelist",
    ".snap": "edgelist",
    ".gr": "dimacs",
    ".graph": "metis",
    ".metis": "metis",
    ".npz": "npz",
}

_FORMAT_ALIASES = {
    "mm": "mtx",
    "matrixmarket": "mtx",
    "snap": "edgelist",
    "txt": "edgelist",
    "el": "edgelist",
    "csv": "edgelist",
    "tsv": "edgelist",
    "edges": "edgelist",
    "gr": "dimacs",
    "graph": "metis",
}

_FORMAT_TITLES = {"mtx": "Matrix Market", "edgelist": "edge list", "dimacs": "DIMACS .gr",
                  "metis": "METIS", "npz": "npz"}

#: A number written in a text file takes at least two bytes (digit and separator) and
#: eight once parsed, and the text stays in memory while it is parsed.
_TEXT_PARSE_FACTOR = 5

_MAX_ID = np.iinfo(np.int32).max - 1  # the largest id that still leaves n_nodes in int32
_GZIP_MAGIC = b"\x1f\x8b"


class _SlowPath(Exception):
    """Internal: the fast parser cannot vouch for this input; use the line parser."""


# ---------------------------------------------------------------------------- helpers
def _fail(path: Path | str, what: str, line: int | None = None) -> GraphFormatError:
    where = f"{path}:{line}" if line is not None else f"{path}"
    return GraphFormatError(f"{where}: {what}")


_PRINTABLE = re.compile(rb"[\x20-\x7e\t]*")


def _show(raw: bytes, limit: int = 60) -> str:
    """Quote a piece of a file for a message; binary junk is described, not echoed."""
    more = "..." if len(raw) > limit else ""
    piece = raw[:limit]
    if _PRINTABLE.fullmatch(piece):
        return repr(piece.decode("ascii") + more)
    try:
        text = raw[: limit * 4].decode("utf-8", "ignore" if len(raw) > limit * 4 else "strict")
    except UnicodeDecodeError:
        return f"<{len(raw)} bytes of binary data>"
    text = text.replace("\t", " ")[:limit]
    if not text.isprintable():
        return f"<{len(raw)} bytes of binary data>"
    return repr(text + more)


def _check_text(path: Path, data: bytes, kind: str) -> None:
    """Refuse binary content up front: a text parser would only report a confusing line."""
    head = data[:4096]
    if b"\x00" in head or (head and sum(b < 9 or 13 < b < 32 for b in head) > len(head) // 20):
        raise _fail(path, f"looks like binary data, not a text {_FORMAT_TITLES[kind]} file; "
                    f"check the file, or name its format with {option('fmt')}")


def _refuse_memory(path: Path, exc: MemoryRefused) -> GraphFormatError:
    return _fail(path, str(exc))


class _GraphFile:
    """Open a graph file for binary reading, gunzipping it when it starts with gzip's magic."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._raw: BinaryIO | None = None
        self._stream: BinaryIO | None = None

    def __enter__(self) -> BinaryIO:
        try:
            self._raw = open(self.path, "rb")  # noqa: SIM115 - closed in __exit__
        except FileNotFoundError:
            raise GraphFormatError(f"graph file not found: {self.path}; check the path") \
                from None
        except IsADirectoryError:
            raise GraphFormatError(f"{self.path} is a directory, expected a graph file") \
                from None
        except OSError as exc:
            raise GraphFormatError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        if self._raw.read(2) == _GZIP_MAGIC:
            self._raw.seek(0)
            self._stream = gzip.GzipFile(fileobj=self._raw, mode="rb")
        else:
            self._raw.seek(0)
            self._stream = self._raw
        return self._stream

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self._stream is not None and self._stream is not self._raw:
            self._stream.close()
        if self._raw is not None:
            self._raw.close()


class _CappedReader:
    """A read-only view of a (decompressing) stream that refuses to grow past ``cap`` bytes.

    A few kilobytes of gzip can inflate to gigabytes; reading them whole would take the
    memory before any size could be checked.
    """

    _CHUNK = 1 << 24

    def __init__(self, stream: BinaryIO, path: Path, cap: int | None) -> None:
        self._stream = stream
        self._path = path
        self._cap = cap

    def _too_big(self, size: int) -> GraphFormatError:
        return _fail(self._path, f"the decompressed content exceeds {format_bytes(size)}, and "
                     f"parsing it would need about {_TEXT_PARSE_FACTOR} times that while only "
                     f"{format_bytes(available_bytes() or 0)} is available; decompress and "
                     "split the file, or use a machine with more memory")

    def read(self, size: int = -1) -> bytes:
        if size is not None and size >= 0:
            return self._stream.read(size)
        if self._cap is None:
            return self._stream.read()
        parts: list[bytes] = []
        total = 0
        while True:
            chunk = self._stream.read(self._CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > self._cap:
                raise self._too_big(self._cap)
            parts.append(chunk)
        return b"".join(parts)

    def readline(self, size: int = -1) -> bytes:
        return self._stream.readline(size if size is not None and size >= 0 else 1 << 20)

    def tell(self) -> int:
        return self._stream.tell()

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._stream.seek(pos, whence)


def _read_cap(path: Path, compressed: bool) -> int | None:
    """How many bytes of text may be read from ``path``; raise when the file is too big."""
    available = available_bytes()
    if available is None:
        return None
    if not compressed:
        try:
            size = path.stat().st_size
        except OSError:
            return None
        try:
            check_memory(f"parsing this {format_bytes(size)} text file",
                         size * _TEXT_PARSE_FACTOR,
                         "split the file, convert it once on a larger machine with "
                         f"{option('save_npz')}, or free memory")
        except MemoryRefused as exc:
            raise _refuse_memory(path, exc) from None
        return None
    return available // _TEXT_PARSE_FACTOR


def _read_stream(path: Path, read: Callable[[BinaryIO], object]) -> object:
    """Run ``read`` on the opened file, turning decompression errors into GraphFormatError."""
    with _GraphFile(path) as f:
        compressed = isinstance(f, gzip.GzipFile)
        capped = _CappedReader(f, path, _read_cap(path, compressed))
        try:
            return read(capped)  # type: ignore[arg-type]
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise GraphFormatError(
                f"{path}: corrupt gzip data ({exc}); re-download or decompress it by hand"
            ) from None
        except OSError as exc:
            raise GraphFormatError(f"cannot read {path}: {exc.strerror or exc}") from None


def _read_bytes(path: Path) -> bytes:
    return _read_stream(path, lambda f: f.read())  # type: ignore[return-value]


def _read_after_header(path: Path, markers: bytes) -> tuple[bytes, int, bytes]:
    """Read a file from its first data line on: ``(data, number of that line, first line)``.

    Leading blank and comment lines are skipped with ``readline`` and the rest is read in
    one call, so the big buffer is never copied to drop a header. The file's first line
    comes back too (a header gswitch wrote says what the data cannot).
    """

    def read(f: BinaryIO) -> tuple[bytes, int, bytes]:
        lineno = 1
        first = b""
        while True:
            pos = f.tell()
            line = f.readline()
            if lineno == 1:
                first = line
            if not line:
                return b"", lineno, first
            s = line.strip()
            if s and s[:1] not in markers:
                f.seek(pos)
                return f.read(), lineno, first
            lineno += 1

    return _read_stream(path, read)  # type: ignore[return-value]


def _format_of(path: Path, fmt: str | None) -> str:
    if fmt is not None:
        key = fmt.lower().lstrip(".")
        key = _FORMAT_ALIASES.get(key, key)
        if key not in FORMATS:
            raise GraphFormatError(
                f"unknown graph format {fmt!r}; use one of {', '.join(FORMATS)}"
            )
        return key
    ext = _extension(path)
    if ext not in EXTENSIONS:
        known = " ".join(sorted(EXTENSIONS))
        what = (f"unknown graph file extension {ext!r}" if ext else
                "the file name has no extension, so its graph format is unknown")
        raise GraphFormatError(
            f"{path}: {what}; known: {known} (each optionally followed by .gz); rename the "
            f"file or name the format with {option('fmt')} ({', '.join(FORMATS)})"
        )
    return EXTENSIONS[ext]


def _extension(path: Path) -> str:
    """The lower-case extension that names the format (``.txt`` of ``g.txt.gz``)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def _default_name(path: Path) -> str:
    name = path.name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    stem, _, _ = name.partition(".")
    return stem or name


def _check_weights(path: Path, w: np.ndarray | None, line_of: Callable[[int], int | None]) -> None:
    if w is None or w.size == 0:
        return
    bad = np.isnan(w)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _fail(path, "edge weight is NaN; weights must be numbers", line_of(i))


def _check_ids(
    path: Path,
    ids: np.ndarray,
    n_nodes: int | None,
    base: int,
    line_of: Callable[[int], int | None],
    max_id: int = -1,
) -> None:
    """Raise on ids below ``base`` or at/above ``n_nodes + base`` (``ids`` as written).

    Without ``n_nodes`` the bound is ``max_id`` (default: the largest int32 id).
    """
    if ids.size == 0:
        return
    lo, hi = int(ids.min()), int(ids.max())
    max_id = _MAX_ID if max_id < 0 else max_id
    limit = (n_nodes + base - 1) if n_nodes is not None else max_id + base
    if lo < base:
        i = int(np.argmax(ids == lo))
        rule = "ids are 1-based" if base == 1 else "ids must be >= 0"
        raise _fail(path, f"node id {lo} out of range ({rule})", line_of(i))
    if hi > limit:
        i = int(np.argmax(ids == hi))
        if n_nodes is not None:
            rule = f"the header declares {n_nodes} nodes, so ids must be in {base}..{limit}"
            fix = "fix the id or the header"
        else:
            rule = f"node ids are int32, so at most {_MAX_ID + 1:,} nodes are supported"
            fix = f"pass {option('renumber')} to number the ids compactly"
        raise _fail(path, f"node id {hi} out of range: {rule}; {fix}", line_of(i))


def _build(
    path: Path,
    src: np.ndarray,
    dst: np.ndarray,
    w: np.ndarray | None,
    *,
    n_nodes: int | None,
    directed: bool,
    duplicates: DuplicatePolicy,
    self_loops: SelfLoopPolicy,
    renumber: bool = False,
    name: str,
) -> Graph:
    try:
        return Graph.from_edges(
            src, dst, w, n_nodes=n_nodes, directed=directed, duplicates=duplicates,
            self_loops=self_loops, renumber=renumber, name=name,
        )
    except InvalidGraph as exc:
        raise _fail(path, str(exc)) from None


def _as_undirected_view(g: Graph) -> Graph:
    """Mark a graph whose arrays are already symmetric as undirected (no copy)."""
    return Graph(g.indptr, g.indices, g.weights, directed=False, validate=False, name=g.name)


def _strip_comment_lines(data: bytes, markers: bytes) -> bytes:
    """Drop whole-line comments (first non-blank character in ``markers``).

    Blank lines before the first data line go too. A leading block of comments (a SNAP
    header) is sliced off cheaply; only when a comment marker appears later is the
    (slower) regex pass run over the rest.
    """
    pos = 0
    n = len(data)
    while pos < n:
        end = data.find(b"\n", pos)
        end = n if end < 0 else end + 1
        line = data[pos:end].strip()
        if line and line[:1] not in markers:
            break
        pos = end
    body = data[pos:]
    if any(m in body for m in (bytes([c]) for c in markers)):
        pattern = rb"(?m)^[ \t]*[" + re.escape(markers) + rb"][^\n]*\n?"
        return re.sub(pattern, b"", body)
    return body


def _count_lines(body: bytes) -> int:
    """Count the lines of ``body`` up to its last non-blank character (no copy)."""
    end = len(body)
    while end and body[end - 1] in b" \t\r\n\f\v":
        end -= 1
    return body.count(b"\n", 0, end) + 1 if end else 0


def _parse_numbers(body: bytes) -> np.ndarray:
    """All whitespace-separated numbers of ``body``: int64 when possible, else float64."""
    if not body or body.isspace():
        # numpy parses a whitespace-only string as [0]
        return np.zeros(0, dtype=np.int64)
    try:
        return np.fromstring(body, dtype=np.int64, sep=" ")
    except ValueError:
        pass
    try:
        return np.fromstring(body, dtype=np.float64, sep=" ")
    except ValueError:
        raise _SlowPath from None


def _float_ids(path: Path, col: np.ndarray, line_of: Callable[[int], int | None]) -> np.ndarray:
    if col.dtype.kind == "f":
        bad = ~np.isfinite(col)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise _fail(path, f"node id {float(col[i]):g} is not an integer", line_of(i))
        frac = col != np.floor(col)
        if frac.any():
            i = int(np.flatnonzero(frac)[0])
            raise _fail(path, f"node id {float(col[i]):g} is not an integer", line_of(i))
        if col.size and (np.abs(col).max() > 2**53):
            raise _SlowPath
        return col.astype(np.int64)
    return col


def _token_number(tok: bytes, path: Path, lineno: int, what: str) -> float | int:
    try:
        return int(tok)
    except ValueError:
        pass
    try:
        return float(tok)
    except ValueError:
        raise _fail(path, f"{what} {_show(tok)} is not a number", lineno) from None


def _int_token(tok: bytes, path: Path, lineno: int, what: str) -> int:
    try:
        return int(tok)
    except ValueError:
        raise _fail(path, f"{what} {_show(tok)} is not an integer", lineno) from None


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
        u = _int_token(toks[0], path, lineno, "source id")
        v = _int_token(toks[1], path, lineno, "destination id")
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
    as_stored = directed is None and declared_directed is False
    g = _build(path, src, dst, w, n_nodes=n_nodes, directed=directed is not False,
               duplicates=duplicates, self_loops=self_loops, renumber=renumber, name=name)
    if as_stored and _pattern_symmetric(g):
        g = _as_undirected_view(g)  # both directions are listed: undirected, as written
    return g


def _check_declared(path: Path, data: bytes, n: int, m: int, items: str, header: str,
                    line: int | None, needed: int, per_line: bool = True) -> None:
    """Check a header's counts against the file before allocating by them.

    Every declared entry needs a line of its own, so a count above the number of lines is
    wrong however the rest of the file looks; and the graph it declares must fit in memory.
    """
    if per_line:
        room, unit = data.count(b"\n") + 1, "lines"
    else:  # a number and its separator take at least two bytes
        room, unit = len(data) // 2 + 1, "numbers' worth of bytes"
    if m > room:
        raise _fail(path, f"the {header} declares {m:,} {items} but the file has room for at "
                    f"most {room:,} ({len(data):,} bytes, {unit}); fix the header", line)
    try:
        check_memory(f"the graph the {header} declares ({n:,} nodes, {m:,} {items})", needed,
                     "fix the header if it is wrong, or use a machine with more memory")
    except MemoryRefused as exc:
        raise _refuse_memory(path, exc) from None


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
        u = _int_token(toks[1], path, lineno, "arc tail")
        v = _int_token(toks[2], path, lineno, "arc head")
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
    n_arcs = body.count(b"\na") + (1 if body.startswith(b"a") else 0)
    if n_arcs != n_lines:
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


def _load_dimacs(
    path: Path, data: bytes, *, directed: bool, weighted: bool, duplicates: DuplicatePolicy,
    self_loops: SelfLoopPolicy, name: str,
) -> Graph:
    _check_text(path, data, "dimacs")
    n, m, p_line = _dimacs_header(data, path)
    _check_declared(path, data, n, m, "arcs", "problem line", p_line,
                    graph_bytes(n, m * (1 if directed else 2), weighted))
    try:
        src, dst, w = _dimacs_fast(data, path, n, m, p_line)
    except _SlowPath:
        src, dst, w = _dimacs_slow(data, path, n, m)
    return _build(path, src, dst, w if weighted else None, n_nodes=n, directed=directed,
                  duplicates=duplicates, self_loops=self_loops, name=name)


# ---------------------------------------------------------------------------- METIS
def _load_metis(
    path: Path, data: bytes, *, directed: bool, weighted: bool, duplicates: DuplicatePolicy,
    self_loops: SelfLoopPolicy, name: str,
) -> Graph:
    _check_text(path, data, "metis")
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    it = iter(enumerate(lines, start=1))
    header: list[bytes] = []
    header_line = 0
    for lineno, raw in it:
        s = raw.strip()
        if not s or s[:1] == b"%":
            continue
        header, header_line = s.split(), lineno
        break
    if not header:
        raise _fail(path, "empty METIS file; expected a header '<nodes> <edges> [fmt [ncon]]'")
    if not 2 <= len(header) <= 4:
        raise _fail(path, f"METIS header has {len(header)} field(s); expected "
                    "'<nodes> <edges> [fmt [ncon]]'", header_line)
    n = _int_token(header[0], path, header_line, "node count")
    m = _int_token(header[1], path, header_line, "edge count")
    if n < 0 or m < 0 or n > _MAX_ID + 1:
        raise _fail(path, f"node/edge counts must be non-negative and nodes <= {_MAX_ID + 1}, "
                    f"got {n} {m}", header_line)
    lines_left = len(lines) - header_line
    if n > lines_left:
        raise _fail(path, f"the header declares {n} vertices but the file has {lines_left} "
                    "lines after it (one line per vertex); fix the header", header_line)
    _check_declared(path, data, n, 2 * m, "adjacency entries", "header", header_line,
                    graph_bytes(n, 2 * m, weighted), per_line=False)
    fmt = header[2].decode("ascii", "replace") if len(header) > 2 else "0"
    if not re.fullmatch(r"[01]{1,3}", fmt):
        raise _fail(path, "METIS fmt field must be up to three 0/1 digits like 011, got "
                    f"{_show(header[2])}", header_line)
    fmt = fmt.zfill(3)
    has_size, has_vwgt, has_ewgt = fmt[0] == "1", fmt[1] == "1", fmt[2] == "1"
    ncon = _int_token(header[3], path, header_line, "ncon") if len(header) > 3 else 1
    if len(header) > 3 and not has_vwgt:
        raise _fail(path, f"ncon={ncon} given but fmt {fmt} declares no vertex weights",
                    header_line)
    if ncon < 1:
        raise _fail(path, f"ncon must be >= 1, got {ncon}", header_line)
    skip = int(has_size) + (ncon if has_vwgt else 0)
    step = 2 if has_ewgt else 1

    rows: list[bytes] = []
    row_lines: list[int] = []
    for lineno, raw in it:
        if raw.lstrip()[:1] == b"%":
            continue
        if len(rows) == n:
            if raw.strip():
                raise _fail(path, f"more vertex lines than the {n} the header declares; fix "
                            "the header", lineno)
            continue
        rows.append(raw)
        row_lines.append(lineno)
    if len(rows) != n:
        raise _fail(path, f"the header declares {n} vertices but the file has {len(rows)} "
                    "vertex lines (a blank line is an isolated vertex); fix the header")

    counts = np.fromiter((len(r.split()) for r in rows), dtype=np.int64, count=n)
    joined = b" ".join(rows)
    try:
        values = _parse_numbers(joined)
        if values.size != counts.sum():
            raise _SlowPath
    except _SlowPath:
        for i, r in enumerate(rows):
            for tok in r.split():
                _token_number(tok, path, row_lines[i], "entry")
        raise _fail(path, "unparseable vertex lines; expected whitespace-separated numbers") \
            from None
    per_vertex = counts - skip
    bad = (per_vertex < 0) | (per_vertex % step != 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = "'neighbour weight' pairs" if has_ewgt else "neighbours"
        raise _fail(path, f"vertex {i + 1}: expected {skip} vertex size/weight field(s) then "
                    f"{what} (fmt {fmt}), got {int(counts[i])} numbers", row_lines[i])
    degree = per_vertex // step
    # mask out the per-vertex prefix (sizes, vertex weights) then split pairs
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    keep = np.ones(values.size, dtype=bool)
    if skip:
        pre = (starts[:-1, None] + np.arange(skip)[None, :]).ravel()
        keep[pre] = False
    adj = values[keep]
    if has_ewgt:
        nbr = adj[0::2]
        ew = adj[1::2].astype(np.float64)
    else:
        nbr, ew = adj, None
    n_entries = int(degree.sum())
    if n_entries != 2 * m:
        raise _fail(path, f"the header declares {m} edges, so the adjacency lists should hold "
                    f"2*{m}={2 * m} entries, but they hold {n_entries}; fix the header "
                    "(METIS counts each undirected edge once)", header_line)

    src = np.repeat(np.arange(n, dtype=np.int64), degree)

    def line_of(k: int) -> int | None:
        return row_lines[int(src[k])] if n_entries else None

    try:
        nbr = _float_ids(path, nbr, line_of)
    except _SlowPath:  # ids beyond 2**53 written as floats: far out of range anyway
        k = int(np.argmax(np.abs(nbr)))
        raise _fail(path, f"neighbour id {float(nbr[k]):g} out of range: the header declares "
                    f"{n} vertices, so ids must be in 1..{n}; fix the id or the header",
                    line_of(k)) from None
    _check_ids(path, nbr, n, 1, line_of)
    if ew is not None:
        _check_weights(path, ew, line_of)
    g = _build(path, src, nbr - 1, ew if weighted else None, n_nodes=n, directed=True,
               duplicates=duplicates, self_loops=self_loops, name=name)
    if not g.is_symmetric():
        s, d = g.edges()
        a = s.astype(np.int64) * max(n, 1) + d
        b = np.sort(d.astype(np.int64) * max(n, 1) + s)
        missing = ~np.isin(a, b)
        k = int(np.flatnonzero(missing)[0])
        u, v = int(s[k]) + 1, int(d[k]) + 1
        raise _fail(path, f"vertex {u} lists {v} but vertex {v} does not list {u}; METIS "
                    "graphs are undirected, so every edge must appear in both lists",
                    row_lines[u - 1])
    return g if directed else _as_undirected_view(g)


# ---------------------------------------------------------------------------- Matrix Market
def _mtx_size_line(path: Path, data: bytes) -> tuple[int, int, int, int]:
    """``(rows, cols, entries, line number)`` of the size line after the banner."""
    pos = data.find(b"\n") + 1
    lineno = 1
    while 0 < pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        raw, pos = data[pos:end], end + 1
        lineno += 1
        s = raw.strip()
        if not s or s[:1] == b"%":
            continue
        toks = s.split()
        if len(toks) != 3:
            raise _fail(path, f"the size line must be '<rows> <cols> <entries>', got {_show(s)}",
                        lineno)
        values = [_int_token(t, path, lineno, "size") for t in toks]
        if min(values) < 0:
            raise _fail(path, f"sizes must be >= 0, got {_show(s)}", lineno)
        return values[0], values[1], values[2], lineno
    raise _fail(path, "no size line '<rows> <cols> <entries>' after the banner; add it")


def _load_mtx(
    path: Path, data: bytes, *, directed: bool | None, weighted: bool,
    duplicates: DuplicatePolicy, self_loops: SelfLoopPolicy, name: str,
) -> Graph:
    import scipy.io

    raw_head = data.split(b"\n", 1)[0].lower().split()
    if len(raw_head) != 5 or raw_head[0] != b"%%matrixmarket" or raw_head[1] != b"matrix":
        raise _fail(path, "not a Matrix Market file: the first line must be "
                    "'%%MatrixMarket matrix coordinate <field> <symmetry>'", 1)
    layout, field, symmetry = (t.decode("ascii", "replace") for t in raw_head[2:])
    if layout != "coordinate":
        raise _fail(path, f"Matrix Market layout {_show(raw_head[2])} is not supported (a "
                    "dense 'array' cannot hold a graph); graphs need 'coordinate'", 1)
    if field not in ("real", "integer", "pattern"):
        raise _fail(path, f"Matrix Market field {_show(raw_head[3])} is not supported; use "
                    "real, integer or pattern", 1)
    if symmetry not in ("general", "symmetric", "skew-symmetric"):
        raise _fail(path, f"Matrix Market symmetry {_show(raw_head[4])} is not supported; use "
                    "general or symmetric", 1)
    _check_text(path, data, "mtx")
    n_rows, n_cols, nnz, size_line = _mtx_size_line(path, data)
    if n_rows != n_cols:
        raise _fail(path, f"adjacency matrix must be square, got {n_rows}x{n_cols}; pad it or "
                    "use a bipartite projection", size_line)
    if n_rows > _MAX_ID + 1:
        raise _fail(path, f"the size line declares {n_rows:,} nodes, but node ids are int32, so "
                    f"at most {_MAX_ID + 1:,} nodes are supported; fix the size line",
                    size_line)
    stored = nnz * (1 if symmetry == "general" else 2)
    # scipy's reader holds row, column and value arrays next to the graph being built
    _check_declared(path, data, n_rows, nnz, "entries", "size line", size_line,
                    graph_bytes(n_rows, stored, weighted and field != "pattern") + 24 * nnz)
    if not data.endswith(b"\n"):
        # scipy's reader (fast_matrix_market) reads past the end of a buffer whose last
        # number is cut short, e.g. "1 1 5.6e" without a newline, and crashes the process
        data += b"\n"
    try:
        coo = scipy.io.mmread(io.BytesIO(data))
    except Exception as exc:  # scipy raises ValueError/RuntimeError/OverflowError variants
        why = "".join(ch if ch.isprintable() else "?" for ch in str(exc))[:200]
        raise _fail(path, f"malformed Matrix Market content ({why}); check the size line "
                    "and the entries") from None
    rows, cols = coo.shape
    if rows != cols:
        raise _fail(path, f"adjacency matrix must be square, got {rows}x{cols}; pad it or "
                    "use a bipartite projection")
    r = np.asarray(coo.row, dtype=np.int64)
    c = np.asarray(coo.col, dtype=np.int64)
    w = None if field == "pattern" or not weighted else np.asarray(coo.data, dtype=np.float64)
    if w is not None and np.isnan(w).any():
        raise _fail(path, "edge weight is NaN; weights must be numbers")
    if symmetry == "symmetric":
        # scipy mirrors the stored triangle; keep one copy of each stored entry and let
        # from_edges add the reverse direction (self loops once), so the duplicates policy
        # sees exactly the entries of the file
        lower = r >= c
        r, c = r[lower], c[lower]
        w = None if w is None else w[lower]
        g = _build(path, r, c, w, n_nodes=rows, directed=False, duplicates=duplicates,
                   self_loops=self_loops, name=name)
        if directed:
            g = Graph(g.indptr, g.indices, g.weights, directed=True, validate=False, name=name)
        return g
    # general, and skew-symmetric (whose mirrored entries carry negated weights, so it is
    # not an undirected graph): every entry is one directed edge
    return _build(path, r, c, w, n_nodes=rows, directed=directed is not False,
                  duplicates=duplicates, self_loops=self_loops, name=name)


# ---------------------------------------------------------------------------- npz
def _npz_precheck(path: Path) -> None:
    """Read only the array headers of an npz and refuse what could not be loaded.

    ``np.load`` allocates each member by the shape its header declares before reading the
    data, so a forged header in a small file could ask for terabytes. Every member's
    declared size must fit within its stored size, and the total must fit in memory.
    """
    from numpy.lib import format as npformat

    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise GraphFormatError(f"graph file not found: {path}; check the path") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError,
            RuntimeError) as exc:
        why = "".join(ch if ch.isprintable() else "?" for ch in str(exc))[:160]
        raise _fail(path, f"not a readable npz archive ({why}); re-create it with "
                    f"{option('save_npz')}") from None
    total = 0
    with zf:
        for info in zf.infolist():
            if not info.filename.endswith(".npy"):
                # np.load hands other members over as raw bytes
                total += info.file_size
                continue
            try:
                with zf.open(info) as member:
                    version = npformat.read_magic(member)
                    if version == (1, 0):
                        shape, _, dtype = npformat.read_array_header_1_0(member)
                    else:
                        shape, _, dtype = npformat.read_array_header_2_0(member)
                    header_end = member.tell()
            except Exception as exc:  # numpy raises ValueError/TypeError/SyntaxError variants
                why = "".join(ch if ch.isprintable() else "?" for ch in str(exc))[:120]
                raise _fail(path, f"npz member {info.filename!r} has a malformed array header "
                            f"({why}); re-create it with {option('save_npz')}") from None
            if dtype.hasobject:
                raise _fail(path, f"npz member {info.filename!r} holds pickled Python "
                            "objects, which gswitch never loads; re-create it with "
                            f"{option('save_npz')}")
            count = 1
            for dim in shape:
                count *= int(dim)
            size = count * dtype.itemsize
            if size > info.file_size - header_end:
                raise _fail(path, f"npz member {info.filename!r} declares shape {shape} "
                            f"({size:,} bytes) but stores only {info.file_size - header_end:,}; "
                            f"the file is corrupt; re-create it with {option('save_npz')}")
            total += size
    try:
        check_memory(f"loading the arrays of this npz cache ({total:,} bytes)", 3 * total,
                     "use a machine with more memory")
    except MemoryRefused as exc:
        raise _refuse_memory(path, exc) from None


def _load_npz(path: Path) -> Graph:
    _npz_precheck(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise GraphFormatError(f"graph file not found: {path}; check the path") from None
    except ValueError as exc:
        why = "".join(ch if ch.isprintable() else "?" for ch in str(exc))[:160]
        raise _fail(path, f"npz cache holds pickled objects or is corrupt ({why}); "
                    f"re-create it with {option('save_npz')}") from None
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError,
            RuntimeError) as exc:  # zipfile: unsupported version/compression, encryption
        why = "".join(ch if ch.isprintable() else "?" for ch in str(exc))[:160]
        raise _fail(path, f"not a readable npz archive ({why}); re-create it with "
                    f"{option('save_npz')}") from None
    missing = [k for k in ("format_version", "indptr", "indices", "directed") if k not in arrays]
    if missing:
        raise _fail(path, f"npz cache lacks {', '.join(missing)}; it was not written by "
                    f"gswitch; re-create it with {option('save_npz')}")
    version = arrays["format_version"]
    if version.shape != () or version.dtype.kind not in "iu":
        raise _fail(path, "npz format_version must be an integer scalar")
    if int(version) != NPZ_FORMAT_VERSION:
        raise _fail(path, f"npz cache format version {int(version)} is not supported (this "
                    f"gswitch reads version {NPZ_FORMAT_VERSION}); re-create the cache")
    indptr, indices = arrays["indptr"], arrays["indices"]
    for key, arr in (("indptr", indptr), ("indices", indices)):
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise _fail(path, f"npz {key} must be a 1-D integer array, got {arr.dtype} with "
                        f"shape {arr.shape}")
    weights = arrays.get("weights")
    if weights is not None:
        if weights.ndim != 1 or weights.dtype.kind != "f":
            raise _fail(path, f"npz weights must be a 1-D float array, got {weights.dtype} "
                        f"with shape {weights.shape}")
        if np.isnan(weights).any():
            raise _fail(path, "npz weights contain NaN; weights must be numbers")
    directed_arr = arrays["directed"]
    if directed_arr.shape != () or directed_arr.dtype.kind not in "biu":
        raise _fail(path, "npz 'directed' must be a boolean scalar")
    stored_name = arrays.get("name")
    name = ""
    if stored_name is not None and stored_name.dtype.kind == "U" and stored_name.shape == ():
        name = str(stored_name)
    try:
        g = Graph(indptr, indices, weights, directed=bool(directed_arr), name=name)
    except InvalidGraph as exc:
        raise _fail(path, f"inconsistent npz arrays: {exc}") from None
    if not g.directed and not _pattern_symmetric(g):
        raise _fail(path, "npz says undirected but its arrays are not symmetric; re-create it")
    return g


def _pattern_symmetric(g: Graph) -> bool:
    probe = Graph(g.indptr, g.indices, None, directed=True, validate=False)
    return probe.is_symmetric()


def _apply_policies(path: Path, g: Graph, *, directed: bool | None, weighted: bool,
                    duplicates: DuplicatePolicy, self_loops: SelfLoopPolicy) -> Graph:
    """Post-process a graph that was stored already built (npz)."""
    name = g.name
    try:
        if not weighted and g.weighted:
            g = g.with_weights(None)
        if self_loops == "reject" and g.n_self_loops:
            src, dst = g.edges()
            v = int(src[src == dst][0])
            raise InvalidGraph(f"self loop at node {v}; pass self_loops='keep' or 'drop'")
        if self_loops == "drop":
            g = g.remove_self_loops()
        if duplicates != "keep":
            g = g.deduplicate(duplicates)
    except InvalidGraph as exc:
        raise _fail(path, str(exc)) from None
    if directed is False and g.directed:
        g = g.symmetrize()
    elif directed is True and not g.directed:
        g = Graph(g.indptr, g.indices, g.weights, directed=True, validate=False)
    g.name = name
    return g


# ---------------------------------------------------------------------------- public API
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
    line. DIMACS ``.gr`` files (``c`` comments, ``p sp n m``, ``a u v w``) and METIS
    files use 1-based ids, converted to 0-based. Compressed files are recognised by their
    gzip signature, whatever the name.

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
    kind = _format_of(p, fmt)
    if renumber and kind != "edgelist":
        raise GraphFormatError(
            f"{p}: {option('renumber')} applies to edge lists only; a {_FORMAT_TITLES[kind]} "
            "file declares its node count, so its ids are already compact"
        )
    label = name if name is not None else _default_name(p)
    if kind == "npz":
        if not p.exists():
            raise GraphFormatError(f"graph file not found: {p}; check the path")
        g = _load_npz(p)
        g.name = name if name is not None else (g.name or label)
        return _apply_policies(p, g, directed=directed, weighted=weighted,
                               duplicates=duplicates, self_loops=self_loops)
    if kind == "edgelist":
        return _load_edgelist(p, directed=directed, weighted=weighted,
                              duplicates=duplicates, self_loops=self_loops, renumber=renumber,
                              name=label)
    data = _read_bytes(p)
    if kind == "mtx":
        return _load_mtx(p, data, directed=directed, weighted=weighted, duplicates=duplicates,
                         self_loops=self_loops, name=label)
    if kind == "metis":
        return _load_metis(p, data, directed=bool(directed), weighted=weighted,
                           duplicates=duplicates, self_loops=self_loops, name=label)
    return _load_dimacs(p, data, directed=directed is not False, weighted=weighted,
                        duplicates=duplicates, self_loops=self_loops, name=label)


def save_npz(graph: Graph, path: str | os.PathLike[str]) -> Path:
    """Write ``graph`` as an uncompressed, pickle-free ``.npz`` cache, atomically.

    The arrays go to a temporary file in the destination directory which then replaces
    ``path`` in one step, so readers never see a half-written cache. ``.npz`` is
    appended when ``path`` lacks it.

    Parameters
    ----------
    graph : Graph
        The graph to store (offsets, column ids, weights, directedness and name).
    path : str or path-like
        Destination.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    GraphFormatError
        If the directory does not exist or is not writable.

    """
    p = Path(path)
    if p.suffix.lower() != ".npz":
        p = p.with_name(p.name + ".npz")
    arrays: dict[str, np.ndarray] = {
        "format_version": np.asarray(NPZ_FORMAT_VERSION, dtype=np.int64),
        "indptr": np.asarray(graph.indptr),
        "indices": np.asarray(graph.indices),
        "directed": np.asarray(graph.directed, dtype=np.bool_),
        "name": np.asarray(graph.name or "", dtype=np.str_),
    }
    if graph.weights is not None:
        arrays["weights"] = np.asarray(graph.weights)
    _atomic_write(p, lambda f: np.savez(f, allow_pickle=False, **arrays))
    return p


def _atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write through a temporary file in the destination directory, then rename it.

    Readers never see a half-written file, and a failed write leaves the old one intact.
    A name ending in ``.gz`` is gzip-compressed.
    """
    directory = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise GraphFormatError(f"cannot write {path}: it is a directory; give a file name")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise GraphFormatError(f"cannot write {path}: {exc.strerror or exc}; check that the "
                               "directory exists and is writable") from None
    try:
        with os.fdopen(fd, "wb") as raw:
            if path.name.lower().endswith(".gz"):
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
                    write(gz)  # type: ignore[arg-type]
            else:
                write(raw)
        os.chmod(tmp, _new_file_mode())  # mkstemp makes it private; keep the usual mode
        os.replace(tmp, path)
    except OSError as exc:
        _unlink_quietly(tmp)
        raise GraphFormatError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        _unlink_quietly(tmp)
        raise


def _new_file_mode() -> int:
    """The mode ``open()`` would give a new file (0o666 less the umask)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _write_mtx(graph: Graph, f: BinaryIO) -> None:
    import scipy.io
    import scipy.sparse as sp

    src, dst = graph.edges()
    w = graph.weights
    if not graph.directed:
        # a symmetric file stores one triangle; the loader mirrors it back
        keep = src >= dst
        src, dst = src[keep], dst[keep]
        w = None if w is None else w[keep]
    data = np.ones(src.size, np.float64) if w is None else w.astype(np.float64)
    integral = w is not None and bool(np.all(np.isfinite(data)) and np.all(data == np.round(data))
                                      and np.abs(data).max(initial=0) < 2**31)
    field = "pattern" if w is None else ("integer" if integral else "real")
    if integral:
        data = data.astype(np.int64)
    coo = sp.coo_array((data, (src.astype(np.int64), dst.astype(np.int64))),
                       shape=(graph.n_nodes,) * 2)
    comment = f" gswitch graph {graph.name}" if graph.name else " gswitch graph"
    # float32 weights need 9 significant digits to come back bit for bit
    scipy.io.mmwrite(f, coo, comment=comment, field=field,
                     precision=9, symmetry="general" if graph.directed else "symmetric")


def _format_weights(w: np.ndarray) -> np.ndarray:
    w64 = w.astype(np.float64)
    if np.all(np.isfinite(w64)) and np.all(w64 == np.round(w64)) and np.abs(w64).max(
            initial=0) < 2**53:
        return w64.astype(np.int64).astype(str)
    return np.char.mod("%.9g", w64)


def _write_lines(f: BinaryIO, columns: list[np.ndarray], prefix: str = "") -> None:
    """Write rows of space-separated columns, a million rows at a time."""
    n = columns[0].size if columns else 0
    step = 1 << 20
    for start in range(0, n, step):
        parts = [c[start:start + step].astype(str) if c.dtype.kind != "U" else
                 c[start:start + step] for c in columns]
        rows = parts[0]
        for part in parts[1:]:
            rows = np.char.add(np.char.add(rows, " "), part)
        if prefix:
            rows = np.char.add(prefix, rows)
        f.write(("\n".join(rows.tolist()) + "\n").encode("ascii"))


def _comment_name(graph: Graph) -> str:
    """The graph's name for a one-line header comment (a line break would end the comment
    and leave the rest of the name as a bad data line).
    """
    return " ".join(str(graph.name or "").split())


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


def _write_dimacs(graph: Graph, f: BinaryIO) -> None:
    src, dst = graph.edges()
    f.write(f"c gswitch graph {_comment_name(graph)}\nc ids are 1-based\n"
            f"p sp {graph.n_nodes} {graph.n_edges}\n".encode())
    w = graph.weights if graph.weights is not None else np.ones(graph.n_edges, np.float32)
    _write_lines(f, [src.astype(np.int64) + 1, dst.astype(np.int64) + 1, _format_weights(w)],
                 prefix="a ")


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
    kind = _format_of(p, fmt)
    if kind == "metis":
        raise GraphFormatError(f"writing METIS is not supported; choose one of "
                               f"{', '.join(WRITE_FORMATS)} (.mtx, .txt, .gr, .npz)")
    if not isinstance(graph, Graph):
        raise GraphFormatError(f"save_graph needs a gswitch.Graph, got {type(graph).__name__}")
    if kind == "npz":
        if p.name.lower().endswith(".gz"):
            raise GraphFormatError(f"{p}: an npz cache is not gzip-compressed; drop the .gz")
        return save_npz(graph, p)
    writer = {"mtx": _write_mtx, "edgelist": _write_edgelist, "dimacs": _write_dimacs}[kind]
    _atomic_write(p, lambda f: writer(graph, f))
    return p
