"""Trials run in a worker process, so a crash, a corrupted CUDA context or a hang costs
one trial, not the study.

The tuner starts one worker per device with the ``spawn`` method (CUDA does not survive
``fork``). Messages are JSON text over a pipe, both ways; the graph and the reference
answer reach the worker as pickle-free ``.npz`` / ``.npy`` files. A worker that dies or
does not answer within the trial's limit is killed and replaced; the trial is recorded
with the reason.
"""

from __future__ import annotations

import importlib
import json
import math
import multiprocessing
import os
import signal
import statistics
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from gswitch.verify import answer_problem

__all__ = ["WorkerSetup", "Worker", "measure", "load_extra_plugins", "answer_problem",
           "PLUGINS_ENV", "DETERMINISTIC", "TRANSIENT"]

#: Comma-separated module names of extra plugins that the tuner and its workers
#: register (for plugins not installed through the ``gswitch`` entry point group).
PLUGINS_ENV = "GSWITCH_TUNER_PLUGINS"

#: Outcomes that repeat for the same configuration: the sampler learns to avoid them.
DETERMINISTIC = ("refused", "compile_error", "wrong_answer", "resource", "error")
#: Outcomes that may be transient: failed and retried once before they count as
#: deterministic.
TRANSIENT = ("crashed", "timeout", "device_fault")


def load_extra_plugins() -> list[str]:
    """Register the modules named in ``$GSWITCH_TUNER_PLUGINS`` with the plugin manager.

    Returns
    -------
    list of str
        The module names registered now (already registered ones are skipped).

    """
    from gswitch.plugins import get_plugin_manager, get_registry

    names = [n.strip() for n in os.environ.get(PLUGINS_ENV, "").split(",") if n.strip()]
    pm = get_plugin_manager()
    added = []
    for name in names:
        if pm.get_plugin(name) is not None:
            continue
        pm.register(importlib.import_module(name), name=name)
        added.append(name)
    if added:
        get_registry.cache_clear()
    return added


@dataclass
class WorkerSetup:
    """What a worker needs to run trials (JSON-serialisable)."""

    graph_path: str
    algorithm: str
    backend: str
    reference_path: str
    source: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    device: int | None = None


def _objective_time(stats: dict[str, Any]) -> float:
    t = stats.get("device_time_s")
    return float(t if t is not None else stats["time_s"])


def _classify(exc: BaseException) -> str:
    from gswitch.errors import DeviceError, GswitchError, InvalidConfig, KernelCompileError

    if isinstance(exc, InvalidConfig):
        return "refused"
    if isinstance(exc, KernelCompileError):
        return "compile_error"
    if isinstance(exc, (DeviceError, MemoryError)):
        return "resource"
    if type(exc).__name__ == "OutOfMemoryError":
        return "resource"
    if type(exc).__module__.split(".")[0] in ("cupy", "cupy_backends"):
        return "device_fault"
    if isinstance(exc, GswitchError):
        return "error"
    return "error"


def measure(spec: Any, graph: Any, config: Any, *, backend: str, source: int | None,
            params: dict[str, Any], reference: np.ndarray, warmup: int, repeats: int,
            deadline_s: float | None, objective: str = "device") -> dict[str, Any]:
    """Run one configuration: compile and warm up, repeat, check every answer.

    Parameters
    ----------
    spec, graph, config
        Algorithm, prepared graph and :class:`~gswitch.config.Config`.
    backend : str
        ``cpu`` or ``gpu``.
    source : int, optional
        Start node for source-based algorithms.
    params : dict
        Algorithm parameters.
    reference : numpy.ndarray
        The expected first output field, matched by the algorithm's declared
        ``compare`` (:func:`gswitch.verify.answer_problem`).
    warmup, repeats : int
        Untimed runs after the first (which compiles), then timed runs.
    deadline_s : float, optional
        Engine deadline of each run; passing it prunes the trial.
    objective : {"device", "call"}
        What ``value_s`` is the median of: the engine's device time (the CPU engine's
        time), or the whole call of ``gswitch.run`` from entry to returned result.

    Returns
    -------
    dict
        ``outcome`` (``ok``, ``pruned`` or one of :data:`DETERMINISTIC` and
        :data:`TRANSIENT`) plus measurements: ``value_s`` (median objective time),
        ``device_s`` and ``call_s`` (the medians of both, whichever is the objective),
        ``times_s`` (all repetitions), ``e2e_s`` (end-to-end times), ``iterations``,
        ``edges_processed``, ``compile_time_s`` and ``stats`` (the engine's, without
        per-step lists); for a pruned trial ``elapsed_s`` and ``iterations``; for a
        failure ``reason``.

    """
    from gswitch.errors import DeadlineExceeded
    from gswitch.runner import run

    kwargs: dict[str, Any] = dict(params)
    if source is not None:
        kwargs["source"] = source
    output = spec.outputs[0]
    times: list[float] = []
    calls: list[float] = []
    e2e: list[float] = []
    compile_time = 0.0
    last = None
    try:
        for i in range(1 + warmup + repeats):
            t_call = time.perf_counter()
            result = run(spec, graph, backend=backend, config=config, deadline_s=deadline_s,
                         **kwargs)
            call_s = time.perf_counter() - t_call
            if i == 0:
                compile_time = float(result.stats.get("compile_time_s", 0.0) or 0.0)
            if i == 0 or i == warmup + repeats:
                problem = answer_problem(spec, result.fields[output], reference)
                if problem:
                    return {"outcome": "wrong_answer", "reason": f"wrong answer: {problem}",
                            "compile_time_s": compile_time}
            if i > warmup:
                times.append(_objective_time(result.stats))
                calls.append(call_s)
                e2e.append(float(result.stats["time_s"]))
            last = result
    except DeadlineExceeded as exc:
        return {"outcome": "pruned", "elapsed_s": float(exc.elapsed_s),
                "iterations": int(exc.iterations), "compile_time_s": compile_time,
                "reason": str(exc)}
    except Exception as exc:
        kind = _classify(exc)
        line = f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:500]
        out = {"outcome": kind, "reason": line, "compile_time_s": compile_time}
        if kind == "error" and not isinstance(exc, _gswitch_error()):
            out["traceback"] = traceback.format_exc()[-2000:]
        return out
    assert last is not None
    stats = {k: v for k, v in last.stats.items() if k not in ("active", "modes", "directions")
             and isinstance(v, (int, float, str, bool))}
    device_s, whole_s = statistics.median(times), statistics.median(calls)
    return {"outcome": "ok", "value_s": whole_s if objective == "call" else device_s,
            "device_s": device_s, "call_s": whole_s, "objective": objective,
            "times_s": calls if objective == "call" else times,
            "e2e_s": statistics.median(e2e), "e2e_all_s": e2e,
            "iterations": int(last.stats.get("iterations", 0)),
            "edges_processed": int(last.stats.get("edges_processed", 0)),
            "compile_time_s": compile_time, "stats": stats}


def _gswitch_error() -> type:
    from gswitch.errors import GswitchError

    return GswitchError


def _send(conn: Any, data: dict[str, Any]) -> None:
    conn.send_bytes(json.dumps(data, default=str).encode())


def _worker_main(conn: Any, setup_text: str) -> None:
    """Worker process: load the graph and reference, then answer trial requests."""
    setup = WorkerSetup(**json.loads(setup_text))
    if setup.device is not None and setup.backend == "gpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = str(setup.device)
    try:
        load_extra_plugins()
        from gswitch.config import Config
        from gswitch.io import load_graph
        from gswitch.locality import share_renumbered
        from gswitch.plugins import get_registry
        from gswitch.runner import prepare

        # renumbered copies of a large graph: built by the first worker that needs one
        share_renumbered(os.path.dirname(setup.graph_path))
        spec = get_registry().algorithm(setup.algorithm)
        graph = load_graph(setup.graph_path)
        graph, _ = prepare(spec, graph, setup.source)
        reference = np.load(setup.reference_path, allow_pickle=False)
    except Exception as exc:
        _send(conn, {"ready": False, "reason": f"{type(exc).__name__}: {exc}"})
        return
    _send(conn, {"ready": True, "pid": os.getpid()})
    while True:
        try:
            request = json.loads(conn.recv_bytes().decode())
        except (EOFError, OSError):
            return
        if request.get("op") == "stop":
            return
        try:
            config = Config(request["config"])
        except Exception as exc:
            _send(conn, {"outcome": "refused", "reason": f"{type(exc).__name__}: {exc}"})
            continue
        out = measure(spec, graph, config, backend=setup.backend, source=setup.source,
                      params=setup.params, reference=reference,
                      warmup=int(request.get("warmup", 1)),
                      repeats=int(request.get("repeats", 3)),
                      deadline_s=request.get("deadline_s"),
                      objective=str(request.get("objective", "device")))
        _send(conn, out)
        if out["outcome"] == "device_fault":
            return  # the context may be unusable: the tuner starts a fresh worker


class Worker:
    """Handle on one worker process (started lazily, replaced after a death or a kill).

    Parameters
    ----------
    setup : WorkerSetup
        Graph, reference and run settings.
    start_timeout_s : float
        How long loading may take before the worker counts as failed to start.

    """

    def __init__(self, setup: WorkerSetup, start_timeout_s: float = 600.0) -> None:
        self.setup = setup
        self.start_timeout_s = start_timeout_s
        self.process: Any = None
        self.conn: Any = None
        self.starts = 0
        #: why its process could not be restarted (the tuner stops giving it trials)
        self.broken: str = ""

    @property
    def label(self) -> str:
        """The worker's name in trial records and progress: ``gpu1``, ``cpu0`` (a
        simulated device on the CPU backend) or ``worker``.
        """
        d = self.setup.device
        if d is None:
            return "worker"
        return f"{'gpu' if self.setup.backend == 'gpu' else 'cpu'}{d}"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.is_alive()

    def start(self) -> None:
        """Start a fresh worker and wait until it has loaded the graph."""
        from .space import TunerError

        self.close()
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker_main, args=(child, json.dumps(asdict(self.setup))),
                           daemon=True, name="gswitch-tuner-worker")
        proc.start()
        child.close()
        self.process, self.conn = proc, parent
        self.starts += 1
        if not parent.poll(self.start_timeout_s):
            self.close()
            raise TunerError(f"the tuner's worker process did not load the graph within "
                             f"{self.start_timeout_s:.0f} s; try a smaller graph")
        try:
            hello = json.loads(parent.recv_bytes().decode())
        except (EOFError, OSError):
            code = proc.exitcode
            self.close()
            raise TunerError(f"the tuner's worker process died while starting (exit status "
                             f"{code}); run with --debug and check the plugins") from None
        if not hello.get("ready"):
            self.close()
            raise TunerError(f"the tuner's worker process could not start: {hello.get('reason')}")

    def _death_reason(self) -> str:
        proc = self.process
        proc.join(5)
        code = proc.exitcode
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"worker process was killed by {name}"
        return f"worker process exited with status {code}"

    def run_trial(self, request: dict[str, Any], limit_s: float) -> dict[str, Any]:
        """Send one trial and wait for its outcome, at most ``limit_s`` seconds.

        Returns
        -------
        dict
            The worker's answer (see :func:`measure`), or ``outcome`` ``crashed`` /
            ``timeout`` with the reason when the worker died or was killed. A worker
            found dead before the trial is restarted first; ``worker_restarted`` says why.

        """
        died = ""
        if self.process is not None and not self.process.is_alive():
            died = self._death_reason()  # between trials: this trial is not affected
        if not self.alive:
            self.start()
        t0 = time.perf_counter()
        try:
            self.conn.send_bytes(json.dumps(request).encode())
        except (OSError, BrokenPipeError):
            reason = self._death_reason()
            self.close()
            return {"outcome": "crashed", "reason": reason}
        if not self.conn.poll(limit_s):
            self.close()
            return {"outcome": "timeout", "reason": f"no answer within the trial limit of "
                    f"{limit_s:.3g} s; the worker process was killed"}
        try:
            answer = json.loads(self.conn.recv_bytes().decode())
        except (EOFError, OSError):
            reason = self._death_reason()
            self.close()
            return {"outcome": "crashed", "reason": reason,
                    "elapsed_s": time.perf_counter() - t0}
        if answer.get("outcome") == "device_fault":
            self.close()
        if died:
            answer["worker_restarted"] = f"{died} between trials; a fresh one ran this trial"
        return answer

    def close(self) -> None:
        """Stop the worker (kill it when it does not stop at once)."""
        proc, conn = self.process, self.conn
        self.process = self.conn = None
        if conn is not None:
            try:
                if proc is not None and proc.is_alive():
                    conn.send_bytes(json.dumps({"op": "stop"}).encode())
            except (OSError, BrokenPipeError):
                pass
            conn.close()
        if proc is not None:
            proc.join(0.5)
            if proc.is_alive():
                proc.kill()
                proc.join(5)


def finite(x: float | None) -> bool:
    """Whether ``x`` is a finite number."""
    return x is not None and math.isfinite(x)
