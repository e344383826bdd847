"""The search space, assembled from the registered strategies and their declared parameters.

Nothing here names a strategy. Each axis becomes a categorical over the registered
strategies that run on the backend and whose ``check()`` accepts the algorithm and
graph; each strategy's declared parameters are sampled only when that strategy is
chosen (a conditional space). Parameter names in a study are ``<axis>`` for the
strategy choice, ``<axis>.<strategy>.<param>`` for a strategy parameter (so two
strategies' parameters of the same name never share a distribution) and the global
key itself (``block_size``) for global keys; :meth:`SearchSpace.config` turns them
back into a :class:`~gswitch.config.Config`.

An algorithm with several formulations (variants, ``gswitch algorithms``) adds the
categorical ``variant``, sampled first. A variant run by array code
(``AlgorithmSpec.direct``) runs no strategy: every axis is held at its default for it,
and only the global keys both engines honour are sampled with it. A variant that
supports only some strategies of an axis (``AlgorithmSpec.supports``) samples that axis
under its own name, ``<axis>|<variant>`` (``driving|hook_compress``), over the
strategies it allows, so each
study parameter keeps one fixed distribution and a strategy a variant does not support
is never sampled with it; where a variant allows one strategy of the axis, the axis is
held there and not sampled at all. Configuration keys the space does not choose take the
variant's own defaults (``AlgorithmSpec.config_defaults``), as :func:`gswitch.run` does.

Two strategy declarations keep out what ``check()`` would always refuse. A strategy's
``held_params(spec)`` names parameters it runs a formulation with at one value only: they
are held there and not sampled under that variant. A driving strategy whose
``pushes_only()`` is true (with the parameters drawn for it) is drawn with directions that
never pull (``may_pull`` false) only: the direction is held when one is left, else sampled
as ``<axis parameter>|pushes_only`` over those. So every study parameter still keeps one
fixed distribution; what was drawn before and is now held is simply not drawn.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from gswitch.config import DEFAULTS, GLOBAL_KEYS, Config
from gswitch.errors import GswitchError, InvalidConfig
from gswitch.plugins import get_registry
from gswitch.strategy import AXES, Categorical, FloatRange, IntRange, ParamSpace

if TYPE_CHECKING:
    import optuna

    from gswitch.algorithm import AlgorithmSpec

__all__ = ["SearchSpace", "TunerError", "space_version", "moves", "variant_spec",
           "TUNED_GLOBAL_KEYS", "SPACE_SCHEMA"]

#: Version of the way this module maps strategies to study parameters; part of the
#: space version, so a change here starts new studies instead of mixing old ones.
SPACE_SCHEMA = 2

#: Global config keys the tuner searches on the GPU. All but ``renumber`` are GPU launch
#: mechanics; ``worklist_capacity`` is a sizing hint, not a choice.
TUNED_GLOBAL_KEYS = ("block_size", "read_before_atomic", "l2_prefetch", "renumber")
#: The global keys both engines honour (searched on the CPU too).
BOTH_ENGINES_GLOBAL_KEYS = ("renumber",)


class TunerError(GswitchError):
    """The tuner cannot go on: no valid combination, a study of another space version,
    no tuned configuration where one is required, a worker that cannot start.
    """


def _space_dict(space: ParamSpace) -> dict[str, Any]:
    return {"type": type(space).__name__, **{k: v for k, v in asdict(space).items()}}


def space_version() -> str:
    """Short hash of every registered strategy, its backends and declared parameters, and
    of every algorithm's variants (which is the default, what each supports, its config
    defaults).

    Installing, removing or changing a strategy plugin, or a formulation of an algorithm,
    changes it, so a study (whose name includes it) never sees a categorical whose
    choices changed.

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
                   "params": {p: _space_dict(s) for p, s in sorted(cls.params.items())},
                   # only when False, so validating a strategy keeps other hashes stable
                   **({} if cls.validated else {"validated": False}),
                   **({"unvalidated_params": list(cls.unvalidated_params)}
                      if cls.unvalidated_params else {})}
            for name, cls in sorted(reg.strategies[axis].items())
        }
    data["variants"] = {
        name: {v: {"default": spec.default_variant, "supports": spec.supports,
                   "defaults": spec.config_defaults,
                   **({} if spec.backends == ("cpu", "gpu")
                      else {"backends": list(spec.backends)})}
               for v, spec in sorted(family.items())}
        for name, family in sorted(reg.variants.items())}
    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def _param_name(axis: str, strategy: str, param: str) -> str:
    return f"{axis}.{strategy}.{param}"


def _axis_param(axis: str, variant: str) -> str:
    """Study parameter of an axis whose choices ``variant`` restricts."""
    return f"{axis}|{variant}"


def _pushing_param(param: str) -> str:
    """Study parameter of a direction drawn from ``param``'s choices that never pull (a
    driving strategy that pushes only chose it).
    """
    return f"{param}|pushes_only"


def variant_spec(spec: AlgorithmSpec, variant: str) -> AlgorithmSpec:
    """The formulation of ``spec``'s algorithm that a config's ``variant`` names (``spec``
    itself for ``default`` or its own variant).
    """
    if variant in ("default", spec.variant):
        return spec
    return get_registry().algorithm(spec.name, variant)


def _family(spec: AlgorithmSpec) -> dict[str, AlgorithmSpec]:
    """Every registered variant of ``spec``'s algorithm, the default first (``spec`` alone
    when it is not registered).
    """
    family = get_registry().variants.get(spec.name, {})
    if family.get(spec.variant) is not spec:
        return {spec.variant: spec}
    return dict(sorted(family.items(), key=lambda kv: (not kv[1].default_variant, kv[0])))


#: Factors of a move on a log-scaled range, and fractions of the range on a linear one:
#: a small step and a large one each way.
_LOG_FACTORS = (2.0, 8.0)
_LINEAR_FRACTIONS = (0.05, 0.25)


def moves(space: ParamSpace, value: Any) -> list[Any]:
    """Values one move from ``value`` in ``space``: every other choice of a categorical;
    a small and a large step each way on a range (halving and doubling, or dividing and
    multiplying by 8, on a log range; 5% and 25% of the range on a linear one), clipped
    to the range and, for integers, snapped to its step; on an integer range with
    ``searched`` values, the next one and the third one each way.

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
    if isinstance(space, IntRange) and space.searched:  # the next searched values each way
        at = space.searched.index(space.nearest_searched(value))
        near = [space.searched[i] for i in (at + 1, at - 1, at + 3, at - 3)
                if 0 <= i < len(space.searched)]
        return [v for i, v in enumerate(near) if v != value and v not in near[:i]]
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


def _searched(space: ParamSpace, value: Any) -> Any:
    """``value`` as the study holds it: the nearest searched value of an integer range
    that lists them (a categorical to the sampler), else itself.
    """
    return space.nearest_searched(value) if isinstance(space, IntRange) else value


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
        Searched axes (two or more accepted strategies) and their choices, and
        ``variant`` with the searched formulations when the algorithm has two or more
        that run here (first, the default one leading).
    fixed : dict[str, str]
        Axes held at one strategy (the only one accepted, or the default when no
        strategy of the axis runs on this backend), and ``variant`` when one formulation
        is searched.
    restricted : dict[str, dict[str, tuple[str, ...]]]
        Per variant, the axes whose choices it narrows (the strategies it supports and
        accepts); sampled as ``<axis>|<variant>``, or held when one choice is left.
    variant_defaults : dict[str, dict[str, Any]]
        Per variant, its config defaults, for the keys the space does not choose.
    default_variant : str
        The variant a config's ``variant: default`` stands for.
    params : dict[tuple[str, str], dict[str, ParamSpace]]
        Searched parameters per ``(axis, strategy)``.
    global_params : dict[str, ParamSpace]
        Searched global keys.
    compile_time : list[str]
        Study parameter names whose change recompiles the kernel module.
    direct : tuple of str
        Variants run by array code (``AlgorithmSpec.direct``): every axis is held at its
        default for them and neither strategy parameters nor GPU launch keys are
        sampled with them (only keys both engines honour, ``renumber``).
    excluded : dict[str, str]
        ``"<axis>=<strategy>"`` left out (``... with variant=<v>`` when only that
        variant refuses it), and ``variant=<v>`` left out, with the reason.
    version : str
        :func:`space_version` when the space was built.
    specs : dict[str, AlgorithmSpec]
        The searched formulations by variant name.

    """

    algorithm: str
    backend: str
    axes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    fixed: dict[str, str] = field(default_factory=dict)
    restricted: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    variant_defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    default_variant: str = "default"
    params: dict[tuple[str, str], dict[str, ParamSpace]] = field(default_factory=dict)
    global_params: dict[str, ParamSpace] = field(default_factory=dict)
    compile_time: list[str] = field(default_factory=list)
    direct: tuple[str, ...] = ()
    excluded: dict[str, str] = field(default_factory=dict)
    version: str = ""
    specs: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ structure
    @property
    def variants(self) -> tuple[str, ...]:
        """The searched variants (one when the variant is held)."""
        if "variant" in self.axes:
            return self.axes["variant"]
        return (self.fixed.get("variant", self.default_variant),)

    def axis_choices(self, axis: str, variant: str, pushes_only: bool = False
                     ) -> tuple[str | None, tuple[str, ...]]:
        """The study parameter that picks ``axis``'s strategy under ``variant`` (``None``
        when the axis is held) and the strategies it picks from; with ``pushes_only``
        (the chosen driving strategy expands along out-edges only), the directions
        among them that never pull, where there are some.
        """
        narrowed = self.restricted.get(variant, {}).get(axis)
        if narrowed is not None:
            param, choices = (_axis_param(axis, variant) if len(narrowed) > 1 else None), \
                narrowed
        elif axis in self.axes:
            param, choices = axis, self.axes[axis]
        else:
            param, choices = None, (self.fixed[axis],)
        if pushes_only and axis == "direction" and param is not None:
            reg = get_registry()
            pushing = tuple(c for c in choices if not reg.strategy(axis, c).may_pull)
            if pushing and pushing != choices:
                return (_pushing_param(param) if len(pushing) > 1 else None), pushing
        return param, choices

    def _pushes_only(self, variant: str, values: dict[str, Any]) -> bool:
        """Whether the driving strategy that config ``values`` pick, with its parameters
        there (else the variant's defaults, else the declared ones), pushes only.
        """
        cls = get_registry().strategies["driving"].get(values.get("driving"))
        if cls is None:  # none chosen yet, or a name the registry lacks
            return False
        name = cls.name
        own = self.variant_defaults.get(variant, {})
        options = {}
        for pname in cls.params:
            key = f"driving.{pname}"
            if key in values:
                options[pname] = values[key]
            elif key in own and own.get("driving", name) == name:
                options[pname] = own[key]
        return cls(options).pushes_only()

    def _config_values(self, variant: str, axis: str, name: str,
                       params: dict[str, Any]) -> dict[str, Any]:
        """The config values of strategy ``name`` on ``axis`` and its parameters that
        study parameters ``params`` give (the held ones at their value).
        """
        out: dict[str, Any] = {axis: name}
        for pname, space in self.strategy_params(variant, axis, name).items():
            key = _param_name(axis, name, pname)
            if key in params:
                out[f"{axis}.{pname}"] = _searched(space, params[key])
        out.update({f"{axis}.{p}": v for p, v in self.held_params(variant, axis, name).items()})
        return out

    def strategy_params(self, variant: str, axis: str, name: str) -> dict[str, ParamSpace]:
        """The searched parameters of strategy ``name`` on ``axis`` under ``variant``
        (none under a variant run by array code: no strategy runs), less those the
        strategy holds for the variant (:meth:`held_params`).
        """
        if variant in self.direct:
            return {}
        params = self.params.get((axis, name), {})
        held = self.held_params(variant, axis, name) if params else {}
        return {p: s for p, s in params.items() if p not in held} if held else params

    def held_params(self, variant: str, axis: str, name: str) -> dict[str, Any]:
        """Parameters of strategy ``name`` on ``axis`` that it runs ``variant`` with at
        one value only (its ``held_params``), with that value: for a staged formulation,
        those of each stage that runs the strategy with the run's parameters (a stage
        that forces another strategy drops them).
        """
        spec = self.specs.get(variant)
        if spec is None or variant in self.direct:
            return {}
        from gswitch.algorithm import AlgorithmSpec

        checked = [st for st in spec.stages if isinstance(st, AlgorithmSpec)
                   and st.stage_config.get(axis, name) == name] if spec.stages else [spec]
        cls = get_registry().strategy(axis, name)
        held: dict[str, Any] = {}
        for st in checked:
            for pname, value in cls.held_params(st).items():
                held.setdefault(pname, value)
        return held

    def globals_of(self, variant: str) -> dict[str, ParamSpace]:
        """The searched global keys under ``variant``: only those both engines honour
        under a variant run by array code (the others are the engine's launch mechanics),
        and none that the variant's ``supports`` holds at one value (``renumber`` for a
        formulation whose answer breaks ties by node id).
        """
        keys = self.global_params if variant not in self.direct else {
            k: v for k, v in self.global_params.items() if k in BOTH_ENGINES_GLOBAL_KEYS}
        held = self._held_globals(variant)
        return {k: v for k, v in keys.items() if k not in held} if held else keys

    def _held_globals(self, variant: str) -> dict[str, Any]:
        """Global keys ``variant`` supports at one value only, with that value."""
        spec = self.spec({"variant": variant})
        return {k: allowed[0] for k, allowed in spec.supports.items()
                if k in GLOBAL_KEYS and len(allowed) == 1}

    def spec(self, config: Config | dict[str, Any]) -> AlgorithmSpec:
        """The formulation ``config``'s ``variant`` runs."""
        variant = config.get("variant", "default")
        return self.specs[self.default_variant if variant == "default" else variant]

    def _variant_of(self, params: dict[str, Any]) -> str:
        if "variant" not in self.axes:
            return self.fixed.get("variant", self.default_variant)
        if "variant" not in params:
            raise InvalidConfig("study parameters name no variant")
        return params["variant"]

    def _decode(self, params: dict[str, Any]) -> tuple[str, dict[str, str]]:
        """The variant and the strategy per axis that study parameters ``params`` pick."""
        variant = self._variant_of(params)
        chosen: dict[str, str] = {}
        values: dict[str, Any] = {}
        for axis in AXES:
            name, choices = self.axis_choices(axis, variant,
                                              self._pushes_only(variant, values))
            if name is not None and name not in params:
                raise InvalidConfig(f"study parameters name no {name} strategy")
            chosen[axis] = params[name] if name is not None else choices[0]
            values.update(self._config_values(variant, axis, chosen[axis], params))
        return variant, chosen

    def _encode(self, variant: str, chosen: dict[str, str], values: dict[str, Any]
                ) -> dict[str, Any]:
        """Study parameters picking ``variant`` and the strategies ``chosen`` (an axis
        that the earlier choices hold or narrow to other strategies takes its first
        choice); parameter values from ``values`` where it has them, else their
        defaults.
        """
        out: dict[str, Any] = {}
        if "variant" in self.axes:
            out["variant"] = variant
        config: dict[str, Any] = {}
        for axis in AXES:
            name, choices = self.axis_choices(axis, variant,
                                              self._pushes_only(variant, config))
            # an axis held, or narrowed by the strategies before it (a driving that only
            # pushes holds the direction), takes its first choice: what a trial of these
            # parameters runs, as _decode reads it, with no parameters of another
            pick = chosen[axis] if name is not None and chosen[axis] in choices \
                else choices[0]
            if name is not None:
                out[name] = pick
            for pname, space in self.strategy_params(variant, axis, pick).items():
                key = _param_name(axis, pick, pname)
                out[key] = values.get(key, space.default)
            config.update(self._config_values(variant, axis, pick, out))
        for key, space in self.globals_of(variant).items():
            out[key] = values.get(key, space.default)
        return out

    def _moved_variant(self, variant: str, chosen: dict[str, str]) -> dict[str, str]:
        """``chosen`` under ``variant``: each strategy it supports kept, the others
        replaced by the variant's default for the axis (else the global default, else its
        first choice).
        """
        out = {}
        for axis in AXES:
            _, choices = self.axis_choices(axis, variant)
            if chosen[axis] in choices:
                out[axis] = chosen[axis]
                continue
            wanted = (self.variant_defaults.get(variant, {}).get(axis), DEFAULTS.get(axis))
            out[axis] = next((w for w in wanted if w in choices), choices[0])
        return out

    # ------------------------------------------------------------------ sampling
    @staticmethod
    def _suggest(trial: optuna.Trial, name: str, space: ParamSpace) -> Any:
        if isinstance(space, Categorical):
            return trial.suggest_categorical(name, list(space.choices))
        if isinstance(space, IntRange) and space.searched:
            return trial.suggest_categorical(name, list(space.searched))
        if isinstance(space, IntRange):
            step = 1 if space.log else space.step
            return trial.suggest_int(name, space.low, space.high, step=step, log=space.log)
        if isinstance(space, FloatRange):
            return trial.suggest_float(name, space.low, space.high, log=space.log)
        raise TypeError(f"unknown parameter space {space!r}")

    def suggest(self, trial: optuna.Trial) -> Config:
        """Sample a configuration: the variant, each axis (over the strategies that
        variant supports), then the chosen strategies' parameters.

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
            lambda name, choices: trial.suggest_categorical(name, list(choices)),
            lambda name, space: self._suggest(trial, name, space))

    def config(self, params: dict[str, Any]) -> Config:
        """The configuration that study parameters ``params`` stand for (a parameter
        missing from ``params`` takes its declared default).

        Raises
        ------
        InvalidConfig
            A value the configuration refuses, a missing variant or strategy choice, or
            a strategy its variant does not allow.

        """
        def choose(name: str, choices: tuple[str, ...]) -> str:
            if name not in params:
                raise InvalidConfig(f"study parameters name no {name} strategy")
            if params[name] not in choices:
                raise InvalidConfig(f"study parameter {name}={params[name]} is not one of "
                                    f"{', '.join(choices)}")
            return params[name]

        return self._assemble(choose, lambda name, space: _searched(
            space, params[name]) if name in params else space.default)

    def _assemble(self, choose: Callable[[str, tuple[str, ...]], str],
                  value: Callable[[str, ParamSpace], Any]) -> Config:
        values: dict[str, Any] = {}
        variant = choose("variant", self.axes["variant"]) if "variant" in self.axes \
            else self.fixed.get("variant", self.default_variant)
        values["variant"] = variant
        for axis in AXES:  # driving before direction: its pushes_only narrows direction
            name, choices = self.axis_choices(axis, variant,
                                              self._pushes_only(variant, values))
            values[axis] = choose(name, choices) if name is not None else choices[0]
            for pname, space in self.strategy_params(variant, axis, values[axis]).items():
                values[f"{axis}.{pname}"] = value(_param_name(axis, values[axis], pname), space)
            values.update({f"{axis}.{p}": v for p, v in
                           self.held_params(variant, axis, values[axis]).items()})
        for key, space in self.globals_of(variant).items():
            values[key] = value(key, space)
        values.update(self._held_globals(variant))
        values.update(self._unchosen_defaults(variant, values))
        return Config(values)

    def _unchosen_defaults(self, variant: str, values: dict[str, Any]) -> dict[str, Any]:
        """The variant's config defaults for the keys the space leaves to defaults (global
        keys it does not search, parameters of a chosen strategy it does not search), as
        :func:`gswitch.runner.with_variant_defaults` gives them to a run.
        """
        own = self.variant_defaults.get(variant, {})
        reg = get_registry()
        out = {}
        for key, v in own.items():
            if key in values:
                continue  # chosen by the space
            axis, dot, pname = key.partition(".")
            if not dot:
                if key in GLOBAL_KEYS:
                    out[key] = v
            elif axis in AXES and own.get(axis, values[axis]) == values[axis] \
                    and pname in reg.strategy(axis, values[axis]).params:
                out[key] = v
        return out

    def neighbours(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Study parameters one move away from ``params``, for a local search around the
        best configuration: each parameter of the chosen strategies and each global key
        moved (see :func:`moves`), each axis switched to another strategy whose
        parameters take their defaults, and the variant switched to each other one (the
        strategies it supports kept, each other replaced by its default for the axis).

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

        variant, chosen = self._decode(params)
        spaces = dict(self.globals_of(variant))
        for axis in AXES:
            for pname, space in self.strategy_params(variant, axis, chosen[axis]).items():
                spaces[_param_name(axis, chosen[axis], pname)] = space
        for key, space in spaces.items():
            if key in params:
                for value in moves(space, params[key]):
                    # re-encoded: a driving parameter may decide whether direction is drawn
                    add(self._encode(variant, chosen, {**params, key: value}))
        config: dict[str, Any] = {}
        for axis in AXES:
            name, choices = self.axis_choices(axis, variant, self._pushes_only(variant, config))
            config.update(self._config_values(variant, axis, chosen[axis], params))
            if name is None:
                continue
            for other in choices:
                if other != chosen[axis]:
                    add(self._encode(variant, {**chosen, axis: other}, params))
        for other in self.axes.get("variant", ()):
            if other != variant:
                add(self._encode(other, self._moved_variant(other, chosen), params))
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
        chosen = None
        if space is None:
            try:
                variant, chosen = self._decode(params)
            except InvalidConfig:
                return None
            for axis in AXES:
                for pname, candidate in self.strategy_params(variant, axis,
                                                             chosen[axis]).items():
                    if _param_name(axis, chosen[axis], pname) == key:
                        space = candidate
        if not isinstance(space, (IntRange, FloatRange)):
            return None
        old, new = parent[key], params[key]
        if isinstance(old, bool) or isinstance(new, bool):
            return None
        if isinstance(space, IntRange) and space.searched:  # the next searched value
            at = space.searched.index(space.nearest_searched(new))
            at += 1 if new > old else -1
            value = space.searched[at] if 0 <= at < len(space.searched) else new
        elif space.log:
            if not (old > 0 and new > 0):
                return None
            value = _inside(space, new * (new / old))
        else:
            value = _inside(space, new + (new - old))
        if value == new:
            return None
        if chosen is None:
            return {**params, key: value}
        # re-encoded: a driving parameter may decide whether direction is drawn
        return self._encode(variant, chosen, {**params, key: value})

    def trial_params(self, config: Config | dict[str, Any]) -> dict[str, Any]:
        """Study parameters that reproduce ``config`` (for ``enqueue_trial``).

        Values the space cannot express (a variant or strategy not in this space, a
        strategy its variant does not allow, a value out of its range) are left out, so
        the sampler fills them in; a config of a variant the space does not search gives
        its global keys only.
        """
        cfg = dict(config)
        out: dict[str, Any] = {}
        variant = cfg.get("variant", "default")
        variant = self.default_variant if variant == "default" else variant
        if variant in self.variants:
            if "variant" in self.axes:
                out["variant"] = variant
            for axis in AXES:
                param, choices = self.axis_choices(axis, variant,
                                                   self._pushes_only(variant, cfg))
                name = cfg.get(axis, choices[0] if param is None else None)
                if name not in choices:
                    continue
                if param is not None:
                    out[param] = name
                for pname, space in self.strategy_params(variant, axis, name).items():
                    key = f"{axis}.{pname}"
                    if key in cfg:
                        try:
                            out[_param_name(axis, name, pname)] = _searched(
                                space, space.validate(key, cfg[key]))
                        except InvalidConfig:
                            pass
        globals_here = self.globals_of(variant) if variant in self.variants \
            else self.global_params
        for key, space in globals_here.items():
            if key in cfg:
                try:
                    out[key] = _searched(space, space.validate(key, cfg[key]))
                except InvalidConfig:
                    pass
        return out

    def repaired(self, config: dict[str, Any]) -> dict[str, Any] | None:
        """``config`` made valid for its variant: a strategy the variant does not support
        is replaced by the variant's default for that axis (else the global default,
        else its first supported strategy), and that strategy's parameters dropped;
        ``None`` when ``config`` names a variant this space does not search.
        """
        values = dict(config)
        variant = values.get("variant", "default")
        variant = self.default_variant if variant == "default" else variant
        if variant not in self.variants:
            return None
        spec = self.specs.get(variant)
        if spec is None:
            return values
        values["variant"] = variant
        own = self.variant_defaults.get(variant, {})
        for axis in AXES:
            current = values.get(axis, DEFAULTS.get(axis))
            if current is None or not spec.unsupported(axis, current, DEFAULTS.get(axis)):
                continue
            # array code (``direct``) supports the axis's default only
            allowed = spec.supports.get(axis) or (DEFAULTS[axis],)
            values = {k: v for k, v in values.items() if not k.startswith(f"{axis}.")}
            values[axis] = next((w for w in (own.get(axis), DEFAULTS.get(axis))
                                 if w in allowed), allowed[0])
        return values

    def grid(self) -> dict[str, list[Any]]:
        """Search space for Optuna's ``GridSampler``: every variant and combination of
        strategies, each parameter at its declared default (a grid over continuous
        parameters would be unbounded).
        """
        out: dict[str, list[Any]] = {axis: list(ch) for axis, ch in self.axes.items()}
        for variant, narrowed in self.restricted.items():
            for axis, choices in narrowed.items():
                if len(choices) > 1:
                    out[_axis_param(axis, variant)] = list(choices)
        for variant in self.variants:
            name, choices = self.axis_choices("direction", variant, pushes_only=True)
            if name is not None and name not in out:
                out[name] = list(choices)
        for (axis, name), params in self.params.items():
            for pname, space in params.items():
                out[_param_name(axis, name, pname)] = [space.default]
        for key, space in self.global_params.items():
            out[key] = [space.default]
        return out

    @property
    def n_combinations(self) -> int:
        """Number of (variant, strategy combination) pairs (ignoring parameters: each
        driving strategy at its declared ones).
        """
        total = 0
        for v in self.variants:
            others = math.prod(len(self.axis_choices(axis, v)[1]) for axis in AXES
                               if axis not in ("driving", "direction"))
            pairs = sum(len(self.axis_choices(
                "direction", v, self._pushes_only(v, {"driving": d}))[1])
                for d in self.axis_choices("driving", v)[1])
            total += others * pairs
        return total

    def describe(self) -> dict[str, Any]:
        """JSON-friendly description (stored on the study)."""
        return {
            "backend": self.backend,
            "axes": {a: list(c) for a, c in self.axes.items()},
            "fixed": dict(self.fixed),
            "restricted": {v: {a: list(c) for a, c in axes.items()}
                           for v, axes in self.restricted.items()},
            "params": {f"{a}.{n}": {p: _space_dict(s) for p, s in ps.items()}
                       for (a, n), ps in self.params.items()},
            "globals": {k: _space_dict(s) for k, s in self.global_params.items()},
            "compile_time": list(self.compile_time),
            "direct": list(self.direct),
            "excluded": dict(self.excluded),
            "version": self.version,
        }
