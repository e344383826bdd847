"""Enumeration of strategy combinations (what the compile suite and the tuner walk)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from .algorithm import AlgorithmSpec
from .config import Config
from .plugins import AXES, get_registry
from .runner import check_combination
from .strategy import Categorical

__all__ = ["iter_configs", "valid_configs"]


def iter_configs(backend: str = "gpu") -> Iterator[Config]:
    """Every combination of strategies and their categorical parameters.

    Numeric parameters stay at their defaults: they are kernel arguments, so they do
    not change the generated code. Strategies that do not run on ``backend`` are
    still listed; :func:`valid_configs` filters with each strategy's ``check``.
    """
    reg = get_registry()
    per_axis = []
    for axis in AXES:
        options = []
        for name, cls in sorted(reg.strategies[axis].items()):
            cats = {k: p.choices for k, p in cls.params.items() if isinstance(p, Categorical)}
            keys = sorted(cats)
            for values in itertools.product(*(cats[k] for k in keys)):
                entry = {axis: name}
                entry.update({f"{axis}.{k}": v for k, v in zip(keys, values)})
                options.append(entry)
        per_axis.append(options)
    for combo in itertools.product(*per_axis):
        merged: dict = {}
        for part in combo:
            merged.update(part)
        yield Config(merged)


def valid_configs(spec: AlgorithmSpec, backend: str = "gpu") -> list[Config]:
    """Configurations whose strategies all accept ``spec`` on ``backend``."""
    return [c for c in iter_configs(backend) if check_combination(spec, None, c, backend) is None]
