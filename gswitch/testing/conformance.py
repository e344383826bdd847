"""Conformance checks every strategy must pass; third-party plugins run the same ones.

Use from a plugin's own test-suite::

    from gswitch.testing.conformance import strategy_problems
    def test_my_strategy():
        assert strategy_problems(MyStrategy) == []
"""

from __future__ import annotations

import re

from ..algorithm import AlgorithmSpec
from ..config import Config
from ..plugins import get_registry
from ..strategy import (
    AXES,
    Categorical,
    DirectionStrategy,
    DrivingStrategy,
    FloatRange,
    IntRange,
    LaunchStrategy,
    LoadBalanceStrategy,
    Strategy,
    WorklistStrategy,
)

__all__ = ["strategy_problems", "compile_problems", "AXIS_BASES", "CUDA_SYMBOLS"]

AXIS_BASES = {
    "worklist": WorklistStrategy,
    "load_balance": LoadBalanceStrategy,
    "driving": DrivingStrategy,
    "direction": DirectionStrategy,
    "launch": LaunchStrategy,
}

#: Device symbols each axis' fragment must define (see the base class contracts).
CUDA_SYMBOLS = {
    "worklist": ["gs_wl_push", "gs_wl_size", "gs_wl_item"],
    "load_balance": ["gs_lb_expand"],
    "driving": ["gs_decide"],
    "direction": ["gs_dir_decide"],
    "launch": [],
}

_SOURCE = re.compile(r"(19|20)\d\d|et al\.|§|IrGL|Gunrock|SC \d|PPoPP|IPDPS|OOPSLA")


def strategy_problems(cls: type[Strategy],
                      algorithms: list[AlgorithmSpec] | None = None) -> list[str]:
    """Every way ``cls`` breaks the strategy contract; an empty list means it conforms."""
    problems: list[str] = []
    if cls.axis not in AXES:
        return [f"axis {cls.axis!r} is not one of {', '.join(AXES)}"]
    if not issubclass(cls, AXIS_BASES[cls.axis]):
        problems.append(f"does not derive from {AXIS_BASES[cls.axis].__name__}")
    if not cls.name or not re.fullmatch(r"[a-z][a-z0-9_]*", cls.name):
        problems.append(f"name {cls.name!r} must be lower_snake_case")
    doc = cls.__doc__ or ""
    if len(doc.split()) < 15:
        problems.append("docstring must say where the idea comes from and when it wins")
    elif not _SOURCE.search(doc):
        problems.append("docstring cites no source (paper, year or system)")
    for key, space in cls.params.items():
        if not isinstance(space, (Categorical, IntRange, FloatRange)):
            problems.append(f"param {key} is not a declared space")
            continue
        try:
            space.validate(f"{cls.axis}.{key}", space.default)
        except Exception as exc:  # noqa: BLE001 - reporting, not handling
            problems.append(f"param {key} default is invalid: {exc}")
    if cls.axis == "driving" and issubclass(cls, DrivingStrategy):
        if not cls.modes:
            problems.append("driving strategy declares no step modes (modes = (StepMode...))")
        elif len({m.name for m in cls.modes}) != len(cls.modes):
            problems.append("driving strategy declares two step modes of the same name")
    if "gpu" in cls.backends and cls.axis in CUDA_SYMBOLS:
        src = cls.cuda_source()
        for sym in CUDA_SYMBOLS[cls.axis]:
            if sym not in src:
                problems.append(f"CUDA fragment does not define {sym}")
        if cls.axis == "worklist" and "GS_WL_BUFFERED" in src:
            for sym in ("gs_wl_begin", "gs_wl_flush"):
                if sym not in src:
                    problems.append(f"CUDA fragment defines GS_WL_BUFFERED but not {sym}")
        if cls.axis == "launch" and "drive" not in vars(cls) and not any(
                "drive" in vars(base) for base in cls.__mro__[1:-3]):
            problems.append("launch strategy defines no drive()")
    reg = get_registry()
    algos = algorithms if algorithms is not None else list(reg.algorithms.values())
    instance = cls(cls.default_options())
    config = None
    if reg.strategies.get(cls.axis, {}).get(cls.name) is cls:
        config = Config({cls.axis: cls.name})
    for spec in algos:
        for backend in ("cpu", "gpu"):
            try:
                reason = instance.check(spec, None, config, backend)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"check() raised {type(exc).__name__} for {spec.name}: {exc}")
                continue
            if reason is not None and not (isinstance(reason, str) and reason.strip()):
                problems.append(f"check() must return None or a reason, got {reason!r}")
    if config is not None:
        specs = algorithms if algorithms is not None else [
            s for family in reg.variants.values() for s in family.values()]
        problems += _declared_refusal_problems(cls, specs)
    return problems


def _probe_values(space: Categorical | IntRange | FloatRange) -> list:
    """A few values of a declared parameter space: every choice, or the bounds and the
    default (the searched values of an integer range that lists them).
    """
    if isinstance(space, Categorical):
        return list(space.choices)
    if isinstance(space, IntRange) and space.searched:
        return list(space.searched)
    return [space.low, space.default, space.high]


def _declared_refusal_problems(cls: type[Strategy], specs: list[AlgorithmSpec]) -> list[str]:
    """Where ``held_params`` or ``pushes_only`` declare a refusal that ``check()`` does not
    make: the tuner leaves out what they declare, so a declaration ``check()`` does not
    honour hides valid configurations from it.
    """
    problems: list[str] = []
    for spec in specs:
        for pname, value in cls.held_params(spec).items():
            space = cls.params.get(pname)
            if space is None:
                problems.append(f"held_params() names {pname!r} for {spec.label}, which is "
                                "not a declared parameter")
                continue
            for other in [v for v in _probe_values(space) if v != value][:2]:
                cfg = Config({cls.axis: cls.name, f"{cls.axis}.{pname}": other})
                if cls(cfg.options(cls.axis)).check(spec, None, cfg, "cpu") is None:
                    problems.append(f"held_params() holds {pname} at {value!r} for "
                                    f"{spec.label}, but check() accepts {pname}={other!r}")
    if cls.axis != "driving" or not issubclass(cls, DrivingStrategy):
        return problems
    pulling = [n for n, d in get_registry().strategies["direction"].items() if d.may_pull]
    variants = [{}] + [{p: v} for p, space in cls.params.items() for v in _probe_values(space)]
    for options in variants:
        if not pulling or not cls({**cls.default_options(), **options}).pushes_only():
            continue
        cfg = Config({"driving": cls.name, "direction": pulling[0],
                      **{f"driving.{p}": v for p, v in options.items()}})
        for spec in specs:
            if cls(cfg.options("driving")).check(spec, None, cfg, "cpu") is None:
                problems.append(f"pushes_only() with {options or 'the defaults'}, but check() "
                                f"accepts direction={pulling[0]} for {spec.label}")
                break
    return problems


def compile_problems(cls: type[Strategy], algorithm: str = "bfs",
                     nvcc: str | None = None) -> list[str]:
    """Compose a real module with ``cls`` on its axis and compile it for sm_90 with nvcc.

    The configuration is the first all-pairs configuration of ``algorithm`` (else of the
    first registered formulation) that uses the strategy, so the other axes are ones it
    combines with. Returns the compiler's
    errors; an empty list means the fragment works through the real pipeline. Needs
    the strategy registered (installed) and nvcc.
    """
    from ..codegen import generate_source
    from ..combinations import pairwise_configs
    from ..staging import stage_config
    from .nvcc import compile_source, find_nvcc

    if "gpu" not in cls.backends:
        return []
    nvcc = nvcc or find_nvcc()
    if nvcc is None:
        return ["nvcc not found: install the CUDA toolkit to compile the fragment"]
    reg = get_registry()
    # the named algorithm first, then any formulation the strategy serves (a driving
    # strategy that needs a priority key, say)
    specs = [reg.algorithm(algorithm)] + [v for forms in reg.variants.values()
                                          for v in forms.values()]
    configs = []
    for spec in specs:
        if spec.direct is not None:
            continue  # array code: no module of the engine's
        configs = [c for c in pairwise_configs(spec) if c[cls.axis] == cls.name]
        if configs:
            break
        # a staged formulation: a stage may force the strategy (afforest's subset)
        for st in spec.stages:
            if isinstance(st, AlgorithmSpec) and st.stage_config.get(cls.axis) == cls.name:
                configs = [stage_config(st, c) for c in pairwise_configs(spec)]
                spec = st
                break
        if configs:
            break
    if not configs:
        return [f"no valid configuration of any algorithm uses {cls.axis}={cls.name}"]
    gen = generate_source(spec, configs[0], weighted=True)
    ok, out = compile_source(gen.source, nvcc=nvcc)
    if ok:
        return []
    return [ln for ln in out.splitlines() if "error" in ln][:10] or [out[-2000:]]
