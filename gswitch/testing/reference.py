"""Reference answers and comparisons for the test-suites, by algorithm name or spec.

Each algorithm declares its own independent reference and comparison on
:func:`gswitch.algorithm` (``expected=``, ``compare=``: scipy.sparse.csgraph, networkx);
these functions look the algorithm up in the registry and call them, so a strategy
combination is never judged against the code it is testing. The shared comparisons
live in :mod:`gswitch.verify`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..algorithm import AlgorithmSpec
from ..verify import answer_problem, canonical_labels, expected_answer

__all__ = ["reference", "compare", "canonical_labels"]


def _spec(algorithm: str | AlgorithmSpec) -> AlgorithmSpec:
    if isinstance(algorithm, AlgorithmSpec):
        return algorithm
    from ..plugins import get_registry

    return get_registry().algorithm(algorithm)


def reference(algorithm: str | AlgorithmSpec, graph: Any, source: int | None = None,
              **params: Any) -> np.ndarray:
    """Expected first output of ``algorithm`` (a registered name or a spec) on ``graph``.

    Raises
    ------
    KeyError
        If the algorithm declares no ``expected``.
    InvalidInput
        If no algorithm of that name is registered.

    """
    spec = _spec(algorithm)
    ref = expected_answer(spec, graph, source=source, params=params)
    if ref is None:
        raise KeyError(f"no reference for {spec.label!r}: its @gs.algorithm declares no "
                       "expected=")
    return ref


def compare(algorithm: str | AlgorithmSpec, got: Any, expected: Any) -> str | None:
    """``None`` when ``got`` matches ``expected`` by the algorithm's declared comparison
    (:func:`gswitch.verify.generic_compare` where it declares none), else a one-line
    description of the difference.
    """
    return answer_problem(_spec(algorithm), got, expected)


def fields_differ(got: dict[str, Any], want: dict[str, Any], rtol: float = 1e-6) -> str | None:
    """The first field of ``want`` that ``got`` does not match (floats to ``rtol``,
    everything else exactly), or ``None`` when every one matches.
    """
    for field, b in want.items():
        a = np.asarray(got[field])
        same = np.allclose(a, b, rtol=rtol) if np.asarray(b).dtype.kind == "f" \
            else np.array_equal(a, b)
        if not same:
            return field
    return None
