"""Name options the way the caller wrote them: CLI flags under ``gswitch``, keywords in Python.

An error message that tells a command-line user to "pass source=<node id>" sends them
looking for a flag that does not exist. Code that raises such a message asks
:func:`option` for the spelling; the command line wraps its work in
:func:`cli_names`, and everything raised inside names ``--source NODE`` instead.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["option", "cli_names", "under_cli"]

_UNDER_CLI: contextvars.ContextVar[bool] = contextvars.ContextVar("gswitch_under_cli",
                                                                  default=False)

#: key -> (Python spelling, command-line spelling)
_SPELLINGS: dict[str, tuple[str, str]] = {
    "source": ("source=<node id>", "--source NODE"),
    "source_name": ("source", "--source"),
    "fmt": ("fmt=<format>", "--format FORMAT"),
    "no_weights": ("weighted=False", "--no-weights"),
    "renumber": ("renumber=True", "--renumber"),
    "undirected": ("directed=False", "--undirected"),
    "save_npz": ("gswitch.save_graph(graph, 'file.npz')", "gswitch convert IN OUT.npz"),
    "backend_cpu": ("backend='cpu'", "--backend cpu"),
    "backend_gpu": ("backend='gpu'", "--backend gpu"),
    "device": ("device=", "--device "),
    "no_device": ("drop device", "drop --device"),
    "drop_loops": ("graph.remove_self_loops(), or self_loops='drop' when building the graph",
                   "--simple (drops self loops and merges parallel edges)"),
    "partition_size": ("partition_size=N", "--param partition_size=N"),
    "renumber_key": ("config={'renumber': 'bfs'}", "--set renumber=bfs"),
    "variant": ("config={'variant': NAME}", "--set variant=NAME"),
    "merge_duplicates": ("graph.deduplicate(), or duplicates='drop' when building the graph",
                         "--simple (drops self loops and merges parallel edges)"),
}


def under_cli() -> bool:
    """Whether the current call runs under the ``gswitch`` command line."""
    return _UNDER_CLI.get()


def option(key: str) -> str:
    """How the caller spells option ``key`` (see ``_SPELLINGS``)."""
    python, cli = _SPELLINGS[key]
    return cli if _UNDER_CLI.get() else python


@contextmanager
def cli_names() -> Iterator[None]:
    """Within this block, :func:`option` answers with command-line flags."""
    token = _UNDER_CLI.set(True)
    try:
        yield
    finally:
        _UNDER_CLI.reset(token)
