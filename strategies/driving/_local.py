"""What an algorithm must be for a step to iterate inside itself (spatial, unrolling)."""

from __future__ import annotations

from typing import Any

from gswitch import expr as ex
from gswitch.strategy import IntRange

#: Reductions whose fixed point does not depend on the order of updates.
ORDER_FREE = ("min", "max", "or")
#: Longest per-thread queue of kernel unrolling (registers and local memory per thread).
MAX_UNROLL = 16
#: Kernel unrolling's parameters (compile-time): the per-thread queue's length k, and
#: log2 of the lanes that walk the edges of one queued node together (0: a thread).
UNROLL_PARAMS = {"unroll": IntRange(0, MAX_UNROLL, 0, compile_time=True),
                 "unroll_lanes_log2": IntRange(0, 5, 0, compile_time=True)}


def unroll_defines(options: Any) -> dict[str, str]:
    """The compile-time defines of kernel unrolling for a driving strategy's options."""
    return {"GS_UNROLL": str(int(options.get("unroll", 0))),
            "GS_UNROLL_LANES": str(1 << int(options.get("unroll_lanes_log2", 0)))}


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


def unroll_problem(algorithm: Any, config: Any, driving: str) -> str | None:
    """Why kernel unrolling (``driving.unroll`` > 0 of the ``driving`` strategy) cannot
    run ``algorithm`` under ``config``, or ``None``: it queues the targets of pushes and
    processes them again within the step, so it needs push and an order-free operator.
    """
    if pulls(config):
        return "unroll queues the targets of pushes; set direction=push"
    problem = local_problem(algorithm, f"{driving} unroll")
    return None if problem is None else problem + " (or set driving.unroll=0)"
