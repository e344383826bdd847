"""``--config tuned`` and ``--config auto``: the configuration the studies found for a graph."""

from __future__ import annotations

from typing import Any

from gswitch.config import DEFAULTS, Config
from gswitch.errors import GswitchError, InvalidInput

from .space import TunerError, space_version
from .storage import (
    default_storage_url,
    device_key,
    feature_distance,
    graph_features,
    open_storage,
    redact_url,
    storage_exists,
    tuned_studies,
)

__all__ = ["resolve_config", "MODES"]

#: Values of ``gswitch run --config`` that this module resolves.
MODES = ("auto", "tuned")


def _usable(entry: dict[str, Any], algorithm: str) -> Config | None:
    """The study's best configuration, or ``None`` when it no longer runs here: a strategy
    or the variant it names is not installed, or the variant does not support a strategy.
    """
    from gswitch.plugins import AXES, get_registry

    try:
        cfg = Config(entry["best_config"])
        spec = get_registry().algorithm(algorithm, cfg["variant"])
    except GswitchError:
        return None
    # (variant=default runs whichever formulation supports the strategies: gswitch.run)
    if cfg["variant"] != "default" and any(spec.unsupported(axis, cfg[axis], DEFAULTS.get(axis))
                                         for axis in AXES):
        return None
    return cfg


def _selector_pick(algorithm: str, graph: Any, backend: str) -> tuple[Config, str] | None:
    """The shipped selector's configuration on the GPU (with the variant's defaults for
    the keys it leaves out, as ``gswitch.run`` fills them), or ``None``.
    """
    if backend != "gpu":
        return None
    from gswitch.plugins import get_registry
    from gswitch.runner import with_variant_defaults
    from gswitch.selector import select

    pick = select(algorithm, graph)
    if pick is None:
        return None
    try:
        spec = get_registry().algorithm(algorithm, pick.config.get("variant", "default"))
        cfg = with_variant_defaults(spec, pick.config, backend)
    except GswitchError:
        return None
    return cfg, pick.note + "; this graph was never tuned"


def resolve_config(algorithm: str, graph: Any, mode: str = "auto", *, backend: str = "auto",
                   storage: str | None = None) -> tuple[Config, str]:
    """The tuned configuration for ``graph``, and a one-line note saying where it came from.

    Parameters
    ----------
    algorithm : str
        Algorithm name.
    graph : Graph
        The input; its fingerprint is looked up.
    mode : {"auto", "tuned"}
        ``tuned`` accepts only a study of this very graph (same fingerprint) on this
        device. ``auto`` takes that when it exists, else (on the GPU) the shipped
        selector's pick (:mod:`gswitch.selector`), else the best configuration of the
        tuned graph nearest by features (size, mean degree, degree skew, estimated
        diameter), else the default configuration. The configuration carries the
        variant (formulation) the study found best.
    backend : {"auto", "cpu", "gpu"}
        Backend the run will use (studies are per device).
    storage : str, optional
        Optuna storage URL (default ``$GSWITCH_STORAGE`` or the cache's journal file).

    Returns
    -------
    (Config, str)
        The configuration and a note such as ``"tuned for this graph (study ...)"``.

    Raises
    ------
    TunerError
        ``mode="tuned"`` and this graph was never tuned on this device.
    InvalidInput
        An unknown mode or storage URL.

    """
    from gswitch.runner import resolve_backend

    from .worker import load_extra_plugins

    if mode not in MODES:
        raise InvalidInput(f"--config must be a JSON file, auto or tuned; got {mode!r}")
    load_extra_plugins()
    backend = resolve_backend(backend)
    device = device_key(backend)
    url = storage or default_storage_url()
    shown = redact_url(url)
    # a storage file that is not there holds no study (and reading must not create it)
    studies = tuned_studies(open_storage(storage), algorithm, device) \
        if storage_exists(url) else []
    version = space_version()
    exact = [s for s in studies if s["fingerprint"] == graph.fingerprint]
    # the current plugin set first, then older studies whose best still validates
    exact.sort(key=lambda s: s["space_version"] != version)
    for entry in exact:
        cfg = _usable(entry, algorithm)
        if cfg is not None:
            older = "" if entry["space_version"] == version else \
                " with an earlier plugin set"
            return cfg, (f"config tuned for this graph{older} (study {entry['study_name']!r}, "
                         f"{entry['best_time_s']:.4g} s)")
    if mode == "tuned":
        raise TunerError(
            f"no tuned configuration for {algorithm} on this graph (fingerprint "
            f"{graph.fingerprint[:16]}) on {device} in {shown}; run `gswitch tune {algorithm} "
            "...` on it first, or use --config auto")
    picked = _selector_pick(algorithm, graph, backend)
    if picked is not None:
        return picked
    candidates = [s for s in studies if s["features"] and _usable(s, algorithm) is not None]
    if not candidates:
        return Config(), (f"default config: no {algorithm} study on {device} in {shown} "
                          "to borrow from")
    features = graph_features(graph)
    nearest = min(candidates, key=lambda s: feature_distance(features, s["features"]))
    dist = feature_distance(features, nearest["features"])
    return _usable(nearest, algorithm), (  # type: ignore[return-value]
        f"config of the nearest tuned graph {nearest['graph'] or nearest['fingerprint'][:16]!r}"
        f" (feature distance {dist:.2f}; study {nearest['study_name']!r}); this graph was "
        "never tuned")
