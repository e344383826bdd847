"""The GPU engine's core block layout, checked on the host (no GPU needed): one copy must
cover the start ids, the control block and the fields, and nothing may overlap.
"""

import numpy as np
import pytest

from gswitch.engine.memory import _CTL_ROOM, _CTL_WORDS, _TRACE_CAP, _align, _CoreBlock


def _block(n_start, field_bytes):
    return _CoreBlock.new(lambda words: np.zeros(words, dtype=np.uint32), n_start, field_bytes)


@pytest.mark.parametrize("n_start", [0, 1, 63, 64, 65, 1000])
@pytest.mark.parametrize("field_bytes", [0, 4, 300, 4096])
def test_parts_are_contiguous_aligned_and_disjoint(n_start, field_bytes):
    core = _block(n_start, field_bytes)
    base = core.array.ctypes.data
    assert core.cap >= n_start and core.field_bytes >= field_bytes
    assert (core.ctl_ptr - base) % 256 == 0 and (core.fields_ptr - base) % 256 == 0
    assert _CTL_ROOM >= _CTL_WORDS
    # start ids end where the control block begins; the fields follow it; then the trace
    if n_start:
        ids = core.start(n_start)
        assert ids.dtype == np.int32 and ids.size == n_start
        assert ids.ctypes.data + 4 * n_start == core.ctl_ptr
    assert core.ctl.ctypes.data == core.ctl_ptr and core.ctl.size == _CTL_ROOM
    assert core.fields_ptr == core.ctl_ptr + 4 * _CTL_ROOM
    assert core.trace_ptr == core.fields_ptr + core.field_bytes
    assert core.trace.ctypes.data == core.trace_ptr and core.trace.size == 2 * _TRACE_CAP
    assert core.trace_ptr + 8 * _TRACE_CAP == base + core.array.nbytes


def test_fields_of_mixed_dtypes_land_where_the_copy_puts_them():
    """Fields laid out at 256-byte aligned offsets, written through their views, are the
    bytes one copy of the region carries, and views of odd sizes stay in bounds.
    """
    n = 5
    dtypes = [np.dtype(t) for t in ("int32", "float64", "uint8", "int64", "float32")]
    offsets, off = [], 0
    for dt in dtypes:
        offsets.append(off)
        off += _align(n * dt.itemsize)
    core = _block(3, off)
    for k, (dt, o) in enumerate(zip(dtypes, offsets)):
        v = core.field(o, dt, n)
        assert v.dtype == dt and v.size == n and v.ctypes.data == core.fields_ptr + o
        v[:] = np.arange(n) + 10 * k
    region = core.array.view(np.uint8)[core.fields_ptr - core.array.ctypes.data:][:off]
    for k, (dt, o) in enumerate(zip(dtypes, offsets)):
        got = region[o : o + n * dt.itemsize].view(dt)
        assert got.tolist() == (np.arange(n) + 10 * k).astype(dt).tolist()
    # views are kept: the same request returns the same array
    assert core.field(offsets[1], dtypes[1], n) is core.field(offsets[1], dtypes[1], n)


def test_a_block_grows_to_hold_what_it_held_and_what_is_asked():
    alloc = lambda words: np.zeros(words, dtype=np.uint32)  # noqa: E731
    first = _CoreBlock.grown(None, alloc, 100, 4096)
    assert _CoreBlock.grown(first, alloc, 3, 256) is first  # room enough: kept
    bigger = _CoreBlock.grown(first, alloc, 10, 8192)  # more fields, fewer ids
    assert bigger is not first
    assert bigger.cap >= 100 and bigger.field_bytes >= 8192


@pytest.mark.parametrize("chunk", [1, 3, 4, 4096, 1 << 20])
def test_read_back_chunks_cover_every_result_in_whole_items(chunk):
    """The chunks that bring large results back cover each array's bytes exactly once,
    in order, cut between items, never longer than the chunk (or one item)."""
    from gswitch.engine.memory import _chunks

    sizes = [(4 * 10_007, 4), (8 * 3_001, 8), (100, 1), (0, 4), (4, 4)]
    chunks = _chunks(sizes, chunk)
    for i, (nbytes, item) in enumerate(sizes):
        mine = [(lo, hi) for j, lo, hi in chunks if j == i]
        assert [lo for lo, _ in mine] == ([0] if nbytes else []) + [hi for _, hi in mine[:-1]]
        assert (mine[-1][1] if mine else 0) == nbytes
        for lo, hi in mine:
            assert lo % item == 0 and hi % item == 0 and 0 < hi - lo <= max(chunk, item)
    assert [j for j, _, _ in chunks] == sorted(j for j, _, _ in chunks)


def test_control_block_layout_matches_the_device_header():
    """The words common.cuh lays out (counters, step state, three slots of step totals)
    fit the room the core block keeps for them, which every run zeroes whole."""
    import re
    from pathlib import Path

    import gswitch
    from gswitch.declare import MAX_STEP_TOTALS
    from gswitch.engine.memory import _slot

    text = (Path(gswitch.__file__).parent / "cuda" / "common.cuh").read_text()
    words = {k: int(v) for k, v in re.findall(r"#define (GS_CTL_\w+) (\d+)\b", text)}
    assert words["GS_CTL_WORDS"] == _CTL_WORDS
    assert words["GS_CTL_SUMS"] >= _CTL_WORDS
    assert words["GS_CTL_SUMS"] % 2 == 0  # doubles
    assert words["GS_CTL_SUMS"] + 3 * 2 * MAX_STEP_TOTALS <= _CTL_ROOM
    # the grid barrier's word: after the step totals, on a 256-byte line of its own
    barrier = words["GS_CTL_BARRIER"]
    assert words["GS_CTL_SUMS"] + 3 * 2 * MAX_STEP_TOTALS <= barrier < _CTL_ROOM
    assert barrier % 64 == 0 and _CTL_ROOM - barrier >= 64
    assert [_slot(i) for i in (-1, 0, 1, 2)] == [16, 0, 8, 16]
