"""Estimate-before-allocate: how much memory a graph needs and how much the process may use.

Loaders and generators size their arrays from user input (a header line, the largest id,
a generator spec). They call :func:`check_memory` with an estimate *before* allocating,
so a two-line file that declares two billion nodes is refused in milliseconds with the
bytes needed and the bytes available, instead of growing the process until the kernel
kills it.

The available amount is the smallest of: the ``MemAvailable`` line of ``/proc/meminfo``,
the cgroup (v2 or v1) limit minus current use, the address-space limit
(``RLIMIT_AS``) minus the current virtual size, and ``GSWITCH_MEMORY_LIMIT`` (bytes, or
with a ``K``/``M``/``G``/``T`` suffix) when it is set. Where none of these can be read
the check passes.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = [
    "available_bytes",
    "check_memory",
    "format_bytes",
    "graph_bytes",
    "MemoryRefused",
    "BYTES_PER_NODE",
    "BYTES_PER_EDGE",
    "BYTES_PER_WEIGHTED_EDGE",
]

#: Peak bytes per node while building a CSR graph and taking its first look at it: the
#: int64 degree counts and offsets and the int32 offsets of the build (20) plus the degree
#: and component arrays that ``info`` and the engines make next (a billion-node uniform
#: graph measured 24 GB before it was killed).
BYTES_PER_NODE = 48
#: Peak bytes per edge while building an unweighted CSR graph from int64 endpoint arrays
#: (the endpoint arrays, the sort keys and their sorted copy, the int32 column ids);
#: measured at about 49 on NumPy 2, rounded up.
BYTES_PER_EDGE = 56
#: The same with float64 input weights (the stable order and the float32 copy); measured
#: at about 75.
BYTES_PER_WEIGHTED_EDGE = 88

#: Share of the available memory an estimate may use.
HEADROOM = 0.8

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class MemoryRefused(Exception):
    """Internal signal: an estimate exceeds the memory available (callers re-raise it typed)."""


def format_bytes(n: int | float) -> str:
    """``1536`` -> ``'1.5 KiB'``; exact byte counts below 1 KiB."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(value) < 1024 or unit == "PiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} PiB"  # pragma: no cover - loop always returns


def _parse_size(text: str) -> int | None:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if not m:
        return None
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def _meminfo_available() -> int | None:
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return None
    m = re.search(r"^MemAvailable:\s+(\d+)\s*kB", text, re.M)
    return int(m.group(1)) * 1024 if m else None


def _status_kib(key: str) -> int | None:
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    m = re.search(rf"^{key}:\s+(\d+)\s*kB", text, re.M)
    return int(m.group(1)) * 1024 if m else None


def _rlimit_available() -> int | None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    used = _status_kib("VmSize") or 0
    return max(soft - used, 0)


def _cgroup_available() -> int | None:
    pairs = (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
             ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
              "/sys/fs/cgroup/memory/memory.usage_in_bytes"))
    for limit_file, usage_file in pairs:
        try:
            limit_text = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if not limit_text.isdigit():
            return None  # "max": no limit
        limit = int(limit_text)
        if limit >= 1 << 60:  # cgroup v1 writes a huge number for "no limit"
            return None
        try:
            usage = int(Path(usage_file).read_text().strip())
        except (OSError, ValueError):
            usage = 0
        return max(limit - usage, 0)
    return None


def available_bytes() -> int | None:
    """Bytes this process may still allocate, or ``None`` when nothing says.

    Returns
    -------
    int or None
        The smallest of the limits described in the module docstring.

    """
    candidates = [
        _meminfo_available(),
        _cgroup_available(),
        _rlimit_available(),
    ]
    env = os.environ.get("GSWITCH_MEMORY_LIMIT")
    if env:
        candidates.append(_parse_size(env))
    known = [c for c in candidates if c is not None]
    if not known:
        try:
            return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return None
    return min(known)


def graph_bytes(n_nodes: int, n_edges: int, weighted: bool = False) -> int:
    """Peak bytes needed to build a CSR graph of this size from endpoint arrays.

    Parameters
    ----------
    n_nodes, n_edges : int
        Size of the graph (stored, directed edges).
    weighted : bool
        Whether edge weights are built too.

    Returns
    -------
    int

    """
    per_edge = BYTES_PER_WEIGHTED_EDGE if weighted else BYTES_PER_EDGE
    return max(int(n_nodes), 0) * BYTES_PER_NODE + max(int(n_edges), 0) * per_edge


def check_memory(what: str, needed: int, fix: str) -> None:
    """Raise :class:`MemoryRefused` when ``needed`` bytes exceed what is available.

    Parameters
    ----------
    what : str
        What was asked for, e.g. ``"a graph of 2,000,000,000 nodes"``.
    needed : int
        Estimated peak bytes.
    fix : str
        How to get under the limit.

    Raises
    ------
    MemoryRefused
        With one line: what, bytes needed, bytes available, the fix.

    """
    available = available_bytes()
    # keep a margin: allocator overhead and the interpreter's own growth are not estimated
    if available is None or needed <= available * HEADROOM:
        return
    usable = int(available * HEADROOM)
    raise MemoryRefused(
        f"{what} needs about {format_bytes(needed)} of memory ({needed:,} bytes) but only "
        f"{format_bytes(usable)} ({usable:,} bytes, {HEADROOM:.0%} of the "
        f"{format_bytes(available)} available) can be used; {fix}"
    )
