"""Strategy configuration: a flat, validated, JSON-serialisable mapping."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .errors import InvalidConfig
from .locality import METHODS as RENUMBER_METHODS
from .plugins import get_registry
from .strategy import AXES, Categorical, IntRange, Strategy

__all__ = ["Config", "DEFAULTS", "GLOBAL_KEYS", "parse_set_options"]

def _default_values() -> dict[str, Any]:
    """The plugins' ``gswitch_default_config``, asked once."""
    from .plugins import get_plugin_manager

    return dict(get_plugin_manager().hook.gswitch_default_config() or {})


class _Defaults(Mapping[str, Any]):
    """The default strategy per axis, as the plugins' ``gswitch_default_config`` says."""

    def _data(self) -> dict[str, Any]:
        return _default_values()

    def __getitem__(self, key: str) -> Any:
        return self._data()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data())

    def __len__(self) -> int:
        return len(self._data())

    def __repr__(self) -> str:
        return repr(self._data())


#: The configuration that is good on most graphs; every key may be overridden.
DEFAULTS: Mapping[str, Any] = _Defaults()

#: Configurations :meth:`Config.shared` keeps per registry before it starts over.
_SHARED_CONFIGS = 256

#: Keys that belong to no single strategy.
GLOBAL_KEYS = {
    "block_size": IntRange(64, 1024, 256, step=32),
    "worklist_capacity": IntRange(0, 2**31 - 1, 0),
    "read_before_atomic": Categorical((True, False), True, compile_time=True),
    "l2_prefetch": Categorical((False, True), False, compile_time=True),
    "renumber": Categorical(RENUMBER_METHODS, "none"),
}

#: What each of :data:`GLOBAL_KEYS` does, as ``gswitch strategies`` lists it.
GLOBAL_DOCS = {
    "block_size": "GPU: threads per block of every kernel of the module",
    "worklist_capacity": "GPU: initial worklist slots (0: estimated from the graph; a "
                         "worklist that overflows grows)",
    "read_before_atomic": "GPU: a min/max/or reduction reads its target first and skips "
                          "the atomic when the value cannot improve it",
    "l2_prefetch": "GPU: prefetch a pushed node's CSR row and the neighbouring cache lines "
                   "of the arrays a step reads into L2",
    "renumber": "both engines: run on a copy of the graph renumbered for locality (rcm: "
                "reverse Cuthill-McKee, bfs: breadth-first per component, degree: hubs "
                "first, hilbert: compact regions along a Hilbert curve over hop distances "
                "from two landmarks), kept per graph; results come back in the caller's "
                "ids",
}


def _checked(space: Any, key: str, value: Any) -> Any:
    """``space.validate``, but a JSON ``true``/``false`` is not a number (Python counts it as
    1 or 0, so ``"block_size": true`` would become 1 and a threshold of ``true`` 1.0).
    """
    if isinstance(value, bool) and not isinstance(space, Categorical):
        kind = "an integer" if isinstance(space, IntRange) else "a number"
        raise InvalidConfig(f"{key} must be {kind}; got {str(value).lower()}")
    return space.validate(key, value)


def _variant(value: Any) -> str:
    """The ``variant`` key: the name of an algorithm's formulation, checked against the
    algorithm when a run starts (a config is not tied to one algorithm).
    """
    if not isinstance(value, str) or not value.replace("_", "").isalnum():
        raise InvalidConfig(f"variant must be a formulation name such as 'hook_compress' "
                            f"(letters, digits, _), got {value!r}")
    return value


class Config(Mapping[str, Any]):
    """Validated strategy configuration.

    Keys are the five axes (strategy names), ``<axis>.<param>`` for the chosen
    strategies' parameters, ``block_size`` (64..1024, a multiple of 32),
    ``worklist_capacity`` (initial worklist slots, 0 = estimate from the graph) and
    ``read_before_atomic`` (GPU: a min/max/or reduction reads its target first and
    skips the atomic when the value cannot improve it; ``False`` issues the atomic at
    once, one dependent memory round trip less for an edge that improves its target) and
    ``l2_prefetch`` (GPU: a pushed node's CSR row and the cache lines next to the ones a
    step touches in the row offsets, the edge array and the updated fields are
    prefetched into L2, so the next steps of a latency-bound traversal find them there
    instead of in DRAM).
    ``variant`` names the algorithm's formulation (``gswitch algorithms`` lists them;
    ``default`` runs the algorithm's default one).
    Missing keys take :data:`DEFAULTS` and each strategy's declared defaults; a key
    for a strategy that is not chosen is an error (it would silently do nothing).

    Examples
    --------
    >>> cfg = Config({"load_balance": "virtual_warp", "load_balance.size": 32})
    >>> cfg["load_balance.size"], cfg["worklist"]
    (32, 'warp_aggregated')

    """

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        if values is not None and not isinstance(values, Mapping):
            hint = (" (to read a JSON file use Config.from_file(path); on the command line "
                    "--config FILE.json)" if isinstance(values, (str, Path)) else "")
            raise InvalidConfig(f"a strategy config must be a mapping of keys to values, got "
                                f"{type(values).__name__} {values!r}"[:200] + hint)
        bad = [k for k in (values or {}) if not isinstance(k, str)]
        if bad:
            raise InvalidConfig(f"config keys must be strings like 'driving' or "
                                f"'driving.threshold', got {bad[0]!r}")
        self._data = self._validate(dict(values or {}))

    @staticmethod
    def _validate(given: dict[str, Any]) -> dict[str, Any]:
        reg = get_registry()
        out: dict[str, Any] = {}
        defaults = _default_values()  # one hook call, not one per key
        given = {**{k: v for k, v in defaults.items() if "." in k and k.split(".")[0] not in
                    given}, **given}
        for axis in AXES:
            if axis not in given and axis not in defaults:
                raise InvalidConfig(f"no default {axis} strategy is registered; set {axis}=...")
            name = str(given.get(axis, defaults.get(axis)))
            cls = reg.strategy(axis, name)
            out[axis] = name
            for pname, space in cls.params.items():
                key = f"{axis}.{pname}"
                out[key] = _checked(space, key, given[key]) if key in given else space.default
        for key, space in GLOBAL_KEYS.items():
            out[key] = _checked(space, key, given[key]) if key in given else space.default
        out["variant"] = _variant(given.get("variant", "default"))
        for key in given:
            if key in out:
                continue
            axis, _, pname = key.partition(".")
            if axis in AXES and pname:
                cls = reg.strategy(axis, out[axis])
                valid = ", ".join(f"{axis}.{p}" for p in cls.params) or "none"
                raise InvalidConfig(
                    f"{key} is not a parameter of {axis} strategy {out[axis]!r} "
                    f"(its parameters: {valid})"
                )
            valid = ", ".join(list(AXES) + list(GLOBAL_KEYS) + ["variant"])
            raise InvalidConfig(f"unknown config key {key!r}; keys are {valid} and <axis>.<param>")
        return out

    @classmethod
    def shared(cls, values: Mapping[str, Any] | None = None) -> Config:
        """The validated configuration of ``values``, built once per distinct ``values``
        (equal keys and values of the same types) and loaded plugins, then shared: a
        Config never changes, so a repeated call skips the validation, the strategy
        instances and the cache key. Anything that is not a mapping of hashable values
        is validated afresh (and refused with the same message as :class:`Config`).
        """
        if values is None:
            values = {}
        if not isinstance(values, Mapping):
            return cls(values)
        try:
            key = tuple(sorted((k, type(v), v) for k, v in values.items()))
            cache = get_registry().configs
            hit = cache.get(key)
        except TypeError:  # a key that is not a string, or an unhashable value
            return cls(values)
        if hit is None:
            hit = cls(values)
            if len(cache) >= _SHARED_CONFIGS:
                cache.clear()
            cache[key] = hit
        return hit

    # Mapping protocol
    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        # the dict's own: Mapping.get goes through __getitem__ and a KeyError per miss
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Config({self._data!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Config):
            return self._data == other._data
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.key())

    def key(self) -> str:
        """Canonical JSON text, usable as a cache or tuning key (built once: a Config
        never changes, and every GPU call looks its compiled module up by it).
        """
        cached = self.__dict__.get("_key")
        if cached is None:
            cached = self.__dict__["_key"] = json.dumps(self._data, sort_keys=True)
        return cached

    def replace(self, **changes: Any) -> Config:
        """Copy with some keys changed (use ``**{"load_balance.size": 8}`` for dotted keys).

        The copies are kept on this Config (both never change): a staged algorithm asks
        for the same stage configs on every call, and each new Config is validated.
        """
        try:
            memo_key: Any = tuple(sorted(changes.items()))
            hash(memo_key)
        except TypeError:  # an unhashable value: made anew
            memo_key = None
        memo = self.__dict__.setdefault("_replaced", {})
        if memo_key is not None and memo_key in memo:
            return memo[memo_key]
        data = dict(self._data)
        for axis in AXES:
            if axis in changes and changes[axis] != data[axis]:
                data = {k: v for k, v in data.items() if not k.startswith(axis + ".")}
        data.update(changes)
        out = Config(data)
        if memo_key is not None and len(memo) < 64:
            memo[memo_key] = out
        return out

    def options(self, axis: str) -> dict[str, Any]:
        """The parameters of the strategy chosen on ``axis``, without the prefix."""
        prefix = axis + "."
        return {k[len(prefix):]: v for k, v in self._data.items() if k.startswith(prefix)}

    def strategy(self, axis: str) -> Strategy:
        """The instance of the strategy chosen on ``axis``, with its options (the one
        :meth:`strategies` keeps).
        """
        strategies = self.strategies()
        if axis not in strategies:
            raise KeyError(f"no strategy axis {axis!r}; the axes are {', '.join(AXES)}")
        return strategies[axis]

    def strategies(self) -> dict[str, Strategy]:
        """One instance per axis (cached: a Config never changes)."""
        cached = self.__dict__.get("_strategies")
        if cached is None:
            registry = get_registry()
            cached = self.__dict__["_strategies"] = {
                axis: registry.strategy(axis, self._data[axis])(self.options(axis))
                for axis in AXES}
        return cached

    def to_dict(self) -> dict[str, Any]:
        return dict(self._data)

    def to_json(self) -> str:
        return json.dumps(self._data, indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Config:
        """Parse JSON text (an object of keys to values)."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidConfig(f"config is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise InvalidConfig(f"config JSON must be an object, got {type(data).__name__}")
        return cls(data)

    @classmethod
    def from_file(cls, path: str | Path) -> Config:
        """Read a JSON config file."""
        p = Path(path)
        try:
            text = p.read_text()
        except OSError as exc:
            raise InvalidConfig(f"cannot read config file {p}: {exc.strerror}") from None
        return cls.from_json(text)


def parse_set_options(items: list[str]) -> dict[str, Any]:
    """Turn ``["worklist=atomic", "block_size=128"]`` into a dict (values stay strings
    unless they parse as JSON numbers or booleans; :class:`Config` converts them).
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidConfig(f"--set expects key=value, got {item!r}")
        value = value.strip()
        try:
            parsed = json.loads(value)
            if isinstance(parsed, (int, float, bool)):
                value = parsed
        except json.JSONDecodeError:
            pass
        out[key.strip()] = value
    return out
