"""METIS graph files (``.graph``): adjacency lists, 1-based ids, optional weights."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from .._memory import graph_bytes
from ..graph import (
    DuplicatePolicy,
    Graph,
    SelfLoopPolicy,
)
from ._common import (
    _MAX_ID,
    _as_undirected_view,
    _build,
    _check_declared,
    _check_ids,
    _check_text,
    _check_weights,
    _fail,
    _float_ids,
    _int_token,
    _parse_numbers,
    _read_bytes,
    _reverse_weight,
    _show,
    _SlowPath,
    _token_number,
    _unpaired_weight,
)
from .formats import Format, LoadOptions, register


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
        # token by token: the first one that is not a number is named on its line; numbers
        # NumPy cannot hold exactly (past int64) are read as floats, which ids that large
        # need not be (they are out of range) and weights are anyway
        values = np.asarray([float(_token_number(tok, path, row_lines[i], "entry"))
                             for i, r in enumerate(rows) for tok in r.split()],
                            dtype=np.float64)
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
    # 'drop' keeps one edge for both directions, so it waits for the undirected graph
    # (per direction, u -> v and v -> u could keep the weights of different edges)
    defer_drop = duplicates == "drop" and ew is not None and weighted
    g = _build(path, src, nbr - 1, ew if weighted else None, n_nodes=n, directed=True,
               duplicates="keep" if defer_drop else duplicates, self_loops=self_loops,
               name=name)
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
    if ew is not None:
        k = _unpaired_weight(src, nbr - 1, ew)
        if k is not None:
            u, v = int(src[k]) + 1, int(nbr[k])
            other = _reverse_weight(src, nbr - 1, ew, k)
            raise _fail(path, f"vertex {u} lists {v} with weight {float(ew[k]):g} but vertex "
                        f"{v} lists {u} with weight {other:g}; METIS weighs each undirected "
                        "edge once, so both lists must give it the same weight",
                        row_lines[u - 1])
    if not defer_drop:
        return g if directed else _as_undirected_view(g)
    g = _as_undirected_view(g).deduplicate("drop")
    return Graph(g.indptr, g.indices, g.weights, directed=True, validate=False,
                 name=name) if directed else g

def _load(path: Path, o: LoadOptions) -> Graph:
    return _load_metis(path, _read_bytes(path), directed=bool(o.directed), weighted=o.weighted,
                       duplicates=o.duplicates, self_loops=o.self_loops, name=o.name)


FORMAT = register(Format("metis", "METIS", (".graph", ".metis"), ("graph",), load=_load))
