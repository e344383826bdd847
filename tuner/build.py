"""Assembling the search space of one (algorithm, graph, backend) from the registry:
which strategies of each axis run on the backend and accept the algorithm and graph
under each of its variants, what each variant restricts, and which parameters are
sampled (:class:`~gswitch.tuner.space.SearchSpace` holds the result and maps study
parameters to configurations).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gswitch.config import DEFAULTS, GLOBAL_KEYS, Config
from gswitch.errors import GswitchError, InvalidInput
from gswitch.plugins import get_registry
from gswitch.strategy import AXES

from .space import (
    BOTH_ENGINES_GLOBAL_KEYS,
    TUNED_GLOBAL_KEYS,
    SearchSpace,
    TunerError,
    _family,
    _param_name,
    space_version,
)

if TYPE_CHECKING:
    from gswitch.algorithm import AlgorithmSpec
    from gswitch.graph import Graph

__all__ = ["build_space"]


def _accepts(spec: AlgorithmSpec, graph: Graph, axis: str, name: str,
             backend: str) -> str | None:
    """``None`` when strategy ``name`` accepts the combination with the other axes at
    their defaults (the variant's, else the global ones) or with one other axis changed;
    else the first reason given.
    """
    reg = get_registry()
    base = {a: DEFAULTS[a] for a in AXES if a in DEFAULTS}
    base.update({a: v for a, v in spec.config_defaults.items() if a in AXES})
    base["variant"] = spec.variant
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


def build_space(spec: AlgorithmSpec, graph: Graph, backend: str,
                variants: Sequence[str] | None = None) -> SearchSpace:
    """Assemble the search space for ``spec`` on ``graph`` and ``backend``.

    Parameters
    ----------
    spec : AlgorithmSpec
        The algorithm (its registered variants are searched with it).
    graph : Graph
        The input (as the algorithm sees it, e.g. symmetrised).
    backend : {"cpu", "gpu"}
        Strategies whose ``backends`` lack it are left out; on ``cpu`` compile-time
        parameters (they only change generated device code) and GPU launch keys are
        held at their defaults.
    variants : sequence of str, optional
        Search only these variants of the algorithm (``default`` is the default one);
        default: every registered variant.

    Returns
    -------
    SearchSpace

    Raises
    ------
    TunerError
        When an axis has no strategy that accepts the combination under any variant.
    InvalidInput
        A name in ``variants`` that is not a variant of the algorithm.

    """
    reg = get_registry()
    family = _family(spec)
    default_variant = next(iter(family))
    if variants is not None:
        names = [default_variant if v == "default" else v for v in variants]
        for v in names:
            if v not in family:
                raise InvalidInput(
                    f"{spec.name} has no variant {v!r}; its variants are "
                    f"{', '.join(family)} (--set variant=NAME)")
        family = {v: s for v, s in family.items() if v in names}
    space = SearchSpace(spec.name, backend, version=space_version(),
                        default_variant=default_variant)
    for v, vspec in list(family.items()):  # array code without this backend's side
        off = vspec.off_backend(backend) or (vspec.suited(graph, backend)
                                              if vspec.suited else None)
        if off:
            space.excluded[f"variant={v}"] = off
            del family[v]
    if not family:
        raise TunerError(f"no searched variant of {spec.name} runs on the {backend} "
                         f"backend: {off}")
    # per variant and axis: the strategies it supports and that accept it here
    accepted: dict[str, dict[str, list[str]]] = {v: {} for v in family}
    refusals: dict[str, dict[str, str]] = {}  # "axis=name" -> variant -> reason
    unsampled: list[str] = []
    for axis in AXES:
        on_backend = [n for n, c in sorted(reg.strategies[axis].items())
                      if backend in c.backends]
        for name in sorted(set(reg.strategies[axis]) - set(on_backend)):
            space.excluded[f"{axis}={name}"] = f"does not run on the {backend} backend"
        if backend == "gpu":
            for name in [n for n in on_backend if not reg.strategies[axis][n].validated]:
                on_backend.remove(name)
                space.excluded[f"{axis}={name}"] = (
                    "not validated for the GPU search: its device code had not passed the "
                    "GPU suite when the shipped selector model was trained; "
                    f"choose it explicitly with --set {axis}={name}")
        if not on_backend:
            # nothing on this axis runs on the backend: the engine ignores it
            unsampled.append(axis)
            continue
        for v, vspec in family.items():
            mine = accepted[v][axis] = []
            for name in on_backend:
                # array code runs no strategy: only the axis's default, unchecked
                reason = vspec.unsupported(axis, name, DEFAULTS.get(axis)) or (
                    None if vspec.direct is not None
                    else _accepts(vspec, graph, axis, name, backend))
                if reason:
                    refusals.setdefault(f"{axis}={name}", {})[v] = reason
                else:
                    mine.append(name)
    live = [v for v in family if all(accepted[v].values())]
    for v in family:
        empty = next((a for a, names in accepted[v].items() if not names), None)
        if empty is None:
            continue
        reasons = "; ".join(f"{k}: {by[v]}" for k, by in refusals.items()
                            if k.startswith(empty + "=") and v in by)
        if not live and v == next(iter(family)):
            raise TunerError(
                f"no valid combination for {spec.label if len(family) == 1 else spec.name} "
                f"on the {backend} backend: every {empty} strategy refuses it ({reasons}); "
                f"try another --backend or install a {empty} plugin that supports "
                f"{spec.name}")
        space.excluded[f"variant={v}"] = f"every {empty} strategy refuses it ({reasons})"
    for key, by in refusals.items():
        mine = {v: r for v, r in by.items() if v in live}
        if len(mine) == len(live):
            space.excluded[key] = mine[live[0]]
        else:
            space.excluded.update({f"{key} with variant={v}": r for v, r in mine.items()})
    if len(live) > 1:
        space.axes["variant"] = tuple(live)
    else:
        space.fixed["variant"] = live[0]
    space.direct = tuple(v for v in live if family[v].direct is not None)
    for v in live:
        space.specs[v] = family[v]
        if family[v].config_defaults:
            space.variant_defaults[v] = dict(family[v].config_defaults)
    for axis in AXES:
        if axis in unsampled:
            space.fixed[axis] = DEFAULTS[axis]
            for v in live:  # held at the variant's default, or at one it supports
                vspec = family[v]
                held = vspec.config_defaults.get(axis, DEFAULTS[axis])
                if vspec.unsupported(axis, held, DEFAULTS[axis]):
                    held = vspec.supports[axis][0]
                if held != DEFAULTS[axis]:
                    space.restricted.setdefault(v, {})[axis] = (held,)
            continue
        default = DEFAULTS.get(axis)
        # the default first: Optuna's grid and random samplers start nowhere special,
        # but a person reading the study sees the usual choice first
        order = sorted({n for v in live for n in accepted[v][axis]},
                       key=lambda n: (n != default, n))
        if len(order) == 1:
            space.fixed[axis] = order[0]
        else:
            space.axes[axis] = tuple(order)
        for v in live:
            mine = tuple(n for n in order if n in accepted[v][axis])
            if mine != tuple(order):
                space.restricted.setdefault(v, {})[axis] = mine
        for name in order:
            cls = reg.strategy(axis, name)
            params = {p: s for p, s in cls.params.items()
                      if (backend == "gpu" or not s.compile_time)
                      and not (backend == "gpu" and p in cls.unvalidated_params)}
            for p in cls.unvalidated_params if backend == "gpu" else ():
                space.excluded[f"{axis}={name}: {axis}.{p}"] = (
                    "not validated for the GPU search: its device code had not passed the "
                    "GPU suite when the shipped selector model was trained; kept "
                    f"at its default (set it explicitly with --set {axis}.{p}=VALUE)")
            if params:
                space.params[(axis, name)] = params
                space.compile_time += [_param_name(axis, name, p) for p, s in params.items()
                                       if s.compile_time]
    if "variant" in space.axes:  # sampled first, so shown first
        space.axes = {"variant": space.axes.pop("variant"), **space.axes}
    tuned = TUNED_GLOBAL_KEYS if backend == "gpu" else BOTH_ENGINES_GLOBAL_KEYS
    space.global_params = {k: GLOBAL_KEYS[k] for k in tuned if k in GLOBAL_KEYS}
    from gswitch.runner import check_combination

    if space.n_combinations == 1 and not space.global_params and not space.params:
        default_cfg = space.config({})
        reason = check_combination(space.spec(default_cfg), graph, default_cfg, backend)
        if reason:
            raise TunerError(
                f"no valid combination for {spec.name} on the {backend} backend: {reason}")
    return space
