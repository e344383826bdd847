"""Strategy base classes, one per axis, and the declared search-space types.

A strategy is one small class in one module. Its docstring says where the idea comes
from and when it wins; ``params`` declares its search space as data (the tuner reads
it, nothing else needs to); ``check`` returns a reason string when the strategy cannot
serve an (algorithm, graph, config) combination; ``cuda_files`` and ``defines``
supply the device fragment that fills the axis' slot of the kernel skeleton.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .errors import InvalidConfig

if TYPE_CHECKING:
    from .algorithm import AlgorithmSpec
    from .config import Config
    from .graph import Graph

__all__ = [
    "Categorical",
    "IntRange",
    "FloatRange",
    "ParamSpace",
    "Strategy",
    "WorklistStrategy",
    "LoadBalanceStrategy",
    "DrivingStrategy",
    "DirectionStrategy",
    "LaunchStrategy",
]


@dataclass(frozen=True)
class Categorical:
    """A choice among listed values."""

    choices: tuple[Any, ...]
    default: Any
    compile_time: bool = False

    def validate(self, key: str, value: Any) -> Any:
        for c in self.choices:
            if value == c or str(value) == str(c):
                return c
        raise InvalidConfig(
            f"{key} must be one of {', '.join(map(str, self.choices))}; got {value!r}"
        )


@dataclass(frozen=True)
class IntRange:
    """An integer in ``[low, high]``, optionally restricted to multiples of ``step``."""

    low: int
    high: int
    default: int
    step: int = 1
    log: bool = False
    compile_time: bool = False

    def validate(self, key: str, value: Any) -> int:
        try:
            v = int(str(value), 0) if isinstance(value, str) else int(value)
        except (TypeError, ValueError):
            raise InvalidConfig(f"{key} must be an integer; got {value!r}") from None
        if isinstance(value, float) and value != v:
            raise InvalidConfig(f"{key} must be an integer; got {value!r}")
        if not self.low <= v <= self.high:
            raise InvalidConfig(f"{key} must be in [{self.low}, {self.high}]; got {v}")
        if (v - self.low) % self.step:
            raise InvalidConfig(f"{key} must be a multiple of {self.step}; got {v}")
        return v


@dataclass(frozen=True)
class FloatRange:
    """A float in ``[low, high]``."""

    low: float
    high: float
    default: float
    log: bool = False
    compile_time: bool = False

    def validate(self, key: str, value: Any) -> float:
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise InvalidConfig(f"{key} must be a number; got {value!r}") from None
        if math.isnan(v) or not self.low <= v <= self.high:
            raise InvalidConfig(f"{key} must be in [{self.low}, {self.high}]; got {value!r}")
        return v


ParamSpace = Categorical | IntRange | FloatRange


class Strategy:
    """Base of all strategies.

    Class attributes
    ----------------
    axis : str
        One of ``worklist``, ``load_balance``, ``driving``, ``direction``, ``launch``.
    name : str
        Registry name, unique on its axis.
    params : dict[str, ParamSpace]
        The strategy's own search space; config keys are ``"<axis>.<param>"``.
    backends : tuple[str, ...]
        Backends that honour the strategy. The CPU engine ignores GPU-only mechanics
        (worklists, load balancing, launch modes), so those list ``("gpu",)`` but are
        still accepted — and validated — on the CPU.
    cuda_files : tuple[str, ...]
        Device fragments (package data under ``<axis>/cuda/``) pasted into the skeleton.
    """

    axis: ClassVar[str] = ""
    name: ClassVar[str] = ""
    params: ClassVar[dict[str, ParamSpace]] = {}
    backends: ClassVar[tuple[str, ...]] = ("cpu", "gpu")
    cuda_files: ClassVar[tuple[str, ...]] = ()

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options

    @classmethod
    def summary(cls) -> str:
        """First line of the docstring."""
        doc = (cls.__doc__ or "").strip()
        if not doc:
            return cls.name
        para = " ".join(doc.split("\n\n")[0].split())
        cut = para.find(". ")
        return para[: cut + 1] if cut >= 0 else para

    @classmethod
    def default_options(cls) -> dict[str, Any]:
        return {k: p.default for k, p in cls.params.items()}

    def check(self, algorithm: AlgorithmSpec, graph: Graph | None, config: Config,
              backend: str) -> str | None:
        """Return why this strategy cannot run the combination, or ``None``."""
        return None

    def defines(self) -> dict[str, str]:
        """Compile-time ``#define``s for the fragment (only what must be constant)."""
        return {}

    @classmethod
    def cuda_source(cls) -> str:
        """Concatenated text of :attr:`cuda_files`, read from package data."""
        if not cls.cuda_files:
            return ""
        pkg = cls.__module__.rsplit(".", 1)[0]
        parts = []
        for fname in cls.cuda_files:
            path = resources.files(pkg).joinpath("cuda", fname)
            parts.append(f"// ---- {cls.axis}/{cls.name}: {fname}\n{path.read_text()}")
        return "\n".join(parts)

    @classmethod
    def cuda_paths(cls) -> list[Path]:
        pkg = cls.__module__.rsplit(".", 1)[0]
        return [Path(str(resources.files(pkg).joinpath("cuda", f))) for f in cls.cuda_files]


class WorklistStrategy(Strategy):
    """Worklist axis: how a thread appends an activated node to the next worklist.

    The fragment defines ``__device__ void gs_wl_push(gs_vid v, gs_vid* out,
    unsigned* size, unsigned cap)``, called only by threads that have a node to push,
    from divergent code (inside edge loops). It reserves a slot by incrementing
    ``*size`` and stores ``v`` when the slot is below ``cap``; a slot at or past ``cap``
    must call ``gs_wl_overflow(v)`` instead, which spills the node to a flag array so
    nothing is lost (the host grows the worklist and compacts the spill). It must not
    synchronise the block or grid, and must not assume which lanes are active.
    """

    axis = "worklist"
    backends = ("gpu",)


class LoadBalanceStrategy(Strategy):
    """Load-balance axis: the nested loop over active nodes and their edges.

    The fragment defines ``__device__ void gs_lb_expand(const GsStep& st)``. For every
    active item ``i < st.n_items`` (node ``gs_active_node(st, i)``) it must call
    ``gs_visit(st, v, e)`` exactly once for each edge ``e`` in
    ``[row[v], row[v + 1])`` and add the number of edges it visited to the thread's
    ``st.edges`` counter. It must be correct for any grid size (grid-stride loops),
    because the persistent launch runs it with a fixed, occupancy-sized grid.
    ``threads_per_item`` tells the host-loop launcher how many threads one item wants.
    """

    axis = "load_balance"
    backends = ("gpu",)

    def threads_per_item(self) -> int:
        return 1


class DrivingStrategy(Strategy):
    """Driving axis: which nodes are active in a step and when the run stops.

    Modes: ``data`` (pop the worklist, push activations to the next one),
    ``topology`` (every node, activations only counted), and ``transition``
    (every node, activations pushed: the step that rebuilds a worklist when a hybrid
    leaves topology mode). The strategy supplies the first mode and the decision
    function, as the device function ``gs_decide`` (used by both launch modes) and
    the same rule in Python for the CPU engine (:meth:`next_mode`).
    """

    axis = "driving"
    cuda_files = ()

    def initial_mode(self, n_active: int, n_nodes: int) -> str:
        return "data"

    def next_mode(self, mode: str, n_next: int, n_nodes: int) -> str:
        """Mode of the next step given this step's activation count."""
        return mode

    def atomic_free(self) -> bool:
        """Whether topology sweeps may use the non-atomic form of monotone reductions."""
        return False


class DirectionStrategy(Strategy):
    """Direction axis: push along out-edges or pull along in-edges."""

    axis = "direction"

    def pull(self, step_mode: str, n_active: int, n_nodes: int) -> bool:
        return False


class LaunchStrategy(Strategy):
    """Launch axis: who runs the iteration loop (host loop or one persistent kernel).

    The fragment defines the ``extern "C" __global__`` kernels the host driver of the
    strategy launches; they call only the shared device pieces of the skeleton
    (``gs_node_phase``, ``gs_edge_phase``, ``gs_decide``), so a strategy on another
    axis never needs a second copy for either launch mode.
    """

    axis = "launch"
    backends = ("gpu",)
    cooperative: ClassVar[bool] = False
