"""How the backend runs gswitch: ``nx.config.backends.gswitch`` read into a ``gswitch.run``.

Settings (networkx >= 3.3 holds them in ``nx.config.backends.gswitch``):

- ``backend``: ``"auto"`` (the GPU when CuPy sees one, else the CPU engine), ``"gpu"`` or
  ``"cpu"``;
- ``storage``: an Optuna storage URL of gswitch tuning studies, or ``None``;
- ``tune``: with a storage, run the configuration tuned for this graph, or that of the
  nearest tuned graph (``gswitch run --config auto``); else the selector's pick on the
  GPU and the default configuration on the CPU, as ``gswitch.run`` does.
"""

from __future__ import annotations

import logging
from typing import Any

from gswitch.graph import Graph
from gswitch.result import Result
from gswitch.runner import gpu_available, run

from ._info import DEFAULT_CONFIG

__all__ = ["settings", "run_algorithm", "engine_backend"]

_logger = logging.getLogger("gswitch.nxbackend")

_BACKENDS = ("auto", "gpu", "cpu")

#: (algorithm, graph fingerprint, backend, storage, variant) -> (config, note)
_TUNED: dict[tuple, tuple[Any, str]] = {}


def settings() -> dict[str, Any]:
    """The backend's settings: ``nx.config.backends.gswitch`` over the defaults.

    Raises
    ------
    ValueError
        ``backend`` is not one of auto, gpu, cpu, or ``tune`` is not a bool.

    """
    values = dict(DEFAULT_CONFIG)
    import networkx as nx

    section = getattr(getattr(nx, "config", None), "backends", None)
    section = getattr(section, "gswitch", None) if section is not None else None
    if section is not None:
        values.update({k: section[k] for k in DEFAULT_CONFIG if k in section})
    if values["backend"] not in _BACKENDS:
        raise ValueError(f"nx.config.backends.gswitch.backend must be one of "
                         f"{', '.join(_BACKENDS)}; got {values['backend']!r}")
    if not isinstance(values["tune"], bool):
        raise ValueError(f"nx.config.backends.gswitch.tune must be True or False; got "
                         f"{values['tune']!r}")
    return values


def engine_backend() -> str:
    """``cpu`` or ``gpu``: where the next call runs."""
    backend = settings()["backend"]
    if backend == "auto":
        return "gpu" if gpu_available() else "cpu"
    return backend


def _tuned(algorithm: str, graph: Graph, backend: str, storage: str,
           variant: str | None) -> Any:
    """The configuration ``gswitch run --config auto`` takes, looked up once per graph."""
    key = (algorithm, graph.fingerprint, backend, storage, variant)
    if key not in _TUNED:
        from gswitch.tuner.resolve import resolve_config
        from gswitch.tuner.storage import redact_url

        cfg, note = resolve_config(algorithm, graph, "auto", backend=backend, storage=storage)
        if variant is not None and cfg["variant"] != variant:
            # the formulation networkx's semantics need, with its own defaults
            note = f"the {variant} formulation's defaults ({note}: {cfg['variant']})"
            cfg = {"variant": variant}
        _logger.debug("%s: %s (storage %s)", algorithm, note, redact_url(storage))
        _TUNED[key] = cfg
    return _TUNED[key]


def _config(algorithm: str, graph: Graph, backend: str, variant: str | None) -> Any:
    """The ``config`` argument of ``gswitch.run``: tuned, the selector's, or a variant."""
    values = settings()
    if values["tune"] and values["storage"]:
        return _tuned(algorithm, graph, backend, str(values["storage"]), variant)
    if variant is None:
        return None  # gswitch.run asks the selector on the GPU
    if backend == "gpu":
        from gswitch.selector import select

        pick = select(algorithm, graph)
        if pick is not None and pick.config.get("variant") == variant:
            return pick.config
    return {"variant": variant}


def run_algorithm(algorithm: str, graph: Graph, *, variant: str | None = None,
                  config: dict[str, Any] | None = None, **kwargs: Any) -> Result:
    """``gswitch.run(algorithm, graph, ...)`` on the configured backend.

    Parameters
    ----------
    algorithm : str
        Registered algorithm name.
    graph : Graph
        The converted graph.
    variant : str, optional
        The formulation networkx's semantics need (PageRank: ``power_pull``).
    config : dict, optional
        The configuration the backend measured best for this call (a small graph's
        core numbers); a tuned configuration, where the settings ask for one, wins.
    **kwargs
        ``source`` and algorithm parameters.

    Returns
    -------
    Result

    """
    backend = engine_backend()
    values = settings()
    if config is None or (values["tune"] and values["storage"]):
        config = _config(algorithm, graph, backend, variant)
    return run(algorithm, graph, backend=backend, config=config, **kwargs)
