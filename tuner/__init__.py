"""Optuna tuner: per graph, the fastest correct strategy combination, remembered.

The search space is assembled from the registered strategies and their declared
parameters (:mod:`gswitch.tuner.build`, held by :mod:`gswitch.tuner.space`); every trial
runs in a worker process and its
answer is checked against a reference (:mod:`gswitch.tuner.worker`); studies live in
any Optuna storage and are keyed by algorithm, graph fingerprint, device and space
version (:mod:`gswitch.tuner.storage`); :func:`tune` runs a study and
:func:`resolve_config` gives ``gswitch run --config tuned|auto`` its configuration.

Examples
--------
>>> import gswitch as gs
>>> from gswitch.tuner import tune
>>> g = gs.generators.rmat(10, seed=1)  # doctest: +SKIP
>>> result = tune("bfs", g, trials=20, backend="cpu")  # doctest: +SKIP
>>> result.best_config, result.speedup  # doctest: +SKIP

"""

import importlib
from typing import Any

#: Where each public name lives: the package imports a module on first use of one of
#: its names, so loading the tuner's plugin with every registry costs nothing.
_LAZY = {
    "MODES": "resolve", "resolve_config": "resolve",
    "SearchSpace": "space", "TunerError": "space", "build_space": "build",
    "space_version": "space",
    "default_storage_url": "storage", "open_storage": "storage", "study_name": "storage",
    "tuned_studies": "storage",
    "SAMPLERS": "study", "TuneResult": "study", "tune": "study",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "tune",
    "TuneResult",
    "SAMPLERS",
    "resolve_config",
    "MODES",
    "SearchSpace",
    "build_space",
    "space_version",
    "TunerError",
    "open_storage",
    "default_storage_url",
    "study_name",
    "tuned_studies",
]
