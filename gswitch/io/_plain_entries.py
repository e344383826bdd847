"""Whether the entries of a Matrix Market file are plain numbers that scipy's reader
reads as written.

scipy's reader (fast_matrix_market) takes a number's longest valid prefix and goes on from
there: ``1.5`` in an integer file reads 1, ``0x10`` reads 0, ``5.6.7`` reads 5.6, the 4
of ``1 2 3 4`` is dropped, and ``1 2.0`` reads column 2 and value .0. It is many times
faster than a line parser, so files it reads right are handed to it, after a check in
whole-array NumPy passes (which release the GIL, so chunks are checked on every core).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["entries_look_plain"]

_CHUNK = 1 << 22

# byte classes of the entries; 'other' bytes send a file to the line parser
_SPACE, _DIGIT, _SIGN, _DOT, _EXP, _OTHER = range(6)


def _class_table(field: str) -> np.ndarray:
    table = np.full(256, _OTHER, dtype=np.uint8)
    table[list(b" \t\r\n\x0b\x0c")] = _SPACE
    table[list(b"0123456789")] = _DIGIT
    table[list(b"+-")] = _SIGN
    if field == "real":
        table[ord(".")] = _DOT
        table[list(b"eE")] = _EXP
    return table


_CLASSES = {field: _class_table(field) for field in ("real", "integer", "pattern")}


def entries_look_plain(data: bytes, start: int, field: str, nnz: int) -> bool:
    """Whether the entries (``data[start:]``) are ``nnz`` lines of exactly the field's
    number of tokens, each a whole plain number, integers but for a real value, so that
    scipy's reader reads them as written.

    Anything the reader could misread, and anything else unusual (comment lines, ``inf``,
    a lone sign, a line longer than a chunk), answers ``False``: the line parser judges it.
    """
    ncols = 2 if field == "pattern" else 3
    table = _CLASSES[field]
    chunks = []
    pos, end = start, len(data)
    while pos < end:
        stop = end if end - pos <= _CHUNK else data.rfind(b"\n", pos, pos + _CHUNK) + 1
        if stop <= pos:
            return False  # a line longer than a chunk: the line parser judges it
        chunks.append(np.frombuffer(data, dtype=np.uint8, count=stop - pos, offset=pos))
        pos = stop
    # NumPy releases the GIL: chunks are judged on every core, as scipy's reader reads
    workers = min(len(chunks), os.cpu_count() or 1, 8)
    if workers > 1:
        with ThreadPoolExecutor(workers) as pool:
            counts = list(pool.map(lambda chunk: _plain_lines(chunk, table, ncols), chunks))
    else:
        counts = [_plain_lines(chunk, table, ncols) for chunk in chunks]
    return None not in counts and sum(counts) == nnz  # type: ignore[arg-type]


def _plain_lines(chunk: np.ndarray, table: np.ndarray, ncols: int) -> int | None:
    """The number of non-blank lines of ``chunk`` (whole lines), or ``None`` unless each
    holds ``ncols`` tokens ``[+-]digits[.digits][(e|E)[+-]digits]``, with a point or an
    exponent only in the last token. Whole-chunk passes are plain comparisons; the
    grammar is judged at the few positions of token starts, signs, points and exponents.
    """
    b = np.empty(chunk.size + 2, dtype=np.uint8)  # a space either side
    b[0] = b[-1] = ord(" ")
    b[1:-1] = chunk
    space = b <= ord(" ")
    digit = (b - np.uint8(ord("0"))) < 10  # wraps below '0'
    rest = np.flatnonzero(~(space | digit))
    kind = table[b[rest]]
    if (kind == _OTHER).any():
        return None
    controls = np.flatnonzero(b < ord(" "))
    if (table[b[controls]] != _SPACE).any():
        return None  # a control byte that is not white space
    starts = np.flatnonzero(space[:-1] > space[1:]) + 1  # token starts
    if starts.size % ncols:
        return None
    # the newlines, and the chunk's end, which ends its last line
    breaks = np.append(controls[b[controls] == ord("\n")], b.size - 1)
    # each group of ncols starts is one line: its line ends after its last start and
    # before the next group's first
    first, last = starts[::ncols], starts[ncols - 1::ncols]
    end_of_line = breaks[np.searchsorted(breaks, first)]
    if (end_of_line <= last).any() or (end_of_line[:-1] >= first[1:]).any():
        return None
    if not rest.size:
        return int(first.size)

    def classes(at: np.ndarray) -> np.ndarray:
        return np.where(space[at], _SPACE, np.where(digit[at], _DIGIT, table[b[at]]))

    # a sign starts a token (a digit or point next) or an exponent (a digit next)
    at = rest[kind == _SIGN]
    prev, nxt = classes(at - 1), classes(at + 1)
    if not (((prev == _SPACE) & ((nxt == _DIGIT) | (nxt == _DOT)))
            | ((prev == _EXP) & (nxt == _DIGIT))).all():
        return None
    # a point touches a digit
    at = rest[kind == _DOT]
    if not (digit[at - 1] | digit[at + 1]).all():
        return None
    # an exponent follows a mantissa, and its digits (or a sign, checked above) follow it
    at = rest[kind == _EXP]
    prev, nxt = classes(at - 1), classes(at + 1)
    if not (((prev == _DIGIT) | (prev == _DOT)) & ((nxt == _DIGIT) | (nxt == _SIGN))).all():
        return None
    marked = (kind == _DOT) | (kind == _EXP)
    marks, mark = rest[marked], kind[marked]
    if marks.size:
        # a point or exponent only in a line's last token (the value), and there at most
        # one point and one exponent, the point first
        token = np.searchsorted(starts, marks, side="right") - 1
        if (token % ncols != ncols - 1).any():
            return None
        same = token[1:] == token[:-1]
        if (same & ((mark[:-1] == _EXP) | ((mark[:-1] == _DOT) & (mark[1:] == _DOT)))).any():
            return None
    return int(first.size)
