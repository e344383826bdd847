"""Optuna tuner: per graph, the fastest correct strategy combination, remembered.

The search space is assembled from the registered strategies and their declared
parameters (:mod:`gswitch.tuner.space`); every trial runs in a worker process and its
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

from .resolve import MODES, resolve_config
from .space import SearchSpace, TunerError, build_space, space_version
from .storage import default_storage_url, open_storage, study_name, tuned_studies
from .study import SAMPLERS, TuneResult, tune

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
