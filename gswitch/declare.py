"""What an algorithm class is made of: node fields, parameters, start sets, operator
markers, the raw-CUDA escape hatch, and the stages and host steps of a staged algorithm.

:func:`gswitch.algorithm.algorithm` reads these from a decorated class; they are
re-exported there and from :mod:`gswitch`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import expr as ex
from ._hints import under_cli
from .errors import AlgorithmError, InvalidInput

__all__ = [
    "INF",
    "NODE_ID",
    "Input",
    "per_node_input",
    "NodeField",
    "EdgeField",
    "HostEdges",
    "Param",
    "StepTotal",
    "ActiveSet",
    "from_source",
    "all_nodes",
    "chosen_nodes",
    "stage",
    "host_step",
    "HostStep",
    "edge_op",
    "node_op",
    "RawOperator",
    "raw_edge_op",
    "int_inf",
]


#: Initial value meaning "unreached": +inf for floats, :func:`int_inf` for integers.
INF = math.inf


class _NodeIdInit:
    def __repr__(self) -> str:
        return "NODE_ID"


#: Initial value: each node's own id (connected-component labels).
NODE_ID = _NodeIdInit()


@functools.cache
@functools.lru_cache(maxsize=64)
def int_inf(dtype: str | np.dtype) -> int:
    """Integer stand-in for infinity: a quarter of the type's range.

    Leaving headroom means ``INF + small`` stays above ``INF`` instead of wrapping
    around, so a relaxation from an unreached node never improves anything even in a
    topology-driven sweep that touches every node. Kept per dtype: ``np.iinfo`` costs
    microseconds, and small CPU calls ask several times.
    """
    return int(np.iinfo(np.dtype(dtype)).max // 2 + 1) if dtype != "uint32" else 2**30


@dataclass(frozen=True)
class Input:
    """A node field's initial values given with the run: ``gs.run(..., name=values)``.

    ``values`` is one number per node (in node ids), or what ``prepare`` turns into
    that; without it every node starts at ``default`` (a number or a callable of the
    resolved parameters, as ``NodeField.init``). Made by :func:`per_node_input`.
    """

    name: str
    default: Any = 0
    #: ``prepare(values, params) -> array of n_nodes numbers``: the algorithm's own check
    #: and normalisation (raising :class:`~gswitch.errors.InvalidInput` with one line)
    prepare: Any = None
    doc: str = ""
    #: ``derive(values, params) -> values or None``: the values from the run's other
    #: parameters (a sample of ``k`` nodes, say), given what the caller passed (``None``
    #: when nothing); called before ``prepare`` and before a renumbering, so derived
    #: values are in the caller's node ids like given ones
    derive: Any = None
    #: whether the argument may name nodes: ``"list"`` (a list of node ids),
    #: ``"one"`` (one node id, beside the per-node values) or ``None``. On a networkx
    #: graph the runner reads such ids as node names.
    names: str | None = None

    @property
    def required(self) -> bool:
        """Whether a run cannot do without the argument: it lists nodes (``names="list"``),
        every node's default is 0 (none listed) and nothing derives the list, so a run
        without it would start from no node and return nothing (msbfs's ``sources``).
        :meth:`AlgorithmSpec.resolve_params` and the command line refuse such a run.
        """
        return self.names == "list" and self.derive is None \
            and isinstance(self.default, (int, float)) and not isinstance(self.default, bool) \
            and self.default == 0


def per_node_input(name: str, default: Any = 0, *, prepare: Any = None,
                   doc: str = "", derive: Any = None, names: str | None = None) -> Input:
    """A field initialised from a run argument ``name`` (one value per node).

    Parameters
    ----------
    name : str
        The keyword of :func:`gswitch.run` (and ``--param`` is not enough for an array:
        Python callers pass it).
    default : number or callable
        Every node's value when the run is not given one.
    prepare : callable, optional
        ``prepare(values, params)``: checks and normalises what the caller gave (a
        personalisation vector to sum 1, say) and returns one number per node.
    doc : str
        What the values mean, for ``gswitch algorithms``.
    derive : callable, optional
        ``derive(values, params)``: the values to use, from what the caller gave
        (``None`` when nothing) and the run's parameters, or ``None`` for ``default``
        (betweenness draws ``k`` sources from its ``k`` and ``seed`` parameters). It may
        refuse a combination with :class:`~gswitch.errors.InvalidInput`.
    names : {"list", "one"}, optional
        The argument may name nodes instead of giving a value per node: a list of node
        ids (``"list"``: sources, say) or one node id (``"one"``: a personalisation's
        node). On a networkx graph the runner maps node names to ids first.

    Returns
    -------
    Input
        For ``NodeField(dtype, init=...)``.

    Examples
    --------
    >>> import gswitch as gs
    >>> f = gs.NodeField("float32", init=gs.per_node_input("teleport", default=1.0))
    >>> f.init.name
    'teleport'

    """
    if names not in (None, "list", "one"):
        raise ValueError(f"per_node_input names must be 'list', 'one' or None; got {names!r}")
    return Input(name, default, prepare, doc, derive, names)


@dataclass
class NodeField:
    """A per-node value of an algorithm.

    Parameters
    ----------
    dtype : str
        One of ``int32``, ``uint32``, ``int64``, ``uint64``, ``float32``, ``float64``
        (``uint64``: a set of up to 64 members, one bit each, combined by ``reduce_or``).
    init : number, INF, NODE_ID, callable or Input
        Initial value of every node; a callable receives the resolved parameters
        (a mapping that also holds ``n_nodes``) and returns a number; an
        :class:`Input` (:func:`per_node_input`) takes one value per node from the run.
    at_source : number, optional
        Initial value of the source node(s) for source-based algorithms.
    output : bool
        Whether the field is part of the result (scratch fields are not).
    doc : str
        One line shown by ``gswitch strategies``/``info`` tooling.
    buffered : bool
        A Jacobi field: every read in a step sees its value as of the start of the step,
        while the step's writes (reductions, assignments) build the next value; the two
        swap after the step. The algorithm needs ``node_after_edges=True`` (the swap
        ends its node operator) and a driving strategy whose every step sweeps every
        node (topology); declare it in ``supports``/``defaults``.
    ids : {None, "", "node", "min_label"}
        What the field holds, so a run on a renumbered graph (the ``renumber`` key,
        :mod:`gswitch.locality`) returns it in the caller's ids: ``""`` a value,
        ``"node"`` a node id (a parent, say), ``"min_label"`` the smallest node id of a
        group (a component label). ``None`` (the default) means ``"min_label"`` for a
        field initialised to :data:`NODE_ID` and ``""`` otherwise.

    """

    dtype: str
    init: Any = 0
    at_source: Any = None
    output: bool = True
    doc: str = ""
    name: str = ""
    buffered: bool = False
    ids: str | None = None

    def __post_init__(self) -> None:
        if self.dtype not in ex.DTYPES or self.dtype == "bool":
            raise AlgorithmError(
                f"NodeField dtype must be one of int32, uint32, int64, uint64, float32, "
                f"float64; "
                f"got {self.dtype!r}"
            )
        if self.ids not in (None, "", "node", "min_label"):
            raise AlgorithmError(f"NodeField ids must be '', 'node' or 'min_label'; "
                                 f"got {self.ids!r}")

    @property
    def id_kind(self) -> str:
        """What the field holds: ``ids``, or what its initial value implies."""
        if self.ids is not None:
            return self.ids
        return "min_label" if self.init is NODE_ID else ""

    def initial(self, n: int, params: Mapping[str, Any]) -> np.ndarray:
        """Initial array of length ``n``."""
        out = np.empty(n, dtype=self.dtype)
        self.fill_initial(out, params)
        return out

    def fill_initial(self, out: np.ndarray, params: Mapping[str, Any]) -> None:
        """Write the initial value of every node into ``out`` (an array of this field's
        dtype, one item per node), without allocating: the GPU engine fills its pinned
        staging buffer directly.
        """
        init = self.initial_value(params)
        if init is NODE_ID:
            out[:] = np.arange(out.size, dtype=out.dtype)
            return
        if isinstance(init, np.ndarray):  # a per-node input
            out[:] = init
            return
        out.fill(init)

    def initial_value(self, params: Mapping[str, Any]) -> Any:
        """The value every node starts with (infinity as this dtype stores it), or
        :data:`NODE_ID` when each node starts with its own id.
        """
        init = self.init
        if init is NODE_ID:
            return NODE_ID
        if isinstance(init, Input):
            given = params.get(init.name)
            if given is not None:
                return given  # validated by AlgorithmSpec.resolve_params
            init = init.default
        if callable(init):
            init = init(params)
        return self._number(init)

    def _number(self, value: Any) -> Any:
        if isinstance(value, float) and math.isinf(value) and self.dtype not in ("float32",
                                                                                 "float64"):
            return int_inf(self.dtype) if value > 0 else -int_inf(self.dtype)
        return value


@dataclass
class EdgeField:
    """A per-edge value of a staged algorithm or of array code, never of operators.

    One value per stored edge of the graph the algorithm runs on (after symmetrisation
    and, for ``simple`` algorithms, without self loops and parallel edges), in that
    graph's CSR order: the order of :class:`HostEdges`. Operators do not see it; a host
    step declared with ``host_step(edges=True)`` computes it from the node fields and
    the edges, with array operations (Brandes' edge dependencies after each source), or
    a formulation run by array code (``direct=`` on :func:`~gswitch.algorithm`) returns
    it. A run on a renumbered graph returns it in the caller's edge order.

    Parameters
    ----------
    dtype : str
        One of ``int32``, ``uint32``, ``int64``, ``float32``, ``float64``.
    init : number
        Initial value of every edge.
    output : bool
        Whether the field is part of the result.
    doc : str
        What the value means.
    ids : {"", "node"}
        ``"node"`` when the value is a node id (an edge's endpoint), mapped back to the
        caller's ids after a renumbered run.

    """

    dtype: str
    init: Any = 0
    output: bool = True
    doc: str = ""
    ids: str = ""
    name: str = ""

    def __post_init__(self) -> None:
        if self.dtype not in ex.DTYPES or self.dtype == "bool":
            raise AlgorithmError(
                f"EdgeField dtype must be one of int32, uint32, int64, float32, float64; "
                f"got {self.dtype!r}")
        if self.ids not in ("", "node"):
            raise AlgorithmError(f"EdgeField ids must be '' or 'node'; got {self.ids!r}")

    @property
    def id_kind(self) -> str:
        """What the field holds: ``""`` a value, ``"node"`` a node id."""
        return self.ids


class HostEdges(tuple):
    """The edges a host step declared with ``host_step(edges=True)`` receives:
    ``(src, dst, weight)`` arrays of the array module (int32, int32, float32; every
    weight 1 on an unweighted graph), one item per stored edge in CSR order, and
    ``directed``: ``False`` when every edge is stored both ways with one weight (an
    undirected graph), so a node's out-edges are also its in-edges.
    """

    __slots__ = ()

    def __new__(cls, src: Any, dst: Any, weight: Any, directed: bool = True) -> HostEdges:
        return super().__new__(cls, (src, dst, weight, bool(directed)))

    @property
    def directed(self) -> bool:
        """Whether the graph is directed."""
        return self[3]

    @property
    def src(self) -> Any:
        """Source node of each edge."""
        return self[0]

    @property
    def dst(self) -> Any:
        """Destination node of each edge."""
        return self[1]

    @property
    def weight(self) -> Any:
        """Weight of each edge."""
        return self[2]


@dataclass
class Param:
    """A scalar algorithm parameter, passed to kernels as an argument.

    Parameters
    ----------
    dtype : str
        Scalar type.
    default : number
        Value when the caller gives none.
    low, high : number, optional
        Inclusive bounds checked when a run starts.
    doc : str
        What the parameter means.

    """

    dtype: str
    default: Any
    low: Any = None
    high: Any = None
    doc: str = ""
    name: str = ""

    def validate(self, value: Any) -> Any:
        """Return ``value`` converted to the parameter type, or raise :class:`InvalidInput`.

        An integer parameter takes integers and integral numbers (``3``, ``3.0``,
        ``"3"``), not ``2.5``.
        """
        integer = not self.dtype.startswith("float")
        # on the command line the flag as given: --param alpha=2
        what = f"--param {self.name}={value}" if under_cli() else f"parameter {self.name}"
        try:
            v = _integral(value) if integer else float(value)
        except (TypeError, ValueError, OverflowError):
            raise InvalidInput(
                f"{what} must be {'an integer' if integer else 'a number'}, got {value!r}"
            ) from None
        if isinstance(v, float) and math.isnan(v):
            raise InvalidInput(f"{what} must not be NaN")
        if self.low is not None and v < self.low or self.high is not None and v > self.high:
            raise InvalidInput(f"{what} must be in [{self.low}, {self.high}], got {value!r}")
        return v


def _integral(value: Any) -> int:
    """``value`` as an int where it is one (``3``, ``3.0``, ``"3"``, ``"3.0"``), else
    :class:`ValueError`: a fraction is not truncated.
    """
    if not isinstance(value, (float, np.floating, str)):
        return int(value)
    f = float(value)
    if not f.is_integer():
        raise ValueError(f"{value!r} is not an integer")
    return int(f)


@dataclass
class StepTotal:
    """A named float64 sum over a step, read by the operators of the next step.

    A node operator adds to it with ``n.total(value, into="name")``; any operator of
    the following step reads the sum as ``p.name`` (zero in a run's first step). It is
    the global reduction a formulation needs between steps beyond the convergence total
    of ``n.total(value)``: a power iteration's rank held by dangling nodes, which the
    next step spreads over every node. Summed on the device (a warp, then a block, then
    one atomic per block), with no host round trip in any launch mode. At most
    :data:`MAX_STEP_TOTALS` per algorithm. A step of a driving mode that runs no
    operators would read zeros, so such drivings are refused for algorithms that read
    one.

    Parameters
    ----------
    doc : str
        What the sum means.

    """

    doc: str = ""
    name: str = ""


#: Named step totals an algorithm may declare (the control block holds three steps' of them).
MAX_STEP_TOTALS = 4


@dataclass(frozen=True)
class ActiveSet:
    """Which nodes are active in the first super-step: ``"source"``, ``"all"`` or
    ``"chosen"`` (a stage's: the nodes the preceding host step chose).
    """

    kind: str


def from_source() -> ActiveSet:
    """Start from the ``source`` node given to the run."""
    return ActiveSet("source")


def all_nodes() -> ActiveSet:
    """Start with every node active."""
    return ActiveSet("all")


def chosen_nodes() -> ActiveSet:
    """A stage's start set: the node ids the preceding :func:`host_step` returned under
    ``"start"``.
    """
    return ActiveSet("chosen")


@dataclass(frozen=True)
class HostStep:
    """A step of a staged algorithm that runs on the host between operator stages.

    ``func(fields, params, xp)`` gets the fields as arrays of ``xp`` (NumPy on the CPU
    engine, CuPy on the GPU: they stay on the device), the resolved parameters, and the
    array module. It returns ``None`` or a dict: parameter updates for the stages that
    follow (names of the algorithm's :class:`Param`), the key ``"start"`` for the start
    set of the next stage that starts from :func:`chosen_nodes` (node ids, or a boolean
    mask over the nodes, which needs no sort), and field arrays
    under their names to replace them, and ``"repeat"``: the name of a stage (or host
    step) to go on from: an earlier one loops the stages from there until a condition
    the host step tests holds, a later one skips the stages in between (work a
    previous call already did); or ``"stop": True``, which ends the run after this step (what else
    it returned is applied first): the stages and host steps after it do not run, as
    when its work is done before them (not with ``"repeat"``). It must be array-module
    agnostic (``xp.unique``, fancy indexing,
    no Python loop over nodes). ``fields`` holds the :class:`EdgeField` arrays too. With
    ``edges`` set the function is called as ``func(fields, params, xp, edges)``, where
    ``edges`` is the run's :class:`HostEdges`; with ``graph`` set, as
    ``func(fields, params, xp, graph)``, where ``graph`` is the :class:`~gswitch.Graph`
    the stages run on (symmetrised, simple or renumbered as the run made it), for
    structure derived from the graph once and kept with :meth:`Graph.cached`.
    """

    name: str
    func: Callable
    edges: bool = False
    graph: bool = False


def host_step(func: Callable | None = None, *, edges: bool = False,
              graph: bool = False) -> Any:
    """Mark ``func(fields, params, xp)`` as a host step of a staged algorithm.

    Parameters
    ----------
    func : callable
        The step (``@gs.host_step``), or ``None`` with options
        (``@gs.host_step(edges=True)``).
    edges : bool
        Call it as ``func(fields, params, xp, edges)`` with the graph's
        :class:`HostEdges`, to compute :class:`EdgeField` values.
    graph : bool
        Call it as ``func(fields, params, xp, graph)`` with the :class:`~gswitch.Graph`
        the stages run on (not with ``edges``).
    """
    if edges and graph:
        raise AlgorithmError("host_step takes edges=True or graph=True, not both")
    if func is None:
        return lambda f: HostStep(f.__name__, f, edges, graph)
    return HostStep(func.__name__, func, edges, graph)


@dataclass
class _StageMarker:
    cls: type
    options: dict[str, Any]


def stage(cls: type | None = None, *, config: Mapping[str, Any] | None = None,
          node_after_edges: bool = False, supports: Mapping[str, Any] | None = None,
          reverse: bool = False) -> Any:
    """Class decorator for one operator stage of a staged algorithm.

    The class holds what a one-stage algorithm holds but its fields and parameters: a
    ``start`` set (:func:`all_nodes`, :func:`from_source`, :func:`chosen_nodes`), one
    ``@edge_op`` and at most one ``@node_op``. Declared inside the algorithm's class,
    in order with its :func:`host_step` functions, it runs to its own fixpoint over the
    algorithm's fields as the stages before it left them (the fields are initialised
    once, before the first stage).

    Parameters
    ----------
    config : mapping, optional
        Config values this stage always runs with (``{"driving": "subset"}``), whatever
        the run's config says on those axes; the other axes follow the run's config.
    node_after_edges : bool
        As for :func:`algorithm`.
    supports : mapping, optional
        As for :func:`algorithm`, for this stage.
    reverse : bool
        Run the stage on the reverse graph (every edge turned around): ``e.src`` is
        then the head of an edge of the caller's graph and ``e.dst`` its tail, so a push
        walks in-edges (a backward search). The same operators lower to both engines;
        only the graph they run on changes.
    """
    opts = {"config": dict(config or {}), "node_after_edges": node_after_edges,
            "supports": dict(supports or {}), "reverse": bool(reverse)}

    def wrap(c: type) -> _StageMarker:
        return _StageMarker(c, opts)

    return wrap(cls) if cls is not None else wrap


@dataclass
class _OpMarker:
    func: Callable
    kind: str
    first: str | None = None


def edge_op(func: Callable | None = None, *, first: str | None = None) -> Any:
    """Mark ``func(e)`` or ``func(e, params)`` as the edge operator of an algorithm.

    Parameters
    ----------
    func : callable
        The operator (``@gs.edge_op``), or ``None`` with options
        (``@gs.edge_op(first="k")``).
    first : str, optional
        Name of an integer :class:`Param` ``k``: each active node expands only the first
        ``k`` of its out-edges, in CSR order; the others are never read, so a step costs
        ``k`` edges a node whatever the degrees (Afforest's neighbour sampling). Push
        only: a direction that may pull is refused.
    """
    if func is None:
        return lambda f: _OpMarker(f, "edge", first)
    return _OpMarker(func, "edge", first)


def node_op(func: Callable) -> _OpMarker:
    """Mark ``func(n)`` or ``func(n, params)`` as the node operator of an algorithm."""
    return _OpMarker(func, "node")


@dataclass
class RawOperator:
    """Escape hatch: an edge operator given as CUDA source plus a NumPy reference.

    Parameters
    ----------
    cuda_body : str
        Body of ``__device__ bool gs_edge_op(const gs_vid v, const GsSrc& s, const gs_vid
        u, const gs_eid e, const int it)``: ``v`` is the source node, ``u`` the
        destination, ``e`` the edge (its weight is ``gs_weight(e)``), ``it`` the step.
        Node fields are the pointers ``gs.F_<name>`` and parameters the values
        ``gs.P_<name>`` of the parameter block; read mutable fields with ``gs_ld(ptr)``.
        It must return whether ``u`` was activated and use atomics (``gs_atomic_min``
        and friends) for its updates.
    numpy_impl : callable
        ``numpy_impl(fields, src, dst, weight, params) -> activated_dst_mask_or_ids``;
        updates ``fields`` (a dict of arrays) in place for the given edges of one step.
    reduction : str
        The algebraic kind of the update (``min``, ``max``, ``add``, ``or``), which
        strategies consult exactly as for a traced operator.

    """

    cuda_body: str
    numpy_impl: Callable
    reduction: str = "min"
    kind: str = "edge"

    @property
    def reduction_kind(self) -> ex.ReductionKind:
        return ex.REDUCTIONS[self.reduction]


def raw_edge_op(cuda_body: str, numpy_impl: Callable, reduction: str = "min") -> RawOperator:
    """Declare an edge operator the expression language cannot state (see :class:`RawOperator`)."""
    if reduction not in ("min", "max", "add", "or"):
        raise AlgorithmError(
            f"raw operator reduction must be min, max, add or or; got {reduction!r}")
    return RawOperator(cuda_body, numpy_impl, reduction)
