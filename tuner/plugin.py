"""The tuner as a plugin of the core: its commands and ``run --config auto|tuned``.

Registered with the built-in plugins (``gswitch.plugins``), through the same hooks a
third-party package uses: :func:`gswitch_add_commands` adds ``tune`` and ``report`` and
``run --storage``; :func:`gswitch_resolve_config` gives ``run --config tuned`` a study's
best configuration and ``--config auto`` that, else the selector's pick, else the
nearest tuned graph's. Optuna is imported only when one of them runs.
"""

from __future__ import annotations

from typing import Any

from gswitch.hookspecs import hookimpl


@hookimpl
def gswitch_add_commands(subparsers: Any) -> None:
    from .cli import add_tuner_commands

    add_tuner_commands(subparsers)


@hookimpl
def gswitch_resolve_config(algorithm: str, graph: Any, mode: str, backend: str,
                           options: dict) -> Any:
    from .resolve import MODES, resolve_config

    if mode not in MODES:
        return None
    return resolve_config(algorithm, graph, mode, backend=backend,
                          storage=options.get("storage"))
