"""Plugin manager and the registries of strategies and algorithms."""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import pluggy

from . import hookspecs
from .errors import InvalidConfig, InvalidInput, PluginError
from .strategy import AXES as _AXES

if TYPE_CHECKING:
    from .algorithm import AlgorithmSpec
    from .strategy import Strategy

__all__ = ["get_plugin_manager", "Registry", "get_registry", "reset_registry", "AXES"]

#: The five strategy axes (defined with the strategy contracts; kept here for plugins).
AXES = _AXES


def _builtin_modules() -> tuple[str, ...]:
    from .algorithms import BUILTIN_MODULES as algos
    from .strategies import BUILTIN_MODULES as strategies

    # the tuner plugs into the command line (tune, report, run --config auto|tuned)
    return tuple(strategies) + tuple(algos) + ("gswitch.tuner.plugin",)


@dataclass
class Registry:
    """Strategies by axis and name, algorithms by name, and the plugins that failed."""

    strategies: dict[str, dict[str, type[Strategy]]] = field(
        default_factory=lambda: {a: {} for a in AXES})
    algorithms: dict[str, AlgorithmSpec] = field(default_factory=dict)
    #: every formulation of each algorithm name: name -> variant -> spec
    variants: dict[str, dict[str, AlgorithmSpec]] = field(default_factory=dict)
    sources: dict[tuple[str, ...], str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    #: validated configurations shared by :meth:`gswitch.Config.shared`, by their values
    configs: dict[tuple, Any] = field(default_factory=dict, repr=False)

    def strategy(self, axis: str, name: str) -> type[Strategy]:
        """Look up a strategy, listing the valid names on failure."""
        if axis not in self.strategies:
            raise InvalidConfig(f"unknown strategy axis {axis!r}; axes are {', '.join(AXES)}")
        try:
            return self.strategies[axis][name]
        except KeyError:
            valid = ", ".join(sorted(self.strategies[axis])) or "(none registered)"
            raise InvalidConfig(
                f"unknown {axis} strategy {name!r}; choose one of {valid}") from None

    def algorithm(self, name: str, variant: str | None = None) -> AlgorithmSpec:
        """Look up an algorithm (its default variant unless ``variant`` names another),
        listing the valid names on failure.
        """
        try:
            spec = self.algorithms[name]
        except KeyError:
            valid = ", ".join(sorted(self.algorithms))
            raise InvalidInput(f"unknown algorithm {name!r}; choose one of {valid}") from None
        if variant in (None, "default", spec.variant):
            return spec
        family = self.variants[name]
        if variant not in family:
            raise InvalidInput(
                f"{name} has no variant {variant!r}; its variants are "
                f"{', '.join(family)} (set variant=NAME)")
        return family[variant]


class _Tracer:
    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.pm = pm

    def before(self, hook_name, hook_impls, kwargs):  # noqa: ANN001
        names = [self.pm.get_name(i.plugin) for i in hook_impls]
        print(f"[gswitch plugins] {hook_name} -> {', '.join(map(str, names))}", file=sys.stderr)

    def after(self, outcome, hook_name, hook_impls, kwargs):  # noqa: ANN001
        pass


def _register_module(pm: pluggy.PluginManager, modname: str, failures: list[str]) -> None:
    try:
        module = importlib.import_module(modname)
        pm.register(module, name=modname)
    except Exception as exc:  # a broken plugin must not take the others down
        failures.append(f"plugin {modname!r} failed to load: {type(exc).__name__}: {exc}")


def _load_entry_points(pm: pluggy.PluginManager, failures: list[str]) -> None:
    """Register the ``gswitch`` entry points one at a time: a broken one is reported
    with its name and distribution, and the others still load.
    """
    from importlib.metadata import entry_points

    for ep in entry_points(group=hookspecs.PROJECT_NAME):
        if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
            continue
        dist = getattr(getattr(ep, "dist", None), "name", "?")
        try:
            plugin = ep.load()
            pm.register(plugin, name=ep.name)
        except Exception as exc:  # a broken plugin must not take the others down
            failures.append(f"plugin {ep.name!r} (entry point {ep.value!r} of distribution "
                            f"{dist}) failed to load: {type(exc).__name__}: {exc}")


@lru_cache(maxsize=1)
def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager with built-ins and entry points loaded.

    Set ``GSWITCH_TRACE_PLUGINS=1`` to print which plugin answered each hook call.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    failures: list[str] = []
    for modname in _builtin_modules():
        _register_module(pm, modname, failures)
    _load_entry_points(pm, failures)
    pm.check_pending()
    if os.environ.get("GSWITCH_TRACE_PLUGINS") == "1":
        tracer = _Tracer(pm)
        pm.add_hookcall_monitoring(tracer.before, tracer.after)
    pm._gswitch_failures = failures  # type: ignore[attr-defined]
    return pm


def _collect(pm: pluggy.PluginManager, hook_name: str, failures: list[str]):
    hook = getattr(pm.hook, hook_name)
    for impl in hook.get_hookimpls():
        plugin_name = pm.get_name(impl.plugin)
        if os.environ.get("GSWITCH_TRACE_PLUGINS") == "1":  # impls are called directly here
            print(f"[gswitch plugins] {hook_name} -> {plugin_name}", file=sys.stderr)
        try:
            result = impl.function()
        except Exception as exc:
            failures.append(
                f"plugin {plugin_name!r} failed in hook {hook_name}: {type(exc).__name__}: {exc}")
            continue
        yield plugin_name, list(result or [])


@lru_cache(maxsize=1)
def get_registry() -> Registry:
    """Build (once) the registry of every strategy and algorithm the plugins provide.

    Plugins that fail are listed in ``Registry.failures`` and reported as a warning;
    the rest keep working. Duplicate names raise :class:`PluginError` naming both sources.
    """
    from .algorithm import AlgorithmSpec
    from .strategy import Strategy

    pm = get_plugin_manager()
    reg = Registry(failures=list(pm._gswitch_failures))  # type: ignore[attr-defined]
    for plugin, classes in _collect(pm, "gswitch_strategies", reg.failures):
        for cls in classes:
            if not (isinstance(cls, type) and issubclass(cls, Strategy)):
                reg.failures.append(
                    f"plugin {plugin!r} returned {cls!r} from gswitch_strategies, "
                    "which is not a Strategy subclass")
                continue
            key = (cls.axis, cls.name)
            if cls.axis not in reg.strategies:
                reg.failures.append(f"plugin {plugin!r}: strategy {cls.__name__} has unknown "
                                    f"axis {cls.axis!r}; axes are {', '.join(AXES)}")
                continue
            if cls.name in reg.strategies[cls.axis]:
                raise PluginError(
                    f"{cls.axis} strategy name {cls.name!r} registered twice: by "
                    f"{reg.sources[key]!r} and by {plugin!r}")
            reg.strategies[cls.axis][cls.name] = cls
            reg.sources[key] = plugin
    for plugin, specs in _collect(pm, "gswitch_algorithms", reg.failures):
        for spec in specs:
            if not isinstance(spec, AlgorithmSpec):
                reg.failures.append(f"plugin {plugin!r} returned {spec!r} from "
                                    "gswitch_algorithms, which is not an AlgorithmSpec")
                continue
            key = ("algorithm", spec.name, spec.variant)
            family = reg.variants.setdefault(spec.name, {})
            if spec.variant in family:
                raise PluginError(f"algorithm {spec.label!r} registered twice: by "
                                  f"{reg.sources[key]!r} and by {plugin!r}")
            if spec.default_variant and spec.name in reg.algorithms:
                raise PluginError(
                    f"algorithm {spec.name!r} has two default variants: "
                    f"{reg.algorithms[spec.name].variant!r} (by "
                    f"{reg.sources[('algorithm', spec.name, reg.algorithms[spec.name].variant)]!r})"
                    f" and {spec.variant!r} (by {plugin!r}); declare default=False on one")
            family[spec.variant] = spec
            if spec.default_variant:
                reg.algorithms[spec.name] = spec
            reg.sources[key] = plugin
    for name, family in reg.variants.items():
        if name not in reg.algorithms:
            reg.failures.append(f"algorithm {name!r} has variants {', '.join(family)} but no "
                                "default one; declare default=True on one of them")
            continue
        base = reg.algorithms[name]
        for spec in family.values():  # a variant shares its algorithm's reference
            if spec.expected is None:
                spec.expected = base.expected
            if spec.compare is None:
                spec.compare = base.compare
            if not spec.reference:
                spec.reference = base.reference
    for msg in reg.failures:
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
    return reg


def reset_registry() -> None:
    """Forget the loaded plugins (tests that register extra plugins use this)."""
    get_registry.cache_clear()
    get_plugin_manager.cache_clear()
