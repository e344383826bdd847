"""What an algorithm must be for a step to iterate inside itself (spatial, unrolling)."""

from __future__ import annotations

from typing import Any

from gswitch import expr as ex

#: Reductions whose fixed point does not depend on the order of updates.
ORDER_FREE = ("min", "max", "or")


def local_problem(algorithm: Any, what: str) -> str | None:
    """Why passes inside one step (``what`` names them) could change the answer of
    ``algorithm``, or ``None``.

    A node processed again within the step sees the updates of the same step, so the
    fixed point must not depend on the order of updates: every statement of the edge
    operator is a guard or a min/max/or reduction into ``e.dst`` (monotone and
    idempotent), nothing reads the step number, and there is no node operator (the
    passes run the edge operator only).
    """
    label = getattr(algorithm, "label", algorithm.name)
    if algorithm.edge is None:
        return f"{what} needs an edge operator; {label} has none"
    if algorithm.edge.raw is not None:
        return f"{what} cannot tell whether a raw CUDA operator is order-free"
    if algorithm.node is not None:
        return f"{what} runs the edge operator only, and {label} has a node operator"
    if algorithm.converge_below is not None or algorithm.step_totals:
        return f"{label} stops on a step total, which passes inside a step do not keep"
    for s in algorithm.edge.statements:
        if isinstance(s, ex.Guard):
            continue
        if not isinstance(s, ex.Reduction) or s.at is not None or s.node != "dst":
            return (f"{what} needs every edge statement to reduce into e.dst; {label} "
                    f"has {ex.format_statement(s)}")
        if s.kind.name not in ORDER_FREE:
            return (f"{what} needs monotone min/max/or reductions, whose fixed point does "
                    f"not depend on the order; {label} uses reduce_{s.kind.name}")
    for s in algorithm.edge.statements:
        for e in ex.walk(s.value):
            if isinstance(e, (ex.Iteration, ex.StepTotalRef)):
                return (f"{label} reads the step number, which passes inside a step "
                        "would not advance")
    return None


def pulls(config: Any) -> bool:
    """Whether the configuration's direction strategy may pull (``config`` may be None)."""
    return config is not None and config.strategy("direction").may_pull
