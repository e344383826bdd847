"""Compile ahead: trials' CUDA modules are compiled in background processes.

On the GPU a trial of a new configuration spends most of its time compiling (about 2 s of
NVRTC for a module whose runs take milliseconds; ``compile_time_s`` in the trials' user
attributes). The tuner therefore asks for a few trials ahead of the one that runs and
hands their configurations to a pool of compile processes, together with the waiting
(enqueued) trials and the neighbours of the best configuration, which the local search
tries next. A compile process generates the same source the engine would and compiles it
through the engine, which leaves the binary in CuPy's on-disk kernel cache; the worker
that runs the trial then loads it from there in milliseconds. Timed runs stay one at a
time on each GPU: compiling uses the host's cores, not the GPU.

Nothing here can fail a trial: a compile error, a dead pool or a missing GPU only means
the worker compiles for itself, as it does without this module. Each compile process
holds a CUDA context on the tuned GPU (a few hundred MB of its memory, no compute), so on
a graph that nearly fills the GPU use fewer of them (``--compile-ahead``) or none.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

__all__ = ["Precompiler", "default_compile_ahead"]

#: Most compile processes the default starts.
MAX_DEFAULT_PROCESSES = 8
#: How far below the tuner's the compile processes' scheduling priority is (``nice``).
#: NVRTC's optimizer runs on every host core (the engine's ``--split-compile=0``), so a
#: burst of compiles must not take a core from the trial being timed, whose host time
#: counts under ``--objective call``.
COMPILE_NICENESS = 10


def default_compile_ahead(backend: str, workers: int = 1) -> int:
    """Compile processes (and trials asked ahead) used when ``--compile-ahead`` is not
    given: none on the CPU backend, which compiles nothing; on the GPU one per spare core
    (besides the tuner and its ``workers``), at most :data:`MAX_DEFAULT_PROCESSES` per
    worker, and none when CuPy keeps its kernel cache in memory only
    (``CUPY_CACHE_IN_MEMORY=1``), since the worker could not find the result.
    """
    if backend != "gpu" or os.environ.get("CUPY_CACHE_IN_MEMORY") == "1":
        return 0
    return max(0, min(MAX_DEFAULT_PROCESSES * workers, (os.cpu_count() or 1) - 1 - workers))


_SPEC: Any = None


def _init(algorithm: str, device: int | None) -> None:
    """Compile process: pick the GPU and load the algorithm (plugins included)."""
    global _SPEC
    _lower_priority()
    if device is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(device)
    from gswitch.plugins import get_registry

    from .worker import load_extra_plugins

    load_extra_plugins()
    _SPEC = get_registry().algorithm(algorithm)


def _lower_priority() -> None:
    """Give this process :data:`COMPILE_NICENESS` more ``nice`` (where the system has
    one; a refusal leaves it as it is).
    """
    if hasattr(os, "nice"):
        try:
            os.nice(COMPILE_NICENESS)
        except OSError:
            pass


def _compile(config_text: str, weighted: bool) -> float:
    """Compile one configuration's module into the on-disk cache; returns seconds."""
    from gswitch.codegen import generate_source
    from gswitch.config import Config
    from gswitch.engine.gpu import GpuEngine

    from .space import variant_spec

    t0 = time.perf_counter()
    config = Config(json.loads(config_text))
    gen = generate_source(variant_spec(_SPEC, config["variant"]), config, weighted=weighted)
    GpuEngine.instance().module(gen)
    return time.perf_counter() - t0


class Precompiler:
    """A pool of compile processes for one study session.

    Parameters
    ----------
    spec : AlgorithmSpec
        The algorithm being tuned.
    weighted : bool
        Whether the prepared graph has weights (part of the generated source).
    processes : int
        Compile processes; 0 makes every method a no-op.
    device : int, optional
        GPU whose architecture the modules are built for (the first of ``--devices``).
    compiles : bool
        Whether there is anything to compile (the GPU backend). Without it the session
        still asks ``processes`` sampler trials ahead, and nothing else happens.

    """

    def __init__(self, spec: Any, weighted: bool, processes: int,
                 device: int | None = None, compiles: bool = True) -> None:
        self.spec = spec
        self.weighted = weighted
        self.processes = int(processes)
        self.device = device
        self.compiles = compiles
        self._pool: ProcessPoolExecutor | None = None
        self._futures: dict[str, Future] = {}  # module key -> its compile
        self._lock = threading.Lock()
        self.submitted = 0
        self.broken: str | None = None

    @property
    def active(self) -> bool:
        """Whether compiles are handed out (processes configured and the pool alive)."""
        return self.processes > 0 and self.broken is None

    def _module_key(self, config: Any) -> str | None:
        from gswitch.codegen import generate_source

        from .space import variant_spec

        try:
            spec = variant_spec(self.spec, config["variant"])
            if spec.direct is not None:
                return None  # array code: no module of the engine's to build
            return generate_source(spec, config, weighted=self.weighted).key
        except Exception:  # noqa: BLE001 - the trial itself reports what is wrong
            return None

    def submit(self, config: Any) -> Future | None:
        """Start compiling ``config``'s module unless it is compiled or compiling already.

        Returns
        -------
        concurrent.futures.Future or None
            The compile of that module (seconds it took), or ``None`` when nothing is
            compiled ahead for it.

        """
        if not (self.active and self.compiles):
            return None
        key = self._module_key(config)
        if key is None:
            return None
        with self._lock:
            fut = self._futures.get(key)
            if fut is not None:
                return fut
            try:
                if self._pool is None:
                    self._pool = ProcessPoolExecutor(
                        max_workers=self.processes,
                        mp_context=multiprocessing.get_context("spawn"),
                        initializer=_init, initargs=(self.spec.name, self.device))
                fut = self._pool.submit(_compile, json.dumps(config.to_dict()), self.weighted)
            except (BrokenProcessPool, RuntimeError, OSError) as exc:
                self.broken = f"{type(exc).__name__}: {exc}"
                return None
            self._futures[key] = fut
            self.submitted += 1
            return fut

    def wait(self, config: Any, timeout_s: float) -> float | None:
        """Wait for ``config``'s compile, at most ``timeout_s`` seconds.

        Returns
        -------
        float or None
            Seconds the background compile took, or ``None`` when it was not compiled
            ahead (never submitted, failed, or not finished in time): the worker then
            compiles for itself.

        """
        if not (self.active and self.compiles):
            return None
        key = self._module_key(config)
        with self._lock:
            fut = self._futures.get(key) if key is not None else None
        if fut is None:
            return None
        try:
            return float(fut.result(timeout=timeout_s))
        except BrokenProcessPool as exc:
            self.broken = f"{type(exc).__name__}: {exc}"
            return None
        except Exception:  # noqa: BLE001 - compile errors and time-outs: the worker decides
            return None

    def close(self) -> None:
        """Stop the compile processes; compiles not yet started are dropped."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._futures.clear()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
