"""Checking an answer against the reference its algorithm declares.

An algorithm names its own independent reference and comparison on
:func:`gswitch.algorithm` (``expected=``, ``compare=``); nothing else looks either up by
algorithm name. This module holds the comparisons several algorithms share and the two
calls the tuner and the test-suites make: :func:`expected_answer` and
:func:`answer_problem`. An algorithm that declares no ``compare`` is checked with
:func:`generic_compare`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["canonical_labels", "exact", "close", "l1_within", "generic_compare",
           "expected_answer", "answer_problem"]


def canonical_labels(labels: np.ndarray) -> np.ndarray:
    """Relabel components so each node carries the smallest node id of its component."""
    labels = np.asarray(labels)
    if labels.size == 0:
        return labels.astype(np.int64)
    _, inv = np.unique(labels, return_inverse=True)
    mins = np.full(inv.max() + 1, labels.size, dtype=np.int64)
    np.minimum.at(mins, inv, np.arange(labels.size))
    return mins[inv]


def _shape_problem(got: np.ndarray, expected: np.ndarray) -> str | None:
    if got.shape != expected.shape:
        return f"shape {got.shape} != reference {expected.shape}"
    return None


def exact(got: Any, expected: Any) -> str | None:
    """``None`` when every element of ``got`` equals ``expected``, else the first difference."""
    got, expected = np.asarray(got), np.asarray(expected)
    problem = _shape_problem(got, expected)
    if problem or got.size == 0:
        return problem
    bad = np.flatnonzero(got != expected)
    if bad.size:
        i = int(bad[0])
        return f"{bad.size} nodes differ, e.g. node {i}: {got[i]} != {expected[i]}"
    return None


def close(got: Any, expected: Any, *, rtol: float, atol: float,
          what: str = "value") -> str | None:
    """``None`` when ``got`` matches ``expected`` within ``rtol`` / ``atol``.

    Non-finite entries (an unreached node's ``inf``) must sit at the same nodes and be
    equal; ``what`` names the quantity in the message (``"distance"``).
    """
    got, expected = np.asarray(got), np.asarray(expected)
    problem = _shape_problem(got, expected)
    if problem or got.size == 0:
        return problem
    fin = np.isfinite(expected)
    off = np.flatnonzero(np.isfinite(got) != fin)
    if off.size:
        i = int(off[0])
        return f"reachability differs at node {i}: {got[i]} vs {expected[i]}"
    a, b = got.astype(np.float64), expected.astype(np.float64)
    ok = np.where(fin, np.isclose(a, b, rtol=rtol, atol=atol), a == b)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        return f"{what} differs at node {i}: {got[i]} vs {expected[i]}"
    return None


def l1_within(got: Any, expected: Any, tolerance: float) -> str | None:
    """``None`` when the L1 distance between ``got`` and ``expected`` is at most ``tolerance``."""
    got, expected = np.asarray(got), np.asarray(expected)
    problem = _shape_problem(got, expected)
    if problem or got.size == 0:
        return problem
    l1 = float(np.abs(got.astype(np.float64) - expected).sum())
    if not np.isfinite(l1) or l1 > tolerance:
        return f"L1 distance {l1:.3g} to the reference exceeds {tolerance}"
    return None


def generic_compare(got: Any, expected: Any) -> str | None:
    """The check of an algorithm that declares no ``compare``: exact for integer and
    boolean outputs, ``rtol=1e-4, atol=1e-6`` for floating-point ones (equal
    non-finite values match).
    """
    got, expected = np.asarray(got), np.asarray(expected)
    if got.dtype.kind in "iub" and expected.dtype.kind in "iub":
        return exact(got, expected)
    return close(got, expected, rtol=1e-4, atol=1e-6)


def expected_answer(spec: Any, graph: Any, source: int | None = None,
                    params: dict[str, Any] | None = None) -> np.ndarray | None:
    """The first output ``spec`` should return on ``graph``, by its declared reference.

    Calls ``spec.expected(graph, source=source, **params)`` with ``params`` completed by
    the algorithm's parameter defaults, so a reference reads e.g. ``params["alpha"]``
    whether or not the caller set it. ``None`` when the algorithm declares no
    ``expected``.
    """
    if spec.expected is None:
        return None
    full = {name: p.default for name, p in spec.params.items()}
    full.update(params or {})
    return np.asarray(spec.expected(graph, source=source, **full))


def answer_problem(spec: Any, got: Any, expected: Any) -> str | None:
    """``None`` when ``got`` matches ``expected`` by ``spec.compare`` (or, where the
    algorithm declares none, :func:`generic_compare`), else a one-line description.

    A declared ``compare`` gets the reference whatever its shape and checks it itself
    (the helpers here do): an answer that is not unique is checked by invariants against
    a reference that is not an answer, such as the graph's adjacency packed into one
    numeric array (``maximal_independent_set``).
    """
    got, expected = np.asarray(got), np.asarray(expected)
    if spec.compare is not None:
        return spec.compare(got, expected)
    return _shape_problem(got, expected) or generic_compare(got, expected)
