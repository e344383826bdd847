"""Hook specifications: the whole plugin contract of gswitch.

A plugin is any module or object with functions decorated by :data:`gswitch.hookimpl`
whose names match the specifications below. Built-in strategies and algorithms are
registered exactly like third-party ones: through these hooks, loaded by
:func:`gswitch.plugins.get_plugin_manager` (built-in modules first, then the
``gswitch`` entry-point group).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import argparse

    from .algorithm import AlgorithmSpec
    from .graph import Graph
    from .strategy import ConfigView, Strategy

PROJECT_NAME = "gswitch"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def gswitch_strategies() -> list[type[Strategy]]:
    """Return the strategy classes this plugin provides.

    Every implementation is called; the registry keys each class by ``(axis, name)``
    and reports a duplicate name with both sources.

    :returns: a list of :class:`gswitch.strategy.Strategy` subclasses.

    .. versionadded:: 0.1
    """


@hookspec
def gswitch_algorithms() -> list[AlgorithmSpec]:
    """Return the algorithm specifications this plugin provides.

    Every implementation is called; algorithms are keyed by ``spec.name``.

    :returns: a list of :class:`gswitch.algorithm.AlgorithmSpec` (what
        :func:`gswitch.algorithm` returns).

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def gswitch_default_config() -> dict | None:
    """Return the default strategy configuration (the first non-None result wins).

    The built-in plugin ``gswitch.strategies.defaults`` answers with the configuration
    that is good on most graphs. pluggy calls the most recently registered plugin
    first, so a plugin (registered after the built-ins, from its entry point) that
    answers replaces it. The
    core itself names no strategy.

    :returns: a mapping of axis to strategy name (and optionally ``axis.param`` keys).

    .. versionadded:: 0.2
    """


@hookspec
def gswitch_suggested_configs(algorithm: AlgorithmSpec, features: dict,
                              backend: str) -> list[dict] | None:
    """Return configurations worth trying first when tuning ``algorithm`` on a graph.

    Every implementation is called and the lists are joined. The tuner enqueues them
    after the default configuration (and before the sampler's own proposals), skipping
    any that a strategy refuses for this input; each is still measured and verified like
    every other trial. A plugin uses this to say where its strategies shine, e.g. a
    persistent launch for graphs of large diameter.

    :param algorithm: the algorithm being tuned.
    :param features: the graph's features (``n_nodes``, ``n_edges``, ``degree_mean``,
        ``degree_max_over_mean``, ``diameter_estimate``), as ``gswitch info`` reports
        them.
    :param backend: ``"cpu"`` or ``"gpu"``.
    :returns: a list of configuration mappings (axis to strategy name, and optionally
        ``axis.param`` keys), best guess first.

    .. versionadded:: 0.3
    """


@hookspec
def gswitch_add_commands(subparsers: argparse._SubParsersAction) -> None:
    """Add subcommands to the ``gswitch`` command line, or options to its commands.

    Every implementation is called once the core's commands exist;
    ``subparsers.choices`` holds their parsers by name, so a plugin may add an option to
    ``run``. Each new command names its handler with ``set_defaults(handler=func)``,
    where ``func(args) -> int`` returns the exit status. The tuner adds ``tune`` and
    ``report`` this way, and ``--storage`` to ``run``.

    :param subparsers: what ``ArgumentParser.add_subparsers`` returned for ``gswitch``.

    .. versionadded:: 0.5
    """


@hookspec(firstresult=True)
def gswitch_resolve_config(algorithm: str, graph: Graph, mode: str, backend: str,
                           options: dict) -> tuple[ConfigView, str] | None:
    """The configuration ``gswitch run --config MODE`` runs with, for a ``MODE`` that is
    neither a file nor ``default`` (the tuner answers ``tuned`` and ``auto``).

    The first non-None result wins; where none answers, the command line says that
    ``MODE`` is no file and no mode a plugin knows.

    :param algorithm: the algorithm's name.
    :param graph: the graph of the run.
    :param mode: the ``--config`` value.
    :param backend: ``"cpu"`` or ``"gpu"``.
    :param options: the command line's parsed options (``vars(args)``), such as the
        ``--storage`` a plugin added.
    :returns: ``(config, note)``: the configuration and where it came from, or ``None``
        for a mode this plugin does not handle.

    .. versionadded:: 0.5
    """
