"""Front door: validate inputs, pick a backend, run, finalise."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .algorithm import AlgorithmSpec
from .config import Config
from .errors import DeviceError, InvalidConfig, InvalidInput
from .graph import Graph
from .plugins import AXES, get_registry
from .result import Result

__all__ = ["run", "prepare", "gpu_available", "resolve_backend", "check_combination",
           "DEFAULT_MAX_ITERATIONS"]

#: Safety bound on super-steps for algorithms without an iteration parameter.
DEFAULT_MAX_ITERATIONS = 1 << 30


def gpu_available() -> bool:
    """Whether CuPy imports and sees at least one CUDA device."""
    try:
        import cupy  # noqa: F401
        from cupy.cuda import runtime

        return runtime.getDeviceCount() > 0
    except Exception:
        return False


def resolve_backend(backend: str) -> str:
    """Map ``auto`` to ``gpu`` when a device is usable, else ``cpu``; check the name."""
    if backend not in ("auto", "cpu", "gpu"):
        raise InvalidInput(f"backend must be cpu, gpu or auto; got {backend!r}")
    if backend == "auto":
        return "gpu" if gpu_available() else "cpu"
    if backend == "gpu" and not gpu_available():
        raise DeviceError(
            "backend 'gpu' needs CuPy and an NVIDIA GPU; none is usable here. Install "
            "gswitch[cuda12] or gswitch[cuda13] on a GPU machine, or use --backend cpu"
        )
    return backend


def _spec(algorithm: str | AlgorithmSpec) -> AlgorithmSpec:
    if isinstance(algorithm, AlgorithmSpec):
        return algorithm
    return get_registry().algorithm(algorithm)


def prepare(spec: AlgorithmSpec, graph: Graph, source: int | list[int] | None
            ) -> tuple[Graph, np.ndarray | None]:
    """Graph transformed as the algorithm needs, and validated sources."""
    if not isinstance(graph, Graph):
        raise InvalidInput(f"graph must be a gswitch.Graph, got {type(graph).__name__}")
    if spec.symmetric:
        graph = graph.symmetrize()
    if spec.weights == "nonnegative" and graph.weights is not None and graph.n_edges:
        w = graph.weights
        bad = np.flatnonzero(~(w >= 0))
        if bad.size:
            e = int(bad[0])
            src = int(np.searchsorted(graph.indptr, e, side="right") - 1)
            raise InvalidInput(
                f"{spec.name} needs non-negative edge weights; edge {src} -> "
                f"{int(graph.indices[e])} has weight {float(w[e])}. Remove or fix such edges "
                "(or load the graph without weights)"
            )
    sources = None
    if spec.start.kind == "source":
        if source is None:
            raise InvalidInput(f"{spec.name} needs a source node; pass source=<node id>")
        sources = np.atleast_1d(np.asarray(source))
        if sources.dtype.kind not in "iu":
            raise InvalidInput(f"source must be an integer node id, got {source!r}")
        bad = sources[(sources < 0) | (sources >= graph.n_nodes)]
        if bad.size:
            raise InvalidInput(
                f"source {int(bad[0])} is out of range: the graph has {graph.n_nodes} nodes "
                f"(ids 0..{graph.n_nodes - 1})"
            )
        sources = sources.astype(np.int32)
    elif source is not None:
        raise InvalidInput(f"{spec.name} starts from all nodes and takes no source")
    return graph, sources


def check_combination(spec: AlgorithmSpec, graph: Graph | None, config: Config,
                      backend: str) -> str | None:
    """First reason any chosen strategy gives against the combination, or ``None``."""
    strategies = config.strategies()
    for axis in AXES:
        strategy = strategies[axis]
        reason = strategy.check(spec, graph, config, backend)
        if reason:
            return f"{axis}={config[axis]}: {reason}"
    return None


def run(algorithm: str | AlgorithmSpec, graph: Graph, *, source: int | list[int] | None = None,
        backend: str = "auto", config: Config | Mapping[str, Any] | None = None,
        progress: Callable[[int, int], None] | None = None, deadline_s: float | None = None,
        **params: Any) -> Result:
    """Run an algorithm on a graph.

    Parameters
    ----------
    algorithm : str or AlgorithmSpec
        Registered name (``bfs``, ``sssp``, ``cc``, ``pagerank``, ...) or a spec.
    graph : Graph
        Input graph (symmetrised automatically for undirected algorithms).
    source : int or list of int, optional
        Start node(s) for source-based algorithms.
    backend : {"auto", "cpu", "gpu"}
        ``auto`` uses the GPU when CuPy sees one.
    config : Config or mapping, optional
        Strategy configuration; defaults to :data:`gswitch.config.DEFAULTS`.
    progress : callable, optional
        Called as ``progress(iteration, n_activated)`` after each super-step on the CPU.
    deadline_s : float, optional
        Stop the run with :class:`~gswitch.errors.DeadlineExceeded` once it has taken
        this many seconds (checked by the host between steps and, in a persistent
        kernel, against the device clock). The tuner uses it to cut slow trials short.
    **params
        Algorithm parameters (e.g. ``alpha=0.9`` for PageRank).

    Returns
    -------
    Result

    Raises
    ------
    InvalidInput
        Unknown algorithm, bad source or parameter, negative weights where forbidden.
    InvalidConfig
        Unknown strategy or an invalid combination (the reason is in the message).
    DeviceError
        ``backend="gpu"`` without a usable GPU, or a graph too large for it.
    DeadlineExceeded
        The run took longer than ``deadline_s``.

    """
    spec = _spec(algorithm)
    cfg = config if isinstance(config, Config) else Config(config)
    backend = resolve_backend(backend)
    graph, sources = prepare(spec, graph, source)
    resolved = spec.resolve_params(params, graph.n_nodes)
    reason = check_combination(spec, graph, cfg, backend)
    if reason:
        raise InvalidConfig(f"invalid strategy combination for {spec.name}: {reason}")
    max_it = DEFAULT_MAX_ITERATIONS
    if spec.max_iterations_param:
        max_it = int(resolved[spec.max_iterations_param])
    if backend == "gpu":
        from .engine.gpu import GpuEngine

        engine: Any = GpuEngine.instance()
    else:
        from .engine.cpu import CpuEngine

        engine = CpuEngine()
    if deadline_s is not None and not deadline_s > 0:
        raise InvalidInput(f"deadline_s must be a positive number of seconds; got {deadline_s!r}")
    result = engine.run(spec, graph, resolved, sources, cfg, max_it, progress=progress,
                        deadline_s=deadline_s)
    if spec.finalize is not None:
        result.fields = spec.finalize(result.fields, resolved) or result.fields
    result.fields = {k: v for k, v in result.fields.items() if k in spec.outputs}
    return result
