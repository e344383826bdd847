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
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from .algorithm import AlgorithmSpec
from .config import GLOBAL_KEYS, Config
from .plugins import get_registry
from .runner import check_combination
from .strategy import AXES, Categorical, FloatRange, IntRange, ParamSpace

__all__ = ["axis_options", "iter_configs", "valid_configs", "pairwise_configs",
           "pair_cover", "strategy_cover", "sampled_configs"]

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
    seen: dict[tuple[int, ...], bool] = {}  # validity of a full choice, asked many times

    def valid(full: dict[int, int]) -> bool:
        key = tuple(full[ax] for ax in range(k))
        if key not in seen:
            seen[key] = _valid(spec, tuple(options[ax][key[ax]] for ax in range(k)), backend)
        return seen[key]

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
                if not _completable(options, trial, valid):
                    continue
                gain = sum(1 for o, oi in trial.items() if o != axis and
                           ((min(o, axis), trial[min(o, axis)], max(o, axis),
                             trial[max(o, axis)]) in uncovered))
                if gain > best_gain:
                    best, best_gain = opt, gain
            if best is None:
                break
            chosen[axis] = best
        if len(chosen) != k or not valid(chosen):
            dead.add((a, i, b, j))
            continue
        result.append(_config(tuple(options[ax][chosen[ax]] for ax in range(k))))
        for x, y in itertools.combinations(range(k), 2):
            uncovered.discard((x, chosen[x], y, chosen[y]))
    return result


def _greedy_cover(configs: list[Config], features: Any) -> list[Config]:
    """A subset of ``configs`` holding every feature (``features(cfg)``: a set) that some
    config of them holds: greedy, the config that adds most first, ties to the earlier.
    """
    feats = [features(c) for c in configs]
    uncovered = set().union(*feats) if feats else set()
    chosen: list[Config] = []
    while uncovered:
        best = max(range(len(configs)), key=lambda i: len(feats[i] & uncovered))
        chosen.append(configs[best])
        uncovered -= feats[best]
    return chosen


def _held_options(cfg: Config, options: list[Option]) -> set:
    return {o for o in options if all(cfg.get(k) == v for k, v in o)}


def pair_cover(configs: list[Config], backend: str = "gpu") -> list[Config]:
    """A subset of ``configs`` (all pairs of options, say) that keeps every pair of
    strategies of two axes, and every option of every axis, found in them.

    What the compile matrix takes for the formulations the GPU suite runs under every
    strategy: each strategy meets each strategy of every other axis, and each of its
    categorical parameters appears, at about a third of the size of all pairs of options.
    """
    options = [o for per_axis in axis_options(backend) for o in per_axis]

    def features(cfg: Config) -> set:
        out = _held_options(cfg, options)
        out.update(((a, cfg[a]), (b, cfg[b])) for a, b in itertools.combinations(AXES, 2))
        return out

    return _greedy_cover(configs, features)


def strategy_cover(configs: list[Config]) -> list[Config]:
    """A subset of ``configs`` that keeps every strategy found in them, and each launch
    with each direction and each driving style found with it.

    What the compile matrix takes for a formulation (or a stage of one) whose operators
    meet the strategies through the same generated code as the classic ones: each
    strategy compiled with its operators once, each launch's loop around each direction
    and driving style.
    """
    def features(cfg: Config) -> set:
        out = {(axis, cfg[axis]) for axis in AXES}
        out.update((cfg["launch"], axis, cfg[axis]) for axis in ("direction", "driving"))
        return out

    return _greedy_cover(configs, features)


def _completable(options: list[list[Option]], chosen: dict[int, int], valid: Any) -> bool:
    """Whether some valid configuration extends ``chosen`` (first valid fill found);
    ``valid(full choice)`` answers for one complete choice of option indices.
    """
    free = [ax for ax in range(len(options)) if ax not in chosen]
    for fill in itertools.product(*(range(len(options[ax])) for ax in free)):
        full = dict(chosen)
        full.update(zip(free, fill))
        if valid(full):
            return True
    return False


#: Largest initial worklist capacity :func:`sampled_configs` draws (small capacities make
#: the worklist overflow and grow, which is what a sweep should exercise).
SAMPLED_CAPACITY_MAX = 1 << 16


def _draw(space: ParamSpace, rng: np.random.Generator, high: float | None = None) -> Any:
    """A value of ``space``: uniform over choices, log-uniform over ranges wider than 10x;
    half the time one of an integer range's ``searched`` values (the sizes a strategy's
    fast paths take: a spatial partition of a multiple of 32 nodes, which resident
    partitions need, is otherwise one draw in 32).
    """
    if isinstance(space, Categorical):
        return space.choices[int(rng.integers(len(space.choices)))]
    lo = space.low
    hi = space.high if high is None else min(space.high, high)
    if isinstance(space, IntRange) and space.searched and rng.random() < 0.5:
        fast = [v for v in space.searched if lo <= v <= hi]
        if fast:
            return fast[int(rng.integers(len(fast)))]
    if isinstance(space, IntRange):
        if space.step > 1:
            return lo + space.step * int(rng.integers((hi - lo) // space.step + 1))
        if lo >= 1 and hi > 10 * lo:
            return min(hi, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))
        return int(rng.integers(lo, hi + 1))
    if isinstance(space, FloatRange):
        if lo > 0 and hi > 10 * lo:
            return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))
        return float(rng.uniform(lo, hi))
    raise TypeError(f"unknown parameter space {space!r}")


def sampled_configs(spec: AlgorithmSpec, n: int, seed: int = 0,
                    backend: str = "gpu") -> list[Config]:
    """``n`` distinct valid configurations drawn at random from the whole space.

    Unlike :func:`pairwise_configs`, every declared parameter is drawn too: numeric and
    runtime ones (thresholds, ``alpha``/``beta``, captured steps, blocks per
    multiprocessor) from their declared ranges, and the global keys (``block_size``,
    a small ``worklist_capacity`` or the estimate, ``read_before_atomic``,
    ``l2_prefetch``). The draw is deterministic for a given ``seed`` and set of
    installed strategies, so a suite and the compile suite can walk the same sample.

    Parameters
    ----------
    spec : AlgorithmSpec
        The algorithm every configuration must accept.
    n : int
        How many configurations.
    seed : int
        Seed of the draw.
    backend : str
        ``"gpu"`` or ``"cpu"``.

    Returns
    -------
    list[Config]
        ``n`` configurations (fewer only if the space holds fewer distinct ones).

    """
    reg = get_registry()
    rng = np.random.default_rng(seed)
    names = {axis: sorted(reg.strategies[axis]) for axis in AXES}
    out: dict[str, Config] = {}
    for _ in range(50 * max(n, 1)):
        if len(out) >= n:
            break
        values: dict[str, Any] = {}
        for axis in AXES:
            name = names[axis][int(rng.integers(len(names[axis])))]
            values[axis] = name
            for pname, space in reg.strategies[axis][name].params.items():
                values[f"{axis}.{pname}"] = _draw(space, rng)
        for key, space in GLOBAL_KEYS.items():
            if key == "worklist_capacity":
                values[key] = 0 if rng.random() < 0.5 else _draw(
                    space, rng, high=SAMPLED_CAPACITY_MAX)
            else:
                values[key] = _draw(space, rng)
        try:
            cfg = Config(values)
        except Exception:  # noqa: BLE001 - a draw Config refuses is simply not a candidate
            continue
        if check_combination(spec, None, cfg, backend) is None:
            out.setdefault(cfg.key(), cfg)
    return list(out.values())
