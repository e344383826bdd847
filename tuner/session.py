"""One tuning session's loop over a study: the threads of its workers (one per device)
ask Optuna for trials, hand them to the workers, run the local search and the compiles
ahead, and record every answer (:func:`gswitch.tuner.study.tune` makes and drives it).
"""

from __future__ import annotations

import json
import os
import random
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from gswitch.config import Config
from gswitch.errors import GswitchError

from .ahead import MAX_DEFAULT_PROCESSES, Precompiler
from .space import SearchSpace, TunerError
from .worker import DETERMINISTIC, TRANSIENT, Worker

__all__ = ["best_feasible"]

#: Neighbours of a new best configuration handed to the compile processes at most.
_NEIGHBOURS_AHEAD = 64


def _has_set_constraint() -> bool:
    from optuna.trial import Trial

    return hasattr(Trial, "set_constraint")


def best_feasible(trials: list[Any]) -> Any | None:
    """The completed trial with a correct answer and the lowest time, or ``None``."""
    ok = [t for t in trials if t.state.name == "COMPLETE" and t.user_attrs.get("outcome") == "ok"
          and t.value is not None]
    return min(ok, key=lambda t: (t.value, t.number)) if ok else None


class _Session:
    """State shared by the threads of one :func:`tune` call (one per worker)."""

    def __init__(self, study: Any, space: SearchSpace, spec: Any, graph: Any, backend: str,
                 trials: int, deadline: float | None, warmup: int, repeats: int,
                 prune_factor: float, min_deadline_s: float, trial_timeout_s: float,
                 progress: Callable[[dict[str, Any]], None] | None, refine: float = 0.0,
                 seed: int | None = None, ahead: Precompiler | None = None,
                 objective: str = "call") -> None:
        self.study = study
        self.objective = objective
        self.space = space
        self.spec = spec
        self.graph = graph
        self.backend = backend
        self.trials = trials
        self.deadline = deadline
        self.warmup = warmup
        self.repeats = repeats
        self.prune_factor = prune_factor
        self.min_deadline_s = min_deadline_s
        self.trial_timeout_s = trial_timeout_s
        self.progress = progress
        self.refine = refine
        self.enqueued: set[str] = set()  # neighbours this session enqueued
        self.lock = threading.RLock()
        self.known: dict[str, dict[str, Any]] = {}
        self.new_trials = 0
        self.stop = False
        self.host = socket.gethostname()
        self.pid = os.getpid()
        # mixed with the process, so that processes sharing a study with one --seed do not
        # pick the same neighbours
        self.rng = random.Random(f"{seed}:{self.host}:{self.pid}")
        self.error: BaseException | None = None
        #: workers sharing the study, and those whose process could not be restarted
        self.n_workers = 1
        self.broken: list[Worker] = []
        #: per worker label: finished trials and the last outcome (for the progress bars)
        self.by_worker: dict[str, dict[str, Any]] = {}
        #: seconds: under the lock in the loop, waiting for compiles, per worker on trials
        self.serial_s = 0.0
        self.ahead_wait_s = 0.0
        self.busy_s: dict[str, float] = {}
        #: compile processes; sampler trials asked ahead of their turn wait in ``queued``
        #: (trial, config) while their modules compile
        self.ahead = ahead if ahead is not None else Precompiler(spec, False, 0)
        self.queued: list[tuple[Any, Config]] = []
        self._prefetched_best: int | None = None
        existing = study.get_trials(deepcopy=False)
        for t in existing:
            self._remember(t)
        # the local-search share counts this session's trials only: a resumed study (or
        # one tuned with another --refine) gets no burst of local search
        self.first_trial = max((t.number for t in existing), default=-1) + 1

    # ------------------------------------------------------------ bookkeeping
    def _remember(self, t: Any) -> None:
        outcome = t.user_attrs.get("outcome")
        cfg = t.user_attrs.get("config")
        if cfg and t.state.name == "COMPLETE" and (outcome == "ok" or outcome in DETERMINISTIC):
            key = json.dumps(cfg, sort_keys=True)
            self.known.setdefault(key, {"number": t.number, "value": t.value,
                                        "attrs": dict(t.user_attrs)})

    def finished(self) -> list[Any]:
        states = self._states(("COMPLETE", "PRUNED"))
        return self.study.get_trials(deepcopy=False, states=states)

    @staticmethod
    def _states(names: tuple[str, ...]) -> tuple[Any, ...]:
        from optuna.trial import TrialState

        return tuple(TrialState[n] for n in names)

    def limit(self) -> float | None:
        """Engine deadline of each run: ``prune_factor`` x the best end-to-end time."""
        best = best_feasible(self.finished())
        if best is None:
            return None
        e2e = float(best.user_attrs.get("e2e_s", best.value))
        return max(self.prune_factor * e2e, self.min_deadline_s)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.study.get_trials(deepcopy=False):
            if t.state.name == "RUNNING":
                key = "running"
            elif t.state.name == "WAITING":
                key = "waiting"
            else:
                key = t.user_attrs.get("outcome", t.state.name.lower())
                if t.state.name == "FAIL" and key != "cancelled":
                    key = "failed"
            out[key] = out.get(key, 0) + 1
        return out

    # ------------------------------------------------------------ the loop
    def run(self, worker: Worker) -> None:
        try:
            while True:
                with self.lock:
                    t_locked = time.perf_counter()
                    if not self._may_continue():
                        return
                    self._refine()
                    config = None
                    if self.queued and not self._waiting():
                        trial, config = self.queued.pop(0)  # asked ahead, compiled ahead
                    else:
                        trial = self._ask()
                    self._label(trial, worker)
                    self._compile_ahead()
                    # the default runs to the end (within the trial limit) even after a
                    # similar graph's best: the study reports its speedup over it
                    limit = None if trial.user_attrs.get("source") == "default" \
                        else self.limit()
                    self.serial_s += time.perf_counter() - t_locked
                self._one(trial, worker, limit, config)
                if worker.broken:
                    with self.lock:
                        # its trial failed and waits for another worker to retry it
                        self.broken.append(worker)
                        if len(self.broken) >= self.n_workers:
                            self.error = self.error or TunerError(
                                f"no worker could run trials: {worker.broken}")
                            self.stop = True
                    return
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            with self.lock:
                self.error = self.error or exc
                self.stop = True

    def _label(self, trial: Any, worker: Worker) -> None:
        """Record where a trial runs: the worker's slot and, on the GPU, its device."""
        if self.n_workers > 1 or worker.setup.device is not None:
            trial.set_user_attr("worker", worker.label)
        if worker.setup.device is not None and self.backend == "gpu":
            trial.set_user_attr("gpu", worker.setup.device)

    def _may_continue(self) -> bool:
        if self.stop or len(self.finished()) >= self.trials:
            return False
        if getattr(self.study.sampler, "exhausted", False):
            return False  # every grid point has been tried
        return self.deadline is None or time.time() < self.deadline

    def _waiting(self) -> list[Any]:
        return self.study.get_trials(deepcopy=False, states=self._states(("WAITING",)))

    def _ask(self) -> Any:
        trial = self.study.ask()
        trial.set_user_attr("host", self.host)
        trial.set_user_attr("pid", self.pid)
        return trial

    def _compile_ahead(self) -> None:
        """Hand the compile processes what runs next: the waiting (enqueued) trials, the
        neighbours of a new best (the local search's candidates) and, while no enqueued
        trial waits, sampler trials asked ahead of their turn (as a parallel worker
        would ask them).
        """
        if not self.ahead.active:
            return
        waiting = self._waiting()
        for t in waiting:
            try:
                self.ahead.submit(self.space.config(dict(t.system_attrs.get("fixed_params")
                                                         or {})))
            except GswitchError:
                continue
        best = best_feasible(self.finished()) if self.refine > 0 else None
        if best is not None and best.number != self._prefetched_best:
            self._prefetched_best = best.number
            from gswitch.runner import check_combination

            for params in self.space.neighbours(dict(best.params))[:_NEIGHBOURS_AHEAD]:
                try:
                    cfg = self.space.config(params)
                except GswitchError:
                    continue
                if cfg.key() not in self.known and \
                        not check_combination(self.space.spec(cfg), self.graph, cfg, self.backend):
                    self.ahead.submit(cfg)
        if waiting:
            return
        running = sum(t.state.name == "RUNNING" for t in self.study.get_trials(deepcopy=False))
        # at most MAX_DEFAULT_PROCESSES asked ahead, however many compile processes: a
        # trial asked ahead is sampled before the results of those before it are known
        while len(self.queued) < min(self.ahead.processes, MAX_DEFAULT_PROCESSES) and \
                len(self.finished()) + running < self.trials:
            trial = self._ask()
            running += 1
            try:
                config = self.space.suggest(trial)
            except GswitchError as exc:
                self._tell(trial, None, {"outcome": "refused", "reason": str(exc)},
                           time.perf_counter())
                continue
            self.queued.append((trial, config))
            self.ahead.submit(config)

    def cancel_queued(self) -> None:
        """Close the sampler trials asked ahead that never ran (FAIL, outcome
        ``cancelled``): the session ended first. They were the sampler's picks only, so
        nothing is lost; a resumed study asks the sampler again.
        """
        from optuna.trial import TrialState

        with self.lock:
            queued, self.queued = self.queued, []
            for trial, _config in queued:
                try:
                    trial.set_user_attr("outcome", "cancelled")
                    trial.set_user_attr("reason", "asked ahead; the session ended before it ran")
                    self.study.tell(trial, state=TrialState.FAIL)
                except (ValueError, RuntimeError):
                    continue

    def _refine(self) -> None:
        """Enqueue one untried neighbour of the best configuration when a local-search
        trial is due: ``refine`` of the trials after the warm start are these, the rest
        the sampler's. Nothing is enqueued while enqueued trials wait, before a correct
        trial exists, or once every neighbour of the best has been tried.
        """
        if self.refine <= 0:
            return
        trials = self.study.get_trials(deepcopy=False)
        if any(t.state.name == "WAITING" for t in trials):
            return  # the warm start and retries go first
        mine = [t for t in trials if t.number >= self.first_trial]
        local = sum(t.user_attrs.get("source") == "refine" for t in mine)
        sampled = sum(t.user_attrs.get("source", "sampler") == "sampler" for t in mine)
        if local >= self.refine * (local + sampled + 1):
            return
        best = best_feasible(trials)
        if best is None:
            return
        from gswitch.runner import check_combination

        # a trial just asked has no params yet: its enqueued values are in fixed_params
        tried = {json.dumps(t.params or t.system_attrs.get("fixed_params") or {},
                            sort_keys=True, default=str) for t in trials} | self.enqueued
        candidates = self.space.neighbours(dict(best.params))
        self.rng.shuffle(candidates)
        parent = next((t for t in trials if t.number == best.user_attrs.get("refine_of")), None)
        pattern = None
        if best.user_attrs.get("source") == "refine" and parent is not None:
            # the move that made the best: take it once more before any random neighbour
            pattern = self.space.continued(dict(best.params), dict(parent.params))
            if pattern is not None:
                candidates.insert(0, pattern)
        for params in candidates:
            text = json.dumps(params, sort_keys=True, default=str)
            if text in tried:
                continue
            try:
                cfg = self.space.config(params)
            except GswitchError:
                continue  # a move the configuration refuses
            if cfg.key() in self.known:
                continue  # the same configuration under other study parameters
            if check_combination(self.space.spec(cfg), self.graph, cfg, self.backend):
                continue  # a strategy refuses it: no trial spent on that
            self.enqueued.add(text)
            attrs: dict[str, Any] = {"source": "refine", "refine_of": best.number}
            if params is pattern:
                attrs["pattern"] = True
            self.study.enqueue_trial(params, user_attrs=attrs)
            return

    def _one(self, trial: Any, worker: Worker, limit: float | None,
             config: Config | None = None) -> None:
        t0 = time.perf_counter()
        if config is None:
            try:
                config = self.space.suggest(trial)
            except GswitchError as exc:
                self._tell(trial, None, {"outcome": "refused", "reason": str(exc)}, t0,
                           worker)
                return
        key = config.key()
        from gswitch.runner import check_combination

        seen = self.known.get(key)
        if seen is not None:
            attrs = {k: v for k, v in seen["attrs"].items() if k not in ("host", "pid", "source",
                                                                        "attempt", "retry_of")}
            attrs["same_as"] = seen["number"]
            self._tell(trial, config, {**attrs, "value_s": seen["value"], "reused": True}, t0,
                       worker)
            return
        reason = check_combination(self.space.spec(config), self.graph, config,
                                   self.backend)
        if reason:
            self._tell(trial, config, {"outcome": "refused", "reason": reason}, t0, worker)
            return
        request = {"op": "trial", "config": config.to_dict(), "warmup": self.warmup,
                   "repeats": self.repeats, "deadline_s": limit, "objective": self.objective}
        t_wait = time.perf_counter()
        ahead_s = self.ahead.wait(config, self.trial_timeout_s)
        waited = time.perf_counter() - t_wait
        t_run = time.perf_counter()
        try:
            answer = worker.run_trial(request, self.trial_timeout_s)
        except TunerError as exc:  # its process could not (re)start: retried elsewhere
            worker.broken = str(exc)
            answer = {"outcome": "crashed", "reason": f"worker could not start: {exc}"}
        with self.lock:
            self.ahead_wait_s += waited
            self.busy_s[worker.label] = (self.busy_s.get(worker.label, 0.0)
                                         + time.perf_counter() - t_run)
        if ahead_s is not None:
            # compiled in a background process: what the worker measured is the load from
            # the kernel cache
            answer["ahead_compile_s"] = ahead_s
            answer["ahead_wait_s"] = waited
        if answer.get("outcome") == "pruned" and limit is not None:
            answer["limit_s"] = limit
        self._tell(trial, config, answer, t0, worker)

    def _tell(self, trial: Any, config: Config | None, answer: dict[str, Any],
              t0: float, worker: Worker | None = None) -> None:

        outcome = answer.get("outcome", "error")
        attempt = int(trial.user_attrs.get("attempt", 1))
        if outcome in TRANSIENT and attempt >= 2:
            answer = {**answer, "reason": f"{answer.get('reason')} (again, on retry)"}
            transient = False
        else:
            transient = outcome in TRANSIENT
        attrs = {k: v for k, v in answer.items() if k != "outcome"}
        attrs["outcome"] = outcome
        if config is not None:
            attrs["config"] = config.to_dict()
        attrs["wall_s"] = time.perf_counter() - t0
        with self.lock:
            t_locked = time.perf_counter()
            try:
                self._tell_locked(trial, attrs, answer, outcome, attempt, transient, worker)
            finally:
                self.serial_s += time.perf_counter() - t_locked

    def _tell_locked(self, trial: Any, attrs: dict[str, Any], answer: dict[str, Any],
                     outcome: str, attempt: int, transient: bool, worker: Worker | None
                     ) -> None:
        from optuna.exceptions import UpdateFinishedTrialError

        # SQLite has no row locks: two processes can pop the same enqueued trial; the
        # first to finish records it, and the other's identical run is dropped, whether
        # it finds the trial finished before recording or while (Optuna refuses a
        # finished trial's attributes with UpdateFinishedTrialError and its second
        # ``tell`` with ValueError)
        if self._finished_elsewhere(trial):
            return
        try:
            self._record(trial, attrs, answer, outcome, attempt, transient)
        except (UpdateFinishedTrialError, ValueError):
            if not self._finished_elsewhere(trial):
                raise
            return
        self.new_trials += 1
        label = None if worker is None else worker.label
        if label is not None:
            mine = self.by_worker.setdefault(label, {"trials": 0, "last": None})
            mine["trials"] += 1
            mine["last"] = outcome
        if self.progress is not None:
            best = best_feasible(self.finished())
            self.progress({"outcome": outcome, "number": trial.number,
                           "best_s": None if best is None else best.value,
                           "counts": self.counts(), "worker": label,
                           "workers": {k: dict(v) for k, v in self.by_worker.items()}})

    def _finished_elsewhere(self, trial: Any) -> bool:
        """Whether another process already finished this trial (see :meth:`_tell`)."""
        return self.study._storage.get_trial(trial._trial_id).state.is_finished()

    def _record(self, trial: Any, attrs: dict[str, Any], answer: dict[str, Any],
                outcome: str, attempt: int, transient: bool) -> None:
        from optuna.trial import TrialState

        for k, v in attrs.items():
            if k in ("value_s",) and outcome != "ok":
                continue
            trial.set_user_attr(k, v)
        feasible = outcome == "ok"
        if outcome == "pruned":
            trial.report(float(answer.get("elapsed_s", 0.0)), step=0)
            self.study.tell(trial, state=TrialState.PRUNED)
        elif transient:
            self.study.tell(trial, state=TrialState.FAIL)
            self.study.enqueue_trial(dict(trial.params), user_attrs={
                "attempt": attempt + 1, "retry_of": trial.number,
                "source": trial.user_attrs.get("source", "retry")})
        else:
            constraint = 0.0 if feasible else 1.0
            trial.set_user_attr("constraint", constraint)
            if _has_set_constraint():
                trial.set_constraint("correct", constraint)
            value = float(answer["value_s"]) if feasible else float(self.trial_timeout_s)
            self.study.tell(trial, value)
            frozen = self.study._storage.get_trial(trial._trial_id)
            self._remember(frozen)
