"""Front door: validate inputs, pick a backend, run, finalise."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ._hints import option
from .algorithm import AlgorithmSpec
from .config import DEFAULTS, GLOBAL_KEYS, Config
from .errors import DeviceError, GswitchError, InvalidConfig, InvalidGraph, InvalidInput
from .graph import Graph
from .locality import (
    edge_pick,
    edges_to_caller,
    inverse,
    inverse_on_device,
    renumbered,
    to_caller,
)
from .plugins import get_registry
from .result import Result
from .strategy import AXES, SHARED_BYTES_CORE, SHARED_BYTES_LIMIT

if TYPE_CHECKING:  # the engine package is imported on first use only
    from .engine.timing import PhaseTimer

__all__ = ["run", "release", "check_device", "prepare", "as_graph", "gpu_available",
           "resolve_backend", "check_combination", "DEFAULT_MAX_ITERATIONS"]

#: Safety bound on super-steps for algorithms without an iteration parameter.
DEFAULT_MAX_ITERATIONS = 1 << 30


_GPU_AVAILABLE: bool | None = None


def gpu_available() -> bool:
    """Whether CuPy imports and sees at least one CUDA device.

    Asked once per process: neither changes while it runs (CUDA reads
    ``CUDA_VISIBLE_DEVICES`` once), and every GPU call asks. The first time, device 0's
    CUDA context is made on a host thread while CuPy imports
    (:mod:`gswitch.context_ahead`).
    """
    global _GPU_AVAILABLE
    if _GPU_AVAILABLE is None:
        from . import context_ahead

        context_ahead.start()  # the device's context, made while CuPy imports
        try:
            import cupy  # noqa: F401
            from cupy.cuda import runtime

            _GPU_AVAILABLE = runtime.getDeviceCount() > 0
        except Exception:
            _GPU_AVAILABLE = False
    return _GPU_AVAILABLE


def resolve_backend(backend: str) -> str:
    """Map ``auto`` to ``gpu`` when a device is usable, else ``cpu``; check the name."""
    if backend not in ("auto", "cpu", "gpu"):
        raise InvalidInput(f"backend must be cpu, gpu or auto; got {backend!r}")
    if backend == "auto":
        return "gpu" if gpu_available() else "cpu"
    if backend == "gpu" and not gpu_available():
        raise DeviceError(f"{option('backend_gpu')} needs CuPy and an NVIDIA GPU; "
                          f"{_why_no_gpu()}, or use {option('backend_cpu')}")
    return backend


def _why_no_gpu() -> str:
    """What is missing for the GPU backend, with its fix, as a clause."""
    try:
        import cupy  # noqa: F401
    except Exception:
        return ("CuPy does not import here: on a GPU machine pip install 'gswitch[cuda12]' "
                "or 'gswitch[cuda13]' to match the driver")
    return "CuPy sees no CUDA device here: check the driver and CUDA_VISIBLE_DEVICES"


def _spec(algorithm: str | AlgorithmSpec, config: Config,
          given: Mapping[str, Any] | None = None, backend: str | None = None
          ) -> AlgorithmSpec:
    """The spec to run: ``algorithm``'s formulation named by the config's ``variant``.

    ``variant=default`` is the algorithm's default formulation, unless the config names a
    strategy that one does not support (``supports``); then it is the first registered
    formulation that supports every strategy of the config, so a config written for one
    formulation (``driving=data`` for label propagation) keeps working when the default
    changes. A formulation that names ``backend`` in its ``default_on`` is the default
    there. ``Result.stats["variant"]`` says which ran.
    """
    variant = config["variant"]
    if isinstance(algorithm, AlgorithmSpec):
        if variant in ("default", algorithm.variant):
            return algorithm
        family = get_registry().variants.get(algorithm.name, {})
        if family.get(algorithm.variant) is not algorithm:
            raise InvalidInput(
                f"variant={variant} selects a formulation of a registered algorithm, but "
                f"{algorithm.label} is not registered; run the variant's spec itself")
        return get_registry().algorithm(algorithm.name, variant)
    spec = get_registry().algorithm(algorithm, variant)
    if variant == "default" and backend is not None:
        # a formulation may be the default on one backend (default_on=)
        spec = next((v for v in get_registry().variants[spec.name].values()
                     if backend in v.default_on and backend in v.backends), spec)
    if variant == "default" and _refuses(spec, config, given):
        for other in get_registry().variants[spec.name].values():
            if not _refuses(other, config, given) and (
                    backend is None or backend in other.backends):
                return other
    return spec


def _refuses(spec: AlgorithmSpec, config: Config, given: Mapping[str, Any] | None) -> bool:
    # a mapping names the axes the caller chose; the others take the formulation's
    # defaults, so only the chosen ones can rule a formulation out
    axes = AXES if given is None else [a for a in AXES if a in given]
    return any(spec.unsupported(axis, config[axis], DEFAULTS.get(axis)) for axis in axes)


def as_graph(graph: Any) -> Graph:
    """A :class:`Graph` from a Graph, a networkx graph or a square scipy.sparse matrix.

    Parameters
    ----------
    graph : Graph, networkx graph, or scipy.sparse matrix/array
        networkx graphs keep their node names in :attr:`Graph.node_labels` (node ``i`` is
        the ``i``-th of ``graph.nodes``) and their ``weight`` attribute; a matrix entry
        ``(i, j)`` is the edge ``i -> j`` weighted by its value.

    Returns
    -------
    Graph

    Raises
    ------
    InvalidInput
        For any other type, or a matrix that cannot be a graph (not square, too large).

    """
    if isinstance(graph, Graph):
        return graph
    if _is_networkx(graph):
        try:
            return Graph.from_networkx(graph)
        except InvalidGraph as exc:
            raise InvalidInput(f"cannot convert the networkx graph: {exc}") from None
    try:
        import scipy.sparse as sp

        is_sparse = sp.issparse(graph)
    except ImportError:  # pragma: no cover - scipy is a dependency
        is_sparse = False
    if is_sparse:
        try:
            return Graph.from_scipy(graph)
        except InvalidGraph as exc:
            raise InvalidInput(f"cannot convert the sparse matrix: {exc}") from None
    raise InvalidInput(
        f"graph must be a gswitch.Graph, a networkx graph or a square scipy.sparse matrix, "
        f"got {type(graph).__name__}; load files with gswitch.load_graph"
    )


def _is_networkx(obj: Any) -> bool:
    # networkx is optional: look at the class's module before importing anything
    return any(c.__module__.startswith("networkx.") for c in type(obj).__mro__)


def _source_ids(graph: Graph, source: Any, labelled: bool) -> Any:
    """Map networkx node names given as ``source`` to node ids. A tuple that names a
    node (networkx graphs of grid coordinates) is that node, not a list of sources.
    """
    if not labelled or graph.node_labels is None:
        return source
    index = {name: i for i, name in enumerate(graph.node_labels)}
    try:
        one = source in index
    except TypeError:  # unhashable: a list of names
        one = False
    if one:
        return index[source]
    names = source if isinstance(source, (list, tuple)) else [source]
    missing = [x for x in names if x not in index]
    if missing:
        raise InvalidInput(f"source {missing[0]!r} is not a node of the networkx graph; "
                           "give a node name as it appears in graph.nodes")
    ids = [index[x] for x in names]
    return ids if isinstance(source, (list, tuple)) else ids[0]


def named_inputs(spec: AlgorithmSpec, graph: Graph, params: Mapping[str, Any],
                 labelled: bool) -> Mapping[str, Any]:
    """``params`` with the per-node inputs that name nodes (``per_node_input(...,
    names=...)``: a list of sources, a personalisation's node) mapped from networkx node
    names to ids, where the caller gave a networkx graph.
    """
    if not labelled or graph.node_labels is None:
        return params
    out = dict(params)
    for key, (_field, given) in spec.inputs.items():
        value = params.get(key)
        if value is None or given.names is None:
            continue
        if given.names == "list" and isinstance(value, (list, tuple, set, frozenset)):
            out[key] = _source_ids(graph, list(value), True)
        elif given.names == "one" and not isinstance(value, (list, np.ndarray, dict)):
            try:
                out[key] = _source_ids(graph, value, True)
            except (InvalidInput, TypeError):
                pass  # not a node name: the algorithm's own check reads it
    return out


def prepare(spec: AlgorithmSpec, graph: Any, source: Any
            ) -> tuple[Graph, np.ndarray | None]:
    """Graph transformed as the algorithm needs, and validated sources.

    ``graph`` may be anything :func:`as_graph` converts; for a networkx graph ``source``
    names a node as networkx does.
    """
    labelled = not isinstance(graph, Graph) and _is_networkx(graph)
    graph = prepare_graph(spec, graph)
    return graph, prepare_sources(spec, graph, source, labelled)


def prepare_graph(spec: AlgorithmSpec, graph: Any, *, check: bool = True) -> Graph:
    """``graph`` as :func:`as_graph` converts it, transformed as ``spec`` needs
    (symmetrised, simple, sorted rows) and checked (``check_graph`` unless ``check`` is
    false, non-negative weights where ``spec`` needs them).
    """
    graph = as_graph(graph)
    if spec.symmetric:
        graph = graph.symmetrize()
    if check and spec.check_graph is not None:
        reason = spec.check_graph(graph)
        if reason:
            raise InvalidInput(f"{spec.name}: {reason}")
    if spec.simple:
        graph = graph.simple()
    from .lowering import uses_common_neighbours

    if uses_common_neighbours(spec):
        graph = graph.with_sorted_rows()  # the intrinsic intersects sorted rows
    # the minimum is cached on the graph: a scan of every weight on each call cost 30 ms
    # on 67M edges, four times the kernels of a delta-stepping SSSP
    if (spec.weights == "nonnegative" and graph.weights is not None and graph.n_edges
            and not graph.min_weight >= 0):
        w = graph.weights
        bad = np.flatnonzero(~(w >= 0))
        if bad.size:
            e = int(bad[0])
            src = int(np.searchsorted(graph.indptr, e, side="right") - 1)
            raise InvalidInput(
                f"{spec.name} needs non-negative edge weights; edge {src} -> "
                f"{int(graph.indices[e])} has weight {float(w[e])}. Remove or fix such "
                f"edges, or load the graph without weights ({option('no_weights')})"
            )
    return graph


def prepare_sources(spec: AlgorithmSpec, graph: Graph, source: Any, labelled: bool = False
                    ) -> np.ndarray | None:
    """The start nodes of a run of ``spec`` on the prepared ``graph`` as int32 ids
    (``None`` for an algorithm that starts from every node), checked; ``labelled``: the
    caller gave a networkx graph, whose node names ``source`` holds.
    """
    if spec.start.kind == "source":
        if not labelled and type(source) is int and 0 <= source < graph.n_nodes:
            # the common case, without the array checks below
            return np.array([source], dtype=np.int32)
        if source is None:
            raise InvalidInput(f"{spec.name} needs a source node; pass {option('source')}")
        source = _source_ids(graph, source, labelled)
        if type(source) is int and not 0 <= source < graph.n_nodes:
            raise _source_out_of_range(spec, graph, source)  # an array cannot hold 2**63
        sources = np.atleast_1d(np.asarray(source))
        if sources.dtype.kind not in "iu":
            raise InvalidInput(f"source must be an integer node id, got {source!r}")
        bad = sources[(sources < 0) | (sources >= graph.n_nodes)]
        if bad.size:
            raise _source_out_of_range(spec, graph, int(bad[0]))
        return sources.astype(np.int32)
    if source is not None:
        raise InvalidInput(f"{spec.name} starts from all nodes and takes no "
                           f"{option('source_name')}")
    return None


def _source_out_of_range(spec: AlgorithmSpec, graph: Graph, source: int) -> InvalidInput:
    """The refusal of a source id that is not a node of ``graph``."""
    if graph.n_nodes == 0:
        return InvalidInput(f"{option('source_name')} {source} is out of range: the graph has "
                            f"no nodes, so {spec.name} has nowhere to start")
    return InvalidInput(
        f"{option('source_name')} {source} is out of range: the graph has "
        f"{graph.n_nodes:,} nodes, ids 0..{graph.n_nodes - 1:,} (ids are 0-based, also for "
        "1-based .gr, .mtx and METIS files)")


def with_variant_defaults(spec: AlgorithmSpec, values: Mapping[str, Any] | None,
                          backend: str | None = None) -> Config:
    """The config of ``values`` with the formulation's own defaults (``defaults=`` on
    :func:`~gswitch.algorithm.algorithm`, and ``backend_defaults`` for ``backend``) for the
    keys ``values`` leaves out; a strategy's parameters are kept only when ``values``
    picks that strategy itself.
    """
    given = dict(values or {})
    own = {**spec.config_defaults, **spec.backend_defaults.get(backend or "", {})}
    merged = {k: v for k, v in own.items()
              if k not in given and k.split(".")[0] not in given}
    return Config.shared({**merged, **given})


def _check_axes(spec: AlgorithmSpec, config: Config) -> str | None:
    for axis in AXES:
        reason = spec.unsupported(axis, config[axis], DEFAULTS.get(axis))
        if reason:
            return f"{axis}={config[axis]}: {reason}"
    return None


def check_combination(spec: AlgorithmSpec, graph: Graph | None, config: Config,
                      backend: str) -> str | None:
    """First reason any chosen strategy gives against the combination, or ``None``."""
    reason = _check_globals(spec, config)
    if reason:
        return reason
    if spec.direct is not None:  # array code: only the axes' defaults (no strategy runs)
        return _check_axes(spec, config)
    if spec.stages:
        from .staging import check_stages

        reason = _check_axes(spec, config)
        return reason or check_stages(spec, graph, config, backend, check_combination)
    strategies = config.strategies()
    if any(f.buffered for f in spec.fields.values()) and any(
            m.items != "nodes" or not m.operators for m in strategies["driving"].modes):
        return (f"driving={config['driving']}: {spec.label} has buffered fields, which swap "
                "on every node every step; choose a driving whose steps sweep every node")
    if spec.edge.first is not None and strategies["direction"].may_pull:
        return (f"direction={config['direction']}: {spec.label}'s edge operator expands "
                f"only the first {spec.edge.first} out-edges of a node, which a pull over "
                "in-edges cannot honour; use direction=push")
    if spec.step_totals and any(not m.operators for m in strategies["driving"].modes):
        return (f"driving={config['driving']}: {spec.label} reads step totals "
                f"({', '.join(spec.step_totals)}) of the previous step, and this driving "
                "has steps that run no operators; choose one whose every step does")
    for axis in AXES:
        reason = spec.unsupported(axis, config[axis], DEFAULTS.get(axis))
        if reason:
            return f"{axis}={config[axis]}: {reason}"
        strategy = strategies[axis]
        reason = strategy.check(spec, graph, config, backend)
        if reason:
            return f"{axis}={config[axis]}: {reason}"
    if backend == "gpu":
        return _shared_memory_reason(spec, config, strategies)
    return None


def _check_globals(spec: AlgorithmSpec, config: Config) -> str | None:
    """Why a global key of ``config`` (``renumber``) is one the formulation's
    ``supports`` leaves out, or ``None``.
    """
    for key, allowed in spec.supports.items():
        if key in AXES or key not in GLOBAL_KEYS:
            continue
        value = str(config.get(key, GLOBAL_KEYS[key].default))
        if value not in allowed:
            return (f"{key}={value}: variant {spec.variant} of {spec.name} supports {key} "
                    f"{', '.join(allowed)} only")
    return None


def _shared_memory_reason(spec: AlgorithmSpec, config: Config, strategies: dict) -> str | None:
    """Why the strategies' static shared memory together cannot fit a block, or ``None``."""
    used = {axis: strategies[axis].shared_bytes(spec, config) for axis in AXES}
    room = SHARED_BYTES_LIMIT - SHARED_BYTES_CORE
    if sum(used.values()) <= room:
        return None
    parts = ", ".join(f"{axis}={config[axis]} {b}" for axis, b in used.items() if b)
    return (f"block_size={config['block_size']}: the strategies declare {sum(used.values())} "
            f"bytes of shared memory a block ({parts}), more than the {room} a block can "
            "hold; lower block_size or choose strategies that use less")


def _choose_config(algorithm: str | AlgorithmSpec, graph: Any,
                   config: Config | Mapping[str, Any] | str | None, backend: str
                   ) -> tuple[Config | Mapping[str, Any] | None, str]:
    """The configuration a run takes and a note on where it came from: the caller's, the
    selector's pick (GPU, registered algorithm, a :class:`Graph`, no config given; only
    when the pick is a valid combination there), or the default.
    """
    if isinstance(config, str):
        if config != "default":
            raise InvalidInput(f"config must be a Config, a mapping or 'default'; got "
                               f"{config!r} (auto and tuned are the tuner's: gswitch run "
                               "--config auto)")
        return None, "default"
    if config is not None:
        return config, "given"
    if backend != "gpu" or not isinstance(algorithm, str) or not isinstance(graph, Graph):
        return None, "default"
    if graph.n_edges >= 2**31:  # the engine refuses it, saying why: nothing to pick
        return None, "default"
    from .selector import select

    pick = select(algorithm, graph)
    if pick is None:
        return None, "default"
    try:
        spec = _spec(algorithm, Config.shared(pick.config), pick.config, backend)
        cfg = with_variant_defaults(spec, pick.config, backend)
        reason = check_combination(spec, graph, cfg, backend)
    except GswitchError as exc:
        reason = str(exc)
    if reason:
        return None, f"default (the selector's pick is not valid here: {reason})"
    return pick.config, pick.note


def _fallback_worklist(spec: AlgorithmSpec, graph: Graph, cfg: Config, given: Any,
                       backend: str, reason: str | None, note: str
                       ) -> tuple[Config, str | None, str]:
    """A caller's mapping that names no worklist, refused with the default one, gets the
    worklist its launch strategy names as its fallback (``fallback_worklist``: a launch
    that cannot grow a worklist names one that never grows): the configuration, the
    reason left (``None`` when the fallback passes) and the note on the config's source.
    """
    if (not reason or isinstance(given, Config) or not isinstance(given, Mapping)
            or "worklist" in given):
        return cfg, reason, note
    launch = cfg.strategy("launch")
    fallback = launch.fallback_worklist
    if fallback is None or fallback == cfg["worklist"] or backend not in launch.backends:
        return cfg, reason, note
    values = {**given, "worklist": fallback}
    try:
        changed = (with_variant_defaults(spec, values, backend)
                   if spec.config_defaults or spec.backend_defaults
                   else Config.shared(values))
    except GswitchError:
        return cfg, reason, note
    if check_combination(spec, graph, changed, backend):
        return cfg, reason, note
    return changed, None, (f"{note} (worklist={fallback}: launch={cfg['launch']} refused "
                           f"worklist={cfg['worklist']})")


def _renumber_inputs(spec: AlgorithmSpec, perm: np.ndarray, inv: np.ndarray, sources: Any,
                     resolved: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Sources and per-node inputs of a run in the renumbered ids (``perm[new] = old``,
    ``inv`` its inverse).
    """
    if sources is not None:
        sources = inv[np.asarray(sources, dtype=np.int64)].astype(np.asarray(sources).dtype)
    resolved = dict(resolved)
    for name in spec.inputs:
        if isinstance(resolved.get(name), np.ndarray):
            resolved[name] = resolved[name][perm]
    return sources, resolved


@dataclass
class _CallPlan:
    """What a call resolves before it runs, none of which depends on its sources or
    parameters: the formulation, the configuration and where it came from, the graph as
    the formulation runs on it (and the caller's, before renumbering), the permutation of
    a renumbering and the seconds it took to build.
    """

    spec: AlgorithmSpec
    config: Config
    note: str
    #: ``None`` where it is the graph the plan is kept on: a plan holds no reference to
    #: that graph, so a graph the caller drops is freed at once (with its device copy),
    #: not at the next cycle collection
    graph: Graph | None
    caller_graph: Graph | None
    perm: np.ndarray | None
    renumber_s: float
    labelled: bool
    #: the caller's config and spec objects, kept so that their ids in the key stay unique
    given: Any = None
    given_spec: Any = None


_PLANS_PER_GRAPH = 64


def _plan_key(algorithm: Any, graph: Any, config: Any, backend: str) -> tuple | None:
    """The key of a call's plan among those kept on its :class:`Graph`, or ``None`` for a
    call whose plan is not kept (a networkx graph or matrix, an unhashable mapping).
    """
    if not isinstance(graph, Graph):
        return None
    alg = algorithm if isinstance(algorithm, str) else ("spec", id(algorithm))
    if config is None or isinstance(config, str):
        ckey: Any = config
    elif isinstance(config, Config):
        ckey = ("config", config.key())  # a Config never changes: equal ones share a plan
    elif isinstance(config, Mapping):
        try:
            ckey = tuple(sorted((k, type(v), v) for k, v in config.items()))
            hash(ckey)
        except TypeError:
            return None
    else:
        return None
    # the registry changes when plugins load: a plan made before names other strategies
    return alg, ckey, backend, id(get_registry())


def _plan_call(algorithm: str | AlgorithmSpec, graph: Any, config: Any, backend: str
               ) -> _CallPlan:
    """Resolve a call (see :class:`_CallPlan`), or take its plan from the graph: a graph
    never changes, so a repeated call on it skips the selector, the validation of the
    combination and the preparation of the graph.
    """
    key = _plan_key(algorithm, graph, config, backend)
    plans = graph._call_plans if key is not None else None
    if plans is not None:
        hit = plans.get(key)
        if hit is not None and (isinstance(algorithm, str) or hit.given_spec is algorithm):
            return hit
    plan = _build_plan(algorithm, graph, config, backend)
    if key is not None:
        plan = replace(plan, graph=None if plan.graph is graph else plan.graph,
                       caller_graph=None if plan.caller_graph is graph
                       else plan.caller_graph)
        plan.given = config
        plan.given_spec = algorithm
        if plans is None or len(plans) >= _PLANS_PER_GRAPH:
            plans = graph._call_plans = {}
        plans[key] = plan
    return plan


def _build_plan(algorithm: str | AlgorithmSpec, graph: Any, config: Any, backend: str
                ) -> _CallPlan:
    """Resolve a call: the configuration (the caller's, the selector's or the default),
    the formulation, the prepared (and renumbered) graph, and a combination check.
    """
    config, source_note = _choose_config(algorithm, graph, config, backend)
    cfg = config if isinstance(config, Config) else Config.shared(config)
    spec = _spec(algorithm, cfg, None if isinstance(config, Config) else dict(config or {}),
                 backend)
    if (spec.config_defaults or spec.backend_defaults) and not isinstance(config, Config):
        cfg = with_variant_defaults(spec, config, backend)
    labelled = not isinstance(graph, Graph) and _is_networkx(graph)
    # a formulation that is the default on some graphs only may refuse the others
    # (check_graph): it is checked once it is known to run
    by_default = cfg["variant"] == "default" and spec.default_if is not None
    caller_graph = prepare_graph(spec, graph, check=not by_default)
    other = _default_elsewhere(spec, caller_graph, cfg, config, backend)
    if other is not None:
        spec, caller_graph = other, prepare_graph(other, graph)
        if (spec.config_defaults or spec.backend_defaults) and not isinstance(config, Config):
            cfg = with_variant_defaults(spec, config, backend)
    elif by_default and spec.check_graph is not None:
        caller_graph = prepare_graph(spec, graph)
    reason = _check_globals(spec, cfg)  # before a renumbered copy is built for nothing
    if reason:
        raise InvalidConfig(f"invalid strategy combination for {spec.name}: {reason}")
    graph, perm, renumber_s = renumbered(caller_graph, str(cfg.get("renumber", "none")))
    if perm is not None and not spec.edge_fields:
        from .lowering import uses_common_neighbours

        if uses_common_neighbours(spec):  # renumbering keeps each row's old order
            graph = graph.with_sorted_rows()
    off = spec.off_backend(backend)
    if off:
        others = _on_backend(spec.name, backend)
        raise InvalidConfig(off + (f" ({', '.join(others)})" if others else ""))
    reason = check_combination(spec, graph, cfg, backend)
    cfg, reason, source_note = _fallback_worklist(spec, graph, cfg, config, backend, reason,
                                                  source_note)
    if reason:
        raise InvalidConfig(f"invalid strategy combination for {spec.name}: {reason}")
    return _CallPlan(spec, cfg, source_note, graph, caller_graph, perm, renumber_s, labelled)


def _on_backend(name: str, backend: str) -> list[str]:
    """``variant=NAME`` for each registered formulation of ``name`` that runs on
    ``backend``.
    """
    family = get_registry().variants.get(name, {})
    return [f"variant={v}" for v, s in family.items() if backend in s.backends]


def _default_elsewhere(spec: AlgorithmSpec, graph: Graph, cfg: Config, given: Any,
                       backend: str) -> AlgorithmSpec | None:
    """The formulation a config without ``variant`` runs instead of ``spec`` on the
    prepared ``graph``, where ``spec`` is the default only on some graphs
    (``default_if``): of the other registered ones that the config allows and that run
    on ``backend``, the first that is a default there (``default_on``, its own
    ``default_if`` true), else the first; ``None`` when there is none.
    """
    if cfg["variant"] != "default" or spec.default_if is None \
            or spec.default_if(graph, backend):
        return None
    chosen = None if isinstance(given, Config) else dict(given or {})
    family = get_registry().variants.get(spec.name, {})
    others = [v for v in family.values() if v is not spec and backend in v.backends
              and not _refuses(v, cfg, chosen)]
    return next((v for v in others if backend in v.default_on and (
        v.default_if is None or v.default_if(graph, backend))), next(iter(others), None))


def _engine(backend: str, device: int | None = None) -> Any:
    """The engine of ``backend``: the GPU engine of ``device`` (default: the current
    device), or a CPU engine (which keeps nothing between calls). The engine package is
    imported on the first call.
    """
    global _CpuEngine, _GpuEngine
    if backend == "gpu":
        if _GpuEngine is None:  # an import statement here costs 10 us a call
            from .engine.gpu import GpuEngine

            _GpuEngine = GpuEngine
        return _GpuEngine.instance(device)
    if _CpuEngine is None:
        from .engine.cpu import CpuEngine

        _CpuEngine = CpuEngine
    return _CpuEngine()


_CpuEngine: Any = None
_GpuEngine: Any = None
_run_stages: Any = None


def check_device(device: Any, backend: str) -> str:
    """Check ``device=`` against the backend and the GPUs present; the backend to use
    (``auto`` with a device chosen means the GPU).

    Raises
    ------
    InvalidInput
        A device that is not a GPU number of this machine, or one given with the CPU
        backend.
    DeviceError
        A device chosen where CuPy sees no GPU.
    """
    if device is None:
        return backend
    flag = option("device")
    if isinstance(device, bool) or not isinstance(device, (int, np.integer)) or device < 0:
        raise InvalidInput(f"{flag.rstrip('= ')} must be a GPU number (0, 1, ...); got "
                           f"{device!r}")
    if backend == "cpu":
        raise InvalidInput(f"{flag}{device} picks a GPU, but the backend is "
                           f"{option('backend_cpu')}; {option('no_device')}, or use "
                           f"{option('backend_gpu')}")
    if not gpu_available():
        raise DeviceError(f"{flag}{device} needs CuPy and an NVIDIA GPU; {_why_no_gpu()}, or "
                          f"{option('no_device')}")
    from cupy.cuda import runtime

    count = runtime.getDeviceCount()
    if device >= count:
        raise InvalidInput(f"{flag}{device} names GPU {device}, but this machine has {count} "
                           f"(0 to {count - 1}); pick one of them")
    return "gpu"


def release(graph: Graph) -> int:
    """Free the GPU copies of ``graph`` (and of the prepared forms gswitch made of it,
    such as its symmetrised copy), on every device.

    A graph that has run on one GPU stays resident there and is never copied to another
    on its own; release it first to run it on another GPU. The host graph is unchanged,
    and the next GPU call uploads it again.

    Parameters
    ----------
    graph : Graph
        A graph that has run on the GPU.

    Returns
    -------
    int
        How many device copies were freed (0 when there were none).

    """
    module = sys.modules.get("gswitch.engine.gpu")
    if module is None or not isinstance(graph, Graph):
        return 0  # no GPU engine in this process: nothing is resident
    targets = [graph]
    for plan in (graph._call_plans or {}).values():
        targets += [g for g in (plan.graph, plan.caller_graph) if g is not None]
    freed = 0
    for engine in list(module.GpuEngine._instances.values()):
        seen: set[int] = set()
        for g in targets:
            if id(g) not in seen:
                seen.add(id(g))
                freed += engine.release(g)
    return freed


def run(algorithm: str | AlgorithmSpec, graph: Graph | Any, *, source: Any = None,
        backend: str = "auto", config: Config | Mapping[str, Any] | str | None = None,
        progress: Callable[[int, int], None] | None = None, deadline_s: float | None = None,
        arrays: str = "numpy", timer: PhaseTimer | None = None, device: int | None = None,
        **params: Any) -> Result:
    """Run an algorithm on a graph.

    Parameters
    ----------
    algorithm : str or AlgorithmSpec
        Registered name (``bfs``, ``sssp``, ``cc``, ``pagerank``, ...) or a spec.
    graph : Graph, networkx graph, or scipy.sparse matrix
        Input graph (symmetrised automatically for undirected algorithms). A networkx
        graph (``Graph``, ``DiGraph`` or a multigraph; its ``weight`` attribute becomes
        the edge weights) or a square scipy.sparse matrix/array (entry ``(i, j)`` is the
        edge ``i -> j``) is converted with :func:`as_graph`; result arrays are then in
        the order of ``graph.nodes``, so ``dict(zip(graph.nodes, r["depth"]))`` names
        them. Convert once with :meth:`Graph.from_networkx` to run several times.
    source : int, list of int, or networkx node name(s), optional
        Start node(s) for source-based algorithms: 0-based ids, or node names when
        ``graph`` is a networkx graph.
    backend : {"auto", "cpu", "gpu"}
        ``auto`` uses the GPU when CuPy sees one.
    config : Config, mapping or "default", optional
        Strategy configuration. Without one, a GPU run of a registered algorithm on a
        :class:`Graph` takes the configuration :mod:`gswitch.selector` picks from the
        graph's features (``Result.stats["config_source"]`` says which and why); the
        algorithm's default configuration otherwise, and with ``"default"``. A mapping
        fills the keys it leaves out with the algorithm's defaults.
    progress : callable, optional
        Called as ``progress(iteration, n_activated)`` after each super-step on the CPU.
    deadline_s : float, optional
        Stop the run with :class:`~gswitch.errors.DeadlineExceeded` once it has taken
        this many seconds (checked by the host between steps and, in a persistent
        kernel, against the device clock). The tuner uses it to cut slow trials short.
    arrays : {"numpy", "cupy"}
        Type of the result arrays. ``cupy`` (``backend="gpu"`` only) leaves the outputs
        on the device as fresh CuPy arrays, for further GPU work: no copy to the host,
        and ``finalize`` runs on the device when the algorithm declares
        ``finalize_on_device`` (otherwise on the host, and its result goes up again).
    timer : PhaseTimer, optional
        Collects the time of each phase (and stage) of the run, as ``gswitch profile``
        reports it; see :mod:`gswitch.engine.timing`.
    device : int, optional
        The GPU to run on (``backend`` ``auto`` or ``gpu``); default the current CUDA
        device. Each GPU keeps its own copy of the graphs run there; a graph resident on
        one GPU is never copied to another on its own (see :func:`release`).
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
    if arrays not in ("numpy", "cupy"):
        raise InvalidInput(f"arrays must be 'numpy' or 'cupy'; got {arrays!r}")
    backend = resolve_backend(check_device(device, backend))
    plan = _plan_call(algorithm, graph, config, backend)
    spec, cfg, source_note, perm = plan.spec, plan.config, plan.note, plan.perm
    caller_graph = graph if plan.caller_graph is None else plan.caller_graph
    graph = graph if plan.graph is None else plan.graph
    if arrays == "cupy" and backend != "gpu":
        raise InvalidInput("arrays='cupy' keeps the results on the GPU, so it needs "
                           f"backend='gpu' (this run's backend is {backend!r}); use "
                           "arrays='numpy' on the CPU")
    sources = prepare_sources(spec, caller_graph, source, plan.labelled)
    params = named_inputs(spec, caller_graph, params, plan.labelled)
    resolved = spec.resolve_params(params, caller_graph.n_nodes)
    if perm is not None:
        sources, resolved = _renumber_inputs(
            spec, perm, inverse(caller_graph, cfg["renumber"], perm), sources, resolved)
    max_it = DEFAULT_MAX_ITERATIONS
    if spec.max_iterations_param:
        max_it = int(resolved[spec.max_iterations_param])
    if deadline_s is not None and not deadline_s > 0:
        raise InvalidInput(f"deadline_s must be a positive number of seconds; got {deadline_s!r}")
    engine = _engine(backend, None if device is None else int(device))
    if backend != "gpu":
        return _execute(plan, engine, graph, caller_graph, sources, resolved, spec, cfg,
                        backend, max_it, perm, source_note, progress, deadline_s, arrays,
                        timer)
    # every launch, allocation and copy of the call, results included, on the engine's GPU
    with engine.on_device():
        return _execute(plan, engine, graph, caller_graph, sources, resolved, spec, cfg,
                        backend, max_it, perm, source_note, progress, deadline_s, arrays,
                        timer)


def _engine_run(engine: Any, spec: AlgorithmSpec, graph: Graph, resolved: dict[str, Any],
                sources: Any, cfg: Config, backend: str, max_it: int, progress: Any,
                deadline_s: float | None, arrays: str, timer: PhaseTimer | None,
                reorder: Any = None) -> Result:
    """The run itself: by the algorithm's own array code, its stages, or the engine
    (which puts values per node back in the caller's order on the device by
    ``reorder`` where it can).
    """
    global _run_stages
    if spec.direct is not None:
        from .direct import run_direct

        return run_direct(spec, graph, resolved, sources, cfg, backend, deadline_s,
                          arrays == "cupy", timer)
    if spec.stages:
        if _run_stages is None:  # imported once: an import statement costs 10 us a call
            from .staging import run_stages

            _run_stages = run_stages
        return _run_stages(spec, graph, resolved, sources, cfg, backend, engine, max_it,
                           progress=progress, deadline_s=deadline_s, timer=timer,
                           device_arrays=arrays == "cupy")
    extra: dict[str, Any] = {"device_arrays": True} if arrays == "cupy" else {}
    if timer is not None:
        extra["timer"] = timer
    if reorder is not None:
        extra["reorder"] = reorder
    return engine.run(spec, graph, resolved, sources, cfg, max_it, progress=progress,
                      deadline_s=deadline_s, **extra)


def _execute(plan: _CallPlan, engine: Any, graph: Graph, caller_graph: Graph,
             sources: Any, resolved: dict[str, Any], spec: AlgorithmSpec, cfg: Config,
             backend: str, max_it: int, perm: Any, source_note: str, progress: Any,
             deadline_s: float | None, arrays: str, timer: PhaseTimer | None) -> Result:
    """The engine's part of :func:`run`, its finalize and the results in caller ids."""
    # the GPU engine's staging and pools serve one call at a time (calls from several
    # threads queue); the CPU engine keeps nothing between calls
    inv_dev = None
    if backend == "gpu":
        if perm is not None:
            inv_dev = inverse_on_device(caller_graph, cfg["renumber"], perm)
        with engine.call_lock:
            result = _engine_run(engine, spec, graph, resolved, sources, cfg, backend,
                                 max_it, progress, deadline_s, arrays, timer, inv_dev)
    else:
        result = _engine_run(engine, spec, graph, resolved, sources, cfg, backend, max_it,
                             progress, deadline_s, arrays, timer)
    if spec.finalize is not None and "finalized_on" not in result.stats:
        result.fields = spec.finalize(result.fields, resolved) or result.fields
        result.stats["finalized_on"] = "host"
    result.fields = {k: v for k, v in result.fields.items() if k in spec.outputs}
    if perm is not None:
        per_edge = {k: v for k, v in result.fields.items() if k in spec.edge_fields}
        method = cfg["renumber"]
        done = result.stats.pop("in_caller_ids", ())
        # where the values per node were put back in the caller's order
        result.stats["reordered_on"] = "device" if done else "host"
        result.fields = to_caller(
            {k: v for k, v in result.fields.items() if k not in per_edge}, perm,
            {k: f.id_kind for k, f in spec.fields.items() if k in result.fields},
            inverse(caller_graph, method, perm), inv_dev, done)
        if per_edge:  # the edge map is built (once per graph) only where it is needed
            result.fields.update(edges_to_caller(per_edge, caller_graph, perm, {
                k: f.id_kind for k, f in spec.edge_fields.items()},
                edge_pick(caller_graph, method, perm)))
        result.stats["renumber"] = cfg.get("renumber")
        result.stats["renumber_s"] = plan.renumber_s
        plan.renumber_s = 0.0  # built once: later calls on the graph reuse it
    result.stats["variant"] = spec.variant
    result.stats["config_source"] = source_note
    if arrays == "cupy":  # host arrays (a host finalize, an empty graph) go up
        import cupy

        result.fields = {k: cupy.asarray(v) for k, v in result.fields.items()}
    return result
