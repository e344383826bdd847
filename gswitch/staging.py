"""Staged algorithms: a sequence of operator stages and host steps over shared fields.

An algorithm that declares :func:`~gswitch.algorithm.stage` classes runs them in order:
the fields are initialised once, each stage runs to its own fixpoint from the fields the
stages before it left, and a :func:`~gswitch.algorithm.host_step` between stages may
read the fields (on the device under the GPU engine), set parameters, choose the start
set of the next stage, and loop: ``{"repeat": "stage_name"}`` runs the stages from that
one on again, until a host step no longer asks (at most the run's iteration limit); or
end the run: ``{"stop": True}`` skips the stages and host steps after it (what it
returned is applied first), so a run whose work is done runs no stage on no nodes.
Afforest (sample, find the largest component, finish) is written this way, and so can
Brandes' betweenness (forward, backward) be. A stage declared with ``reverse=True`` runs
on the reverse graph (:attr:`Graph.reverse`): its pushes walk the caller's in-edges, as
a backward search does (strong components).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .algorithm import AlgorithmSpec, HostEdges, HostStep
from .arrayops import mask_ids
from .config import Config
from .engine.timing import PhaseTimer
from .errors import AlgorithmError, DeadlineExceeded
from .graph import Graph
from .result import Result

__all__ = ["stage_config", "check_stages", "run_stages"]

_SUMMED = ("edges_processed", "iterations", "device_time_s", "kernel_time_s",
           "compile_time_s", "polled_reads", "overflows")


def stage_config(stage: AlgorithmSpec, config: Config) -> Config:
    """The run's config with the values ``stage`` always runs with (a strategy a stage
    forces drops the run's parameters of the strategy it replaces).
    """
    if not stage.stage_config:
        return config
    return config.replace(**stage.stage_config)


def check_stages(spec: AlgorithmSpec, graph: Graph | None, config: Config, backend: str,
                 check: Any) -> str | None:
    """First reason any operator stage of ``spec`` cannot run with ``config``."""
    for st in spec.stages:
        if isinstance(st, AlgorithmSpec):
            on = graph.reverse if graph is not None and st.stage_reverse else graph
            reason = check(st, on, stage_config(st, config), backend)
            if reason:
                return f"stage {st.stage_name}: {reason}"
    return None


def _apply(step: HostStep, spec: AlgorithmSpec, out: Any, fields: dict[str, Any],
           params: dict[str, Any], xp: Any) -> Any:
    """Take what a host step returned; the start ids it chose (int32, sorted, as ``xp``
    arrays) or ``None``.
    """
    if out is None:
        return None
    if not isinstance(out, dict):
        raise AlgorithmError(f"host step {step.name} of {spec.label} must return a dict "
                             f"or None, got {type(out).__name__}")
    start = None
    for key, value in out.items():
        if key in ("repeat", "stop"):
            continue  # the caller's: where to go on
        if key == "start":  # stays where it was computed (on the device for the GPU)
            value = xp.asarray(value)
            if value.dtype == bool:  # a mask over the nodes: its ids are sorted, unique
                start = mask_ids(value)
            else:
                start = xp.unique(value.astype(xp.int32))
        elif key in spec.fields:
            fields[key] = xp.asarray(value, dtype=spec.fields[key].dtype)
        elif key in spec.edge_fields:
            arr = xp.asarray(value, dtype=spec.edge_fields[key].dtype)
            if arr.shape != fields[key].shape:
                raise AlgorithmError(
                    f"host step {step.name} of {spec.label} returned edge field {key!r} "
                    f"of shape {arr.shape}; it holds one value per edge "
                    f"{fields[key].shape}")
            fields[key] = arr
        elif key in spec.params:
            params[key] = spec.params[key].validate(
                value.item() if hasattr(value, "item") else value)
        else:
            raise AlgorithmError(
                f"host step {step.name} of {spec.label} returned {key!r}, which is neither "
                "'start', a field nor a parameter")
    return start


def _host_edges(graph: Graph, xp: Any) -> HostEdges:
    """The graph's edges for host steps, as ``xp`` arrays (weights 1 when unweighted)."""
    src, dst = graph.edges()
    w = (np.ones(graph.n_edges, dtype=np.float32) if graph.weights is None
         else np.asarray(graph.weights, dtype=np.float32))
    return HostEdges(xp.asarray(src, dtype=xp.int32), xp.asarray(dst, dtype=xp.int32),
                     xp.asarray(w), graph.directed)


def run_stages(spec: AlgorithmSpec, graph: Graph, params: dict[str, Any],
               sources: np.ndarray | None, config: Config, backend: str, engine: Any,
               max_iterations: int, progress: Any = None,
               deadline_s: float | None = None, timer: PhaseTimer | None = None,
               device_arrays: bool = False) -> Result:
    """Run the stages of ``spec`` in order on ``engine``; fields stay where the engine
    keeps them (CuPy arrays between GPU stages). A ``timer`` gets each stage's phases
    under the stage's name, and each host step's time. On the GPU, only the outputs come
    back (every field where ``spec`` has a ``finalize`` to run on the host); with
    ``device_arrays`` they stay on the device (finalised there where ``spec`` declares
    ``finalize_on_device``).
    """
    t0 = time.perf_counter()
    if backend == "gpu":
        import cupy as xp
    else:
        xp = np
    params = dict(params)
    fields: dict[str, Any] | None = None
    # per-edge values live beside the node fields, which the engine runs the stages on
    edge_fields = {k: xp.full(graph.n_edges, f.init, dtype=f.dtype)
                   for k, f in spec.edge_fields.items()}
    edges = None
    chosen = None
    stats: dict[str, Any] = {"active": [], "modes": [], "directions": [], "stages": [],
                             "edges_processed": 0, "iterations": 0}
    host_s = 0.0
    converged = True
    names = [getattr(st, "stage_name", "") or getattr(st, "name", "") for st in spec.stages]
    # each stage's config once per run: a loop of host step and stages (Boruvka's rounds)
    # would otherwise rebuild and revalidate it, and its strategies, on every lap
    configs = [stage_config(st, config) if isinstance(st, AlgorithmSpec) else None
               for st in spec.stages]
    pos, laps = 0, 0
    in_core: set[int] = set()  # the device allocations the stages' fields were left in
    while pos < len(spec.stages):
        st = spec.stages[pos]
        pos += 1
        if isinstance(st, HostStep):
            if fields is None:
                fields = {k: xp.asarray(v) for k, v in
                          spec.initial_fields(graph.n_nodes, params, sources).items()}
            ts = time.perf_counter()
            seen = {**fields, **edge_fields}
            if st.edges:
                edges = _host_edges(graph, xp) if edges is None else edges
                out = st.func(seen, params, xp, edges)
            elif st.graph:
                out = st.func(seen, params, xp, graph)
            else:
                out = st.func(seen, params, xp)
            chosen = _apply(st, spec, out, seen, params, xp)
            fields = {k: seen[k] for k in fields}
            edge_fields = {k: seen[k] for k in edge_fields}
            again = out.get("repeat") if isinstance(out, dict) else None
            stop = bool(out.get("stop")) if isinstance(out, dict) else False
            if stop and again is not None:
                raise AlgorithmError(f"host step {st.name} of {spec.label} returned both "
                                     "'repeat' and 'stop'; return one")
            if stop:
                pos = len(spec.stages)  # the run ends after this step
            elif again is not None:  # loop: run the stages from `again` on once more
                if again not in names:
                    raise AlgorithmError(
                        f"host step {st.name} of {spec.label} repeats {again!r}, which is "
                        f"not one of its stages ({', '.join(names)})")
                laps += 1
                if laps > max_iterations:
                    raise AlgorithmError(f"host step {st.name} of {spec.label} repeated "
                                         f"more than {max_iterations} times")
                pos = names.index(again)
            if xp is not np:
                # the engine runs on its own stream: it waits on the device, not the
                # host, for what the host step queued on the current one
                done = xp.cuda.Event(block=False, disable_timing=True)
                done.record()
                engine.stream.wait_event(done)
            took = time.perf_counter() - ts
            host_s += took
            if timer is not None:
                timer.stage = st.name
                timer.add("host step", took)
            stats["stages"].append({"stage": st.name, "host_s": took})
            continue
        kind = st.start.kind
        if kind == "chosen" and chosen is None:
            raise AlgorithmError(f"stage {st.stage_name} of {spec.label} starts from "
                                 "chosen nodes, but no host step before it chose any")
        src = sources if kind == "source" else chosen if kind == "chosen" else None
        left = None
        if deadline_s is not None:
            elapsed = time.perf_counter() - t0
            left = deadline_s - elapsed
            if left <= 0:  # the stages before used it up: this one does not start
                raise DeadlineExceeded(
                    f"{spec.label} passed its deadline of {deadline_s:.3g} s before stage "
                    f"{st.stage_name} ({elapsed:.3g} s)", elapsed_s=elapsed,
                    iterations=int(stats["iterations"]))
        # on the GPU a stage's fields stay where the engine ran it, for the next stage
        extra: dict[str, Any] = {"device_arrays": True, "in_place": True} \
            if backend == "gpu" else {}
        if timer is not None:
            timer.stage = st.stage_name
            extra["timer"] = timer
        on = graph.reverse if st.stage_reverse else graph
        r = engine.run(st, on, params, src, configs[pos - 1], max_iterations,
                       progress=progress, deadline_s=left, fields_in=fields, **extra)
        fields = {k: xp.asarray(v) for k, v in r.fields.items()}
        if backend == "gpu":  # views of the core block the engine ran the stage in
            in_core.update(id(v.data.mem) for v in fields.values())
        for k in ("active", "modes", "directions"):
            stats[k].extend(r.stats.get(k, []))
        for k in _SUMMED:
            if r.stats.get(k) is not None:
                stats[k] = stats.get(k, 0) + r.stats[k]
        converged = converged and bool(r.stats.get("converged", True))
        stats["stages"].append({"stage": st.stage_name,
                                "iterations": r.stats.get("iterations", 0),
                                "device_time_s": r.stats.get("device_time_s"),
                                "replayed": bool(r.stats.get("replayed", False))})
        for k, v in r.stats.items():  # the engine's other facts, as the last stage had them
            if k not in stats and k not in ("time_s", "converged", "totals"):
                stats[k] = v
    assert fields is not None  # a staged spec has an operator stage
    if in_core and device_arrays:  # the next run reuses the core block: the caller's own
        fields = engine.fresh_copies(fields, in_core)
    fields = {**fields, **edge_fields}
    if backend == "gpu":
        fields = _gpu_results(spec, fields, params, engine, device_arrays, stats)
    if "device_time_s" in stats:
        # host steps work on the device's arrays: their wall time counts as device time
        # (the kernels they queue run after it, before the next stage's, unless the step
        # read something back and so waited for them)
        stats["device_time_s"] += host_s
    stats["host_step_s"] = host_s
    stats["converged"] = converged
    stats["time_s"] = time.perf_counter() - t0
    return Result(spec.name, fields, stats, backend=backend, config=config)


def _gpu_results(spec: AlgorithmSpec, fields: dict[str, Any], params: dict[str, Any],
                 engine: Any, device_arrays: bool, stats: dict[str, Any]) -> dict[str, Any]:
    """The fields a staged GPU run returns: the outputs only, unless a host ``finalize``
    still needs the rest; left on the device for ``device_arrays`` (finalised there
    when ``spec`` allows it, and ``stats["finalized_on"]`` says so), else copied back,
    a large one straight into page-locked memory (:mod:`gswitch.engine.pinned`).
    """
    if device_arrays and spec.finalize is not None and spec.finalize_on_device:
        fields = spec.finalize(fields, params) or fields
        stats["finalized_on"] = "device"
        return {k: v for k, v in fields.items() if k in spec.outputs}
    if spec.finalize is None:
        fields = {k: v for k, v in fields.items() if k in spec.outputs}
    if device_arrays and spec.finalize is None:
        return fields
    out = {}
    for k, v in fields.items():
        host = engine.results.empty(v.shape, v.dtype) if v.nbytes >= 1 << 20 else None
        out[k] = v.get() if host is None else v.get(out=host)
    return out
