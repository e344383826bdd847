"""Tune a collection of graphs, spread over the GPUs of a host.

``gswitch tune ALG DIR_OR_LIST --devices 0,1`` makes one study per graph, as
``gswitch tune ALG GRAPH`` would, and gives the graphs to the devices in turn: each device
takes the next graph as soon as its last one is done, so a long study never holds the
others back. A study is resumed where it stopped, so the same command after a kill
finishes the batch: graphs whose studies have their trials are not run again. Another
host running the same command on the same storage starts at another graph of the list
(:func:`host_offset`) and later joins or skips the studies this one began.

On the CPU backend, listed devices are simulated: one lane of worker processes each.
"""

from __future__ import annotations

import socket
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gswitch.errors import GswitchError, InvalidInput

__all__ = ["BATCH_LIST_SUFFIX", "is_batch", "graph_paths", "host_offset", "tune_batch"]

#: A file of graph paths, one per line (``#`` starts a comment; relative paths are taken
#: from the list's folder).
BATCH_LIST_SUFFIX = ".list"


def is_batch(target: str | None) -> bool:
    """Whether a graph argument names a batch: a folder or a ``.list`` file."""
    if not target:
        return False
    path = Path(target)
    return path.is_dir() or path.suffix.lower() == BATCH_LIST_SUFFIX


def graph_paths(target: str) -> list[Path]:
    """The graph files a batch names, in a stable order.

    Parameters
    ----------
    target : str
        A folder (every file in it whose extension names a graph format, sorted by
        name) or a ``.list`` file (one path per line).

    Raises
    ------
    InvalidInput
        A missing list or listed file, or a batch without graphs.

    """
    import gswitch.io  # noqa: F401 - registers the formats
    from gswitch.io.formats import extension_of, registered

    path = Path(target)
    if path.is_dir():
        known = {ext for fmt in registered() for ext in fmt.extensions}
        paths = sorted(p for p in path.iterdir()
                       if p.is_file() and extension_of(p) in known)
        if not paths:
            raise InvalidInput(f"{target} holds no graph files (known extensions: "
                               f"{' '.join(sorted(known))}); give a folder of graphs or a "
                               f"{BATCH_LIST_SUFFIX} file")
        return paths
    if not path.is_file():
        raise InvalidInput(f"graph list {target} does not exist; give a folder of graphs or "
                           f"a {BATCH_LIST_SUFFIX} file of paths, one per line")
    paths = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        item = Path(text).expanduser()
        if not item.is_absolute():
            item = path.parent / item
        if not item.is_file():
            raise InvalidInput(f"{target} line {number}: {text} is not a file; fix or remove "
                               "the line")
        paths.append(item)
    if not paths:
        raise InvalidInput(f"{target} lists no graphs; write one graph path per line")
    return paths


def host_offset(n: int) -> int:
    """Where this host starts in a batch of ``n`` graphs (stable per host name)."""
    return zlib.crc32(socket.gethostname().encode()) % n if n else 0


def tune_batch(algorithm: str, paths: list[Path], *, load: Callable[[Path], Any],
               devices: list[int] | None = None,
               progress: Callable[[dict[str, Any]], None] | None = None,
               **tune_kwargs: Any) -> list[dict[str, Any]]:
    """Tune ``algorithm`` on every graph of ``paths``, one study each, spread over
    ``devices``.

    Parameters
    ----------
    algorithm : str
        Registered algorithm name.
    paths : list of Path
        Graph files, in the order they are handed out.
    load : callable
        Reads one graph file (the CLI's loader, with its format flags).
    devices : list of int, optional
        GPUs (simulated ones on the CPU backend), one lane each; default one lane on
        the current device.
    progress : callable, optional
        Called with ``event`` (``start``, ``trial`` or ``done``), ``lane``, ``graph``,
        and for trials the study's progress (see :func:`~gswitch.tuner.study.tune`).
    **tune_kwargs
        Passed to :func:`~gswitch.tuner.study.tune` for every graph (not ``devices``,
        ``progress`` or ``name``).

    Returns
    -------
    list of dict
        Per graph, in the order of ``paths``: ``graph`` (its path), ``lane``,
        ``wall_s``, and either ``result`` (the :class:`TuneResult` as a dict, without
        its history) or ``error`` (one line).

    """
    from .study import tune

    for key in ("devices", "progress", "name"):
        if key in tune_kwargs:
            raise InvalidInput(f"a batch sets {key} itself; tune one graph to choose it")
    lanes: list[int | None] = list(devices) if devices else [None]
    queue = deque(enumerate(paths))
    # hosts running the same batch on one storage start at different graphs, and each
    # later joins (or skips, when done) the studies the others began
    queue.rotate(-host_offset(len(paths)))
    lock = threading.Lock()
    out: list[dict[str, Any] | None] = [None] * len(paths)
    stop = threading.Event()

    def lane(device: int | None) -> None:
        label = "default" if device is None else str(device)
        while not stop.is_set():
            with lock:
                if not queue:
                    return
                index, path = queue.popleft()
            t0 = time.perf_counter()
            if progress is not None:
                progress({"event": "start", "lane": label, "graph": str(path)})
            item: dict[str, Any] = {"graph": str(path), "lane": label}

            def step(info: dict[str, Any], path: Path = path) -> None:
                if progress is not None:
                    progress({**info, "event": "trial", "lane": label, "graph": str(path)})

            try:
                graph = load(path)
                result = tune(algorithm, graph, devices=None if device is None else [device],
                              progress=step, **tune_kwargs)
                data = result.to_dict()
                data.pop("history", None)
                item.update(name=graph.name, n_nodes=graph.n_nodes, n_edges=graph.n_edges,
                            result=data)
            except GswitchError as exc:  # this graph's problem; the batch goes on
                item["error"] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            item["wall_s"] = time.perf_counter() - t0
            out[index] = item
            if progress is not None:
                progress({"event": "done", **item})

    threads = [threading.Thread(target=lane, args=(d,), daemon=True,
                                name=f"gswitch-batch-{d}") for d in lanes]
    for th in threads:
        th.start()
    try:
        while any(th.is_alive() for th in threads):
            for th in threads:
                th.join(0.2)  # short waits, so that Ctrl-C reaches this thread
    except KeyboardInterrupt:
        stop.set()
        raise
    return [item for item in out if item is not None]
