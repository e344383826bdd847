"""Real graphs for tests: the METIS example graphs shipped by Debian's ``libmetis-doc``.

The package installs ``4elt.graph``, ``copter2.graph`` and ``mdual.graph`` (finite-element
meshes of 86k to 1M stored edges) under ``/usr/share/doc/libmetis-dev/examples/graphs``.
When the package is not installed, :func:`metis_graph_dir` fetches the ``.deb`` with
``apt-get download`` (no root needed) and unpacks it with ``dpkg-deb -x`` into a cache
directory; when that is impossible it raises :class:`DatasetUnavailable` saying why, so
tests can ``pytest.skip(str(exc))``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import GswitchError

__all__ = [
    "DatasetUnavailable",
    "METIS_GRAPHS",
    "METIS_PACKAGE",
    "cache_dir",
    "metis_graph_dir",
    "metis_graph_path",
]

#: Debian package that ships the example graphs.
METIS_PACKAGE = "libmetis-doc"
#: Example graph names :func:`metis_graph_path` knows.
METIS_GRAPHS = ("4elt", "copter2", "mdual")

_SYSTEM_DIRS = (
    Path("/usr/share/doc/libmetis-dev/examples/graphs"),
    Path("/usr/share/doc/libmetis-doc/examples/graphs"),
    Path("/usr/share/doc/metis/examples/graphs"),
)
_RELATIVE_DIR = Path("usr/share/doc/libmetis-dev/examples/graphs")
_TIMEOUT_S = 300


class DatasetUnavailable(GswitchError):
    """A test dataset is neither installed nor obtainable here (no apt, no network, ...)."""


def cache_dir() -> Path:
    """Return the dataset cache: ``$GSWITCH_DATA_DIR`` or ``~/.cache/gswitch/datasets``.

    Returns
    -------
    pathlib.Path
        The directory (not created).

    """
    env = os.environ.get("GSWITCH_DATA_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base).expanduser() if base else Path.home() / ".cache"
    return root / "gswitch" / "datasets"


def _find_graph(directory: Path, name: str) -> Path | None:
    for candidate in (directory / f"{name}.graph", directory / f"{name}.graph.gz"):
        if candidate.is_file():
            return candidate
    return None


def _has_graphs(directory: Path) -> bool:
    return directory.is_dir() and all(_find_graph(directory, n) for n in METIS_GRAPHS)


def _run(cmd: list[str], cwd: Path) -> None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                              timeout=_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise DatasetUnavailable(
            f"{cmd[0]} not found; install {METIS_PACKAGE} by hand or set GSWITCH_DATA_DIR to "
            f"a directory holding {', '.join(n + '.graph' for n in METIS_GRAPHS)}"
        ) from None
    except subprocess.TimeoutExpired:
        raise DatasetUnavailable(f"'{' '.join(cmd)}' timed out after {_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        errors = [ln for ln in lines if ln.startswith(("E:", "dpkg"))] or lines[-1:]
        reason = errors[0] if errors else f"exit status {proc.returncode}"
        raise DatasetUnavailable(f"'{' '.join(cmd)}' failed: {reason}")


def _download(target: Path) -> None:
    """Fetch and unpack the package into ``target`` via a temp dir in the same parent."""
    for tool in ("apt-get", "dpkg-deb"):
        if shutil.which(tool) is None:
            raise DatasetUnavailable(
                f"{tool} not found (not a Debian-based system); install {METIS_PACKAGE}'s "
                f"graphs by hand into {target} or point GSWITCH_DATA_DIR at them"
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".metis-", dir=target.parent) as tmp:
        work = Path(tmp)
        _run(["apt-get", "download", METIS_PACKAGE], cwd=work)
        debs = sorted(work.glob(f"{METIS_PACKAGE}_*.deb"))
        if not debs:
            raise DatasetUnavailable(f"apt-get download produced no {METIS_PACKAGE} .deb")
        unpacked = work / "root"
        _run(["dpkg-deb", "-x", str(debs[0]), str(unpacked)], cwd=work)
        graphs = unpacked / _RELATIVE_DIR
        if not _has_graphs(graphs):
            raise DatasetUnavailable(
                f"{debs[0].name} does not contain {_RELATIVE_DIR}/"
                f"{{{','.join(METIS_GRAPHS)}}}.graph; the package layout changed"
            )
        staged = work / "graphs"
        graphs.rename(staged)
        try:
            staged.rename(target)
        except OSError:
            # another process won the race; its copy is as good as ours
            if not _has_graphs(target):
                raise


def metis_graph_dir(*, download: bool = True) -> Path:
    """Locate (and if needed fetch) the directory holding the METIS example graphs.

    Looks in the system documentation directory of ``libmetis-doc``, then in
    ``cache_dir() / "metis"``; failing both, downloads the package there.

    Parameters
    ----------
    download : bool
        Allow ``apt-get download``; ``False`` only looks.

    Returns
    -------
    pathlib.Path
        A directory with ``4elt.graph``, ``copter2.graph`` and ``mdual.graph`` (any of them
        possibly gzipped as ``*.graph.gz``).

    Raises
    ------
    DatasetUnavailable
        If the graphs are not installed and cannot be downloaded; the message says why.

    """
    for directory in _SYSTEM_DIRS:
        if _has_graphs(directory):
            return directory
    cached = cache_dir() / "metis"
    if _has_graphs(cached):
        return cached
    if not download:
        raise DatasetUnavailable(
            f"METIS example graphs not installed ({METIS_PACKAGE}) and not cached in {cached}"
        )
    if cached.exists():
        # an incomplete earlier attempt; replace it
        shutil.rmtree(cached, ignore_errors=True)
    _download(cached)
    return cached


def metis_graph_path(name: str, *, download: bool = True) -> Path:
    """Path of one METIS example graph (``.graph`` or ``.graph.gz``).

    Parameters
    ----------
    name : {"4elt", "copter2", "mdual"}
        The graph.
    download : bool
        Allow fetching the package, as in :func:`metis_graph_dir`.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DatasetUnavailable
        If the graphs cannot be found or fetched.
    ValueError
        If ``name`` is not one of :data:`METIS_GRAPHS`.

    """
    if name not in METIS_GRAPHS:
        raise ValueError(f"unknown METIS example graph {name!r}; choose one of "
                         f"{', '.join(METIS_GRAPHS)}")
    directory = metis_graph_dir(download=download)
    found = _find_graph(directory, name)
    if found is None:
        raise DatasetUnavailable(f"{name}.graph missing from {directory}")
    return found
