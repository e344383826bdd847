"""gswitch's own ``.npz`` cache: the CSR arrays exactly, pickle-free, written atomically."""

from __future__ import annotations

import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

from .._hints import option
from .._memory import MemoryRefused, check_memory
from ..errors import GraphFormatError, InvalidGraph
from ..graph import (
    DuplicatePolicy,
    Graph,
    SelfLoopPolicy,
    _transpose,
)
from ._common import (
    _atomic_write,
    _fail,
    _pattern_symmetric,
    _refuse_memory,
    _reverse_weight,
    _unpaired_weight,
)
from .formats import Format, LoadOptions, register

__all__ = ["save_npz", "NPZ_FORMAT_VERSION", "FORMAT"]


#: Version written into (and required of) ``.npz`` caches.
NPZ_FORMAT_VERSION = 1

_FLOAT32_MAX = float(np.finfo(np.float32).max)


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
    if weights is not None:
        # Graph stores float32 weights, where a larger number would become infinite
        over = np.flatnonzero(np.isfinite(weights) & (np.abs(weights) > _FLOAT32_MAX))
        if over.size:
            e = int(over[0])
            src, dst = g.edges()
            raise _fail(path, f"npz weight {float(weights[e]):g} of edge {int(src[e])} -> "
                        f"{int(dst[e])} does not fit float32 (largest {_FLOAT32_MAX:.3g}); "
                        "scale the weights down")
    if g.directed or _same_as_transpose(g):
        return g
    if not _pattern_symmetric(g):
        raise _fail(path, "npz says undirected but its arrays are not symmetric; re-create it")
    if g.weighted:
        src, dst = g.edges()
        k = _unpaired_weight(src, dst, g.weights)
        if k is not None:
            u, v = int(src[k]), int(dst[k])
            other = _reverse_weight(src, dst, g.weights, k)
            raise _fail(path, f"npz says undirected but edge {u} -> {v} weighs "
                        f"{float(g.weights[k]):g} and {v} -> {u} weighs {other:g}; re-create "
                        f"it with {option('save_npz')}")
    return g


def _same_as_transpose(g: Graph) -> bool:
    """Whether ``g``'s arrays equal their transpose's, weights included: one linear pass
    that vouches for an undirected graph whose rows are sorted without parallel edges (what
    gswitch writes); anything else is checked by pattern, then by sorting the weights.
    """
    indptr, indices, weights = _transpose(g.indptr, g.indices, g.weights, g.n_nodes)
    return bool(np.array_equal(indptr, g.indptr) and np.array_equal(indices, g.indices)
                and np.array_equal(weights, g.weights))


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

def _load(path: Path, o: LoadOptions) -> Graph:
    if path.name.lower().endswith(".gz"):  # else an archive named .gz loads silently
        raise GraphFormatError(f"{path}: an npz cache is not gzip-compressed; drop the .gz "
                               "from its name (gunzip it first if it was compressed)")
    g = _load_npz(path)
    g.name = o.given_name if o.given_name is not None else (g.name or o.name)
    return _apply_policies(path, g, directed=o.directed, weighted=o.weighted,
                           duplicates=o.duplicates, self_loops=o.self_loops)


def _save(graph: Graph, path: Path) -> Path:
    if path.name.lower().endswith(".gz"):
        raise GraphFormatError(f"{path}: an npz cache is not gzip-compressed; drop the .gz")
    return save_npz(graph, path)


FORMAT = register(Format("npz", "npz", (".npz",), (), load=_load, save=_save))
