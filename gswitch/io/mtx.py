"""Matrix Market coordinate files (``.mtx``).

Entries are read by scipy's multi-threaded reader (``scipy.io.mmread``) when
:func:`._plain_entries.entries_look_plain` vouches that it reads them as written; anything
else (comment lines among the entries, ``inf``, a malformed number) goes to a line parser
that is the reference and names the first bad line.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .._memory import graph_bytes
from ..errors import GraphFormatError
from ..graph import (
    DuplicatePolicy,
    Graph,
    SelfLoopPolicy,
)
from ._common import (
    _MAX_ID,
    _build,
    _check_declared,
    _check_text,
    _fail,
    _id_token,
    _int_token,
    _read_bytes,
    _show,
    _token_number,
    text_writer,
)
from ._plain_entries import entries_look_plain
from .formats import Format, LoadOptions, register


# ---------------------------------------------------------------------------- Matrix Market
def _mtx_size_line(path: Path, data: bytes) -> tuple[int, int, int, int, int]:
    """``(rows, cols, entries, line number, offset after it)`` of the size line after the
    banner.
    """
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
        return values[0], values[1], values[2], lineno, min(pos, len(data))
    raise _fail(path, "no size line '<rows> <cols> <entries>' after the banner; add it")


def _mtx_fast(data: bytes, field: str, symmetry: str
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """Entries read by scipy's (multi-threaded) reader: 0-based rows, columns, values, with
    the mirrored entries of a symmetric or skew-symmetric file after the stored ones;
    ``None`` when it refuses the file or finds a NaN or a skew-symmetric diagonal entry
    (the line parser names the line).
    """
    import scipy.io

    if not data.endswith(b"\n"):
        # scipy's reader (fast_matrix_market) reads past the end of a buffer whose last
        # number is cut short, e.g. "1 1 5.6e" without a newline, and crashes the process
        data += b"\n"
    try:
        coo = scipy.io.mmread(io.BytesIO(data))
    except Exception:  # scipy raises ValueError/RuntimeError/OverflowError variants
        return None
    r = np.asarray(coo.row, dtype=np.int64)
    c = np.asarray(coo.col, dtype=np.int64)
    if symmetry == "skew-symmetric" and (r == c).any():
        return None
    if field == "pattern":
        return r, c, None
    w = np.asarray(coo.data, dtype=np.float64)
    if np.isnan(w).any():
        return None
    return r, c, w


def _mtx_slow(path: Path, data: bytes, size_line: int, n: int, nnz: int, field: str,
              symmetry: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The reference reader: the entries line by line, as :func:`_mtx_fast` returns them,
    or the first bad line named. Comment and blank lines may come anywhere.
    """
    fields = "'row column'" if field == "pattern" else "'row column value'"
    ncols = 2 if field == "pattern" else 3
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if lineno <= size_line:
            continue
        s = raw.strip()
        if not s or s[:1] == b"%":
            continue
        toks = s.split()
        if len(toks) != ncols:
            raise _fail(path, f"expected {fields} (field {field}), got {len(toks)} fields: "
                        f"{_show(s)}", lineno)
        r = _id_token(toks[0], path, lineno, "row index")
        c = _id_token(toks[1], path, lineno, "column index")
        for x, which in ((r, "row"), (c, "column")):
            if not 1 <= x <= n:
                rule = (f"indices must be in 1..{n} (Matrix Market is 1-based)" if n else
                        "the file can hold no entries")
                raise _fail(path, f"{which} index {x} out of range: the size line declares "
                            f"{n} rows and columns, so {rule}; fix the index or the size "
                            "line", lineno)
        if r == c and symmetry == "skew-symmetric":
            raise _fail(path, f"entry ({r}, {c}) is on the diagonal, which a skew-symmetric "
                        "matrix holds zero (a = -a) and does not store; drop the entry, or "
                        "make the symmetry general", lineno)
        if field == "integer":
            try:
                v: float = _id_token(toks[2], path, lineno, "value")
            except GraphFormatError:
                raise _fail(path, f"value {_show(toks[2])} is not an integer, but the banner "
                            "declares the field integer; fix the value or make the field "
                            "real", lineno) from None
        elif field == "real":
            v = float(_token_number(toks[2], path, lineno, "value"))
            if v != v:
                raise _fail(path, "edge weight is NaN; weights must be numbers", lineno)
        else:
            v = 1.0
        rows.append(r - 1)
        cols.append(c - 1)
        vals.append(float(v))
    if len(rows) != nnz:
        raise _fail(path, f"the size line declares {nnz:,} entries but the file has "
                    f"{len(rows):,}; fix the size line or restore the missing entries")
    r_arr = np.asarray(rows, dtype=np.int64)
    c_arr = np.asarray(cols, dtype=np.int64)
    w_arr = np.asarray(vals, dtype=np.float64)
    if symmetry != "general":
        # the other triangle, after the stored entries (scipy's order)
        off = r_arr != c_arr
        mirrored = -w_arr[off] if symmetry == "skew-symmetric" else w_arr[off]
        r_arr, c_arr = np.concatenate([r_arr, c_arr[off]]), np.concatenate([c_arr, r_arr[off]])
        w_arr = np.concatenate([w_arr, mirrored])
    return r_arr, c_arr, None if field == "pattern" else w_arr


def _load_mtx(
    path: Path, data: bytes, *, directed: bool | None, weighted: bool,
    duplicates: DuplicatePolicy, self_loops: SelfLoopPolicy, name: str,
) -> Graph:
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
                    "general, symmetric or skew-symmetric", 1)
    _check_text(path, data, "mtx")
    n_rows, n_cols, nnz, size_line, body_start = _mtx_size_line(path, data)
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
    entries = None
    if data.startswith(b"%%MatrixMarket") and entries_look_plain(data, body_start, field, nnz):
        entries = _mtx_fast(data, field, symmetry)  # scipy's reader wants the banner spelt so
    if entries is None:
        entries = _mtx_slow(path, data, size_line, n_rows, nnz, field, symmetry)
    r, c, w = entries
    if not weighted:
        w = None
    if symmetry == "symmetric":
        # scipy mirrors the stored triangle; keep one copy of each stored entry and let
        # from_edges add the reverse direction (self loops once), so the duplicates policy
        # sees exactly the entries of the file
        lower = r >= c
        r, c = r[lower], c[lower]
        w = None if w is None else w[lower]
        g = _build(path, r, c, w, n_nodes=n_rows, directed=False, duplicates=duplicates,
                   self_loops=self_loops, name=name)
        if directed:
            g = Graph(g.indptr, g.indices, g.weights, directed=True, validate=False, name=name)
        return g
    # general, and skew-symmetric (whose mirrored entries carry negated weights, so it is
    # not an undirected graph): every entry is one directed edge
    return _build(path, r, c, w, n_nodes=n_rows, directed=directed is not False,
                  duplicates=duplicates, self_loops=self_loops, name=name)


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

def _load(path: Path, o: LoadOptions) -> Graph:
    return _load_mtx(path, _read_bytes(path), directed=o.directed, weighted=o.weighted,
                     duplicates=o.duplicates, self_loops=o.self_loops, name=o.name)


FORMAT = register(Format("mtx", "Matrix Market", (".mtx", ".mm"), ("mm", "matrixmarket"),
                         load=_load, save=text_writer(_write_mtx)))
