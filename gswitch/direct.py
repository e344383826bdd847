"""Running a formulation that array code implements (``direct=`` on
:func:`gswitch.algorithm`) in place of the engine, with the result a run of operators
would give: the same fields and the same statistics keys.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .errors import AlgorithmError, DeadlineExceeded
from .result import Result

if TYPE_CHECKING:
    from .algorithm import AlgorithmSpec
    from .config import Config
    from .engine.timing import PhaseTimer
    from .graph import Graph

__all__ = ["run_direct"]


def run_direct(spec: AlgorithmSpec, graph: Graph, params: dict[str, Any], sources: Any,
               config: Config, backend: str, deadline_s: float | None,
               device_arrays: bool, timer: PhaseTimer | None = None) -> Result:
    """Call ``spec.direct`` on the prepared graph and wrap what it returns in a
    :class:`Result`.

    Edge fields (:class:`~gswitch.EdgeField`) come back with one value per stored edge
    of ``graph``, in its CSR order, which the run maps to the caller's edge order after a
    renumbering. The statistics hold every key a run of operators has (``iterations``,
    ``edges_processed``, ``active``, ``modes``, ``converged``, ``time_s``), with what the
    array code measured over the zeros. Array code runs to its end: the deadline is
    checked when it returns, so a run past it still raises
    :class:`~gswitch.errors.DeadlineExceeded` (a tuner trial is cut, late). A ``timer``
    gets the whole call as one phase, ``array code``.
    """
    t0 = time.perf_counter()
    answer = spec.direct(graph, params, sources=sources, backend=backend,
                         device_arrays=device_arrays)
    elapsed = time.perf_counter() - t0
    if timer is not None:
        timer.add("array code", elapsed)
    try:
        fields, measured = answer
        fields, measured = dict(fields), dict(measured or {})
    except (TypeError, ValueError):
        raise AlgorithmError(f"{spec.label}'s direct function must return (fields, stats), "
                             f"two mappings; got {type(answer).__name__}") from None
    missing = [name for name in spec.outputs if name not in fields]
    if missing:
        raise AlgorithmError(f"{spec.label}'s direct function returned no {missing[0]!r} "
                             f"field; its outputs are {', '.join(spec.outputs)}")
    for name in [f for f in spec.edge_fields if f in fields]:
        shape = getattr(fields[name], "shape", None)
        if shape != (graph.n_edges,):  # one value per stored edge: renumbering maps them
            raise AlgorithmError(f"{spec.label}'s direct function returned edge field "
                                 f"{name!r} of shape {shape}; it holds one value per "
                                 f"stored edge ({graph.n_edges},)")
    if deadline_s is not None and elapsed > deadline_s:
        raise DeadlineExceeded(f"{spec.label} passed its deadline of {deadline_s:.3g} s "
                               f"({elapsed:.3g} s)", elapsed_s=elapsed,
                               iterations=int(measured.get("iterations", 0)))
    stats: dict[str, Any] = {"active": [], "modes": [], "directions": [],
                             "edges_processed": 0, "iterations": 0, **measured,
                             "converged": True, "time_s": elapsed}
    return Result(spec.name, fields, stats, backend=backend, config=config)
