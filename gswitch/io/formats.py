"""The registry of graph file formats: one :class:`Format` per module of :mod:`gswitch.io`.

A format module registers, in one place, its name, title, file extensions, aliases for
``fmt=``, its loader and (where gswitch writes it) its writer; :func:`~gswitch.io.load_graph`
and :func:`~gswitch.io.save_graph` find it here by extension or name. Adding a format
touches one new module and the import list of ``gswitch/io/__init__.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .._hints import option
from ..errors import GraphFormatError
from ..graph import DuplicatePolicy, Graph, SelfLoopPolicy

__all__ = ["Format", "LoadOptions", "register", "registered", "format_of",
           "extension_of", "default_name", "title_of"]


@dataclass(frozen=True)
class LoadOptions:
    """What :func:`~gswitch.io.load_graph` was asked for, handed to a format's loader.

    ``name`` is the label to give the graph (the caller's, else the file name's stem);
    ``given_name`` the caller's own, or ``None``.
    """

    directed: bool | None
    weighted: bool
    duplicates: DuplicatePolicy
    self_loops: SelfLoopPolicy
    renumber: bool
    name: str
    given_name: str | None


@dataclass(frozen=True)
class Format:
    """A graph file format.

    Attributes
    ----------
    name : str
        Canonical name, as ``fmt=`` takes it.
    title : str
        Name in messages ("Matrix Market").
    extensions : tuple of str
        File extensions (with the dot, lower case), each also read with ``.gz`` after it.
    aliases : tuple of str
        Other names ``fmt=`` accepts.
    load : callable
        ``load(path, options) -> Graph`` (:class:`LoadOptions`).
    save : callable, optional
        ``save(graph, path) -> Path``, atomically; ``None`` where gswitch does not write it.
    renumbers : bool
        Whether ``renumber=True`` applies (ids as written may be sparse).
    """

    name: str
    title: str
    extensions: tuple[str, ...]
    aliases: tuple[str, ...]
    load: Callable[[Path, LoadOptions], Graph]
    save: Callable[[Graph, Path], Path] | None = None
    renumbers: bool = False


_REGISTRY: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    """Add ``fmt``; a name, alias or extension another format has is an error naming both."""
    for other in _REGISTRY.values():
        clash = ({fmt.name, *fmt.aliases} & {other.name, *other.aliases}) or (
            set(fmt.extensions) & set(other.extensions))
        if clash:
            raise ValueError(f"graph format {fmt.name!r} claims {sorted(clash)[0]!r}, which "
                             f"format {other.name!r} already has")
    _REGISTRY[fmt.name] = fmt
    return fmt


def title_of(name: str) -> str:
    """The title of the format called ``name`` (the name itself if none is registered)."""
    fmt = _REGISTRY.get(name)
    return fmt.title if fmt is not None else name


def registered() -> list[Format]:
    """The formats in registration order."""
    return list(_REGISTRY.values())


def extension_of(path: Path) -> str:
    """The lower-case extension that names the format (``.txt`` of ``g.txt.gz``)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def default_name(path: Path) -> str:
    """A graph's label from its file name: the name up to its first dot."""
    name = path.name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    stem, _, _ = name.partition(".")
    return stem or name


def format_of(path: Path, fmt: str | None) -> Format:
    """The format ``fmt`` names (a name or alias), else the one of ``path``'s extension."""
    names = [f.name for f in _REGISTRY.values()]
    if fmt is not None:
        key = fmt.lower().lstrip(".")
        for f in _REGISTRY.values():
            if key == f.name or key in f.aliases:
                return f
        raise GraphFormatError(f"unknown graph format {fmt!r}; use one of {', '.join(names)}")
    ext = extension_of(path)
    for f in _REGISTRY.values():
        if ext in f.extensions:
            return f
    known = " ".join(sorted(e for f in _REGISTRY.values() for e in f.extensions))
    what = (f"unknown graph file extension {ext!r}" if ext else
            "the file name has no extension, so its graph format is unknown")
    raise GraphFormatError(
        f"{path}: {what}; known: {known} (each optionally followed by .gz); rename the "
        f"file or name the format with {option('fmt')} ({', '.join(names)})"
    )
