"""What the format modules share: reading (gzip, size caps, memory estimates), number
parsing, id and weight checks, building the graph, and atomic writes.

Text formats are parsed in two tiers. A vectorised fast path reads the whole file and
hands it to NumPy's C number parser; it accepts the file only when the counts it can
check cheaply agree (numbers per line, lines per header). Anything it cannot vouch for
goes to a plain line-by-line parser, which is the reference: it either produces the same
graph or names the first bad line (raising :class:`_SlowPath` hands a file over).
"""

from __future__ import annotations

import gzip
import math
import os
import re
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from .._hints import option
from .._memory import MemoryRefused, available_bytes, check_memory, format_bytes
from ..errors import GraphFormatError, InvalidGraph
from ..graph import (
    DuplicatePolicy,
    Graph,
    SelfLoopPolicy,
)
from .formats import title_of

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
        raise _fail(path, f"looks like binary data, not a text {title_of(kind)} file; "
                    f"check the file, or name its format with {option('fmt')}")


def _refuse_memory(path: Path, exc: MemoryRefused) -> GraphFormatError:
    return _fail(path, str(exc))


_UTF8_BOM = b"\xef\xbb\xbf"


def _not_gzip(path: Path, head: bytes) -> GraphFormatError:
    """The refusal of a file named ``.gz`` whose first bytes ``head`` are not gzip's magic.

    Read as it is, it would load as whatever it holds, or fail on a line with no hint
    that the name is what is wrong.
    """
    first = head.strip().splitlines()[0] if head.strip() else b""
    start = f"it starts with {_show(first, 24)}" if head else "it is empty"
    return _fail(path, f"not gzip data, though the name ends in .gz ({start}); rename it "
                 "without .gz if it is not compressed, or recompress it with gzip")


class _GraphFile:
    """Open a graph file for binary reading, gunzipping it when it starts with gzip's magic;
    a name ending in ``.gz`` must start with it.
    """

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
        head = self._raw.read(64)
        if head[:2] == _GZIP_MAGIC:
            self._raw.seek(0)
            self._stream = gzip.GzipFile(fileobj=self._raw, mode="rb")
        elif self.path.name.lower().endswith(".gz"):
            self._raw.close()
            raise _not_gzip(self.path, head)
        else:
            self._raw.seek(0)
            self._stream = self._raw
        # a UTF-8 byte order mark (editors on Windows write one) is not data
        try:
            bom = self._stream.read(len(_UTF8_BOM)) == _UTF8_BOM
        except (EOFError, gzip.BadGzipFile, zlib.error):
            bom = False  # corrupt gzip data: the read proper says so
        if not bom:
            self._raw.seek(0)
            if self._stream is not self._raw:
                self._stream.close()  # leaves the raw file open
                self._stream = gzip.GzipFile(fileobj=self._raw, mode="rb")
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


def _build_as_written(
    path: Path,
    src: np.ndarray,
    dst: np.ndarray,
    w: np.ndarray | None,
    *,
    undirected_as_written: bool,
    n_nodes: int | None,
    directed: bool,
    duplicates: DuplicatePolicy,
    self_loops: SelfLoopPolicy,
    renumber: bool = False,
    name: str,
) -> Graph:
    """:func:`_build`, for a file whose header (one gswitch wrote) says it lists both
    directions of an undirected graph: ``undirected_as_written`` marks the graph
    undirected when its pattern is symmetric.

    ``drop`` then waits for the undirected graph, which keeps one edge for both
    directions (per direction, u -> v and v -> u could keep different edges' weights).
    """
    defer_drop = undirected_as_written and duplicates == "drop" and w is not None
    g = _build(path, src, dst, w, n_nodes=n_nodes, directed=directed,
               duplicates="keep" if defer_drop else duplicates, self_loops=self_loops,
               renumber=renumber, name=name)
    if undirected_as_written and _pattern_symmetric(g):
        g = _as_undirected_view(g)
    return g.deduplicate("drop") if defer_drop else g


def _as_undirected_view(g: Graph) -> Graph:
    """Mark a graph whose arrays are already symmetric as undirected (no copy)."""
    return Graph(g.indptr, g.indices, g.weights, directed=False, validate=False, name=g.name,
                 node_labels=g.node_labels)


def _unpaired_weight(src: np.ndarray, dst: np.ndarray, w: np.ndarray) -> int | None:
    """The index of an edge ``u -> v`` whose weight no ``v -> u`` has (each reverse edge
    pairs once), or ``None`` when the weights of every edge and its reverse agree.
    """
    fwd = np.lexsort((w, dst, src))
    bwd = np.lexsort((w, src, dst))
    bad = (src[fwd] != dst[bwd]) | (dst[fwd] != src[bwd]) | (w[fwd] != w[bwd])
    if not bad.any():
        return None
    k = int(np.flatnonzero(bad)[0])
    f, b = int(fwd[k]), int(bwd[k])
    # in sorted order the smaller of the two has no partner left
    mine = (int(src[f]), int(dst[f]), float(w[f]))
    theirs = (int(dst[b]), int(src[b]), float(w[b]))
    return f if mine < theirs else b


def _reverse_weight(src: np.ndarray, dst: np.ndarray, w: np.ndarray, k: int) -> float | None:
    """A weight of the reverse of edge ``k`` other than its own, if it has any."""
    rev = w[(src == dst[k]) & (dst == src[k])]
    other = rev[rev != w[k]]
    return float(other[0]) if other.size else (float(rev[0]) if rev.size else None)


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


_INT64 = np.iinfo(np.int64)

#: Floats hold every integer below 2**53 exactly; 2**53 itself may stand for 2**53 + 1.
_FLOAT_EXACT = 2**53

_SIGN_THEN_SPACE = tuple(bytes([s, w]) for s in b"+-" for w in b" \t\n\r\x0b\x0c")


def _has_lone_sign(body: bytes) -> bool:
    """Whether a ``+`` or ``-`` stands apart from any digit.

    NumPy reads such a sign as the number 0 at the end of the text, and joins it to the
    next number across whitespace (``- 2`` is -2), so a file holding one could load
    as another graph. Substring searches run at memory speed, unlike a regex.
    """
    end = len(body)
    while end and body[end - 1] in b" \t\n\r\x0b\x0c":
        end -= 1
    return body[end - 1:end] in (b"+", b"-") or any(p in body for p in _SIGN_THEN_SPACE)


def _parse_numbers(body: bytes) -> np.ndarray:
    """All whitespace-separated numbers of ``body``: int64 when possible, else float64."""
    if not body or body.isspace():
        # numpy parses a whitespace-only string as [0]
        return np.zeros(0, dtype=np.int64)
    if _has_lone_sign(body):
        raise _SlowPath
    try:
        values = np.fromstring(body, dtype=np.int64, sep=" ")
    except ValueError:
        pass
    else:
        # NumPy clamps a number past int64 to the nearest end of the range: two different
        # ids would become one; the line parser reads them exactly
        if values.size and (values.max() == _INT64.max or values.min() == _INT64.min):
            raise _SlowPath
        return values
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
        if col.size and np.abs(col).max() >= _FLOAT_EXACT:  # the line parser reads them exactly
            raise _SlowPath
        return col.astype(np.int64)
    return col


def _plain(tok: bytes, parse: Callable[[bytes], Any]) -> Any:
    """``parse(tok)``, or ``None`` where it fails; a token with an underscore is no number
    (Python's int() and float() take digit separators, "1_0" is 10, which no graph file
    means and NumPy's parser refuses).
    """
    if b"_" in tok:
        return None
    try:
        return parse(tok)
    except ValueError:
        return None


def _token_number(tok: bytes, path: Path, lineno: int, what: str) -> float | int:
    value = _plain(tok, int)
    value = _plain(tok, float) if value is None else value
    if value is None:
        raise _fail(path, f"{what} {_show(tok)} is not a number", lineno)
    return value


def _int_token(tok: bytes, path: Path, lineno: int, what: str) -> int:
    value = _plain(tok, int)
    if value is None:
        raise _fail(path, f"{what} {_show(tok)} is not an integer", lineno)
    return value


def _id_token(tok: bytes, path: Path, lineno: int, what: str) -> int:
    """A node id as the fast parser takes it (:func:`_float_ids`): an integer, or a
    number with an integral value (``1.0``, ``3e0``), exactly.
    """
    value = _plain(tok, int)
    if value is not None:
        return value
    x = _plain(tok, float)
    if x is not None and math.isfinite(x) and x == math.floor(x):
        if abs(x) < _FLOAT_EXACT:
            return int(x)
        raise _fail(path, f"{what} {_show(tok)} is too large to be read exactly as a "
                    "decimal number; write it as an integer (digits only)", lineno)
    raise _fail(path, f"{what} {_show(tok)} is not an integer", lineno)


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


def _pattern_symmetric(g: Graph) -> bool:
    probe = Graph(g.indptr, g.indices, None, directed=True, validate=False)
    return probe.is_symmetric()


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


def text_writer(write: Callable[[Graph, BinaryIO], None]) -> Callable[[Graph, Path], Path]:
    """A format's ``save`` from a function that writes the graph to a binary stream:
    through a temporary file that is renamed when complete (gzip for ``.gz`` names).
    """
    def save(graph: Graph, path: Path) -> Path:
        _atomic_write(path, lambda f: write(graph, f))
        return path

    return save


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
