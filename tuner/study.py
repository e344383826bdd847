"""The tuning loop: one Optuna study per (algorithm, graph, device, space version).

Trials are asked for and told with Optuna's ask-and-tell interface, so sampling and
storage stay in this process while the configuration runs in a worker process
(:mod:`gswitch.tuner.worker`). Every trial ends in one recorded way (user attribute
``outcome``):

=================  ==========================================  =====================
outcome            meaning                                     recorded as
=================  ==========================================  =====================
``ok``             correct answer, median time measured        COMPLETE, feasible
``pruned``         passed ``prune_factor`` x the best time     PRUNED (time reached)
                   (never the default configuration's trial,
                   so the speedup over it is always known)
``refused``        a strategy's ``check()`` refused it         COMPLETE, infeasible
``compile_error``  the generated kernel did not compile        COMPLETE, infeasible
``wrong_answer``   the answer differs from the reference       COMPLETE, infeasible
``resource``       out of memory or another device limit       COMPLETE, infeasible
``error``          any other error raised by the run           COMPLETE, infeasible
``crashed``        the worker died (segfault, ``os._exit``)    FAIL, retried once
``timeout``        no answer within the trial limit (killed)   FAIL, retried once
``device_fault``   a CUDA error that may spoil the context     FAIL, retried once
=================  ==========================================  =====================

Infeasible trials carry a violated constraint (``trial.set_constraint``), which
Optuna's TPE sampler learns from, and a penalty value so that plots stay readable;
they can never be the best trial. A retried outcome that happens again is recorded as
infeasible.

After the warm start (the default, the best of similar tuned graphs, the plugins'
suggestions), a share ``refine`` of the trials is a local search: an untried neighbour
of the best configuration so far (one parameter moved, one axis switched) is enqueued
(user attribute ``source`` is ``refine``); the others are the sampler's. When the best
came from such a move of one numeric parameter, the same move is taken once more first
(a pattern move, :meth:`~gswitch.tuner.space.SearchSpace.continued`). The sampler
finds the region and the local search the best point in it, which TPE alone, over a
conditional space of a dozen parameters, approaches slowly.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import socket
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gswitch.config import DEFAULTS, Config
from gswitch.errors import GswitchError, InvalidInput
from gswitch.plugins import get_plugin_manager, get_registry
from gswitch.strategy import AXES

from .ahead import Precompiler, default_compile_ahead
from .build import build_space
from .prebuild import Prebuilder
from .session import _has_set_constraint, _Session, best_feasible
from .space import SearchSpace, TunerError
from .storage import (
    _scrub,
    cache_dir,
    default_storage_url,
    device_key,
    feature_distance,
    graph_features,
    open_storage,
    redact_url,
    study_name,
    tuned_studies,
)
from .worker import Worker, WorkerSetup, load_extra_plugins

__all__ = ["tune", "TuneResult", "SAMPLERS", "best_feasible"]

#: Sampler names accepted by :func:`tune` (``--sampler``).
SAMPLERS = ("tpe", "random", "grid")



@dataclass
class TuneResult:
    """What a tuning session found.

    Attributes
    ----------
    study_name, storage : str
        Where the study lives.
    algorithm, backend, device : str
        The key of the study.
    best_config : dict or None
        Fastest correct configuration in the whole study (``None`` when none yet).
    best_time_s : float or None
        Its median time (device time on the GPU, end to end on the CPU).
    best_trial : int or None
        Its trial number.
    default_time_s : float or None
        Median time of the default configuration, when the study measured it.
    speedup : float or None
        ``default_time_s / best_time_s``.
    counts : dict
        Trials of the study by outcome.
    new_trials : int
        Trials this session finished.
    wall_s : float
        Seconds this session took.
    history : list of dict
        Per finished trial, in the order they finished: ``number``, ``outcome``,
        ``value_s``, ``source`` and ``config`` (the configuration it ran, ``None`` where
        none was built).
    warm_start : list of str
        What was enqueued first (``default``, ``similar:<study>``).
    space : dict
        The search space (:meth:`SearchSpace.describe`).
    reference : str
        Where the expected answer came from.
    timings : dict
        Where this session's wall time went: ``setup_s`` (until the first trial could
        start: features, reference, warm start, the graph file for the workers),
        ``trials_s`` (the trial loop), ``close_s``; ``serial_s`` (the loop's work under
        the session lock: asking, the local search, compiles handed out, recording),
        ``ahead_wait_s`` (trials waiting for their background compile) and per worker
        ``busy_s`` (time its process spent on trials, starts included).

    """

    study_name: str
    storage: str
    algorithm: str
    backend: str
    device: str
    best_config: dict[str, Any] | None = None
    best_time_s: float | None = None
    best_trial: int | None = None
    default_time_s: float | None = None
    speedup: float | None = None
    counts: dict[str, int] = field(default_factory=dict)
    new_trials: int = 0
    wall_s: float = 0.0
    history: list[dict[str, Any]] = field(default_factory=list)
    warm_start: list[str] = field(default_factory=list)
    space: dict[str, Any] = field(default_factory=dict)
    reference: str = ""
    timings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def trials_to_within(self, fraction: float = 0.05) -> int | None:
        """Trials (1-based count, in the order they finished) until one came within
        ``fraction`` of the best time; ``None`` without a best.
        """
        if self.best_time_s is None:
            return None
        for k, h in enumerate(self.history, 1):
            if h["outcome"] == "ok" and h["value_s"] <= self.best_time_s * (1 + fraction):
                return k
        return None


_EPOCH = datetime.datetime(1970, 1, 1)


#: Longest trial limit: the worker's pipe is polled with it, which takes no more than
#: about 24 days (and never infinity).
_MAX_TRIAL_TIMEOUT_S = 1e6


def _optuna() -> Any:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _make_sampler(name: str, space: SearchSpace, seed: int | None) -> Any:
    optuna = _optuna()
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "grid":

        class AskTellGridSampler(optuna.samplers.GridSampler):
            """Grid sampler that marks itself exhausted instead of calling
            ``study.stop()``, which only works inside ``study.optimize``.
            """

            exhausted = False

            def after_trial(self, study: Any, trial: Any, state: Any, values: Any) -> None:
                try:
                    super().after_trial(study, trial, state, values)
                except RuntimeError:
                    self.exhausted = True

        return AskTellGridSampler(space.grid(), seed=seed)
    if name == "tpe":
        kwargs: dict[str, Any] = {"seed": seed, "multivariate": True, "group": True,
                                  "n_startup_trials": 8}
        if not _has_set_constraint():  # Optuna < 5 takes constraints through a function
            kwargs["constraints_func"] = lambda t: (float(t.user_attrs.get("constraint", 0)),)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # multivariate/group are "experimental"
            return optuna.samplers.TPESampler(**kwargs)
    raise InvalidInput(f"--sampler must be one of {', '.join(SAMPLERS)}; got {name!r}")


def _reference(spec: Any, graph: Any, source: int | None, params: dict[str, Any]
               ) -> tuple[np.ndarray, str]:
    """Expected first output: the reference the algorithm declares (``expected=`` on
    ``@gs.algorithm``; the built-in ones are scipy-based, seconds at RMAT-22), else the
    CPU engine with the default configuration.
    """
    from gswitch.runner import run
    from gswitch.verify import expected_answer

    try:
        ref = expected_answer(spec, graph, source=source, params=params)
    except ImportError:  # a reference on an optional package (networkx) not installed
        ref = None
    if ref is not None:
        what = spec.reference or getattr(spec.expected, "__qualname__", "expected")
        return ref, f"the algorithm's declared reference ({what})"
    kwargs = dict(params)
    if source is not None:
        kwargs["source"] = source
    res = run(spec, graph, backend="cpu", config=Config(), **kwargs)
    return np.asarray(res.fields[spec.outputs[0]]), "CPU engine, default configuration"


def _cached_reference(spec: Any, graph: Any, source: int | None, params: dict[str, Any]
                      ) -> tuple[Path, str]:
    key = json.dumps({"a": spec.name, "fp": graph.fingerprint, "s": source, "p": params},
                     sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    folder = cache_dir() / "tuner" / "references"
    path = folder / f"{spec.name}-{digest}.npy"
    note = folder / f"{spec.name}-{digest}.txt"
    if path.is_file() and note.is_file():
        return path, note.read_text().strip()
    folder.mkdir(parents=True, exist_ok=True)
    ref, desc = _reference(spec, graph, source, params)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".npy")
    os.close(fd)
    np.save(tmp, ref, allow_pickle=False)
    os.replace(tmp, path)
    note.write_text(desc + "\n")
    return path, desc


def _default_source(spec: Any, graph: Any, source: int | None) -> int | None:
    if spec.start.kind != "source":
        return None
    if source is not None:
        return int(source)
    if graph.n_nodes == 0:
        raise InvalidInput(f"{spec.name} needs a source node and the graph has none")
    # the node of highest out-degree reaches most of a power-law graph
    return int(np.argmax(graph.out_degree))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _recover_orphans(study: Any, host: str) -> int:
    """Fail the RUNNING trials of dead tuner processes on this host, and enqueue them again."""
    from optuna.trial import TrialState

    n = 0
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        pid = t.user_attrs.get("pid")
        if t.user_attrs.get("host") != host or not isinstance(pid, int) or _pid_alive(pid):
            continue
        try:
            study._storage.set_trial_user_attr(
                t._trial_id, "reason", f"tuner process {pid} ended before the trial finished")
            study.tell(t.number, state=TrialState.FAIL)
        except (ValueError, RuntimeError):
            continue  # another process got there first
        if t.params:
            study.enqueue_trial(dict(t.params), user_attrs={
                "attempt": int(t.user_attrs.get("attempt", 1)), "retry_of": t.number,
                "source": t.user_attrs.get("source", "retry")})
        n += 1
    return n


def _suggested(space: SearchSpace, graph: Any, features: dict[str, float], backend: str
               ) -> list[dict[str, Any]]:
    """The plugins' suggested configurations for each searched variant (the default one
    first), made valid for it (:meth:`SearchSpace.repaired`), that every strategy accepts
    here.
    """
    from gswitch.runner import check_combination

    out = []
    default = {a: DEFAULTS[a] for a in AXES if a in DEFAULTS}
    for variant in space.variants:
        spec = space.specs[variant]
        base = {**default, **spec.config_defaults, "variant": variant}
        for lst in get_plugin_manager().hook.gswitch_suggested_configs(
                algorithm=spec, features=features, backend=backend):
            for values in lst or []:
                given = dict(values)
                # a suggestion that picks an axis brings its own parameters for it
                kept = {k: v for k, v in base.items()
                        if k not in given and k.split(".")[0] not in given}
                repaired = space.repaired({**kept, **given, "variant": variant})
                try:
                    cfg = Config(repaired)
                except GswitchError:
                    continue  # names a strategy or parameter that is not installed
                if check_combination(spec, graph, cfg, backend) is None:
                    out.append(cfg.to_dict())
    return out


def _warm_start(study: Any, space: SearchSpace, storage: Any, spec: Any, graph: Any,
                backend: str, device: str, fingerprint: str, features: dict[str, float],
                k: int) -> list[str]:
    """Enqueue the best of the ``k`` most similar tuned graphs, the default configuration
    of each searched variant, on the GPU the selector's pick and its portfolio
    (:mod:`gswitch.selector`), and the plugins' suggestions, in that order (duplicates
    once); each made valid for its variant first (:meth:`SearchSpace.repaired`).
    """
    enqueued: list[str] = []
    seen: set[str] = set()

    def enqueue(config: dict[str, Any], source: str) -> None:
        values = space.repaired(config)
        if values is None:
            return  # a variant this space does not search (not installed, not pinned)
        try:
            params = space.trial_params(Config(values))
        except GswitchError:
            return  # a strategy of that configuration is no longer installed
        text = json.dumps(params, sort_keys=True)
        if text in seen:
            return
        seen.add(text)
        study.enqueue_trial(params, user_attrs={"source": source})
        enqueued.append(source)

    others = [s for s in tuned_studies(storage, spec.name, device)
              if s["fingerprint"] != fingerprint and s["features"]]
    others.sort(key=lambda s: feature_distance(features, s["features"]))
    for other in others[:k]:
        enqueue(other["best_config"], f"similar:{other['study_name']}")
    # (when a similar graph's best is the default, that trial also times the default)
    # then the default of each other variant (its own config defaults on this backend); the
    # first (the backend's default formulation unless --set variant= pins another) is
    # "default", the configuration gs.run takes
    from gswitch.runner import with_variant_defaults

    variants = list(space.variants)
    # the default on this backend (default_on=) is the one gs.run would run: it comes first
    local = next((v for v in variants if backend in space.specs[v].default_on), None)
    if local is not None:
        variants.remove(local)
        variants.insert(0, local)
    for i, variant in enumerate(variants):
        config = with_variant_defaults(space.specs[variant], {"variant": variant}, backend)
        enqueue(dict(config), "default" if i == 0 else f"default:{variant}")
    if backend == "gpu":  # the shipped selector's pick, then the rest of its portfolio
        from gswitch.selector import load_model, select

        pick = select(spec.name, graph)
        if pick is not None:
            enqueue(with_variant_defaults(space.specs.get(pick.config.get(
                "variant", space.default_variant), spec), pick.config, backend).to_dict(),
                "selector")
            portfolio = (load_model() or {}).get("algorithms", {}).get(spec.name, {})
            for i, config in enumerate(portfolio.get("portfolio", [])):
                variant = config.get("variant", space.default_variant)
                if variant in space.specs:
                    enqueue(with_variant_defaults(space.specs[variant], config,
                                                  backend).to_dict(), f"portfolio:{i}")
    for i, config in enumerate(_suggested(space, graph, features, backend)):
        enqueue(config, f"suggested:{i}")
    return enqueued


def _update_best(study: Any) -> Any | None:
    trials = study.get_trials(deepcopy=False)
    best = best_feasible(trials)
    if best is not None and study.user_attrs.get("best_trial") != best.number:
        study.set_user_attr("best_config", best.user_attrs.get("config"))
        study.set_user_attr("best_time_s", best.value)
        study.set_user_attr("best_trial", best.number)
    return best


def _default_time(trials: list[Any]) -> float | None:
    for t in trials:
        if t.user_attrs.get("source") == "default" and t.state.name == "COMPLETE" \
                and t.user_attrs.get("outcome") == "ok":
            return float(t.value)
    default = Config().to_dict()
    for t in trials:
        if t.user_attrs.get("config") == default and t.user_attrs.get("outcome") == "ok" \
                and t.state.name == "COMPLETE":
            return float(t.value)
    return None


def tune(algorithm: str, graph: Any, *, trials: int = 50, timeout_s: float | None = None,
         storage: str | None = None, devices: list[int] | None = None, sampler: str = "tpe",
         seed: int | None = None, backend: str = "auto", source: int | None = None,
         params: dict[str, Any] | None = None, warmup: int = 1, repeats: int = 3,
         prune_factor: float = 3.0, min_deadline_s: float = 0.05,
         trial_timeout_s: float = 120.0, warm_start: int = 2, refine: float = 0.5,
         name: str | None = None, compile_ahead: int | None = None,
         variant: str | None = None, objective: str = "call",
         progress: Callable[[dict[str, Any]], None] | None = None) -> TuneResult:
    """Search the strategy configurations for the fastest correct one on ``graph``.

    The study is created, or resumed when it exists, in ``storage`` under
    :func:`~gswitch.tuner.storage.study_name`; several processes may run this on the
    same study at once. ``trials`` is the number of finished trials the study should
    reach, so running the same call again after an interruption finishes the job.

    Parameters
    ----------
    algorithm : str
        Registered algorithm name.
    graph : Graph
        Input graph (its fingerprint is the study key).
    trials : int
        Finished trials (complete or pruned) the study should have, at least 1.
    timeout_s : float, optional
        Stop starting new trials after this many seconds.
    storage : str, optional
        Optuna storage URL; default ``$GSWITCH_STORAGE`` or a journal file in the cache.
    devices : list of int, optional
        GPUs to use, one worker each (default: the current one).
    sampler : {"tpe", "random", "grid"}
        Optuna sampler.
    seed : int, optional
        Sampler seed.
    backend : {"auto", "cpu", "gpu"}
        Backend to tune for.
    source : int, optional
        Start node for source-based algorithms (default: the node of highest degree).
    params : dict, optional
        Algorithm parameters.
    warmup, repeats : int
        Untimed runs after the compiling run, then timed runs (median is the value).
    prune_factor : float
        A trial whose run passes this multiple of the best end-to-end time is pruned.
    min_deadline_s : float
        Lower bound of that deadline (timer noise on tiny graphs).
    trial_timeout_s : float
        Hard limit of one trial; a worker that passes it is killed.
    warm_start : int
        Best configurations of this many similar tuned graphs to enqueue after the
        default one (new studies only).
    refine : float
        Share of the trials after the warm start that try a neighbour of the best
        configuration so far (one parameter moved, or one axis switched; see
        :meth:`~gswitch.tuner.space.SearchSpace.neighbours`) instead of the sampler's
        choice; 0 leaves the search to the sampler. Not used with the grid sampler.
    name : str, optional
        Study name instead of :func:`~gswitch.tuner.storage.study_name`; an existing
        study of that name must have the same space version.
    compile_ahead : int, optional
        Background processes that compile the modules of the trials to come (the waiting
        ones, the neighbours of a new best, and as many sampler trials asked ahead);
        default :func:`~gswitch.tuner.ahead.default_compile_ahead` (GPU: one per spare
        core, at most 8 per worker; CPU: 0). 0 compiles each trial in its worker when it
        runs. On the CPU backend nothing compiles, and a number above 0 only asks sampler trials
        ahead.
    variant : str, optional
        Tune this formulation of the algorithm only (``--set variant=NAME``; its own
        study, named ``algorithm[variant]@...``); default: the variant is searched with
        the strategies, over every registered formulation.
    objective : {"call", "device"}
        What a trial's time is: the whole ``gswitch.run`` call from entry to returned
        result (``call``, what a user waits for), or the engine's device time
        (``device``; the CPU engine's own time). Both are recorded on every trial
        (``call_s``, ``device_s``); studies of the two objectives are kept apart (a
        ``call`` study's name ends in `` [call]``).
    progress : callable, optional
        Called after every trial with ``outcome``, ``number``, ``best_s``, ``counts``.

    Returns
    -------
    TuneResult

    Raises
    ------
    InvalidInput
        ``trials`` or ``repeats`` below 1, negative ``warmup``, ``warm_start`` or
        ``compile_ahead``,
        ``refine`` outside [0, 1], a
        ``trial_timeout_s`` or ``timeout_s`` that is not positive, ``prune_factor`` not
        above 1, an unknown sampler or storage URL.
    TunerError
        No valid combination on this backend, a study of another space version, or a
        worker that cannot start.

    """
    t_start = time.perf_counter()
    if not isinstance(trials, int) or trials < 1:
        raise InvalidInput(f"--trials must be at least 1; got {trials}")
    if timeout_s is not None and not timeout_s > 0:
        raise InvalidInput(f"--timeout must be a positive number of seconds; got {timeout_s}")
    if sampler not in SAMPLERS:
        raise InvalidInput(f"--sampler must be one of {', '.join(SAMPLERS)}; got {sampler!r}")
    if not prune_factor > 1:
        raise InvalidInput(f"--prune-factor must be above 1; got {prune_factor}")
    # checked here, before any study is opened: a bad value would otherwise crash or time
    # out every trial and leave those records in the study
    for flag, value, low in (("--repeats", repeats, 1), ("--warmup", warmup, 0),
                             ("--warm-start", warm_start, 0),
                             ("--compile-ahead", 0 if compile_ahead is None else compile_ahead,
                              0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InvalidInput(f"{flag} must be an integer of at least {low}; got {value!r}")
    if isinstance(refine, bool) or not isinstance(refine, (int, float)) \
            or not 0 <= refine <= 1:
        raise InvalidInput(f"--refine must be a fraction from 0 to 1; got {refine!r}")
    if objective not in ("call", "device"):
        raise InvalidInput(f"--objective must be call or device; got {objective!r}")
    if not 0 < trial_timeout_s <= _MAX_TRIAL_TIMEOUT_S:  # also refuses NaN and inf
        raise InvalidInput(f"--trial-timeout must be a positive number of seconds, at most "
                           f"{_MAX_TRIAL_TIMEOUT_S:g}; got {trial_timeout_s}")
    optuna = _optuna()
    load_extra_plugins()
    from gswitch.graph import Graph
    from gswitch.io import save_npz
    from gswitch.runner import prepare, resolve_backend

    if not isinstance(graph, Graph):
        raise InvalidInput(f"graph must be a gswitch.Graph, got {type(graph).__name__}")
    spec = get_registry().algorithm(algorithm)
    backend = resolve_backend(backend)
    params = dict(params or {})
    source = _default_source(spec, graph, source)
    prepared, _ = prepare(spec, graph, source)
    spec.resolve_params(dict(params), prepared.n_nodes)  # refuse bad parameters up front
    space = build_space(spec, prepared, backend,
                        variants=None if variant is None else [variant])
    device = device_key(backend, devices)  # refuses absent or mixed GPUs before any file
    url = redact_url(storage or default_storage_url())  # shown, so never with a password
    store = open_storage(storage)
    # a study pinned to one variant searches another space than the full one: its own name
    pinned = "" if variant is None else f"[{space.variants[0]}]"
    name = name or study_name(spec.name + pinned, graph.fingerprint, device, space.version,
                              objective)
    try:
        study = optuna.create_study(study_name=name, storage=store, direction="minimize",
                                    sampler=_make_sampler(sampler, space, seed),
                                    load_if_exists=True)
    except Exception as exc:  # storage-specific errors (locked, unreachable)
        raise InvalidInput(f"cannot create or load study {name!r} in {url}: "
                           f"{_scrub(str(exc), storage or '')}") from None
    attrs = study.user_attrs
    for key, mine in (("algorithm", spec.name), ("fingerprint", graph.fingerprint),
                      ("device", device), ("variants", list(space.variants))):
        if attrs and attrs.get(key) not in (None, mine):
            raise TunerError(f"study {name!r} was made for {key} {attrs.get(key)!r}, not "
                             f"{mine!r}; nothing was changed, choose another --study")
    if attrs and attrs.get("space_version") not in (None, space.version):
        raise TunerError(f"study {name!r} was made with space version "
                         f"{attrs.get('space_version')} but the installed plugins give "
                         f"{space.version}; nothing was changed, tune into a new study")
    if study.direction != optuna.study.StudyDirection.MINIMIZE:
        raise TunerError(f"study {name!r} in {url} does not minimise time; it is not a "
                         "gswitch study, choose another --storage")
    features = attrs.get("features") or graph_features(graph)
    ref_path, ref_desc = _cached_reference(spec, graph, source, params)
    if not attrs:
        meta = {"gswitch_tuner": 1, "algorithm": spec.name, "fingerprint": graph.fingerprint,
                "graph_name": graph.name or "", "n_nodes": graph.n_nodes,
                "n_edges": graph.n_edges, "features": features, "device": device,
                "backend": backend, "space_version": space.version, "space": space.describe(),
                "variants": list(space.variants),
                "source": source, "params": params, "reference": ref_desc,
                "objective": "median call time (s)" if objective == "call"
                else "median device time (s)" if backend == "gpu"
                else "median engine time (s)",
                "objective_key": objective}
        for k, v in meta.items():
            study.set_user_attr(k, json.loads(json.dumps(v, default=str)))
    host = socket.gethostname()
    _recover_orphans(study, host)
    enqueued: list[str] = []
    if not study.get_trials(deepcopy=False) and not study.user_attrs.get("warm_started"):
        study.set_user_attr("warm_started", True)
        enqueued = _warm_start(study, space, store, spec, prepared, backend, device,
                               graph.fingerprint, features, warm_start)
    workdir = Path(tempfile.mkdtemp(prefix="gswitch-tune-"))
    # the prepared graph (symmetrised where the algorithm needs it): workers skip that work
    graph_path = save_npz(prepared, workdir / "graph.npz")
    # the renumbered copies of a large graph: built beside it while the GPUs run trials
    prebuild = Prebuilder.for_study(prepared, graph_path, space, backend)
    # on the CPU backend, listed devices are simulated: one worker process each
    devs: list[int | None] = list(devices) if devices else [None]
    workers = [Worker(WorkerSetup(str(graph_path), spec.name, backend, str(ref_path), source,
                                  params, d)) for d in devs]
    deadline = time.time() + timeout_s if timeout_s else None
    ahead = Precompiler(spec, prepared.weighted,
                        default_compile_ahead(backend, len(workers)) if compile_ahead is None
                        else compile_ahead, device=devs[0], compiles=backend == "gpu")
    session = _Session(study, space, spec, prepared, backend, trials, deadline, warmup,
                       repeats, prune_factor, min_deadline_s, trial_timeout_s, progress,
                       refine=0.0 if sampler == "grid" else float(refine), seed=seed,
                       ahead=ahead, objective=objective)
    session.n_workers = len(workers)
    t_loop = time.perf_counter()
    t_closing = t_loop
    try:
        if len(workers) == 1:
            session.run(workers[0])
        else:
            threads = [threading.Thread(target=session.run, args=(w,), daemon=True,
                                        name=f"gswitch-tune-{w.label}") for w in workers]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
        t_closing = time.perf_counter()
    except KeyboardInterrupt:
        session.stop = True
        raise
    finally:
        session.cancel_queued()
        if prebuild is not None:
            prebuild.close()
        ahead.close()
        for w in workers:
            w.close()
        shutil.rmtree(workdir, ignore_errors=True)
    if session.error is not None:
        raise session.error
    best = _update_best(study)
    trials_all = study.get_trials(deepcopy=False)
    default_s = _default_time(trials_all)
    # in the order the trials finished: with trials asked ahead (compile_ahead) or several
    # workers, a trial's number says when it was asked, not when its answer was known
    done = sorted((t for t in trials_all if t.state.name in ("COMPLETE", "PRUNED")),
                  key=lambda t: (t.datetime_complete or t.datetime_start or _EPOCH, t.number))
    history = [{"number": t.number, "outcome": t.user_attrs.get("outcome", t.state.name.lower()),
                "value_s": t.value if t.user_attrs.get("outcome") == "ok" else None,
                "source": t.user_attrs.get("source", "sampler"),
                "config": t.user_attrs.get("config")}
               for t in done]
    result = TuneResult(
        study_name=name, storage=url, algorithm=spec.name, backend=backend, device=device,
        best_config=None if best is None else best.user_attrs.get("config"),
        best_time_s=None if best is None else float(best.value),
        best_trial=None if best is None else best.number, default_time_s=default_s,
        speedup=(default_s / best.value) if (best is not None and default_s and best.value)
        else None,
        counts=session.counts(), new_trials=session.new_trials,
        wall_s=time.perf_counter() - t_start, history=history, warm_start=enqueued,
        space=space.describe(), reference=ref_desc,
        timings={"setup_s": t_loop - t_start, "trials_s": t_closing - t_loop,
                 "close_s": time.perf_counter() - t_closing, "serial_s": session.serial_s,
                 "ahead_wait_s": session.ahead_wait_s, "busy_s": dict(session.busy_s)})
    return result

