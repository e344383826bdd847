"""Strategy base classes, one per axis, the host hooks, and the declared search spaces.

A strategy is one small class in one module. Its docstring says where the idea comes
from and when it wins; ``params`` declares its search space as data (the tuner reads
it, nothing else needs to; each parameter says whether changing it recompiles);
``check`` returns a reason string when the strategy cannot serve an (algorithm, graph,
config) combination; ``cuda_files`` and ``defines`` supply the device fragment that
fills the axis' slot of the kernel skeleton.

Host mechanics belong to the strategy too, through hooks the engine calls without
knowing why: :meth:`Strategy.buffers` (device buffers, sized from graph and config),
:meth:`Strategy.runtime_args` (scalars packed into the one parameter block every
kernel reads), :meth:`Strategy.phases` (device functions run over the whole grid,
each followed by a barrier), :meth:`WorklistStrategy.seed` and
:meth:`WorklistStrategy.grow` (first active set, overflow), and
:meth:`LaunchStrategy.drive` (the iteration loop over a small engine API).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from .errors import InvalidConfig

if TYPE_CHECKING:
    from .algorithm import AlgorithmSpec
    from .graph import Graph

__all__ = [
    "ConfigView",
    "Buffer",
    "Phase",
    "StepMode",
    "Categorical",
    "IntRange",
    "FloatRange",
    "ParamSpace",
    "Strategy",
    "WorklistStrategy",
    "LoadBalanceStrategy",
    "DrivingStrategy",
    "PriorityKey",
    "DirectionStrategy",
    "LaunchStrategy",
]


class ConfigView(Protocol):
    """What a strategy reads of a configuration: :class:`gswitch.config.Config` is one.

    The contracts below name this view rather than the class, so that the strategy
    contracts do not depend on the configuration, which validates its names against
    the strategies the plugins register.
    """

    def __getitem__(self, key: str) -> Any: ...

    def __contains__(self, key: object) -> bool: ...

    def get(self, key: str, default: Any = None) -> Any: ...

    def key(self) -> str: ...

    def options(self, axis: str) -> dict[str, Any]: ...

    def strategy(self, axis: str) -> Strategy: ...

    def strategies(self) -> dict[str, Strategy]: ...


#: Static shared memory one block may declare (48 KiB: more needs a dynamic allocation).
SHARED_BYTES_LIMIT = 48 * 1024
#: What the core's own device code declares at most (block sums, scans, the last-block
#: flag), kept out of the strategies' share.
SHARED_BYTES_CORE = 512

#: The five strategy axes, in the order the engine composes them; each has its base class
#: below (:data:`AXIS_BASES` in :mod:`gswitch.testing.conformance` maps them).
AXES = ("worklist", "load_balance", "driving", "direction", "launch")


@dataclass(frozen=True)
class Categorical:
    """A choice among listed values."""

    choices: tuple[Any, ...]
    default: Any
    compile_time: bool = False

    def validate(self, key: str, value: Any) -> Any:
        if isinstance(value, np.bool_):
            value = bool(value)
        if isinstance(value, str) and value.lower() in ("true", "false") \
                and any(isinstance(c, bool) for c in self.choices):
            value = value.lower() == "true"
        for c in self.choices:
            # True == 1 in Python: a flag is not a number, nor a number a flag
            if isinstance(c, bool) == isinstance(value, bool) and value == c:
                return c
            if isinstance(value, str) and str(value) == str(c):
                return c
        raise InvalidConfig(
            f"{key} must be one of {', '.join(map(str, self.choices))}; got {value!r}"
        )


@dataclass(frozen=True)
class IntRange:
    """An integer in ``[low, high]``, optionally restricted to multiples of ``step``.

    ``searched`` (ascending values of the range), when given, are the only values the
    tuner tries, as a categorical choice; a study's value outside them stands for the
    nearest (on the log scale where ``log``). Any value of the range stays valid in a
    configuration. A strategy lists there the sizes its fast paths take (spatial
    partitions of a multiple of 32 nodes).
    """

    low: int
    high: int
    default: int
    step: int = 1
    log: bool = False
    compile_time: bool = False
    searched: tuple[int, ...] = ()

    def nearest_searched(self, value: int) -> int:
        """``value`` itself without ``searched``, else the nearest searched value."""
        if not self.searched:
            return value
        if self.log and value > 0 and self.searched[0] > 0:
            return min(self.searched, key=lambda s: (abs(math.log(s / value)), s))
        return min(self.searched, key=lambda s: (abs(s - value), s))

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


@dataclass(frozen=True)
class Buffer:
    """A device buffer a strategy owns.

    The engine allocates it zero-filled (pooled across runs on the same graph),
    zero-fills it again before every run when ``zero`` is set, and passes its address
    to every kernel as the member ``<axis>_<name>`` of the parameter block ``gs``.

    Parameters
    ----------
    name : str
        Member name without the axis prefix.
    ctype : str
        C element type (``"int"``, ``"unsigned"``, ``"unsigned char"``, ...).
    size : int
        Number of elements (at least 1 is allocated).
    zero : bool
        Zero-fill before every run.
    """

    name: str
    ctype: str
    size: int
    zero: bool = False


@dataclass(frozen=True)
class Phase:
    """One device function run over the whole grid in every step, then a barrier.

    The function is ``__device__ void gs_phase_<name>(GsStep& st)`` and must be correct
    for any grid size (grid-stride loops). The host loop launches one kernel per phase
    and sizes its grid from ``items``; the persistent kernel separates phases with
    a grid barrier; CUDA-graph replay launches them all with a fixed grid.

    Parameters
    ----------
    name : str
        Device function suffix; unique within the composed module.
    order : int
        Position within a step: ``0`` before the node operator, ``10`` node operator,
        ``20`` edge expansion, ``30`` after expansion (worklist finish), ``40`` last.
    items : str
        What the grid covers: ``"active"`` (the step's items), ``"nodes"``,
        ``"words"`` (``ceil(nodes / 32)``) or ``"queued"`` (a strategy side queue whose
        size the phase reads itself; the host sizes it like ``"active"``).
    modes : tuple of str, optional
        Names of the driving strategy's step modes (:class:`StepMode`) it runs in; a
        name the chosen driving strategy does not declare never matches. All modes if
        empty (subject to ``runs_in``).
    direction : str, optional
        ``"push"`` or ``"pull"``: run only in steps of that direction.
    threads_per_item : int
        Threads the host loop gives each item.
    runs_in : {"all", "operators", "frontier"}
        Which steps run it, whatever the mode names: every step, steps that run the
        algorithm's operators (:attr:`StepMode.operators`), or operator steps whose
        items come from the worklist (a frontier to test membership in).
    """

    name: str
    order: int
    items: str = "active"
    modes: tuple[str, ...] = ()
    direction: str | None = None
    threads_per_item: int = 1
    runs_in: str = "all"


@dataclass(frozen=True)
class StepMode:
    """One kind of step a driving strategy produces.

    The core knows no mode by name: it reads these properties. A driving strategy lists
    its modes in :attr:`DrivingStrategy.modes`; the position in that tuple is the mode's
    number in the control block's mode word (its low 4 bits; the bits from 8 up carry
    the strategy's own state, see :class:`DrivingStrategy`), and codegen defines
    ``GS_MODE_<NAME>`` for it.

    Parameters
    ----------
    name : str
        Identifier, unique within the strategy (a C identifier once upper-cased).
    items : {"worklist", "nodes"}
        What the step's active items are: the worklist's (``gs_wl_item``) or every node.
    pushes : bool
        Activations are pushed to the worklist of the next step (else only counted, and
        the count decides).
    operators : bool
        The step runs the algorithm's node and edge operators. A step that does not
        runs only the phases its driving strategy (or a worklist) adds: a refill of the
        worklist from a strategy's own store, say.
    keeps : bool
        The step's items are the next step's items too (a ``worklist`` mode that does
        not push: topology-driven over a fixed set). The core re-pushes them (phase
        ``keep``); the run ends after a step that activated nothing.
    """

    name: str
    items: str
    pushes: bool
    operators: bool = True
    keeps: bool = False
    own_operators: bool = False

    @property
    def core_operators(self) -> bool:
        """Whether the core's node and expansion phases run in a step of this mode."""
        return self.operators and not self.own_operators

    def __post_init__(self) -> None:
        if self.items not in ("worklist", "nodes"):
            raise ValueError(f"StepMode {self.name}: items must be 'worklist' or 'nodes', "
                             f"got {self.items!r}")
        if self.keeps and (self.pushes or self.items != "worklist"):
            raise ValueError(f"StepMode {self.name}: keeps needs items='worklist' and "
                             "pushes=False")
        if self.own_operators and not self.operators:
            raise ValueError(f"StepMode {self.name}: own_operators needs operators=True")
        if not self.name.isidentifier():
            raise ValueError(f"StepMode name {self.name!r} is not an identifier")


class Strategy:
    """Base of all strategies.

    Attributes
    ----------
    axis : str
        One of ``worklist``, ``load_balance``, ``driving``, ``direction``, ``launch``.
    name : str
        Registry name, unique on its axis.
    params : dict[str, ParamSpace]
        The strategy's own search space; config keys are ``"<axis>.<param>"``. A
        ``compile_time`` parameter becomes a ``#define`` (see :meth:`defines`) and
        changes the module; any other is a runtime argument (see
        :meth:`runtime_args`) and never recompiles.
    backends : tuple[str, ...]
        Backends that honour the strategy. The CPU engine ignores GPU-only mechanics
        (worklists, load balancing, launch modes), so those list ``("gpu",)``.
    cuda_files : tuple[str, ...]
        Device fragments (package data under ``<axis>/cuda/``) pasted into the skeleton.
    kernels : tuple[str, ...]
        ``extern "C" __global__`` entry points the fragment defines besides the
        skeleton's ``gs_phase_kernel`` (a persistent loop, a worklist's own pass); the
        module compiles them and the engine looks them up by these names.
    validated : bool
        ``False`` while the strategy's device code has not passed the GPU suite on a
        device. The tuner leaves such a strategy out of its GPU search (saying why), and
        ``gswitch strategies`` marks it; a user may still choose it explicitly.
    unvalidated_params : tuple[str, ...]
        Parameters whose values other than the default select device code that has not
        yet passed the GPU suite on a device; the tuner's GPU search keeps them at their
        default (a user may still set them).
    """

    axis: ClassVar[str] = ""
    name: ClassVar[str] = ""
    params: ClassVar[dict[str, ParamSpace]] = {}
    backends: ClassVar[tuple[str, ...]] = ("cpu", "gpu")
    cuda_files: ClassVar[tuple[str, ...]] = ()
    kernels: ClassVar[tuple[str, ...]] = ()
    validated: ClassVar[bool] = True
    unvalidated_params: ClassVar[tuple[str, ...]] = ()

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = {**self.default_options(), **options}

    @classmethod
    def summary(cls) -> str:
        """First sentence of the docstring."""
        doc = (cls.__doc__ or "").strip()
        if not doc:
            return cls.name
        para = " ".join(doc.split("\n\n")[0].split())
        cut = para.find(". ")
        return para[: cut + 1] if cut >= 0 else para

    @classmethod
    def default_options(cls) -> dict[str, Any]:
        """Every declared parameter at its default."""
        return {k: p.default for k, p in cls.params.items()}

    def check(self, algorithm: AlgorithmSpec, graph: Graph | None, config: ConfigView,
              backend: str) -> str | None:
        """Return why this strategy cannot run the combination, or ``None``."""
        return None

    @classmethod
    def held_params(cls, algorithm: AlgorithmSpec) -> dict[str, Any]:
        """Parameters this strategy runs ``algorithm`` with at one value only, each with
        that value (default: none).

        :meth:`check` refuses any other value of them for ``algorithm``; the tuner holds
        them at this value for it rather than drawing them. Declare here what a
        declaration of the algorithm fixes (a bucket width, say), not what depends on
        the graph.
        """
        return {}

    def defines(self) -> dict[str, str]:
        """Compile-time ``#define`` lines for the fragment: one per compile-time parameter."""
        return {}

    def runtime_args(self, graph: Graph, config: ConfigView) -> dict[str, tuple[str, Any]]:
        """Scalars for the parameter block: ``{name: (C type, value)}``.

        They reach the device as ``gs.<axis>_<name>``; changing one never recompiles.
        """
        return {}

    def buffers(self, spec: AlgorithmSpec, graph: Graph, config: ConfigView) -> list[Buffer]:
        """Device buffers this strategy needs for ``graph`` (see :class:`Buffer`)."""
        return []

    def phases(self, spec: AlgorithmSpec, config: ConfigView) -> list[Phase]:
        """Phases this strategy adds to every step (see :class:`Phase`)."""
        return []

    def shared_bytes(self, spec: AlgorithmSpec, config: ConfigView) -> int:
        """Static shared memory its fragment declares per block (bytes, an upper bound)
        at ``config["block_size"]``.

        Every phase of a module lives in one kernel, so the strategies' shared memory adds
        up; the runner refuses a combination whose total passes what a block can declare
        (:data:`SHARED_BYTES_LIMIT`, less the core's :data:`SHARED_BYTES_CORE`).
        """
        return 0

    @classmethod
    def cuda_source(cls) -> str:
        """Concatenated text of :attr:`cuda_files`, read from package data."""
        if not cls.cuda_files:
            return ""
        parts = []
        for path in cls.cuda_paths():
            parts.append(f"// ---- {cls.axis}/{cls.name}: {path.name}\n{path.read_text()}")
        return "\n".join(parts)

    @classmethod
    def cuda_paths(cls) -> list[Path]:
        """Files of :attr:`cuda_files` (``cuda/`` next to the defining module)."""
        pkg = cls.__module__.rsplit(".", 1)[0]
        return [Path(str(resources.files(pkg).joinpath("cuda", f))) for f in cls.cuda_files]


class WorklistStrategy(Strategy):
    """Worklist axis: the active set of data-driven steps, its storage and its growth.

    The fragment defines, for the skeleton:

    - ``__device__ unsigned gs_wl_size(const GsStep& st)``: items of step ``st.it``
      (``st.in_size`` holds the pushes step ``st.it - 1`` reported; a queue caps it);
    - ``__device__ gs_vid gs_wl_item(const GsStep& st, unsigned i)``: the ``i``-th;
    - ``__device__ void gs_wl_push(GsStep& st, gs_vid v)``: activate ``v`` for the next
      step. Called from divergent code (inside edge loops) by threads that have a node
      to push; must not synchronise the block or grid nor assume which lanes are
      active. When pushes are counted directly it adds to the step's size counter
      ``st.ctl_cur[GS_CTL_SIZE]``; otherwise a finish phase must set it;
    - when :attr:`membership` is true, ``__device__ bool gs_wl_contains(const GsStep&
      st, gs_vid v)``: whether ``v`` is an item of step ``st.it`` (pull traversal
      asks it; other worklists get a frontier bitmap from the direction strategy);
    - optionally ``#define GS_WL_PREFETCH 1`` and ``__device__ gs_vid
      gs_wl_prefetch(const GsStep& st, unsigned i)``: item ``i`` of step ``st.it`` read
      before the step's size is known (any value when ``i`` is past the storage, never
      a fault). With a load balancer that defines ``GS_LB_FIRST_ITEM``, kernels then
      load each thread's first item while the step's size is still in flight.

    - optionally ``#define GS_WL_BUFFERED 1`` with ``__device__ void
      gs_wl_begin(GsStep& st)`` and ``__device__ void gs_wl_flush(GsStep& st)``: a
      worklist that buffers pushes (shared memory, per-thread slots) gets ``begin``
      before and ``flush`` after every phase, from every thread of every block in
      block-uniform code, so both may hold ``__syncthreads``; ``flush`` lands the
      buffered pushes before the phase's barrier. Other worklists get no-ops.

    Activations of topology steps and, under ``GS_COUNT_FRONTIER_EDGES``, the out-edges
    of activated nodes are counted by the skeleton in registers and flushed once per
    warp and phase; a worklist counts only its own pushes.

    Host side: :meth:`buffers` declares the storage, :meth:`seed` writes the first
    active set, and :meth:`grow` enlarges storage after a step reported overflow
    (``GS_CTL_OVERFLOW``); :attr:`bounded` says that it never overflows (a CUDA-graph
    launch requires it).
    """

    axis = "worklist"
    backends = ("gpu",)
    membership: ClassVar[bool] = False

    def bounded(self, graph: Graph | None, config: ConfigView | None,
                algorithm: AlgorithmSpec | None = None) -> bool:
        """Whether the worklist can never overflow on ``graph`` (no host growth needed).

        ``algorithm``, when given, lets a worklist use what the algorithm guarantees
        (e.g. that a step activates each node at most once). Strategies written before
        it was passed may keep the two-argument form.
        """
        return False

    def seed(self, ctx: Any, start: Any, all_nodes: bool) -> None:
        """Write the first active set before step 0.

        ``start`` is a device array of node ids (every node when ``all_nodes``); the same
        ids are on the host as ``ctx.start_host`` (``None`` when ``all_nodes``). Use
        ``ctx.copy`` and ``ctx.engine.upload``, which queue on the run's stream without
        waiting, rather than CuPy slicing or pageable copies.
        """

    def grow(self, ctx: Any, it: int) -> None:
        """Grow storage after step ``it`` overflowed; nothing pushed may be lost."""
        raise NotImplementedError(f"worklist {self.name} overflowed but cannot grow")


class LoadBalanceStrategy(Strategy):
    """Load-balance axis: the nested loop over active nodes and their out-edges (push).

    The fragment defines ``__device__ void gs_lb_expand(GsStep& st)``. For every active
    item ``i < st.n_items`` (node ``gs_item(st, i)``) it loads the node's source
    fields once with ``GsSrc s = gs_load_src(v)`` and calls ``gs_visit(st, v, s, e)``
    exactly once for each edge ``e`` in ``[row[v], gs_row_end(v))`` (the row, or its
    first edges when the edge operator names a limit, ``edge_op(first=...)``; bin nodes
    by ``gs_expand_degree(v)``); ``gs_visit`` counts the edge. It must be correct for
    any grid size (grid-stride loops), because the persistent and CUDA-graph launches
    run it with a fixed, occupancy-sized grid. It may add phases of its own (a side
    queue of deferred outliers, say).
    :meth:`threads_per_item` tells the host loop how many threads one item wants.
    Optionally it defines ``GS_LB_FIRST_ITEM``, an expression of ``blockIdx`` and
    ``threadIdx`` giving the first item index the calling thread expands, so that the
    item can be loaded ahead (see :class:`WorklistStrategy`).
    """

    axis = "load_balance"
    backends = ("gpu",)

    def threads_per_item(self) -> int:
        """Threads the host-loop launch gives each active item."""
        return 1

    def phases(self, spec: AlgorithmSpec, config: ConfigView) -> list[Phase]:
        """The push expansion, in steps that push."""
        return [Phase("expand", 20, "active", direction="push",
                      threads_per_item=self.threads_per_item(), runs_in="operators")]


@dataclass(frozen=True)
class PriorityKey:
    """CPU engine: an algorithm's priority key, evaluated at node ids by calling it, and
    the bucket width the algorithm fixes (``width``, ``None``: the strategy's own).
    """

    evaluate: Callable[[Any], Any]
    width: float | None = None

    def __call__(self, nodes: Any) -> Any:
        return self.evaluate(nodes)


class DrivingStrategy(Strategy):
    """Driving axis: which nodes are active in a step and when the run stops.

    The core names no mode: a driving strategy declares the kinds of step it produces
    in :attr:`modes` (:class:`StepMode`: where the items come from, whether activations
    are pushed or counted, whether the algorithm's operators run). The fragment defines
    ``__device__ int gs_decide(int mode, unsigned count, const unsigned* slot, int*
    done)``: the mode word of the next step from this step's mode word and count (pushes,
    or activations when the mode only counts), reading its own runtime arguments from
    ``gs`` and, if it needs them, the step's counter slot ``slot`` (``GS_CTL_DRIVE``
    and ``GS_CTL_DRIVE + 1`` are the strategy's: zero at the start of the step). The low
    4 bits of the mode word are the mode's number (``GS_MODE_<NAME>``, its position in
    :attr:`modes`); bits 8 and up are the strategy's own state between steps (a bucket,
    say), kept in a register by the persistent kernel and in the control block
    otherwise, so the decision stays a pure function every thread of a grid can take.

    A strategy that defines ``GS_DRIVE_ADMIT`` (see :meth:`defines`) also defines
    ``__device__ bool gs_drive_admit(GsStep& st, gs_vid u)``, asked before each push:
    ``false`` keeps ``u`` back in the strategy's own store, from which a later step
    (a mode without operators, with a phase of the strategy) pushes it. Every node
    kept back must be pushed eventually: a result never depends on the driving
    strategy, only the work does.

    The CPU engine uses :meth:`initial_mode`, :meth:`next_mode` and, for strategies
    that keep nodes back, :meth:`begin`, :meth:`admit` and :meth:`refill`; a strategy
    that widens a step's items or iterates inside a step answers :meth:`items` and
    :meth:`local_rounds`.
    """

    axis = "driving"
    #: The kinds of step this strategy produces; the first is mode number 0.
    modes: ClassVar[tuple[StepMode, ...]] = ()
    #: Each step applies the operators to the nodes the step before activated, no
    #: sooner and no later (level-synchronous). False where nodes may be kept back for
    #: a later step (priority buckets) or run ahead of their level inside a step
    #: (iteration inside a partition, one barrier-free step): a pull that takes the
    #: first hit as final is then not exact.
    in_activation_order: ClassVar[bool] = True
    #: A block owns a partition of contiguous nodes and passes over it: where the edge
    #: operator allows it, codegen emits ``gs_edge_op_local`` and its helpers, which
    #: hold the partition's reduced fields in shared memory (:mod:`gswitch.codegen_stage`).
    stages_partitions: ClassVar[bool] = False

    @classmethod
    def mode_names(cls) -> tuple[str, ...]:
        """Names of :attr:`modes`, in mode-number order."""
        return tuple(m.name for m in cls.modes)

    @classmethod
    def mode(cls, name: str) -> StepMode:
        """The declared mode called ``name``."""
        for m in cls.modes:
            if m.name == name:
                return m
        raise KeyError(f"driving {cls.name} has no mode {name!r}; it has "
                       f"{', '.join(cls.mode_names())}")

    @classmethod
    def worklist_only(cls) -> bool:
        """Every step is an operator step over the worklist's items, in activation
        order (no mode sweeps every node, nothing is kept back).
        """
        return bool(cls.modes) and cls.in_activation_order and all(
            m.items == "worklist" and m.operators for m in cls.modes)

    def initial_mode(self, n_active: int, n_nodes: int) -> str:
        """Name of the mode of step 0."""
        return self.modes[0].name

    def next_mode(self, mode: str, n_next: int, n_nodes: int) -> str:
        """Name of the next step's mode given this step's activation count (CPU engine).

        For a strategy that keeps nodes back, ``n_next`` counts what entered the
        worklist, and :meth:`refill` decides the modes without operators.
        """
        return mode

    def begin(self, graph: Graph, config: ConfigView, key: PriorityKey | None) -> Any:
        """CPU engine: per-run state of a strategy that keeps nodes back.

        ``key(nodes)`` evaluates the algorithm's priority key at ``nodes``, and
        ``key.width`` is the bucket width the algorithm fixes, if any (``key`` is
        ``None`` when the algorithm declares no priority).
        """
        return None

    def bucket(self, state: Any) -> int:
        """CPU engine: the bucket the next step processes (``p.bucket``); 0 for a
        strategy without buckets.
        """
        return 0

    def admit(self, state: Any, nodes: Any) -> Any:
        """CPU engine: the activations (sorted node ids) that enter the next worklist;
        the strategy keeps the rest in ``state``.
        """
        return nodes

    def refill(self, state: Any, mode: str) -> tuple[Any, str | None]:
        """CPU engine: a step of ``mode`` whose :attr:`StepMode.operators` is false.

        Returns the next worklist and the next mode's name, or ``None`` when the run is
        done.
        """
        raise NotImplementedError(f"driving {self.name} declares mode {mode!r} without "
                                  "operators but no refill")

    def items(self, nodes: Any, n_nodes: int) -> Any:
        """CPU engine: the items of a worklist step from its activated nodes ``nodes``
        (sorted ids); whole partitions for a strategy that activates partitions.
        """
        return nodes

    def local_rounds(self, graph: Graph, mode: str) -> tuple[Any, int] | None:
        """CPU engine: iterate inside a step of ``mode``, or ``None`` (one pass).

        Returns ``(size, rounds)``: nodes form groups of ``size`` consecutive ids
        (``None``: one group of every node). A node activated along an edge inside its
        group is processed again in the same step, up to ``rounds`` more passes; an
        activation along an edge between groups, or one left after the last pass, goes
        to the next step.
        """
        return None

    def local_width(self, graph: Graph, priority_width: float | None) -> float | None:
        """Both engines: the bucket width by which the passes inside a step are ordered
        (the algorithm's priority key over it, nearest bucket first), or ``None``
        (passes take every queued node). Asked only for algorithms that declare a
        priority key; ``priority_width`` is the algorithm's fixed width, if any.
        """
        return None

    def atomic_free(self) -> bool:
        """Whether topology sweeps may use the non-atomic form of monotone reductions."""
        return False

    def pushes_only(self) -> bool:
        """Whether this strategy, with its options, expands active nodes along their
        out-edges only (default: no).

        Where it does, :meth:`check` refuses every direction strategy that may pull
        (:attr:`DirectionStrategy.may_pull`), and the tuner draws none with it.
        """
        return False


class DirectionStrategy(Strategy):
    """Direction axis: push along out-edges or pull along in-edges, decided per step.

    The fragment defines ``__device__ int gs_dir_decide(int pull, unsigned n_front,
    unsigned long long front_edges, unsigned long long unvisited_edges)``: whether the
    next step pulls, from the next frontier's size and out-edge count and the edges not
    yet visited. A strategy that may pull sets :attr:`may_pull`; the engine then
    uploads the reverse graph and the skeleton's pull phase walks in-edges.
    :meth:`pull` is the CPU engine's form of the same decision.
    """

    axis = "direction"
    may_pull: ClassVar[bool] = False
    counts_frontier_edges: ClassVar[bool] = False

    def initial_pull(self, n_active: int, n_nodes: int) -> bool:
        """Whether step 0 pulls."""
        return False

    def pull(self, step_mode: str, n_active: int, n_nodes: int) -> bool:
        """CPU engine: whether this step pulls."""
        return False


class LaunchStrategy(Strategy):
    """Launch axis: who runs the iteration loop.

    :meth:`drive` receives the engine's :class:`gswitch.engine.context.LaunchContext`
    (launch one phase or a whole step, read the control block, grow the worklist,
    record events, check the deadline, size a fixed grid with ``useful_grid``, keep
    what it built for later runs in ``memo``) and runs steps until the run converges. Its
    fragment may define extra ``extern "C" __global__`` kernels (the persistent
    loop); every kernel calls the same shared phase functions, so no strategy needs a
    second copy for another launch mode. :attr:`kernels` names them.
    """

    axis = "launch"
    backends = ("gpu",)
    cooperative: ClassVar[bool] = False
    #: On a small graph, the first read of the control block brings the fields and the
    #: head of the step trace with it (a loop that runs on the device is usually over by
    #: then).
    results_with_first_read: ClassVar[bool] = False
    #: The phase kernel that takes a step's decision also writes the control block into
    #: page-locked host memory (step number last, behind a system fence), and a read of
    #: the control block right after ``ctx.launch_step()`` waits for that step number
    #: instead of copying the block back and waiting for the stream: about 6 us less a
    #: step. Only for drivers that read the control block after every step they launch.
    polls_control: ClassVar[bool] = False
    #: The kernel :meth:`drive` launches once, without arguments, over
    #: ``ctx.cooperative_grid(kernel)`` blocks, before one read of the control block
    #: that ends the run unless a step overflowed. A repeated run on a small graph may
    #: then be replayed without ``drive`` (:mod:`gswitch.engine.repeat`); ``None``: never.
    repeat_kernel: ClassVar[str | None] = None
    #: The worklist a run takes when its configuration names none and :meth:`check`
    #: refuses the default one (a launch that cannot grow a worklist names one that
    #: never grows); ``None``: the refusal stands.
    fallback_worklist: ClassVar[str | None] = None

    def cooperative_blocks_per_sm(self) -> int:
        """Most blocks per multiprocessor the grid of a cooperative kernel gets from
        ``ctx.cooperative_grid`` (0: as many as fit at the module's ``block_size``).
        """
        return 0

    def drive(self, ctx: Any) -> None:
        """Run steps until convergence, the iteration limit or the deadline."""
        raise NotImplementedError
