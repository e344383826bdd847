"""The outcome of a run: node fields as NumPy arrays plus execution statistics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .config import Config

__all__ = ["Result"]


@dataclass
class Result:
    """Fields and statistics of one run.

    Attributes
    ----------
    algorithm : str
        Algorithm name.
    fields : dict[str, numpy.ndarray]
        Output node fields, after the algorithm's finalisation: NumPy arrays, or CuPy
        arrays on the device for ``run(..., arrays="cupy")``.
    stats : dict
        ``iterations``, ``active`` (active-set size per iteration), ``modes`` (driving
        mode per iteration), ``edges_processed``, ``time_s`` (end to end) and, on the
        GPU, ``device_time_s`` (summed from events per phase; ``kernel_time_s`` is the
        same), ``compile_time_s``, ``overflows`` (worklist growths) and
        ``polled_reads`` (steps whose decision the host read from page-locked memory
        the kernel wrote); ``finalized_on`` (``host`` or ``device``) when the algorithm
        has a ``finalize`` step.
    backend : str
        ``cpu`` or ``gpu``.
    config : Config
        The strategy configuration used.

    """

    algorithm: str
    fields: dict[str, np.ndarray]
    stats: dict[str, Any] = field(default_factory=dict)
    backend: str = "cpu"
    config: Config | None = None

    def __getitem__(self, name: str) -> np.ndarray:
        return self.fields[name]

    @property
    def iterations(self) -> int:
        return int(self.stats.get("iterations", 0))

    def summary(self) -> dict[str, Any]:
        """JSON-friendly summary without per-node arrays."""
        s = {k: v for k, v in self.stats.items() if k not in ("active", "modes", "directions")}
        s["active_first"] = self.stats.get("active", [])[:16]
        return {
            "algorithm": self.algorithm,
            "backend": self.backend,
            "config": self.config.to_dict() if self.config is not None else None,
            "stats": s,
        }
