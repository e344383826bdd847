"""The search space, assembled from the registered strategies and their declared parameters.

Nothing here names a strategy. Each axis becomes a categorical over the registered
strategies that run on the backend and whose ``check()`` accepts the algorithm and
graph; each strategy's declared parameters are sampled only when that strategy is
chosen (a conditional space). Parameter names in a study are ``<axis>`` for the
strategy choice, ``<axis>.<strategy>.<param>`` for a strategy parameter (so two
strategies' parameters of the same name never share a distribution) and the global
key itself (``block_size``) for global keys; :meth:`SearchSpace.config` turns them
back into a :class:`~gswitch.config.Config`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from gswitch.config import DEFAULTS, GLOBAL_KEYS, Config
from gswitch.errors import GswitchError, InvalidConfig
from gswitch.plugins import AXES, get_registry
from gswitch.strategy import Categorical, FloatRange, IntRange, ParamSpace

if TYPE_CHECKING:
    import optuna

    from gswitch.algorithm import AlgorithmSpec
    from gswitch.graph import Graph

__all__ = ["SearchSpace", "TunerError", "build_space", "space_version", "moves",
           "TUNED_GLOBAL_KEYS", "SPACE_SCHEMA"]

#: Version of the way this module maps strategies to study parameters; part of the
#: space version, so a change here starts new studies instead of mixing old ones.
SPACE_SCHEMA = 1

#: Global config keys the tuner searches. They are GPU launch mechanics, so they are
#: searched on the GPU only; ``worklist_capacity`` is a sizing hint, not a choice.
TUNED_GLOBAL_KEYS = ("block_size", "read_before_atomic", "l2_prefetch")


class TunerError(GswitchError):
    """The tuner cannot go on: no valid combination, a study of another space version,
    no tuned configuration where one is required, a worker that cannot start.
    """


def _space_dict(space: ParamSpace) -> dict[str, Any]:
    return {"type": type(space).__name__, **{k: v for k, v in asdict(space).items()}}


def space_version() -> str:
    """Short hash of every registered strategy, its backends and declared parameters.

    Installing, removing or changing a strategy plugin changes it, so a study (whose
    name includes it) never sees a categorical whose choices changed.

    Returns
    -------
    str
        Ten hexadecimal digits.

    """
    reg = get_registry()
    data: dict[str, Any] = {"schema": SPACE_SCHEMA,
                            "globals": {k: _space_dict(v) for k, v in GLOBAL_KEYS.items()}}
    for axis in AXES:
        data[axis] = {
            name: {"backends": list(cls.backends),
                   "params": {p: _space_dict(s) for p, s in sorted(cls.params.items())}}
            for name, cls in sorted(reg.strategies[axis].items())
        }
    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def _param_name(axis: str, strategy: str, param: str) -> str:
    return f"{axis}.{strategy}.{param}"


#: Factors of a move on a log-scaled range, and fractions of the range on a linear one:
#: a small step and a large one each way.
_LOG_FACTORS = (2.0, 8.0)
_LINEAR_FRACTIONS = (0.05, 0.25)


def moves(space: ParamSpace, value: Any) -> list[Any]:
    """Values one move from ``value`` in ``space``: every other choice of a categorical;
    a small and a large step each way on a range (halving and doubling, or dividing and
    multiplying by 8, on a log range; 5% and 25% of the range on a linear one), clipped
    to the range and, for integers, snapped to its step.

    Parameters
    ----------
    space : ParamSpace
        The declared parameter space.
    value : Any
        The current value (inside the space).

    Returns
    -------
    list
        Distinct values other than ``value``, in a fixed order.

    """
    if isinstance(space, Categorical):
        return [c for c in space.choices if c != value]
    if space.log:
        raw = [value * f for f in _LOG_FACTORS] + [value / f for f in _LOG_FACTORS]
    else:
        span = space.high - space.low
        raw = [value + sign * f * span for f in _LINEAR_FRACTIONS for sign in (1, -1)]
    out: list[Any] = []
    for v in raw:
        v = _inside(space, v)
        if v != value and v not in out:
            out.append(v)
    return out


def _inside(space: IntRange | FloatRange, value: float) -> Any:
    """``value`` clipped to the range and, for integers, snapped to its step."""
    v = min(max(value, space.low), space.high)
    if isinstance(space, IntRange):
        step = 1 if space.log else space.step
        v = space.low + step * round((v - space.low) / step)
        if v > space.high:
            v -= step
        v = int(v)
    return v


@dataclass
class SearchSpace:
    """What the tuner searches for one (algorithm, graph, backend).

    Attributes
    ----------
    algorithm : str
        Algorithm name.
    backend : str
        ``cpu`` or ``gpu``.
    axes : dict[str, tuple[str, ...]]
        Searched axes (two or more accepted strategies) and their choices.
    fixed : dict[str, str]
        Axes held at one strategy (the only one accepted, or the default when no
        strategy of the axis runs on this backend).
    params : dict[tuple[str, str], dict[str, ParamSpace]]
        Searched parameters per ``(axis, strategy)``.
    global_params : dict[str, ParamSpace]
        Searched global keys.
    compile_time : list[str]
        Study parameter names whose change recompiles the kernel module.
    excluded : dict[str, str]
        ``"<axis>=<strategy>"`` left out, with the reason.
    version : str
        :func:`space_version` when the space was built.

    """

    algorithm: str
    backend: str
    axes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    fixed: dict[str, str] = field(default_factory=dict)
    params: dict[tuple[str, str], dict[str, ParamSpace]] = field(default_factory=dict)
    global_params: dict[str, ParamSpace] = field(default_factory=dict)
    compile_time: list[str] = field(default_factory=list)
    excluded: dict[str, str] = field(default_factory=dict)
    version: str = ""

    # ------------------------------------------------------------------ sampling
    @staticmethod
    def _suggest(trial: optuna.Trial, name: str, space: ParamSpace) -> Any:
        if isinstance(space, Categorical):
            return trial.suggest_categorical(name, list(space.choices))
        if isinstance(space, IntRange):
            step = 1 if space.log else space.step
            return trial.suggest_int(name, space.low, space.high, step=step, log=space.log)
        if isinstance(space, FloatRange):
            return trial.suggest_float(name, space.low, space.high, log=space.log)
        raise TypeError(f"unknown parameter space {space!r}")

    def suggest(self, trial: optuna.Trial) -> Config:
        """Sample a configuration: each axis, then the chosen strategy's parameters.

        Parameters
        ----------
        trial : optuna.Trial
            The trial to sample with (enqueued values are returned as given).

        Returns
        -------
        Config
            Validated; a value the declared space allows but :class:`Config` refuses
            raises :class:`~gswitch.errors.InvalidConfig`.

        """
        return self._assemble(
            lambda axis: trial.suggest_categorical(axis, list(self.axes[axis])),
            lambda name, space: self._suggest(trial, name, space))

    def config(self, params: dict[str, Any]) -> Config:
        """The configuration that study parameters ``params`` stand for (a parameter
        missing from ``params`` takes its declared default).

        Raises
        ------
        InvalidConfig
            A value the configuration refuses.

        """
        missing = [axis for axis in self.axes if axis not in params]
        if missing:
            raise InvalidConfig(f"study parameters name no {missing[0]} strategy")
        return self._assemble(lambda axis: params[axis],
                              lambda name, space: params.get(name, space.default))

    def _assemble(self, axis_choice: Callable[[str], str],
                  value: Callable[[str, ParamSpace], Any]) -> Config:
        values: dict[str, Any] = dict(self.fixed)
        for axis in AXES:
            if axis in self.axes:
                values[axis] = axis_choice(axis)
            for pname, space in self.params.get((axis, values[axis]), {}).items():
                values[f"{axis}.{pname}"] = value(_param_name(axis, values[axis], pname), space)
        for key, space in self.global_params.items():
            values[key] = value(key, space)
        return Config(values)

    def neighbours(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Study parameters one move away from ``params``, for a local search around the
        best configuration: each parameter of the chosen strategies and each global key
        moved (see :func:`moves`), and each axis switched to another strategy whose
        parameters take their defaults.

        Parameters
        ----------
        params : dict
            Complete study parameters, as a trial of this space has them.

        Returns
        -------
        list of dict
            Distinct parameter sets, none equal to ``params``, in a fixed order.

        """
        out: list[dict[str, Any]] = []
        seen = {json.dumps(params, sort_keys=True, default=str)}

        def add(candidate: dict[str, Any]) -> None:
            text = json.dumps(candidate, sort_keys=True, default=str)
            if text not in seen:
                seen.add(text)
                out.append(candidate)

        spaces = {key: space for key, space in self.global_params.items()}
        for axis in AXES:
            name = params.get(axis, self.fixed.get(axis))
            for pname, space in self.params.get((axis, name), {}).items():
                spaces[_param_name(axis, name, pname)] = space
        for key, space in spaces.items():
            if key in params:
                for value in moves(space, params[key]):
                    add({**params, key: value})
        for axis, choices in self.axes.items():
            current = params.get(axis)
            dropped = {_param_name(axis, current, p) for p in self.params.get((axis, current), {})}
            for other in choices:
                if other == current:
                    continue
                candidate = {k: v for k, v in params.items() if k not in dropped}
                candidate[axis] = other
                for pname, space in self.params.get((axis, other), {}).items():
                    candidate[_param_name(axis, other, pname)] = space.default
                add(candidate)
        return out

    def continued(self, params: dict[str, Any], parent: dict[str, Any]
                  ) -> dict[str, Any] | None:
        """The pattern move of a local search: when ``params`` differs from ``parent`` in
        one numeric parameter, the same step once more from ``params`` (the same factor on
        a log range), clipped to the range and snapped to its step.

        A move that made the configuration faster is likely to pay again: a launch that
        wanted more blocks per multiprocessor usually wants more still. Repeating it
        walks a long way along a range in a few trials where random neighbours take many.

        Parameters
        ----------
        params, parent : dict
            Study parameters of a configuration and of the one it was moved from.

        Returns
        -------
        dict or None
            The parameters one more step along, or ``None`` when the two differ in
            anything but one numeric parameter or the step leaves nothing to move.

        """
        keys = [k for k in set(params) | set(parent) if params.get(k) != parent.get(k)]
        if len(keys) != 1 or keys[0] not in params or keys[0] not in parent:
            return None
        key = keys[0]
        space = self.global_params.get(key)
        if space is None:
            for axis in AXES:
                name = params.get(axis, self.fixed.get(axis))
                for pname, candidate in self.params.get((axis, name), {}).items():
                    if _param_name(axis, name, pname) == key:
                        space = candidate
        if not isinstance(space, (IntRange, FloatRange)):
            return None
        old, new = parent[key], params[key]
        if isinstance(old, bool) or isinstance(new, bool):
            return None
        if space.log:
            if not (old > 0 and new > 0):
                return None
            value = _inside(space, new * (new / old))
        else:
            value = _inside(space, new + (new - old))
        return None if value == new else {**params, key: value}

    def trial_params(self, config: Config | dict[str, Any]) -> dict[str, Any]:
        """Study parameters that reproduce ``config`` (for ``enqueue_trial``).

        Values the space cannot express (a strategy not in this space, a value out of
        its range) are left out, so the sampler fills them in.
        """
        cfg = dict(config)
        out: dict[str, Any] = {}
        for axis in AXES:
            name = cfg.get(axis, self.fixed.get(axis))
            if axis in self.axes:
                if name not in self.axes[axis]:
                    continue
                out[axis] = name
            elif name != self.fixed.get(axis):
                continue
            for pname, space in self.params.get((axis, name), {}).items():
                key = f"{axis}.{pname}"
                if key in cfg:
                    try:
                        out[_param_name(axis, name, pname)] = space.validate(key, cfg[key])
                    except InvalidConfig:
                        pass
        for key, space in self.global_params.items():
            if key in cfg:
                try:
                    out[key] = space.validate(key, cfg[key])
                except InvalidConfig:
                    pass
        return out

    def grid(self) -> dict[str, list[Any]]:
        """Search space for Optuna's ``GridSampler``: every combination of strategies,
        each parameter at its declared default (a grid over continuous parameters would
        be unbounded).
        """
        out: dict[str, list[Any]] = {axis: list(ch) for axis, ch in self.axes.items()}
        for (axis, name), params in self.params.items():
            for pname, space in params.items():
                out[_param_name(axis, name, pname)] = [space.default]
        for key, space in self.global_params.items():
            out[key] = [space.default]
        return out

    @property
    def n_combinations(self) -> int:
        """Number of strategy combinations (ignoring parameters)."""
        n = 1
        for choices in self.axes.values():
            n *= len(choices)
        return n

    def describe(self) -> dict[str, Any]:
        """JSON-friendly description (stored on the study)."""
        return {
            "backend": self.backend,
            "axes": {a: list(c) for a, c in self.axes.items()},
            "fixed": dict(self.fixed),
            "params": {f"{a}.{n}": {p: _space_dict(s) for p, s in ps.items()}
                       for (a, n), ps in self.params.items()},
            "globals": {k: _space_dict(s) for k, s in self.global_params.items()},
            "compile_time": list(self.compile_time),
            "excluded": dict(self.excluded),
            "version": self.version,
        }


def _accepts(spec: AlgorithmSpec, graph: Graph, axis: str, name: str,
             backend: str) -> str | None:
    """``None`` when strategy ``name`` accepts the combination with the other axes at
    their defaults or with one other axis changed; else the first reason given.
    """
    reg = get_registry()
    base = {a: DEFAULTS[a] for a in AXES if a in DEFAULTS}
    tries = [{**base, axis: name}]
    for other in AXES:
        if other == axis:
            continue
        for alt in reg.strategies[other]:
            if alt != base.get(other):
                tries.append({**base, axis: name, other: alt})
    first = None
    for values in tries:
        try:
            cfg = Config(values)
        except GswitchError as exc:
            first = first or str(exc)
            continue
        reason = cfg.strategy(axis).check(spec, graph, cfg, backend)
        if not reason:
            return None
        first = first or reason
    return first or "refused"


def build_space(spec: AlgorithmSpec, graph: Graph, backend: str) -> SearchSpace:
    """Assemble the search space for ``spec`` on ``graph`` and ``backend``.

    Parameters
    ----------
    spec : AlgorithmSpec
        The algorithm.
    graph : Graph
        The input (as the algorithm sees it, e.g. symmetrised).
    backend : {"cpu", "gpu"}
        Strategies whose ``backends`` lack it are left out; on ``cpu`` compile-time
        parameters (they only change generated device code) and GPU launch keys are
        held at their defaults.

    Returns
    -------
    SearchSpace

    Raises
    ------
    TunerError
        When an axis has no strategy that accepts the combination.

    """
    reg = get_registry()
    space = SearchSpace(spec.name, backend, version=space_version())
    for axis in AXES:
        on_backend = {n: c for n, c in sorted(reg.strategies[axis].items())
                      if backend in c.backends}
        if not on_backend:
            # nothing on this axis runs on the backend: the engine ignores it
            space.fixed[axis] = DEFAULTS[axis]
            continue
        accepted = []
        for name in on_backend:
            reason = _accepts(spec, graph, axis, name, backend)
            if reason:
                space.excluded[f"{axis}={name}"] = reason
            else:
                accepted.append(name)
        for name in set(reg.strategies[axis]) - set(on_backend):
            space.excluded[f"{axis}={name}"] = f"does not run on the {backend} backend"
        if not accepted:
            reasons = "; ".join(f"{k}: {v}" for k, v in space.excluded.items()
                                if k.startswith(axis + "="))
            raise TunerError(
                f"no valid combination for {spec.name} on the {backend} backend: every "
                f"{axis} strategy refuses it ({reasons}); try another --backend or install "
                f"a {axis} plugin that supports {spec.name}")
        if len(accepted) == 1:
            space.fixed[axis] = accepted[0]
        else:
            default = DEFAULTS.get(axis)
            # the default first: Optuna's grid and random samplers start nowhere special,
            # but a person reading the study sees the usual choice first
            accepted.sort(key=lambda n: (n != default, n))
            space.axes[axis] = tuple(accepted)
        for name in accepted:
            params = {p: s for p, s in reg.strategy(axis, name).params.items()
                      if backend == "gpu" or not s.compile_time}
            if params:
                space.params[(axis, name)] = params
                space.compile_time += [_param_name(axis, name, p) for p, s in params.items()
                                       if s.compile_time]
    if backend == "gpu":
        space.global_params = {k: GLOBAL_KEYS[k] for k in TUNED_GLOBAL_KEYS if k in GLOBAL_KEYS}
    default = Config({a: DEFAULTS[a] for a in AXES if a in DEFAULTS})
    from gswitch.runner import check_combination

    if not space.axes and not space.global_params and not space.params \
            and check_combination(spec, graph, default, backend):
        raise TunerError(
            f"no valid combination for {spec.name} on the {backend} backend: "
            f"{check_combination(spec, graph, default, backend)}")
    return space
