"""Enumeration of strategy combinations (what the compile suite, GPU suite and tuner walk).

The full cross product of every strategy and every categorical parameter grows as the
product of the axes (thousands of modules per algorithm), so the suites cover *all
pairs* instead: every option of every axis appears together with every option of every
other axis in at least one valid configuration (a greedy covering array). Pairs that no
valid configuration can hold (pull with an operator that has no pull form, say) are
reported by :func:`uncoverable_pairs`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from .algorithm import AlgorithmSpec
from .config import Config
from .plugins import AXES, get_registry
from .runner import check_combination
from .strategy import Categorical

__all__ = ["axis_options", "iter_configs", "valid_configs", "pairwise_configs"]

Option = tuple[tuple[str, object], ...]


def axis_options(backend: str = "gpu") -> list[list[Option]]:
    """Per axis: each strategy with each combination of its categorical parameters.

    Numeric parameters stay at their defaults: they are runtime arguments or do not
    change the generated code.
    """
    reg = get_registry()
    per_axis = []
    for axis in AXES:
        options = []
        for name, cls in sorted(reg.strategies[axis].items()):
            cats = {k: p.choices for k, p in cls.params.items() if isinstance(p, Categorical)}
            keys = sorted(cats)
            for values in itertools.product(*(cats[k] for k in keys)):
                entry = ((axis, name),) + tuple(
                    (f"{axis}.{k}", v) for k, v in zip(keys, values))
                options.append(entry)
        per_axis.append(options)
    return per_axis


def _config(parts: tuple[Option, ...]) -> Config:
    merged: dict = {}
    for part in parts:
        merged.update(dict(part))
    return Config(merged)


def iter_configs(backend: str = "gpu") -> Iterator[Config]:
    """Every combination of strategies and their categorical parameters (the full product)."""
    for combo in itertools.product(*axis_options(backend)):
        yield _config(combo)


def valid_configs(spec: AlgorithmSpec, backend: str = "gpu") -> list[Config]:
    """Every configuration of the full product whose strategies all accept ``spec``."""
    return [c for c in iter_configs(backend) if check_combination(spec, None, c, backend) is None]


def _valid(spec: AlgorithmSpec, parts: tuple[Option, ...], backend: str) -> bool:
    try:
        cfg = _config(parts)
    except Exception:  # noqa: BLE001 - an invalid mapping is simply not a candidate
        return False
    return check_combination(spec, None, cfg, backend) is None


def pairwise_configs(spec: AlgorithmSpec, backend: str = "gpu") -> list[Config]:
    """Valid configurations covering every coverable pair of options of two axes.

    Deterministic greedy construction: start from the first uncovered pair, fill the
    other axes one at a time with the option that covers most uncovered pairs while
    the partial configuration stays completable, keep the configuration if it is valid.
    """
    options = axis_options(backend)
    k = len(options)
    uncovered = {(a, i, b, j) for a in range(k) for b in range(a + 1, k)
                 for i in range(len(options[a])) for j in range(len(options[b]))}
    result: list[Config] = []
    dead: set = set()
    while uncovered - dead:
        a, i, b, j = min(uncovered - dead)
        chosen: dict[int, int] = {a: i, b: j}
        for axis in range(k):
            if axis in chosen:
                continue
            best, best_gain = None, -1
            for opt in range(len(options[axis])):
                trial = dict(chosen)
                trial[axis] = opt
                if not _completable(spec, options, trial, backend):
                    continue
                gain = sum(1 for o, oi in trial.items() if o != axis and
                           ((min(o, axis), trial[min(o, axis)], max(o, axis),
                             trial[max(o, axis)]) in uncovered))
                if gain > best_gain:
                    best, best_gain = opt, gain
            if best is None:
                break
            chosen[axis] = best
        parts = tuple(options[ax][chosen[ax]] for ax in range(k)) if len(chosen) == k else None
        if parts is None or not _valid(spec, parts, backend):
            dead.add((a, i, b, j))
            continue
        result.append(_config(parts))
        for x, y in itertools.combinations(range(k), 2):
            uncovered.discard((x, chosen[x], y, chosen[y]))
    return result


def _completable(spec: AlgorithmSpec, options: list[list[Option]], chosen: dict[int, int],
                 backend: str) -> bool:
    """Whether some valid configuration extends ``chosen`` (first valid fill found)."""
    free = [ax for ax in range(len(options)) if ax not in chosen]
    for fill in itertools.product(*(range(len(options[ax])) for ax in free)):
        full = dict(chosen)
        full.update(zip(free, fill))
        if _valid(spec, tuple(options[ax][full[ax]] for ax in range(len(options))), backend):
            return True
    return False
