"""Renumbered copies of a large graph, built in the background while a GPU study runs.

A trial with ``renumber=rcm|bfs|degree`` needs a renumbered copy of the graph. On a
4M-node, 128M-edge graph one takes 4 to 20 s of one CPU core to build, while the
trial's runs take milliseconds of GPU time: built by the worker when a trial first asks
for it, the copies held each GPU idle for most of a 40-trial study. A GPU study
therefore starts one process per renumbering at its start. Each builds its copy into the
study's folder under the file lock that workers take
(:func:`gswitch.locality.share_renumbered`), so a worker that needs a copy waits for the
build already under way, or reads the finished one, and never builds a second one.
"""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

__all__ = ["Prebuilder", "renumber_methods", "MIN_EDGES"]

#: Graphs with fewer edges renumber in about a second: not worth a process.
MIN_EDGES = 1 << 22


def renumber_methods(space: Any) -> list[str]:
    """The renumberings a search space may try (``none`` needs no copy)."""
    spec = space.global_params.get("renumber")
    return [m for m in getattr(spec, "choices", ()) if m != "none"]


def _build(graph_path: str, fingerprint: str, method: str) -> None:
    """Build process: take the copy's lock first (a worker that needs the copy now waits
    for this build), then load the study's graph and write the copy beside it.
    """
    from gswitch.io import load_graph
    from gswitch.locality import build_renumbered, shared_copy, write_shared_copy

    folder = Path(graph_path).parent
    with shared_copy(folder, fingerprint, method) as found:
        if found is None:
            out, perm = build_renumbered(load_graph(graph_path), method)
            write_shared_copy(folder, fingerprint, method, out, perm)


class Prebuilder:
    """Background processes building a study graph's renumbered copies.

    Parameters
    ----------
    graph_path : Path
        The study's graph file (``.npz``); the copies go beside it.
    fingerprint : str
        That graph's :attr:`~gswitch.Graph.fingerprint` (the copies' key).
    methods : list of str
        Renumberings to build, one process each.

    """

    def __init__(self, graph_path: Path, fingerprint: str, methods: list[str]) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.processes = [ctx.Process(target=_build, args=(str(graph_path), fingerprint, m),
                                      daemon=True, name=f"gswitch-renumber-{m}")
                          for m in methods]
        for p in self.processes:
            p.start()

    @classmethod
    def for_study(cls, graph: Any, graph_path: Path, space: Any, backend: str
                  ) -> Prebuilder | None:
        """Start the builds for a GPU study of a graph of at least :data:`MIN_EDGES`
        edges whose space tries renumberings, when the host has the memory for them
        (each process holds the graph and its copy); else ``None``.
        """
        from gswitch._memory import available_bytes

        methods = renumber_methods(space)
        if backend != "gpu" or not methods or graph.n_edges < MIN_EDGES or os.name != "posix":
            return None
        per_process = 2 * (16 * (graph.n_nodes + 1) + 12 * graph.n_edges)
        free = available_bytes()
        if free is not None and per_process * len(methods) > free // 2:
            return None
        return cls(graph_path, graph.fingerprint, methods)

    def close(self) -> None:
        """Stop builds still running (a copy is written whole or not at all)."""
        for p in self.processes:
            if p.is_alive():
                p.kill()
            p.join(5)
        self.processes = []
