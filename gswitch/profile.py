"""Per-phase profile of one run: time, calls, bytes moved and achieved bandwidth.

:func:`profile` runs an algorithm once with a :class:`~gswitch.engine.timing.PhaseTimer`
(after a warm-up run, so compilation, the graph's upload and first imports are not timed) and
reports each phase of each stage: its time in total and per call, an estimate of the bytes
it moved, and the bandwidth that achieves against the machine's peak. ``gswitch profile``
prints it, adds Nsight Compute's irregularity metrics (:mod:`gswitch.ncu`) and plots it.

Bytes are an estimate from the work the run reports (active items, edges processed,
activations per stage) and what the operators read and write: the fields each one loads
and stores, the CSR row offsets of each active node, the column id (and weight, if read)
of each edge. Cache hits, atomics' read-modify-write traffic inside the memory system and
intrinsics that walk neighbour rows are not counted, so it is a lower bound for the
memory traffic the phase causes.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import expr as ex
from .engine.timing import EVERY_PHASE, PhaseTime, PhaseTimer, StageWork

__all__ = ["profile", "Traffic", "operator_traffic", "peak_bandwidth", "plot_profile",
           "format_profile"]

#: bytes of the host copy that measures the CPU's memory bandwidth
_MEMCPY_BYTES = 64 << 20
_MEMCPY_REPEATS = 5


@dataclass(frozen=True)
class Traffic:
    """Bytes the operators of one spec move: per active node and per edge."""

    node: int  # node operator, per node it runs on
    offsets: int  # edge expansion, per source node: its two row offsets
    src_fields: int  # edge operator, per source node: the fields it reads there
    edge: int  # per edge: column id, weight if read, destination and indirect fields
    weight: int  # per edge: the weight alone (0 when the operator reads none)
    fields: int  # one of every field, per node


def _field_bytes(spec: Any, name: str) -> int:
    f = spec.fields.get(name)
    return np.dtype(f.dtype).itemsize if f is not None else 0


def _statement_exprs(s: Any) -> list[ex.Expr]:
    out = [getattr(s, "value", None), getattr(s, "at", None), getattr(s, "activate_above", None)]
    return [e for e in out if isinstance(e, ex.Expr)]


def _operator_bytes(spec: Any, op: Any) -> dict[str, int]:
    """Bytes one evaluation of ``op`` loads and stores, by the node they belong to
    (``self``, ``src``, ``dst``, ``at`` for indirect ids, ``weight``).
    """
    out = {"self": 0, "src": 0, "dst": 0, "at": 0, "weight": 0}
    if op is None:
        return out
    if op.raw is not None:  # a raw operator: a read and a write of a destination value
        out["dst"] = 8
        return out
    loaded: set[tuple[str, str]] = set()
    for s in op.statements:
        for e in _statement_exprs(s):
            for node in ex.walk(e):
                if isinstance(node, ex.FieldLoad) and (node.node, node.field) not in loaded:
                    loaded.add((node.node, node.field))
                    out[node.node] = out.get(node.node, 0) + _field_bytes(spec, node.field)
                elif isinstance(node, ex.FieldAt):
                    out["at"] += _field_bytes(spec, node.field)
                elif isinstance(node, ex.EdgeWeight):
                    out["weight"] = 4
                elif isinstance(node, ex.Degree):
                    out["self" if op.kind == "node" else "src"] += 4
        if isinstance(s, (ex.Reduction, ex.Assign)):
            size = _field_bytes(spec, s.field)
            where = "at" if getattr(s, "at", None) is not None else s.node
            # a reduction reads the target (to test before the atomic) and writes it
            read = isinstance(s, ex.Reduction) and (s.node, s.field) not in loaded
            out[where] = out.get(where, 0) + size * (2 if read else 1)
    return out


def operator_traffic(spec: Any, graph: Any) -> Traffic:
    """The bytes :class:`Traffic` counts for ``spec`` on ``graph``."""
    node = _operator_bytes(spec, spec.node)
    edge = _operator_bytes(spec, spec.edge)
    offsets = 2 * np.dtype(graph.indptr.dtype).itemsize
    return Traffic(node=node["self"] + node["at"], offsets=offsets, src_fields=edge["src"],
                   edge=4 + edge["weight"] + edge["dst"] + edge["at"], weight=edge["weight"],
                   fields=sum(_field_bytes(spec, f) for f in spec.fields))


def _words(graph: Any) -> int:
    return (graph.n_nodes + 31) // 32


def _cpu_bytes(name: str, work: StageWork, t: Traffic, graph: Any) -> int | None:
    """Bytes of a CPU engine phase (:data:`~gswitch.engine.timing.CPU_PHASES`)."""
    n, w = graph.n_nodes, work
    if name == "setup":
        return n * t.fields
    if name == "node operator":
        return w.items * t.node
    if name == "edge operator":  # gathers through the id lists, source fields per edge
        return w.edges * (16 + t.edge - 4 + t.src_fields)
    if name == "worklist compaction":  # activation mask of every node, the ids taken
        return w.steps * n + w.activated * 8
    if name == "closure":  # the library reads the CSR once and writes the field
        return graph.n_edges * 4 + n * (8 + t.fields)
    return None


def _gpu_bytes(entry: PhaseTime, work: StageWork, t: Traffic, graph: Any,
               edge_share: float) -> int | None:
    """Bytes of a GPU kernel phase, from its declared position in the step and items."""
    p = entry.phase
    if p == EVERY_PHASE:  # a persistent kernel or a CUDA graph's replay: whole steps
        return work.items * (t.node + 4 + t.offsets + t.src_fields) + work.edges * t.edge \
            + work.activated * 8
    if p is None:  # a helper kernel (a worklist's compaction after an overflow)
        return None
    if p.items == "words":
        return entry.calls * _words(graph) * 8
    if p.name == "node":
        return work.items * (t.node + 4)
    if p.order == 20:  # edge expansion (push) or its pull: shared by time between them
        return int(edge_share * (work.items * (t.offsets + t.src_fields + 4)
                                 + work.edges * t.edge))
    if 20 < p.order < 40 or p.items == "queued":  # worklist finish: written, read next
        return work.activated * 8
    return None


@functools.cache
def peak_bandwidth(backend: str) -> dict[str, Any]:
    """The machine's peak memory bandwidth (bytes/s) and how it was obtained.

    On the GPU: twice the memory clock times the bus width (CUDA's device attributes
    ``MemoryClockRate`` and ``GlobalMemoryBusWidth``), or a timed device-to-device copy
    where the attributes are missing. On the CPU: a timed ``np.copyto`` of 64 MiB, best
    of five, counting the bytes read and written. Measured once per process.
    """
    if backend == "gpu":
        import cupy as cp

        attrs = cp.cuda.Device().attributes
        clock_khz, bus_bits = attrs.get("MemoryClockRate"), attrs.get("GlobalMemoryBusWidth")
        if clock_khz and bus_bits:
            return {"bytes_per_s": 2.0 * clock_khz * 1e3 * bus_bits / 8,
                    "source": f"device attributes: memory clock {clock_khz / 1e6:.3g} GHz, "
                              f"{bus_bits}-bit bus, double data rate"}
        src = cp.empty(_MEMCPY_BYTES * 4, dtype=np.uint8)
        dst = cp.empty_like(src)
        return {"bytes_per_s": _best_copy(lambda: (dst.__setitem__(Ellipsis, src),
                                                   cp.cuda.Device().synchronize()),
                                          2 * src.nbytes),
                "source": "measured device-to-device copy of 256 MiB (read + write)"}
    src = np.ones(_MEMCPY_BYTES, dtype=np.uint8)
    dst = np.empty_like(src)
    return {"bytes_per_s": _best_copy(lambda: np.copyto(dst, src), 2 * src.nbytes),
            "source": "measured host memcpy of 64 MiB, best of 5 (read + write)"}


def _best_copy(copy: Any, nbytes: int) -> float:
    copy()  # fault the pages in
    best = float("inf")
    for _ in range(_MEMCPY_REPEATS):
        t = time.perf_counter()
        copy()
        best = min(best, time.perf_counter() - t)
    return nbytes / best


def profile(algorithm: str, graph: Any, *, backend: str = "auto", config: Any = None,
            source: Any = None, device: int | None = None, **params: Any
            ) -> dict[str, Any]:
    """Run ``algorithm`` once, timing every phase, and report as ``gswitch profile``.

    Parameters
    ----------
    algorithm : str
        A registered algorithm.
    graph : Graph
        The input graph.
    backend : {"auto", "cpu", "gpu"}
    config : Config, mapping, "default" or None
        As :func:`gswitch.run` takes it (``None``: the selector's pick on the GPU).
    source : int, optional
        Start node of source-based algorithms.
    device : int, optional
        The GPU to run on (default: the current one).
    **params
        Algorithm parameters.

    Returns
    -------
    dict
        ``time_s`` (the whole run), ``engine_time_s``, ``phases`` (each with ``stage``,
        ``name``, ``kind``, ``time_s``, ``calls``, ``time_per_call_s``, ``bytes``,
        ``bandwidth_bytes_per_s`` and ``fraction_of_peak``), ``phase_time_s`` (their sum),
        ``device_time_s`` (GPU: the events' sum), ``peak_bandwidth`` and each stage's
        ``work`` (steps, active items, edges processed, activations) the bytes come from.

    """
    from .runner import check_device, resolve_backend, run

    backend = resolve_backend(check_device(device, backend))
    # a first run compiles, uploads, pools and imports; the timed run is the steady state
    run(algorithm, graph, source=source, backend=backend, config=config, device=device,
        **params)
    timer = PhaseTimer()
    t0 = time.perf_counter()
    result = run(algorithm, graph, source=source, backend=backend, config=config,
                 timer=timer, device=device, **params)
    wall = time.perf_counter() - t0
    peak = peak_bandwidth(backend)
    phases = _phase_rows(timer, graph, backend, peak["bytes_per_s"])
    st = result.stats
    return {
        "algorithm": result.algorithm, "variant": st.get("variant"), "backend": backend,
        "device": st.get("device", "host CPU"), "config": dict(result.config.items()),
        "config_source": st.get("config_source"),
        "graph": {"name": graph.name, "n_nodes": graph.n_nodes, "n_edges": graph.n_edges},
        "iterations": st.get("iterations"), "time_s": wall,
        "engine_time_s": st.get("time_s"), "device_time_s": st.get("device_time_s"),
        "phase_time_s": sum(p["time_s"] for p in phases),
        "peak_bandwidth": dict(peak), "phases": phases,
        "work": {stage: {"steps": w.steps, "items": w.items, "edges": w.edges,
                         "activated": w.activated, "runs": w.runs}
                 for stage, w in timer.work.items()},
    }


def _phase_rows(timer: PhaseTimer, graph: Any, backend: str,
                peak: float) -> list[dict[str, Any]]:
    traffic = {stage: operator_traffic(w.spec, graph) for stage, w in timer.work.items()}
    edge_time: dict[str, float] = {}
    for e in timer.phases.values():
        if e.phase not in (None, EVERY_PHASE) and e.phase.order == 20:
            edge_time[e.stage] = edge_time.get(e.stage, 0.0) + e.time_s
    rows = []
    for e in timer.phases.values():
        work, t = timer.work.get(e.stage), traffic.get(e.stage)
        nbytes = None
        if work is not None and t is not None:
            if e.kind == "kernel":
                share = e.time_s / edge_time[e.stage] if edge_time.get(e.stage) else 0.0
                nbytes = _gpu_bytes(e, work, t, graph, share)
            else:
                nbytes = e.nbytes if e.nbytes is not None else _cpu_bytes(e.name, work, t,
                                                                           graph)
        bw = nbytes / e.time_s if nbytes and e.time_s > 0 else None
        rows.append({"stage": e.stage, "name": e.name, "kind": e.kind, "time_s": e.time_s,
                     "calls": e.calls,
                     "time_per_call_s": e.time_s / e.calls if e.calls else None,
                     "bytes": None if nbytes is None else int(nbytes),
                     "bandwidth_bytes_per_s": bw,
                     "fraction_of_peak": bw / peak if bw is not None and peak else None})
    return rows


def _label(p: dict[str, Any]) -> str:
    return f"{p['stage']}: {p['name']}" if p["stage"] else p["name"]


def _si(x: float | None, unit: str) -> str:
    if x is None:
        return "-"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


def format_profile(data: dict[str, Any]) -> str:
    """The profile as a table a person reads."""
    g = data["graph"]
    lines = [f"{data['algorithm']} on {g['name'] or 'graph'} ({g['n_nodes']:,} nodes, "
             f"{g['n_edges']:,} edges), backend {data['backend']} ({data['device']})",
             f"run: {data['time_s'] * 1e3:.3f} ms, {data['iterations']} steps; phases "
             f"timed: {data['phase_time_s'] * 1e3:.3f} ms",
             f"peak bandwidth: {_si(data['peak_bandwidth']['bytes_per_s'], 'B/s')} "
             f"({data['peak_bandwidth']['source']})"]
    width = max([len(_label(p)) for p in data["phases"]] + [5])
    lines.append(f"{'phase':<{width}}  {'time ms':>9}  {'calls':>6}  {'us/call':>9}  "
                 f"{'bytes':>9}  {'bandwidth':>11}  {'of peak':>7}")
    for p in data["phases"]:
        per = p["time_per_call_s"]
        frac = p["fraction_of_peak"]
        lines.append(f"{_label(p):<{width}}  {p['time_s'] * 1e3:9.3f}  {p['calls']:6d}  "
                     f"{'-' if per is None else f'{per * 1e6:9.1f}':>9}  "
                     f"{_si(p['bytes'], 'B'):>9}  "
                     f"{_si(p['bandwidth_bytes_per_s'], 'B/s'):>11}  "
                     f"{'-' if frac is None else f'{100 * frac:6.1f}%':>7}")
    return "\n".join(lines)


def plot_profile(data: dict[str, Any], path: str) -> None:
    """Write a bar chart of time per phase, each bar annotated with its bandwidth.

    Raises
    ------
    InvalidInput
        matplotlib is not installed.

    """
    from .errors import InvalidInput

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InvalidInput("--plot needs matplotlib: pip install matplotlib") from None
    phases = data["phases"]
    labels = [_label(p) for p in phases]
    times = [p["time_s"] * 1e3 for p in phases]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(phases) + 1.5))
    bars = ax.barh(labels, times, color="tab:blue")
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_title(f"{data['algorithm']} on {data['graph']['name'] or 'graph'}, "
                 f"backend {data['backend']}")
    for bar, p in zip(bars, phases, strict=True):
        bw, frac = p["bandwidth_bytes_per_s"], p["fraction_of_peak"]
        if bw is not None:
            ax.annotate(f" {_si(bw, 'B/s')} ({100 * frac:.1f}% of peak)",
                        (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                        va="center", fontsize=8)
    ax.margins(x=0.35)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
