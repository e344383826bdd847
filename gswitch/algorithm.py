"""Declaring algorithms: node fields, parameters, the initial active set and operators.

An algorithm is a class decorated with :func:`algorithm`. Its node operator (optional)
runs once per active node per super-step; its edge operator runs once per edge of every
active node. Both are traced into :mod:`gswitch.expr` statements when the class is
decorated, so a mistake in an operator surfaces at import time, not in a kernel. The
pieces a class is made of (fields, parameters, start sets, operator markers, stages) are
declared in :mod:`gswitch.declare` and re-exported here.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import expr as ex
from ._hints import under_cli
from .declare import (
    INF,
    MAX_STEP_TOTALS,
    NODE_ID,
    ActiveSet,
    EdgeField,
    HostEdges,
    HostStep,
    Input,
    NodeField,
    Param,
    RawOperator,
    StepTotal,
    _OpMarker,
    _StageMarker,
    all_nodes,
    chosen_nodes,
    edge_op,
    from_source,
    host_step,
    int_inf,
    node_op,
    per_node_input,
    raw_edge_op,
    stage,
)
from .errors import AlgorithmError, InvalidInput

__all__ = [
    "Input",
    "per_node_input",
    "INF",
    "NODE_ID",
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
    "algorithm",
    "AlgorithmSpec",
    "Operator",
    "int_inf",
]

# ---------------------------------------------------------------------- tracing
class _Tracer:
    def __init__(self, spec_fields: Mapping[str, NodeField], kind: str,
                 totals: tuple[str, ...] = ()) -> None:
        self.fields = spec_fields
        self.kind = kind
        self.totals = totals
        self.statements: list[ex.Statement] = []

    def written(self, name: str) -> str:
        """The field a write of ``name`` lands in: a buffered field's next value."""
        f = self.fields.get(name)
        return buffer_of(name) if f is not None and f.buffered else name

    def record(self, stmt: ex.Statement) -> ex.Statement:
        stmt = type(stmt)(**{**stmt.__dict__, "index": len(self.statements)})
        self.statements.append(stmt)
        return stmt


class _Reducible:
    """The reductions of a field reference; ``_target()`` says where they land."""

    field: str
    dtype: str

    def _target(self, tracer: _Tracer) -> tuple[str, ex.Expr | None]:
        raise NotImplementedError

    def _reduce(self, kind: str, value: Any, activate_above: Any = None,
                activate: bool | None = None) -> Any:
        tracer: _Tracer = _FIELD_TRACER[id(self)]
        node, at = self._target(tracer)
        if kind == "exchange" and tracer.kind == "edge":
            raise AlgorithmError(
                "exchange() is a node-operator statement; edge operators must use a "
                "commutative reduction (reduce_min, reduce_max, reduce_add, reduce_or)"
            )
        if kind == "or" and self.dtype.startswith("float"):
            raise AlgorithmError(f"reduce_or needs an integer field, {self.field} is {self.dtype}")
        v = ex._lift(value, self.dtype)
        if v.dtype != self.dtype:
            v = ex.Cast(v, self.dtype)
        thr = None
        if activate_above is not None:
            if kind != "add":
                raise AlgorithmError("activate_above applies to reduce_add only")
            thr = ex._lift(activate_above, self.dtype)
        # an edge operator's reductions activate unless activate=False (a single sweep
        # that only accumulates, such as a triangle count); a node operator's only with
        # activate=True
        activating = (activate is not False) if tracer.kind == "edge" else bool(activate)
        stmt = tracer.record(
            ex.Reduction(ex.REDUCTIONS[kind], tracer.written(self.field), node, v,
                         self.dtype, thr, at=at, activating=activating)
        )
        return ex.StmtValue(stmt.index, self.dtype)

    def reduce_min(self, value: Any, activate_above: Any = None,
                   activate: bool | None = None) -> Any:
        """``field = min(field, value)`` atomically; activates the node when it lowers it.

        In a node operator the node is activated only with ``activate=True``.
        """
        return self._reduce("min", value, activate_above, activate)

    def reduce_max(self, value: Any, activate_above: Any = None,
                   activate: bool | None = None) -> Any:
        """``field = max(field, value)`` atomically; activates the node when it raises it."""
        return self._reduce("max", value, activate_above, activate)

    def reduce_add(self, value: Any, activate_above: Any = None,
                   activate: bool | None = None) -> Any:
        """``field += value`` atomically.

        Activates the node when the field crosses ``activate_above`` upwards, or, with no
        threshold, whenever a non-zero value is added; ``activate=False`` never does (in
        an edge operator: a sweep that only accumulates, such as a triangle count).
        """
        return self._reduce("add", value, activate_above, activate)

    def reduce_or(self, value: Any, activate_above: Any = None,
                  activate: bool | None = None) -> Any:
        """``field |= value`` atomically; activates the node when a new bit is set."""
        return self._reduce("or", value, activate_above, activate)

    def exchange(self, value: Any) -> Any:
        """Store ``value`` atomically and return the previous value (node operators)."""
        return self._reduce("exchange", value)


class _FieldRef(ex.FieldLoad, _Reducible):
    """A field read that can also be the target of a reduction."""

    def _target(self, tracer: _Tracer) -> tuple[str, ex.Expr | None]:
        writable = "dst" if tracer.kind == "edge" else "self"
        if self.node != writable:
            raise AlgorithmError(
                f"{tracer.kind} operators may only update fields of "
                f"{'e.dst' if writable == 'dst' else 'their own node'} or, indirectly, "
                f"of a node they name with .at(); got an update of {self.node}.{self.field}"
            )
        return self.node, None

    def at(self, index: Any) -> _IndirectRef:
        """Return this field at the node whose id ``index`` evaluates to: read it, or reduce
        into it (``n.comp.at(n.comp)`` is ``comp[comp[v]]``).

        Reductions through ``at`` must be monotone (min, max, or) or additive, so that
        concurrent updates from different nodes reach the same fixpoint whatever their
        order; ``exchange`` is refused. The index must be a node id: the CPU engine
        raises on one out of range, the GPU engine checks it under ``GSWITCH_CUDA_DEBUG=1``.
        """
        tracer: _Tracer = _FIELD_TRACER[id(self)]
        idx = index if isinstance(index, ex.Expr) else ex._lift(index, "int32")
        if idx.dtype not in ("int32", "uint32", "int64"):
            raise AlgorithmError(
                f"{self.field}.at() needs an integer node id, got a {idx.dtype} expression")
        ref = _IndirectRef(self.field, idx, self.dtype)
        _FIELD_TRACER[id(ref)] = tracer
        return ref


class _IndirectRef(ex.FieldAt, _Reducible):
    """``field.at(index)``: an indirect read that can also be reduced into."""

    def _target(self, tracer: _Tracer) -> tuple[str, ex.Expr | None]:
        return ("dst" if tracer.kind == "edge" else "self"), self.at

    def _reduce(self, kind: str, value: Any, activate_above: Any = None,
                activate: bool | None = None) -> Any:
        if kind == "exchange":
            raise AlgorithmError(
                f"exchange() through {self.field}.at() has no order-free fixpoint; use a "
                "monotone reduction (reduce_min, reduce_max, reduce_or) or reduce_add")
        return super()._reduce(kind, value, activate_above, activate)


_FIELD_TRACER: dict[int, _Tracer] = {}


class _NodeProxy:
    def __init__(self, tracer: _Tracer, role: str) -> None:
        object.__setattr__(self, "_tracer", tracer)
        object.__setattr__(self, "_role", role)

    def __getattr__(self, name: str) -> Any:
        tracer: _Tracer = object.__getattribute__(self, "_tracer")
        role = object.__getattribute__(self, "_role")
        if name == "id":
            return ex.NodeId(role)
        if name == "out_degree":
            return ex.Degree(role, "out")
        if name == "in_degree":
            return ex.Degree(role, "in")
        if name == "total" and tracer.kind == "node":
            return functools.partial(_record_total, tracer)
        if name in tracer.fields:
            ref = _FieldRef(name, role, tracer.fields[name].dtype)
            _FIELD_TRACER[id(ref)] = tracer
            return ref
        raise AlgorithmError(
            f"node has no field {name!r}; fields are {', '.join(tracer.fields) or '(none)'}, "
            "plus id, out_degree, in_degree"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        tracer: _Tracer = object.__getattribute__(self, "_tracer")
        role = object.__getattribute__(self, "_role")
        if tracer.kind != "node" or role != "self":
            raise AlgorithmError(
                f"plain assignment to {role}.{name} is only allowed in node operators on "
                "their own node; edge operators must use reductions"
            )
        if name not in tracer.fields:
            raise AlgorithmError(f"node has no field {name!r}")
        dtype = tracer.fields[name].dtype
        v = ex._lift(value, dtype)
        if v.dtype != dtype:
            v = ex.Cast(v, dtype)
        tracer.record(ex.Assign(tracer.written(name), role, v, dtype))


def _record_total(tracer: _Tracer, value: Any, into: str = "") -> None:
    """``n.total(value)`` in a node operator: add ``value`` to the step's total (see
    ``converge_below`` on :func:`algorithm`); ``n.total(value, into="name")`` adds it to
    the :class:`StepTotal` ``name`` instead, which the next step reads as ``p.name``.
    """
    if into and into not in tracer.totals:
        raise AlgorithmError(
            f"n.total(..., into={into!r}) names no StepTotal; declare "
            f"{into} = gswitch.StepTotal() on the class (declared: "
            f"{', '.join(tracer.totals) or 'none'})")
    v = ex._lift(value, "float64")
    if v.dtype != "float64":
        v = ex.Cast(v, "float64")
    tracer.record(ex.Total(v, into=into))


class _EdgeProxy:
    def __init__(self, tracer: _Tracer, params: _ParamProxy) -> None:
        self.src = _NodeProxy(tracer, "src")
        self.dst = _NodeProxy(tracer, "dst")
        self.weight = ex.EdgeWeight()
        self.params = params
        self.iteration = ex.Iteration()
        self.n_nodes = ex.NumNodes()
        self._tracer = tracer

    def common_neighbours(self, method: str = "merge", among: str = "all") -> ex.Expr:
        """The number of distinct nodes other than the two ends that both ends' rows
        hold (int32): the triangles through this edge on a simple undirected graph.

        Rows are intersected sorted; a run sorts the rows of a graph that are not.
        ``method`` picks the GPU's intersection: ``"merge"`` walks both rows,
        ``"search"`` binary-searches the shorter row's ids in the longer row.
        ``among`` counts ``"all"`` common neighbours, or only those whose id is
        ``"below"`` both ends' ids or ``"between"`` them (each triangle is then seen
        from one edge only: oriented counting).
        """
        if method not in ex.INTERSECTIONS:
            raise AlgorithmError(f"common_neighbours(method={method!r}): choose one of "
                                 f"{', '.join(ex.INTERSECTIONS)}")
        if among not in ex.AMONG:
            raise AlgorithmError(f"common_neighbours(among={among!r}): choose one of "
                                 f"{', '.join(ex.AMONG)}")
        return ex.CommonNeighbours(method, among)

    def label_frequency(self, field: str, row: str = "dst") -> ex.Expr:
        """How many neighbours of one end carry the other end's value of the integer
        node field ``field`` (int32): with ``row="dst"`` (default) the frequency of
        ``e.src``'s label among ``e.dst``'s neighbours, with ``row="src"`` that of
        ``e.dst``'s label among ``e.src``'s, counted over that end's out-row (see
        :class:`~gswitch.expr.LabelFrequency`). The graph should be symmetric, so that
        the row holds the neighbours, and without parallel edges, so each counts once.
        """
        fields = self._tracer.fields
        if field not in fields:
            raise AlgorithmError(f"label_frequency({field!r}) names no node field; fields "
                                 f"are {', '.join(fields) or '(none)'}")
        if fields[field].dtype not in ("int32", "uint32", "int64"):
            raise AlgorithmError(f"label_frequency({field!r}) needs an integer field, "
                                 f"{field} is {fields[field].dtype}; store labels as int32")
        if row not in ex.LABEL_ROWS:
            raise AlgorithmError(f"label_frequency(row={row!r}): choose one of "
                                 f"{', '.join(ex.LABEL_ROWS)}")
        return ex.LabelFrequency(field, row)

    def only_if(self, cond: Any) -> None:
        """Run the rest of the edge operator only on edges where ``cond`` holds.

        A filter such as Afforest's neighbour sampling: the edges it drops cost the
        load of their destination id and nothing else. ``cond`` may read the edge's
        source and destination ids, degrees and fields like any value.
        """
        if isinstance(cond, bool):  # `a == b` on traced values is Python's identity test
            raise AlgorithmError("only_if got a plain bool: == and != compare traced values "
                                 "as Python objects; write a.eq(b) or a.ne(b)")
        c = ex._lift(cond, "bool")
        if c.dtype != "bool":
            raise AlgorithmError(f"only_if needs a comparison (a bool), got {c.dtype}")
        self._tracer.record(ex.Guard(c))


class _ParamProxy:
    def __init__(self, params: Mapping[str, Param], totals: tuple[str, ...] = ()) -> None:
        self._params = params
        self._totals = totals

    def __getattr__(self, name: str) -> ex.Expr:
        if name == "n_nodes":
            return ex.NumNodes()
        if name == "iteration":
            return ex.Iteration()
        if name == "bucket" and name not in self._params:
            return ex.Bucket()
        if name in self._params:
            return ex.ParamRef(name, self._params[name].dtype)
        if name in self._totals:
            return ex.StepTotalRef(name, "float64", slot=self._totals.index(name))
        raise AlgorithmError(
            f"no parameter {name!r}; parameters are {', '.join(self._params) or '(none)'}"
            + (f", step totals {', '.join(self._totals)}" if self._totals else "")
        )


# ---------------------------------------------------------------------- spec
@dataclass
class Operator:
    """A traced operator: its statements in program order."""

    kind: str
    name: str
    statements: list[ex.Statement]
    raw: RawOperator | None = None
    #: an edge operator's limit: the int Param naming how many out-edges a node expands
    first: str | None = None

    @property
    def reductions(self) -> list[ex.Reduction]:
        return [s for s in self.statements if isinstance(s, ex.Reduction)]

    @property
    def activating(self) -> list[ex.ReductionKind]:
        """Kinds of the reductions that can activate a node."""
        if self.raw is not None:
            return [self.raw.reduction_kind]
        return [r.kind for r in self.reductions if r.activates]

    def describe(self) -> str:
        head = f"{self.kind}_op {self.name}:"
        if self.raw is not None:
            return f"{head}\n  <raw CUDA operator, reduction={self.raw.reduction}>"
        return "\n".join([head] + [f"  {ex.format_statement(s)}" for s in self.statements])


#: id(spec) -> (spec, ids of its params and fields, its inputs, its validated defaults):
#: what :meth:`AlgorithmSpec._declared` found (the entry holds the spec, so another spec
#: that gets its id after it is gone does not match)
_DECLARED: dict[int, tuple[Any, tuple[int, int], dict, dict[str, Any]]] = {}
#: per-node inputs of at most this many values are checked for finiteness in Python
_FEW_VALUES = 32
#: id(spec) -> (spec, id of its fields, each field's name, dtype, declaration and
#: initial value where it is a number, else ``None``): see
#: :meth:`AlgorithmSpec.initial_fields`
_FIELD_INITS: dict[int, tuple[Any, int, list[tuple[str, np.dtype, NodeField, Any]]]] = {}


def _empty_list(value: Any) -> bool:
    """Whether ``value`` lists no node (an empty list, tuple, set or array)."""
    if isinstance(value, (list, tuple, set, frozenset)):
        return len(value) == 0
    return isinstance(value, np.ndarray) and value.size == 0


@dataclass
class AlgorithmSpec:
    """Everything the engines need to know about an algorithm, produced by :func:`algorithm`."""

    name: str
    cls: type
    doc: str
    fields: dict[str, NodeField]
    params: dict[str, Param]
    start: ActiveSet
    edge: Operator
    node: Operator | None = None
    symmetric: bool = False
    #: run on the graph without self loops and parallel edges
    simple: bool = False
    weights: str = "any"
    reference: str = ""
    max_iterations_param: str | None = None
    first_hit_final: bool = False
    finalize: Callable | None = None
    outputs: list[str] = field(default_factory=list)
    finalize_on_device: bool = False
    variant: str = "default"
    default_variant: bool = True
    supports: dict[str, tuple[str, ...]] = field(default_factory=dict)
    node_after_edges: bool = False
    expected: Callable | None = None
    compare: Callable | None = None
    stages: list[Any] = field(default_factory=list)
    converge_below: str | None = None
    config_defaults: dict[str, Any] = field(default_factory=dict)
    priority: ex.Expr | None = None
    #: a bucket width in units of the priority key that the algorithm fixes (``None``:
    #: the driving strategy's, from the graph)
    priority_width: float | None = None
    #: names of the algorithm's :class:`StepTotal` sums, in slot order
    step_totals: tuple[str, ...] = ()
    #: backends on which this formulation, not the registry's default, runs by default
    default_on: tuple[str, ...] = ()
    #: config values this formulation runs with on one backend (over config_defaults)
    backend_defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ``check_graph(graph) -> str | None``: why the algorithm refuses the graph it would
    #: run on (after symmetrisation), or ``None``
    check_graph: Callable | None = None
    #: a stage of a staged algorithm: its name and the config values it always runs with
    stage_name: str = ""
    stage_config: dict[str, Any] = field(default_factory=dict)
    #: a stage that runs on the reverse graph (its edges turned around)
    stage_reverse: bool = False
    #: per-edge values of a staged algorithm, kept by its host steps (:class:`EdgeField`)
    edge_fields: dict[str, EdgeField] = field(default_factory=dict)
    #: ``direct(graph, params, *, sources, backend, device_arrays) -> (fields, stats)``:
    #: array code that runs this formulation instead of the engine (``direct=`` on
    #: :func:`algorithm`); ``None`` for a formulation of operators
    direct: Callable | None = None
    #: ``default_if(graph, backend) -> bool``: where this formulation is the default one;
    #: on other graphs a config without ``variant`` runs another formulation
    default_if: Callable | None = None
    #: the backends this formulation runs on (array code may serve the CPU only)
    backends: tuple[str, ...] = ("cpu", "gpu")
    #: ``suited(graph, backend) -> str | None``: why this formulation would not pay on
    #: the graph (the tuner leaves it out of that graph's search, the selector passes
    #: over a pick of it), or ``None``
    suited: Callable | None = None

    @property
    def label(self) -> str:
        """``name`` or ``name[variant]`` for an algorithm with several formulations."""
        return self.name if self.variant == "default" else f"{self.name}[{self.variant}]"

    def off_backend(self, backend: str) -> str | None:
        """Why this formulation cannot run on ``backend``, or ``None``."""
        if backend in self.backends:
            return None
        return (f"variant {self.variant} of {self.name} runs on the "
                f"{' and '.join(self.backends)} backend only, not the {backend} one; run it "
                f"with backend='{self.backends[0]}', or choose another variant")

    @property
    def counted_activation(self) -> str | None:
        """The field of an edge operator's ``add`` that activates its target on every
        message (no ``activate_above``), or ``None``. Such a target is activated once
        per message, so a queue worklist without ``dedup`` holds it as often and runs
        its operators that many times in one step.
        """
        edge = self.edge
        for r in getattr(edge, "reductions", ()):
            if r.kind.name == "add" and r.activates and r.activate_above is None:
                return r.field
        return None

    def unsupported(self, axis: str, strategy: str, default: str | None) -> str | None:
        """Why this formulation cannot run with ``strategy`` on ``axis``, or ``None``.

        ``default`` is the axis's default strategy (:data:`gswitch.config.DEFAULTS`). A
        formulation run by array code (:attr:`direct`) takes no strategy: it accepts
        each axis at its default only, so a config that picks a strategy selects a
        formulation of operators and the tuner holds every axis for it.
        """
        if self.direct is not None:
            if strategy == default:
                return None
            return (f"variant {self.variant} of {self.name} runs its own array code, not "
                    f"the operator engine, so it takes no {axis} strategy; leave {axis} "
                    "at its default or choose another variant")
        allowed = self.supports.get(axis)
        if allowed is None or strategy in allowed:
            return None
        return (f"variant {self.variant} of {self.name} supports {axis} "
                f"{', '.join(allowed)} only")

    @property
    def summary(self) -> str:
        return self.doc.strip().splitlines()[0] if self.doc.strip() else self.name

    @property
    def inputs(self) -> dict[str, tuple[str, Input]]:
        """Run arguments that give a field's initial values: name -> (field, Input)."""
        return {f.init.name: (name, f.init) for name, f in self.fields.items()
                if isinstance(f.init, Input)}

    def resolve_params(self, given: Mapping[str, Any], n_nodes: int) -> dict[str, Any]:
        """Defaults filled in, values validated, ``n_nodes`` added; a per-node input
        (:func:`per_node_input`) given with the run becomes an array of one number per
        node, prepared by its ``prepare``.
        """
        inputs, defaults, per_call = self._declared()
        if not given and not per_call:  # the defaults, validated once
            return {**defaults, "n_nodes": n_nodes}
        given = given or {}
        unknown = [k for k in given if k not in self.params and k not in inputs]
        if unknown:
            names = list(self.params) + list(inputs)
            first = sorted(unknown)[0]
            flag = f"--param {first}={given[first]}: " if under_cli() else ""
            raise InvalidInput(
                f"{flag}{self.name} has no parameter {first!r}; parameters are "
                f"{', '.join(names) or '(none)'}"
            )
        out: dict[str, Any] = {}
        for name, p in self.params.items():
            out[name] = p.validate(given[name]) if name in given else defaults[name]
        out["n_nodes"] = n_nodes
        for name, (field_name, spec) in inputs.items():
            value = given.get(name)
            if spec.derive is not None:
                value = spec.derive(value, out)
            if spec.required and (value is None or _empty_list(value)):
                flag = f"--param {name}=ID,ID,..." if under_cli() else f"{name}=[ID, ...]"
                what = "got none" if value is None else "got an empty list"
                raise InvalidInput(f"{self.name} needs its {spec.doc or name}, {what}: pass "
                                   f"{flag} (without them no node starts and the result is "
                                   "empty)")
            if value is not None:
                try:
                    out[name] = self._input_values(name, spec, value, out, n_nodes,
                                                   self.fields[field_name].dtype)
                except InvalidInput as exc:
                    if not under_cli() or "--param" in str(exc) or name not in given:
                        raise
                    # the flag as given: the command line passes node lists as lists
                    shown = (",".join(map(str, value)) if isinstance(value, (list, tuple))
                             else value)
                    raise InvalidInput(f"--param {name}={shown}: {exc}") from None
        return out

    def _declared(self) -> tuple[dict[str, tuple[str, Input]], dict[str, Any], bool]:
        """:attr:`inputs`, every parameter's validated default and whether an input needs
        a look on every call (it derives its values from the parameters, or a run cannot
        do without it), found once for the ``params`` and ``fields`` this spec holds (a
        small graph's call would otherwise validate them again every time).
        """
        key = (id(self.params), id(self.fields))
        hit = _DECLARED.get(id(self))
        if hit is None or hit[0] is not self or hit[1] != key:
            if len(_DECLARED) > 1024:
                _DECLARED.clear()
            defaults = {name: p.validate(p.default) for name, p in self.params.items()}
            inputs = self.inputs
            per_call = any(spec.derive is not None or spec.required
                           for _f, spec in inputs.values())
            hit = _DECLARED[id(self)] = (self, key, inputs, defaults, per_call)
        return hit[2], hit[3], hit[4]

    def _input_values(self, name: str, spec: Input, value: Any, params: dict[str, Any],
                      n_nodes: int, dtype: str) -> np.ndarray:
        if spec.prepare is not None:
            value = spec.prepare(value, params)
        if isinstance(value, np.ndarray) and value.dtype.kind in "iu" \
                and np.dtype(dtype).kind in "iu" and value.shape == (n_nodes,):
            return value.astype(dtype)  # exact: a float64 round trip drops bits of a uint64
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise InvalidInput(f"{self.name}'s {name} must be numbers, one per node; got "
                               f"{type(value).__name__}") from None
        if arr.shape != (n_nodes,):
            raise InvalidInput(f"{self.name}'s {name} must hold one number per node "
                               f"({n_nodes}); got shape {arr.shape}")
        # a few values are checked in Python (a NumPy test and reduction cost ten times more)
        if not (all(map(math.isfinite, arr.tolist())) if arr.size <= _FEW_VALUES
                else np.isfinite(arr).all()):
            bad = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise InvalidInput(f"{self.name}'s {name} must be finite; node {bad} has "
                               f"{arr[bad]}")
        return arr.astype(dtype)

    def initial_fields(self, n: int, params: Mapping[str, Any],
                       sources: np.ndarray | None) -> dict[str, np.ndarray]:
        """Fresh arrays of every node field, with the source values applied."""
        arrays = {}
        at_sources = sources is not None and sources.size
        for name, dtype, f, value, at_source in self._field_inits():
            a = arrays[name] = np.empty(n, dtype=dtype)
            if value is None:  # a node's id, a per-node input or a function of params
                f.fill_initial(a, params)
            else:
                a.fill(value)
            if at_sources and at_source is not None:
                a[int(sources[0]) if sources.size == 1 else sources] = at_source
        return arrays

    def _field_inits(self) -> list[tuple[str, np.dtype, NodeField, Any, Any]]:
        """Each field's name, dtype, declaration, initial value where that is a number
        (``None`` where it depends on the run) and value at the sources (``None``: none),
        found once for the ``fields`` this spec holds (as :meth:`fill_fields` finds the
        values).
        """
        hit = _FIELD_INITS.get(id(self))
        if hit is None or hit[0] is not self or hit[1] != id(self.fields):
            if len(_FIELD_INITS) > 1024:
                _FIELD_INITS.clear()
            inits = [(name, np.dtype(f.dtype), f,
                      None if f.init is NODE_ID or isinstance(f.init, Input) or callable(f.init)
                      else f._number(f.init),
                      None if f.at_source is None else f._number(f.at_source))
                     for name, f in self.fields.items()]
            hit = _FIELD_INITS[id(self)] = (self, id(self.fields), inits)
        return hit[2]

    def fill_fields(self, out: Mapping[str, np.ndarray], params: Mapping[str, Any],
                    sources: np.ndarray | None) -> None:
        """Write the initial value of every node field into ``out`` (one array per field,
        of its dtype and one item per node), with the source values applied; the GPU
        engine passes its page-locked staging, so nothing is allocated.
        """
        at_sources = sources is not None and sources.size
        for name, _dtype, f, value, at_source in self._field_inits():
            a = out[name]
            if value is None:
                f.fill_initial(a, params)
            else:
                a.fill(value)
            if at_sources and at_source is not None:
                a[int(sources[0]) if sources.size == 1 else sources] = at_source

    def initial_values(self, params: Mapping[str, Any], sources: bool
                       ) -> list[tuple[str, Any, Any]]:
        """What :meth:`fill_fields` writes, for an engine that fills fields itself:
        ``(field, value of every node or NODE_ID, value at the sources or None)`` for
        each field; ``sources`` says whether the run has start nodes.
        """
        return [(name, f.initial_value(params),
                 f._number(f.at_source) if sources and f.at_source is not None else None)
                for name, f in self.fields.items()]

    def describe(self) -> str:
        """Human-readable listing of fields, parameters and traced operators."""
        lines = [f"algorithm {self.name}: {self.summary}"]
        for name, f in self.fields.items():
            src = f", at_source={f.at_source}" if f.at_source is not None else ""
            lines.append(f"  field {name}: {f.dtype} init={f.init!r}{src}")
        writer = "array code" if self.direct is not None else "host steps"
        for name, f in self.edge_fields.items():
            lines.append(f"  edge field {name}: {f.dtype} init={f.init!r} ({writer})")
        for name, p in self.params.items():
            lines.append(f"  param {name}: {p.dtype} = {p.default}")
        lines.append(f"  start: {self.start.kind}")
        if self.direct is not None:
            lines.append(f"  runs array code {direct_name(self.direct)} (no operators)")
            return "\n".join(lines)
        if self.node is not None:
            lines.append(self.node.describe())
        lines.append(self.edge.describe())
        return "\n".join(lines)


def direct_name(func: Callable) -> str:
    """``module.function`` of a formulation's array code, as listings show it."""
    return f"{func.__module__}.{getattr(func, '__qualname__', func.__name__)}"


def _call_op(func: Callable, proxy: Any, params: _ParamProxy) -> None:
    n_args = len(inspect.signature(func).parameters)
    if n_args == 1:
        func(proxy)
    elif n_args == 2:
        func(proxy, params)
    else:
        raise AlgorithmError(
            f"operator {func.__name__} must take (e) or (e, params), takes {n_args} arguments"
        )


def trace_operator(marker: _OpMarker, fields: dict[str, NodeField],
                   params: dict[str, Param], totals: tuple[str, ...] = ()) -> Operator:
    """Run an operator function on proxies and return its recorded statements."""
    tracer = _Tracer(fields, marker.kind, totals)
    pproxy = _ParamProxy(params, totals)
    proxy: Any
    if marker.kind == "edge":
        proxy = _EdgeProxy(tracer, pproxy)
    else:
        proxy = _NodeProxy(tracer, "self")
    try:
        _call_op(marker.func, proxy, pproxy)
    finally:
        for key in [k for k, t in _FIELD_TRACER.items() if t is tracer]:
            del _FIELD_TRACER[key]
    first = getattr(marker, "first", None)
    if first is not None and (first not in params or not params[first].dtype.startswith(
            ("int", "uint"))):
        raise AlgorithmError(f"edge_op(first={first!r}) must name an integer Param; "
                             f"parameters are {', '.join(params) or '(none)'}")
    op = Operator(marker.kind, marker.func.__name__, tracer.statements, first=first)
    if marker.kind == "edge" and not op.reductions:
        raise AlgorithmError(
            f"edge operator {op.name} performs no reduction on e.dst; it must call "
            "e.dst.<field>.reduce_min/max/add/or(...)"
        )
    return op


def buffer_of(name: str) -> str:
    """Name of the hidden field that holds a buffered field's next value."""
    return f"{name}__next"


def _add_buffers(fields: dict[str, NodeField]) -> None:
    """Give each buffered field its hidden next-value field (same initial value)."""
    for name, f in list(fields.items()):
        if f.buffered:
            nxt = NodeField(f.dtype, init=f.init, at_source=f.at_source, output=False,
                            doc=f"next value of {name}")
            nxt.name = buffer_of(name)
            fields[nxt.name] = nxt


def _swap_buffers(c: type, fields: dict[str, NodeField], node: Operator | None,
                  node_after_edges: bool) -> Operator | None:
    """The node operator with the swaps of the buffered fields appended (reads of the
    next step see what this step wrote).
    """
    buffered = [n for n, f in fields.items() if f.buffered]
    if not buffered:
        return node
    if not node_after_edges:
        raise AlgorithmError(
            f"{c.__name__} has buffered fields ({', '.join(buffered)}); they swap at the "
            "end of the node operator, so declare node_after_edges=True")
    op = node if node is not None else Operator("node", "swap", [])
    stmts = list(op.statements)
    for name in buffered:
        dtype = fields[name].dtype
        stmts.append(ex.Assign(name, "self", ex.FieldLoad(buffer_of(name), "self", dtype),
                               dtype, index=len(stmts)))
    return Operator("node", op.name, stmts)


def _operators(c: type, fields: dict[str, NodeField], params: dict[str, Param],
               node_after_edges: bool, converge_below: str | None,
               priority: Callable | None, totals: tuple[str, ...] = ()) -> dict[str, Any]:
    """Start set, traced operators and their options of a class (or of a stage class)."""
    start: ActiveSet | None = None
    edge: _OpMarker | RawOperator | None = None
    node: _OpMarker | None = None
    for value in vars(c).values():
        if isinstance(value, ActiveSet):
            start = value
        elif isinstance(value, (_OpMarker, RawOperator)):
            slot = "edge" if value.kind == "edge" else "node"
            if (edge if slot == "edge" else node) is not None:
                raise AlgorithmError(f"{c.__name__} declares more than one {slot} operator")
            if slot == "edge":
                edge = value
            else:
                node = value  # type: ignore[assignment]
    if start is None:
        raise AlgorithmError(
            f"{c.__name__} declares no initial active set; add start = gswitch.from_source()"
            " or gswitch.all_nodes()"
        )
    if edge is None:
        raise AlgorithmError(f"{c.__name__} declares no @edge_op")
    if isinstance(edge, RawOperator):
        edge_spec = Operator("edge", "raw", [], raw=edge)
    else:
        edge_spec = trace_operator(edge, fields, params, totals)
    node_spec = trace_operator(node, fields, params, totals) if node is not None else None
    node_spec = _swap_buffers(c, fields, node_spec, node_after_edges)
    if converge_below is not None and converge_below not in params:
        raise AlgorithmError(f"converge_below {converge_below!r} is not a Param")
    if converge_below is not None and not (node_spec is not None and any(
            isinstance(st, ex.Total) and not st.into for st in node_spec.statements)):
        raise AlgorithmError("converge_below needs a node operator that calls "
                             "n.total(value)")
    key = None if priority is None else _trace_priority(priority, fields, params)
    return dict(start=start, edge=edge_spec, node=node_spec,
                node_after_edges=node_after_edges, converge_below=converge_below,
                priority=key)


def _direct_spec(c: type, common: dict[str, Any], direct: Callable,
                 edge_fields: dict[str, EdgeField], allowed: dict[str, tuple[str, ...]],
                 own_defaults: dict[str, Any], fin: Callable | None, steps: list[Any],
                 declared: list[tuple[str, bool]]) -> AlgorithmSpec:
    """The spec of a formulation run by array code (``direct=`` on :func:`algorithm`):
    its node fields, its edge fields (the array code returns them, one value per stored
    edge of the prepared graph) and its parameters.
    """
    if not callable(direct):
        raise AlgorithmError(f"{c.__name__}: direct must be a function, got {direct!r}")
    if steps or any(isinstance(v, (_OpMarker, RawOperator)) for v in vars(c).values()):
        raise AlgorithmError(f"{c.__name__} is run by array code (direct=): it declares "
                             "fields and parameters, not operators, stages or host steps")
    if allowed or own_defaults or common["backend_defaults"]:
        raise AlgorithmError(f"{c.__name__} is run by array code (direct=): no strategy "
                             "applies to it, so it declares no supports or defaults")
    start = next((v for v in vars(c).values() if isinstance(v, ActiveSet)), None)
    return AlgorithmSpec(
        **common, start=start or all_nodes(), edge=Operator("edge", "direct", []),
        finalize=fin, outputs=[n for n, out in declared if out], direct=direct,
        edge_fields=edge_fields)


def _checked_width(width: float | None, priority: Callable | None) -> float | None:
    """``priority_width`` as a positive float, or ``None``."""
    if width is None:
        return None
    if priority is None:
        raise AlgorithmError("priority_width needs a priority key (priority=...)")
    try:
        w = float(width)
    except (TypeError, ValueError):
        raise AlgorithmError(f"priority_width must be a number, got {width!r}") from None
    if not (w > 0 and math.isfinite(w)):
        raise AlgorithmError(f"priority_width must be positive and finite, got {width!r}")
    return w


def _trace_priority(func: Callable, fields: dict[str, NodeField],
                    params: dict[str, Param]) -> ex.Expr:
    """The priority key expression of ``func(n[, params])`` over a node's fields."""
    tracer = _Tracer(fields, "key")
    pproxy = _ParamProxy(params)
    try:
        n_args = len(inspect.signature(func).parameters)
        value = func(_NodeProxy(tracer, "self"), *([pproxy] if n_args == 2 else []))
    finally:
        for k in [k for k, t in _FIELD_TRACER.items() if t is tracer]:
            del _FIELD_TRACER[k]
    if tracer.statements:
        raise AlgorithmError("priority must return an expression of the node's fields; "
                             "it may not reduce, assign or total")
    if not isinstance(value, (ex.Expr, int, float)) or isinstance(value, bool):
        raise AlgorithmError(f"priority must return a number expression, got {value!r}")
    if isinstance(value, ex.Expr) and any(isinstance(x, ex.Bucket) for x in ex.walk(value)):
        raise AlgorithmError("priority may not read p.bucket: the bucket comes from the key")
    key = ex._lift(value, "float64")
    return key if key.dtype == "float64" else ex.Cast(key, "float64")


def algorithm(cls: type | None = None, *, name: str | None = None,
              symmetric: bool = False, simple: bool = False, weights: str = "any",
              reference: str = "",
              max_iterations_param: str | None = None, first_hit_final: bool = False,
              finalize_on_device: bool = False, variant: str = "default",
              default: bool = True, supports: Mapping[str, Any] | None = None,
              node_after_edges: bool = False, expected: Callable | None = None,
              compare: Callable | None = None, converge_below: str | None = None,
              defaults: Mapping[str, Any] | None = None,
              priority: Callable | None = None, default_on: tuple[str, ...] = (),
              backend_defaults: Mapping[str, Mapping[str, Any]] | None = None,
              check_graph: Callable | None = None,
              priority_width: float | None = None, direct: Callable | None = None,
              default_if: Callable | None = None,
              backends: tuple[str, ...] = ("cpu", "gpu"),
              suited: Callable | None = None) -> Any:
    """Class decorator turning a declarative class into an :class:`AlgorithmSpec`.

    Parameters
    ----------
    cls : type
        Class with :class:`NodeField` and :class:`Param` attributes, an ``start``
        :class:`ActiveSet`, one ``@edge_op`` and at most one ``@node_op``, and an
        optional ``finalize(fields, params)`` static method post-processing results.
    name : str, optional
        Registry name; defaults to the lower-cased class name.
    symmetric : bool
        Run on the symmetrised graph (undirected algorithms such as components).
    simple : bool
        Run on the graph without self loops and parallel edges (counts such as
        triangles, where a parallel edge would count twice).
    weights : {"any", "nonnegative"}
        Constraint on edge weights checked before a run.
    reference : str
        The independent implementation the algorithm is tested against.
    max_iterations_param : str, optional
        Name of the parameter that bounds the number of super-steps.
    first_hit_final : bool
        Every node active in a data-driven step offers the same value, so the first
        in-neighbour found in the frontier gives a node its final value and a node
        whose target still holds its initial value is the only candidate
        (level-synchronous traversals such as BFS). Pull traversal then checks only
        such nodes and stops at the first hit: bottom-up BFS.
    finalize_on_device : bool
        ``finalize`` calls only NumPy functions that dispatch on their array
        arguments (ufuncs with ``out=``, ``empty_like`` and the like, array methods;
        no ``np.empty(n)``, no Python loop over elements), so the GPU engine may run it
        on the CuPy arrays of the fields before copying the outputs back. On a large
        graph that saves host passes over every field and the copy of the fields that
        are not outputs (RMAT-22 BFS: about 7 ms of a 11 ms call). The result is the
        same; where it ran is in ``stats["finalized_on"]``.
    variant : str
        Name of this formulation when the algorithm has several (``hook_compress`` for
        ``cc``). Every variant of a name returns the same canonical answer and is
        selected with the config key ``variant``; ``"default"`` for a sole formulation.
    default : bool
        This variant is the one a config without ``variant`` runs (one per name).
    supports : mapping of axis to strategy names, optional
        The strategies this formulation is correct with, per axis (e.g.
        ``{"driving": ("topology",)}`` for a formulation whose fixpoint needs every
        node every step); an axis not named allows all. The tuner never samples others.
        A global key may be named too: ``{"renumber": ("none",)}`` for a formulation
        whose answer breaks ties by node id (a renumbered run is refused, and the tuner
        holds the key at its one value).
    node_after_edges : bool
        Run the node operator after the edge expansion of each step instead of before
        it: a pull-gather into an accumulator, then a node update that reads it
        (Jacobi power iteration), or hooking then shortcutting (hook-and-compress).
    expected : callable, optional
        ``expected(graph, source=None, **params) -> ndarray``: the independent reference
        (scipy, networkx; never the engine) of the first output field, for the
        test-suites and the tuner's answer check. ``graph`` is the :class:`Graph` as the
        caller gave it (not symmetrised), ``source`` the start node or ``None``, and
        ``params`` every :class:`Param` of the algorithm, the caller's values over the
        defaults; accept ``**params`` and ignore what the reference does not need.
        Variants without one share the default variant's. Without it the tuner checks
        trials against the CPU engine's answer with the default configuration.
    compare : callable, optional
        ``compare(got, expected) -> str | None``: ``None`` when ``got`` (the first output
        field, a NumPy array) matches ``expected``, else a one-line description of the
        difference, a shape that differs included (the :mod:`gswitch.verify` helpers
        say so). ``expected`` is what ``expected`` returned, as a NumPy array: usually
        an answer of ``got``'s shape; for an answer that is not unique, any numeric
        array the comparison checks invariants against (a numeric array, since the
        tuner hands it to its workers in a pickle-free ``.npy``). The tolerance is part
        of it: exact, canonical labels, ``rtol``/``atol``, an L1 bound;
        :mod:`gswitch.verify` has the common ones. Variants without one share the
        default variant's; without any, :func:`gswitch.verify.generic_compare` (exact
        for integers, ``rtol=1e-4`` for floats).
    defaults : mapping, optional
        Config values this formulation runs with when the caller's config leaves those
        keys out (``{"driving": "topology"}`` for one that ``supports`` only that), so
        ``variant=NAME`` alone gives a valid, sensible configuration.
    converge_below : str, optional
        Name of a parameter: the run ends after a step whose total (the sum of what the
        node operator passed to ``n.total(value)``, e.g. the L1 change of the ranks)
        falls below it, instead of when a step activates nothing. The sum is reduced on
        the device and tested in the step's decision, so persistent and CUDA-graph
        launches need no host round trip for it.
    default_on : tuple of str
        Backends (``"cpu"``, ``"gpu"``) on which this formulation is the default instead
        of the one marked ``default`` (a formulation whose work suits one engine:
        hook-and-compress on the CPU, Afforest's stages on the GPU).
    backend_defaults : mapping of backend to mapping, optional
        Config values over ``defaults`` on one backend (a bucket width that suits the
        CPU engine's cost per edge rather than the GPU's cost per step).
    check_graph : callable, optional
        ``check_graph(graph) -> str | None``: why the algorithm is not defined on
        ``graph`` (the graph it would run on: symmetrised when ``symmetric``), or
        ``None``. A reason is raised as :class:`~gswitch.errors.InvalidInput` before
        anything runs, on every backend (k-core refuses self-loops, as networkx does).
        It runs on every call, so it should cost a pass over the edges at most.
    priority : callable, optional
        ``priority(n)`` or ``priority(n, params)``: an expression of a node's fields
        (e.g. ``lambda n: n.dist``), the key an activation carries. A driving strategy
        that orders work (``priority``: near-far, delta-stepping buckets) processes
        nodes of small keys first; every other strategy ignores it. A result never
        depends on it, only the work does, so it must not change what the fixpoint is.
    priority_width : float, optional
        A bucket width, in units of the priority key, that the formulation relies on:
        with ``1.0`` and an integer key, a bucket is one key value, and operators that
        read ``p.bucket`` (the bucket a step processes) read that value (k-core's
        peeling level). Driving ``priority`` then uses it instead of a width from the
        graph, and refuses a ``width_scale`` other than 1. ``None`` (default): the
        width is the strategy's.
    direct : callable, optional
        An escape hatch for a formulation the operator language cannot state (the
        class docstring says why): ``direct(graph, params, *, sources, backend,
        device_arrays) -> (fields, stats)``, array code that :func:`gswitch.run` calls
        instead of the engine. The class then declares node fields (its outputs, and
        fields a run argument fills through :func:`per_node_input`), parameters and
        optionally a start set (all nodes by default), and no operators or stages.
        ``graph`` is the prepared graph (symmetrised, simple, renumbered as for any
        formulation), ``params`` the resolved parameters (per-node inputs as arrays, a
        run argument not given left out), ``sources`` the start nodes or ``None``,
        ``backend`` ``"cpu"`` or ``"gpu"`` (a GPU call runs on the engine's device, under
        its lock); ``device_arrays`` asks for CuPy outputs left on the device. It returns
        the output fields and a dict of what it measured (``iterations``,
        ``edges_processed``, ``device_time_s``, ...); the run adds ``time_s`` and the
        variant. No strategy applies to it: it accepts every axis at its default only.
    default_if : callable, optional
        ``default_if(graph, backend) -> bool`` on the prepared graph: where this
        formulation (the one marked ``default`` or ``default_on``) is the default. On a
        graph where it is false, a config without ``variant`` runs another registered
        formulation that runs on the backend (one that would not fit in memory there,
        say): the first whose ``default_on`` names the backend and whose own
        ``default_if`` holds, else the first such formulation.
    suited : callable, optional
        ``suited(graph, backend) -> str | None`` on the prepared graph: why this
        formulation would not pay there on ``backend`` ("cpu" or "gpu"), or ``None``. A
        run still works (and gives the same answer); the tuner leaves the formulation
        out of that graph's search, with the reason, and the selector passes over a pick
        of it (``overlay`` needs parts joined by few edges).
    backends : tuple of str
        The backends this formulation runs on: both by default; ``("cpu",)`` for array
        code that has no GPU side. A run that names the formulation on another backend is
        refused with the fix; a config without ``variant`` runs another formulation there,
        and the tuner leaves it out of the backend's search.

    Returns
    -------
    AlgorithmSpec

    Notes
    -----
    An algorithm is one module: its fields, operators, its ``expected`` reference and
    its ``compare`` here, and a ``gswitch_algorithms`` hook returning the spec (and its
    variants). The registry, the CLI, the tuner's answer check and
    :mod:`gswitch.testing.reference` find everything through the spec; nothing names
    the algorithm elsewhere.

    Examples
    --------
    >>> import numpy as np
    >>> import gswitch as gs
    >>> from gswitch.verify import exact
    >>> def reached(graph, source=None, **params):
    ...     from scipy.sparse.csgraph import breadth_first_order
    ...     out = np.zeros(graph.n_nodes, np.int32)
    ...     out[breadth_first_order(graph.to_scipy(), source, return_predecessors=False)] = 1
    ...     return out
    >>> @gs.algorithm(name="reach", expected=reached, compare=exact)
    ... class Reach:
    ...     hit = gs.NodeField("int32", init=0, at_source=1)
    ...     start = gs.from_source()
    ...     @gs.edge_op
    ...     def visit(e):
    ...         e.dst.hit.reduce_max(e.src.hit)
    >>> from gswitch.verify import answer_problem, expected_answer
    >>> g = gs.Graph.from_edges([0, 1], [1, 2], n_nodes=4)
    >>> got = gs.run(Reach, g, source=0).fields["hit"]
    >>> answer_problem(Reach, got, expected_answer(Reach, g, source=0)) is None
    True

    """

    def wrap(c: type) -> AlgorithmSpec:
        fields: dict[str, NodeField] = {}
        params: dict[str, Param] = {}
        steps: list[Any] = []
        totals: list[str] = []
        edge_fields: dict[str, EdgeField] = {}
        declared: list[tuple[str, bool]] = []  # outputs in declaration order
        for attr, value in vars(c).items():
            if isinstance(value, NodeField):
                value.name = attr
                fields[attr] = value
                declared.append((attr, value.output))
            elif isinstance(value, EdgeField):
                value.name = attr
                edge_fields[attr] = value
                declared.append((attr, value.output))
            elif isinstance(value, Param):
                value.name = attr
                params[attr] = value
            elif isinstance(value, StepTotal):
                value.name = attr
                totals.append(attr)
            elif isinstance(value, (_StageMarker, HostStep)):
                steps.append((attr, value))
        if not fields:
            raise AlgorithmError(f"{c.__name__} declares no NodeField")
        _add_buffers(fields)
        clash = (set(fields) | set(edge_fields)) & set(params) | set(fields) & set(edge_fields)
        if clash:
            raise AlgorithmError(f"{sorted(clash)[0]!r} is both a field and a parameter")
        if len(totals) > MAX_STEP_TOTALS:
            raise AlgorithmError(f"{c.__name__} declares {len(totals)} StepTotals; at most "
                                 f"{MAX_STEP_TOTALS} fit the control block")
        if not backends or any(b not in ("cpu", "gpu") for b in backends):
            raise AlgorithmError(f"backends must name 'cpu', 'gpu' or both, got {backends!r}")
        if weights not in ("any", "nonnegative"):
            raise AlgorithmError(f"weights must be 'any' or 'nonnegative', got {weights!r}")
        if max_iterations_param is not None and max_iterations_param not in params:
            raise AlgorithmError(f"max_iterations_param {max_iterations_param!r} is not a Param")
        fin = vars(c).get("finalize")
        if isinstance(fin, staticmethod):
            fin = fin.__func__
        common = dict(
            name=name or c.__name__.lower(), cls=c, doc=inspect.getdoc(c) or "",
            fields=fields, params=params, symmetric=symmetric, simple=simple,
            weights=weights,
            reference=reference, max_iterations_param=max_iterations_param,
            first_hit_final=first_hit_final, variant=variant, default_variant=default,
            expected=expected, compare=compare, default_on=tuple(default_on),
            step_totals=tuple(totals), check_graph=check_graph, default_if=default_if,
            backends=tuple(backends), suited=suited,
            priority_width=_checked_width(priority_width, priority),
            backend_defaults={str(k): dict(v) for k, v in (backend_defaults or {}).items()})
        allowed = {str(k): tuple(v) for k, v in (supports or {}).items()}
        own_defaults = dict(defaults or {})
        if edge_fields and not steps and direct is None:
            raise AlgorithmError(f"{c.__name__} declares EdgeField "
                                 f"{next(iter(edge_fields))!r}, which only host steps "
                                 "or array code write: declare stages and host steps, "
                                 "or direct=")
        if direct is not None:
            return _direct_spec(c, common, direct, edge_fields, allowed, own_defaults, fin,
                                steps, declared)
        if not steps:
            return AlgorithmSpec(
                **common, **_operators(c, fields, params, node_after_edges, converge_below,
                                       priority, tuple(totals)),
                finalize=fin,
                finalize_on_device=bool(finalize_on_device and fin is not None),
                outputs=[n for n, f in fields.items() if f.output],
                supports=allowed,
                config_defaults=own_defaults,
            )
        if any(isinstance(v, (_OpMarker, RawOperator, ActiveSet)) for v in vars(c).values()):
            raise AlgorithmError(f"{c.__name__} declares stages: its operators and start "
                                 "set belong inside them")
        stages: list[Any] = []
        for attr, value in steps:
            if isinstance(value, HostStep):
                stages.append(value)
                continue
            opts = value.options
            stages.append(AlgorithmSpec(
                **common, **_operators(value.cls, fields, params, opts["node_after_edges"],
                                       None, priority, tuple(totals)),
                outputs=list(fields),  # a stage hands every field to the next
                supports={str(k): tuple(v) for k, v in opts["supports"].items()},
                stage_name=attr, stage_config=opts["config"],
                stage_reverse=opts["reverse"]))
        first = next((st for st in stages if isinstance(st, AlgorithmSpec)), None)
        if first is None:
            raise AlgorithmError(f"{c.__name__} has host steps but no operator stage")
        return AlgorithmSpec(
            **common, start=first.start, edge=first.edge, node=first.node,
            node_after_edges=first.node_after_edges, priority=first.priority,
            finalize=fin, finalize_on_device=bool(finalize_on_device and fin is not None),
            outputs=[n for n, out in declared if out],
            supports=allowed, edge_fields=edge_fields,
            config_defaults=own_defaults, stages=stages)

    if cls is not None:
        return wrap(cls)
    return wrap
