"""The CPU engine: vectorised NumPy super-steps over the same traced operators.

Each super-step evaluates the node operator on the active nodes, then the edge
operator on every edge of the active nodes at once (bulk-synchronous, Jacobi style:
all values read at the start of the phase), applies the reductions with ``ufunc.at``
or ``bincount`` and derives the next active set from what changed. Driving styles and
directions change the work done exactly as they do on the GPU; worklists, load
balancing and launch modes are GPU mechanics and are ignored here.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import numpy as np

from .. import expr as ex
from ..algorithm import AlgorithmSpec, Operator
from ..arrayops import sorted_unique as _sorted_unique
from ..config import Config
from ..errors import DeadlineExceeded
from ..graph import Graph
from ..result import Result
from ..strategy import PriorityKey
from .cpu_closure import Closure, closure_path
from .cpu_derived import all_sources as _all_sources
from .cpu_derived import derived
from .cpu_eval import ALL, evaluate, kept_values, quiet, shared_subexpressions, unaliased
from .cpu_eval import Env as _Env
from .cpu_eval import broadcast as _broadcast
from .cpu_eval import node_index as _node_index
from .cpu_fast import whole_edge_path
from .cpu_guarded import MarkStep
from .cpu_local import ordered_passes, run_rounds
from .cpu_one import OneNodeProgram
from .cpu_plan import needs_quiet, plan, reads
from .cpu_reach import Reach, reach_path
from .timing import PhaseTimer

__all__ = ["CpuEngine", "evaluate"]

_NP = {d: np.dtype(d) for d in ex.DTYPES}

def _node_phase(program: _NodeProgram, env: _Env, activated: _Activations) -> None:
    """The node operator (its :class:`_NodeProgram`) on ``env.ids["self"]`` (distinct
    ids), statement by statement: each sees the stores of the ones before it.

    On every node (a topology-driven step) it reads and writes the fields whole, without
    gathering them through the ids. The statements run in :func:`quiet` where they may
    warn at all; the engine enters it once for the run (``program.quiet``), so this
    does not.
    """
    nodes = env.ids["self"]
    whole = _every_node(nodes, env.graph.n_nodes)
    if whole:
        env.ids["self"] = ALL
    env.whole_cache = env.run_cache if whole else None
    at = slice(None) if whole else nodes
    count = nodes.size
    for s, value, dt, kind, drops in program.steps:
        if kind == _TOTAL:
            total = _total(value, env, count) if count != 1 else _one_total(value, env)
            if s.into:
                env.sums[s.into] = env.sums.get(s.into, 0.0) + total
            else:
                env.total += total
            continue
        val = value(env)[0]
        f = env.fields[s.field]
        if kind == _ASSIGN:
            if type(val) is not ndarray and getattr(val, "dtype", None) == dt:
                # a scalar of the field's dtype (a constant): stored without an array
                if whole:
                    f.fill(val)
                else:
                    f[at] = val
            else:
                f[at] = val if getattr(val, "dtype", None) == dt else np.asarray(val).astype(dt)
            if drops or not whole:  # on every node nothing was gathered
                env.forget(s.field, drops)
            continue
        _node_reduction(s, val, f, env, activated, nodes, at, whole)
        env.forget(s.field, drops)


ndarray = np.ndarray  # a global, not an attribute lookup, in the loop above


class _NodeProgram:
    """A node operator's statements with what each needs decided once: its compiled
    expressions (:func:`gswitch.engine.cpu_plan.plan`: the node phase runs them in
    :func:`quiet` where they may warn, so they need no root), the subexpressions they share,
    whether they run in :func:`quiet`, the form of each ``n.total`` sum and what a
    store forgets of the values kept so far.
    """

    #: id(operator) -> (operator, its program); the entry holds the operator, so another
    #: that gets its id after it is gone does not match
    _kept: dict[int, tuple[Operator, _NodeProgram]] = {}

    def __init__(self, op: Operator) -> None:
        self.shared = shared = shared_subexpressions(op.statements)
        self.quiet = needs_quiet(op.statements)
        kept = kept_values(op.statements, shared)
        #: the parameters the statements read (not step totals), in name order
        self.params_read = tuple(sorted({
            x.name for st in op.statements for root_expr in (
                st.value, getattr(st, "at", None), getattr(st, "activate_above", None))
            if root_expr is not None for x in ex.walk(root_expr)
            if isinstance(x, ex.ParamRef) and not isinstance(x, ex.StepTotalRef)}))
        #: (statement, its compiled value or sum form, its dtype, what it is: ``_TOTAL``,
        #: ``_ASSIGN`` or ``_REDUCE``, the kept values that read the field it stores),
        #: decided here rather than every step
        self.steps: list[tuple[Any, ...]] = []
        for s in op.statements:
            if isinstance(s, ex.Total):
                self.steps.append((s, _total_form(s.value, shared), None, _TOTAL, ()))
            else:
                self.steps.append((s, plan(s.value, shared), _NP[s.dtype],
                                   _ASSIGN if isinstance(s, ex.Assign) else _REDUCE,
                                   tuple(e for e in kept if s.field in reads(e))))
        #: the statements over NumPy scalars, for a step over one node (``None`` where
        #: they cannot be stated so)
        self.one = OneNodeProgram.build(self.steps, shared, self.quiet, _TOTAL, _ASSIGN)

    @classmethod
    def of(cls, op: Operator) -> _NodeProgram:
        hit = cls._kept.get(id(op))
        if hit is None or hit[0] is not op:
            if len(cls._kept) > 1024:
                cls._kept.clear()
            hit = cls._kept[id(op)] = (op, cls(op))
        return hit[1]


_TOTAL, _ASSIGN, _REDUCE = range(3)


def _total_form(e: ex.Expr, shared: frozenset) -> tuple[Any, ...]:
    """How :func:`_node_phase` sums ``e``: ``(cond, value, dtype)``, where a float64
    conversion at its root is made inside the sum, and ``where(cond, x, 0)`` sums ``x``
    under a mask, without the array of zeros (``cond`` ``None`` otherwise); ``dtype`` is
    a NumPy dtype.
    """
    if isinstance(e, ex.Cast) and e.dtype == "float64":
        e = e.a
    if isinstance(e, ex.Select) and isinstance(e.b, ex.Const) and e.b.value == 0:
        return plan(e.cond, shared), plan(e.a, shared), _NP[e.a.dtype]
    return None, plan(e, shared), _NP[e.dtype]


def _node_reduction(s: ex.Reduction, val: Any, f: np.ndarray, env: _Env,
                    activated: _Activations, nodes: np.ndarray, at: Any,
                    whole: bool) -> None:
    """A node operator's reduction of ``val`` into ``f`` at its own nodes (``at``) or,
    indirectly, at the nodes its ``at`` expression names.
    """
    count = nodes.size
    val = _broadcast(val, count, s.dtype)
    if s.at is not None:  # indirect: targets may repeat, so a buffered reduction
        targets = _node_index(s, _broadcast(evaluate(s.at, env), count, "int64"), f.size)
        env.values[s.index] = f[targets]
        thr = None if s.activate_above is None else evaluate(s.activate_above, env)
        if whole:  # a load of every node is the field itself, which this writes
            targets, val = unaliased(targets, env.fields), unaliased(val, env.fields)
        _apply_reduction(s, f, targets, val, thr,
                         activated if s.activates else _Activations.ignored(f.size))
    elif s.kind.name == "exchange":
        env.values[s.index] = f[at].copy()
        f[at] = val
    else:
        old = f[at].copy() if whole else f[at]
        env.values[s.index] = old
        new = _combine(s.kind.name, old, val)
        f[at] = new
        if s.activates:
            if s.kind.name == "add" and s.activate_above is not None:
                thr = evaluate(s.activate_above, env)
                changed = (old < thr) & (new >= thr)
            else:
                changed = new != old
            if whole:
                activated.add_mask(changed)
            else:
                activated.add(nodes[changed])


def _total(form: tuple[Any, ...], env: _Env, count: int) -> float:
    """The float64 sum over ``count`` nodes of an ``n.total`` value (its
    :func:`_total_form`).
    """
    cond, value, dtype = form
    v = value(env)[0]
    if not (isinstance(v, ndarray) and v.ndim and v.dtype == dtype):
        v = _broadcast(v, count, dtype.name)
    if cond is not None:
        return float(np.add.reduce(v, dtype=np.float64,
                                   where=_broadcast(cond(env)[0], count, "bool")))
    return float(np.add.reduce(v, dtype=np.float64))


def _one_total(form: tuple[Any, ...], env: _Env) -> float:
    """:func:`_total` over one node: what the reduction gives (it starts from 0.0),
    without its call.
    """
    cond, value, dtype = form
    v = value(env)[0]
    if not (isinstance(v, ndarray) and v.ndim and v.dtype == dtype):
        v = _broadcast(v, 1, dtype.name)
    if cond is not None:
        c = cond(env)[0]
        if not (c[0] if isinstance(c, ndarray) and c.ndim else c):
            return 0.0
    return 0.0 + float(v[0])


def _every_node(nodes: np.ndarray, n: int) -> bool:
    """Whether the distinct node ids ``nodes`` are all ``n`` nodes in id order."""
    return nodes.size == n and (n < 2 or bool(np.all(nodes[1:] > nodes[:-1])))


def _combine(kind: str, old: np.ndarray, val: np.ndarray) -> np.ndarray:
    if kind == "min":
        return np.minimum(old, val)
    if kind == "max":
        return np.maximum(old, val)
    if kind == "add":
        return old + val
    if kind == "or":
        return old | val
    raise AssertionError(kind)


_AT = {"min": np.minimum, "max": np.maximum, "or": np.bitwise_or}
_FAT = {"min": np.fmin, "max": np.fmax}
#: A min/max/or over at least ``n / _WHOLE_REDUCTION`` edges reduces them all at once and
#: compares the field before and after (see :func:`_apply_reduction`).
_WHOLE_REDUCTION = 8
#: A data-driven step whose frontier holds more than ``n / _DENSE_FRONTIER`` nodes filters
#: the whole edge list instead of expanding the nodes' ranges.
_DENSE_FRONTIER = 4


def _whole_reduction(kind: str, f: np.ndarray) -> Any:
    """The ufunc that reduces every edge at once and changes exactly the nodes the
    per-edge test below would, or ``None`` where there is none.

    An integer min, max or or changes a node exactly when some edge improves it. For
    floats, fmin/fmax pass a NaN value over as the test does (NaN never compares
    better); a field already holding a NaN keeps the test, which never replaces it.
    """
    if f.dtype.kind in "iu":
        return _AT.get(kind)
    if f.dtype.kind == "f" and kind in _FAT and not np.isnan(f).any():
        return _FAT[kind]
    return None


class _Activations:
    """The nodes one step activates, kept for the whole run: a mask of every node and,
    while every activation of the step came as node ids, those ids. A step that
    activates few nodes of a large graph (a road network's BFS wave) then costs its
    activations, not three passes over all nodes.
    """

    def __init__(self, n: int) -> None:
        self.mask = np.zeros(n, dtype=bool)
        self.ids: list[np.ndarray] | None = []
        self.count = 0  # ids held

    @classmethod
    def ignored(cls, n: int) -> _Activations:
        """A sink for the activations of a reduction that activates nothing."""
        return cls(n)

    def add(self, ids: np.ndarray) -> None:
        """Activate the nodes ``ids`` (valid node ids, duplicates allowed)."""
        self.mask[ids] = True
        if self.ids is not None:
            self.ids.append(ids)
            self.count += ids.size

    def add_indexes(self, index: np.ndarray) -> None:
        """Activate ``mask[index]`` as NumPy indexes it (a user operator's output, which
        may hold negative or repeated ids): through the mask only.
        """
        self.mask[index] = True
        self.ids = None

    def add_mask(self, mask: np.ndarray) -> None:
        """Activate the nodes where ``mask`` (one bool per node) is set."""
        self.mask |= mask
        self.ids = None

    def take(self) -> np.ndarray:
        """The activated nodes in ascending order (``int32``); clears for the next step."""
        ids = self.ids
        if ids is not None and not self.count:  # nothing activated: the mask is clear
            self.ids = []
            return _NO_IDS
        if ids is not None and _SPARSE_ACTIVATIONS * self.count < self.mask.size:
            active = _sorted_unique(np.concatenate(ids) if len(ids) > 1 else (
                ids[0] if ids else np.empty(0, np.int32)))
            self.mask[active] = False
        else:
            active = self.mask.nonzero()[0]
            self.mask[:] = False
        self.ids, self.count = [], 0
        return active.astype(np.int32, copy=False)


#: the activations of a step that activated nothing (read-only: every such step's)
_NO_IDS = np.empty(0, np.int32)
_NO_IDS.flags.writeable = False


def _degrees32(graph: Graph) -> dict[str, np.ndarray]:
    """Out- and in-degrees as the expressions read them (int32, read-only), once per graph."""
    out = {"out": graph.out_degree.astype(np.int32), "in": graph.in_degree.astype(np.int32)}
    for d in out.values():
        d.flags.writeable = False
    return out


class _NoActivations:
    """Where a reduction that activates nothing (``activate=False``) reports to."""

    def add(self, ids: np.ndarray) -> None:
        pass

    def add_mask(self, mask: np.ndarray) -> None:
        pass

    def add_indexes(self, index: np.ndarray) -> None:
        pass


_NO_ACTIVATIONS = _NoActivations()


#: A step whose activations number less than 1/16 of the nodes collects them from their
#: ids (a sort of those) rather than from the mask of all nodes.
_SPARSE_ACTIVATIONS = 16


def _apply_reduction(s: ex.Reduction, f: np.ndarray, dst: np.ndarray, val: np.ndarray,
                     thr: Any, activated: _Activations, uniform: bool = False) -> None:
    """Combine ``val`` into ``f[dst]`` (targets may repeat) and activate what changed.

    ``uniform``: every edge offers the same value (a constant): an integer min, max or
    or is then a plain indexed store of the combined values, each target written only
    with that one result, without ``ufunc.at``.
    """
    kind = s.kind.name
    if uniform and kind in _AT and f.dtype.kind in "iu" and dst.size:
        cur = f.take(dst)
        new = _AT[kind](cur, val[0])
        changed = new != cur
        d = dst[changed]
        f[d] = new[changed]
        activated.add(d)
        return
    whole = _whole_reduction(kind, f) if _WHOLE_REDUCTION * dst.size >= f.size else None
    if whole is not None:
        # many edges: one unbuffered reduction over every edge, then the nodes whose value
        # changed, at a fraction of the per-edge test's passes over the edges (2 to 9
        # times faster on 4 edges a node)
        old = f.copy()
        whole.at(f, dst, val)
        activated.add_mask(f != old)
        return
    if kind in ("min", "max"):
        cur = f.take(dst)
        better = val < cur if kind == "min" else val > cur
        d, v = dst[better], val[better]
        if d.size:
            (np.minimum if kind == "min" else np.maximum).at(f, d, v)
            activated.add(d)
    elif kind == "or":
        cur = f.take(dst)
        changed = (cur | val) != cur
        d, v = dst[changed], val[changed]
        if d.size:
            np.bitwise_or.at(f, d, v)
            activated.add(d)
    elif kind == "add":
        # the targets (sorted, once each) and each edge's place among them: over the
        # edges when they are few, else over every node (a bincount of all of them)
        if dst.size * _SPARSE_ACTIVATIONS < f.size:
            idx = _sorted_unique(dst)
            slot = np.searchsorted(idx, dst)
        else:
            idx = np.flatnonzero(np.bincount(dst, minlength=f.size))
            slot = dst
        width = idx.size if slot is not dst else f.size
        if f.dtype.kind == "f":  # float64 sums in edge order, either way
            sums = np.bincount(slot, weights=val.astype(np.float64), minlength=width)
        else:
            sums = np.zeros(width, dtype=f.dtype)
            np.add.at(sums, slot, val)
        if slot is dst:
            sums = sums[idx]
        old = f[idx]
        new = (old + sums).astype(f.dtype)
        f[idx] = new
        if thr is None:
            activated.add(idx[sums != 0])
        else:
            if np.ndim(thr):  # one threshold per edge (it reads the target's fields):
                per_target = np.empty(width, dtype=np.asarray(thr).dtype)  # the target's
                per_target[slot] = thr
                thr = per_target[idx] if slot is dst else per_target
            activated.add(idx[(old < thr) & (new >= thr)])
    else:
        raise AssertionError(kind)


def _stage_fields(spec: AlgorithmSpec, given: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A stage's fields from those the last stage and host step left: each array taken
    as it is when it has the field's dtype, owns its memory and shares it with no other
    field (a host step may hand one array to two fields), else a copy. A stage run once
    per level (Brandes' backward sweep) then costs its frontier, not a copy of every
    field.
    """
    out: dict[str, np.ndarray] = {}
    for k, v in given.items():
        dtype = spec.fields[k].dtype
        if (isinstance(v, np.ndarray) and v.dtype == dtype and v.base is None
                and v.flags.writeable and v.flags.c_contiguous
                and not any(np.may_share_memory(v, w) for w in out.values())):
            out[k] = v
        else:
            out[k] = np.array(v, dtype=dtype)
    return out


def _expand(indptr: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edge ids and their source ids (intp, as every later gather wants them) for all
    out-edges of ``nodes``.
    """
    nodes = nodes.astype(np.intp)
    starts = indptr.take(nodes).astype(np.intp)
    deg = indptr.take(nodes + 1) - starts
    total = int(deg.sum())
    if total == 0:
        return np.empty(0, np.intp), np.empty(0, np.intp)
    excl = np.cumsum(deg) - deg
    eidx = np.arange(total, dtype=np.intp) + np.repeat(starts - excl, deg)
    return eidx, np.repeat(nodes, deg)


def _first_edges(graph: Graph, k: int) -> np.ndarray:
    """Mask of the edges that are among the first ``k`` of their source's row."""
    indptr = graph.indptr.astype(np.int64)
    pos = np.arange(graph.n_edges, dtype=np.int64) - np.repeat(indptr[:-1], np.diff(indptr))
    return pos < int(k)


def _wide(graph: Graph, ids: np.ndarray) -> np.ndarray:
    """``ids`` as intp (what gathers and ``ufunc.at`` index with); the graph's own arrays
    of every edge's source and target converted once per graph, not once per sweep.
    """
    if ids.dtype == np.intp:
        return ids
    for what, whole in (("indices", graph.indices), ("sources", _all_sources(graph))):
        if ids is whole:
            def build(g: Graph, whole: np.ndarray = whole) -> np.ndarray:
                out = whole.astype(np.intp)
                out.flags.writeable = False
                return out

            return derived(graph, f"{what}:intp", build)
    return ids.astype(np.intp)


def _every_edge(graph: Graph, all_src: np.ndarray, first_ok: np.ndarray | None,
                cached: tuple | None) -> tuple:
    """``(src, dst, weights)`` of every edge a full sweep expands: all of them, or those
    ``first_ok`` keeps (filtered once per run, then ``cached``).
    """
    if first_ok is None:
        return all_src, graph.indices, graph.weights
    if cached is not None:
        return cached
    w = None if graph.weights is None else graph.weights[first_ok]
    return all_src[first_ok], graph.indices[first_ok], w


def _step_env(env: _Env | None, program: _NodeProgram, fields: dict[str, np.ndarray],
              nodes: np.ndarray, params: dict[str, Any], it: int, graph: Graph,
              degrees: dict[str, np.ndarray]) -> _Env:
    """The Env of ``program`` (the node operator) for step ``it`` over ``nodes``:
    ``env``, the one of the run's previous steps, begun again, or a new one, which keeps
    the run's step-invariant values (:func:`_run_cache`).
    """
    if env is None:
        env = _Env(fields, {"self": nodes}, None, nodes.size, params, it, graph, degrees)
        env.run_cache = _run_cache(graph, params, program)
        env.shared = program.shared
        env.quiet = True  # the node phase runs in quiet() where its statements may warn
    else:
        env.begin_step({"self": nodes}, nodes.size, it)
    return env


def _node_step(env: _Env | None, program: _NodeProgram, fields: dict[str, np.ndarray],
               nodes: np.ndarray, params: dict[str, Any], it: int, graph: Graph,
               degrees: dict[str, np.ndarray], activated: _Activations,
               one_state: list) -> tuple[_Env | None, float, dict[str, float]]:
    """The node operator's step ``it`` over ``nodes``: its Env for the next step (see
    :func:`_step_env`), the step's convergence total and its named sums. Over one node
    it runs in NumPy scalars where it can (:class:`OneNodeProgram`; ``one_state`` is its
    state for the run).
    """
    if nodes.size == 1 and program.one is not None:
        total, sums = program.one.run(fields, params, degrees, int(nodes[0]), it,
                                      graph.n_nodes, one_state)
        return env, total, sums
    env = _step_env(env, program, fields, nodes, params, it, graph, degrees)
    _node_phase(program, env, activated)
    return env, env.total, env.sums


#: parameter sets whose step-invariant values a graph keeps (see :func:`_run_cache`)
_RUN_CACHES = 4


def _run_cache(graph: Graph, params: dict[str, Any], program: _NodeProgram) -> dict:
    """The ``Env.run_cache`` of a run of ``program`` on ``graph`` with ``params``: what
    a step-invariant expression gives (it reads only constants, parameters, the node
    count, node ids and degrees) is the same in every run on that graph with the same
    values of the parameters it reads, so runs with equal values of the parameters the
    program reads share one, kept while the graph lives (the latest few parameter sets;
    the other parameters, such as a per-node input, do not part them); a parameter read
    that is an array makes a run's own.
    """
    names = program.params_read
    key = (names, *map(params.__getitem__, names))
    kept = derived(graph, "run caches", _no_caches)
    try:
        hit = kept.get(key)
    except TypeError:  # unhashable
        return {}
    if hit is None:
        if len(kept) >= _RUN_CACHES:
            kept.clear()
        hit = kept[key] = {}
    return hit


def _no_caches(graph: Graph) -> dict:
    return {}


def _priority_keys(spec: AlgorithmSpec, fields: dict[str, np.ndarray], ids: np.ndarray,
                   params: dict[str, Any], graph: Graph,
                   degrees: dict[str, np.ndarray]) -> np.ndarray:
    """The algorithm's priority key at nodes ``ids`` (float64)."""
    env = _Env(fields, {"self": ids}, None, ids.size, params, 0, graph, degrees)
    return _broadcast(evaluate(spec.priority, env), ids.size, "float64")


class CpuEngine:
    """Runs an :class:`~gswitch.algorithm.AlgorithmSpec` with NumPy super-steps."""

    name = "cpu"

    def run(self, spec: AlgorithmSpec, graph: Graph, params: dict[str, Any],
            sources: np.ndarray | None, config: Config, max_iterations: int,
            progress: Any = None, deadline_s: float | None = None,
            fields_in: dict[str, np.ndarray] | None = None,
            timer: PhaseTimer | None = None) -> Result:
        """Run ``spec`` to its fixpoint (or ``max_iterations`` steps); with ``timer``
        each phase's time is charged to it (:mod:`gswitch.engine.timing`).
        """
        t0 = time.perf_counter()
        if timer is not None:
            timer.start()
        n = graph.n_nodes
        # the step totals read as parameters: the previous step's sums, zero at first
        params = {**params, **dict.fromkeys(spec.step_totals, 0.0)}
        # a stage of a staged algorithm continues from the fields the last one left
        fields = spec.initial_fields(n, params, sources) if fields_in is None else \
            _stage_fields(spec, fields_in)
        closure = closure_path(spec, graph, params, fields, max_iterations)
        if closure is not None:  # the fixed point by one library call, no super-steps
            result = self._closure(closure, spec, graph, fields, config, t0, progress)
            if timer is not None:
                timer.lap("closure")
                timer.note_run(spec, result.stats, closure=True)
            return result
        reach = reach_path(spec, params, fields, max_iterations)
        if reach is not None:
            result = self._reach(reach, spec, graph, params, sources, fields, config, t0,
                                 progress)
            if result is not None:
                if timer is not None:
                    timer.lap("closure")
                    timer.note_run(spec, result.stats, closure=True)
                return result
        program = None if spec.node is None else _NodeProgram.of(spec.node)
        if program is not None and program.quiet:
            # entered once for the run rather than once per step (it costs two small
            # ufunc calls): the node operator's statements then run in it
            with quiet():
                return self._steps(spec, graph, params, sources, config, max_iterations,
                                   progress, deadline_s, timer, t0, fields, program)
        return self._steps(spec, graph, params, sources, config, max_iterations, progress,
                           deadline_s, timer, t0, fields, program)

    def _steps(self, spec: AlgorithmSpec, graph: Graph, params: dict[str, Any],
               sources: np.ndarray | None, config: Config, max_iterations: int,
               progress: Any, deadline_s: float | None, timer: PhaseTimer | None, t0: float,
               fields: dict[str, np.ndarray], program: _NodeProgram | None) -> Result:
        """The super-steps of :meth:`run` from the initial ``fields``; ``program`` is the
        node operator's (``None`` without one).
        """
        n = graph.n_nodes
        sums: dict[str, float] = {}
        strategies = config.strategies()
        driving, direction = strategies["driving"], strategies["direction"]
        degrees = derived(graph, "degrees32", _degrees32)
        all_nodes = np.arange(n, dtype=np.int32)
        all_src: np.ndarray | None = None
        node_mask: np.ndarray | None = None
        rev = None
        if spec.start.kind == "all":
            active = all_nodes
        else:
            # a sort: NumPy 2's hash-based unique costs 20 ms on 30,000 ids
            active = _sorted_unique(np.asarray(sources, dtype=np.int32))
        mode = driving.initial_mode(active.size, n)
        stats: dict[str, Any] = {"active": [], "modes": [], "directions": [],
                                 "edges_processed": 0, "totals": []}
        it = 0
        edge_op = spec.edge
        activated = _Activations(n)
        every_edge = None  # the edges a step over every node expands, once filtered
        # the node operator's, one for every step, made at its first step over more than
        # one node
        node_env: _Env | None = None
        one_state = [None]  # its scalar program's, for a step over one node
        # edge_op(first=k): only the first k out-edges of a node, in CSR order
        first_ok = _first_edges(graph, params[edge_op.first]) if edge_op.first else None
        no_edges = graph.n_edges == 0
        gather = None if first_ok is not None or no_edges else whole_edge_path(
            spec, graph, _apply_reduction)
        local_order = ordered_passes(driving, spec, graph, lambda ids: _priority_keys(
            spec, fields, ids, params, graph, degrees))
        dstate = driving.begin(graph, config, None if spec.priority is None else PriorityKey(
            lambda ids: _priority_keys(spec, fields, ids, params, graph, degrees),
            spec.priority_width))
        if timer is not None:
            timer.lap("setup")
        step = driving.mode(mode)
        capped = False
        while it < max_iterations:
            if timer is not None:  # what the last step did after its compaction
                timer.lap("convergence and mode decision", call=it > 0)
            if not step.operators:  # the driving strategy's own step (a refill, say)
                active, nxt = driving.refill(dstate, mode)
                if nxt is None:  # nothing was waiting: done
                    break
                stats["active"].append(n)
                stats["modes"].append(mode)
                stats["directions"].append("push")
                it += 1
                mode = nxt
                step = driving.mode(mode)
                if timer is not None:
                    timer.lap("driving refill")
                continue
            if step.items == "worklist" and active.size == 0:
                break
            nodes = driving.items(active, n) if step.items == "worklist" else all_nodes
            for name in spec.step_totals:
                params[name] = sums.get(name, 0.0)
            params[ex.Bucket.name] = driving.bucket(dstate)  # p.bucket
            sums = {}
            stats["active"].append(int(nodes.size))
            stats["modes"].append(mode)
            total = 0.0
            if spec.node is not None and not spec.node_after_edges:
                node_env, total, sums = _node_step(node_env, program, fields, nodes, params,
                                                   it, graph, degrees, activated,
                                                   one_state)
                if timer is not None:
                    timer.lap("node operator")
            pull = direction.pull(mode, nodes.size, n)
            frontier = step.items == "worklist"
            stats["directions"].append("pull" if pull else "push")
            whole = nodes.size == n
            local = None if pull or edge_op is None or no_edges else driving.local_rounds(
                graph, mode)
            if no_edges:
                pass  # nothing to expand, and a reduction over no edge changes nothing
            elif local is not None:  # passes inside the step (partitions, unrolling)
                stats["edges_processed"] += run_rounds(
                    graph, nodes, local[0], local[1], first_ok,
                    lambda s, d, w, acts, it=it: self._edge_phase(
                        edge_op, fields, s, d, w, params, it, graph, degrees, acts),
                    _expand, activated, lambda: _Activations(n), local_order)
                if timer is not None:
                    timer.lap("edge operator")
            elif pull:
                if rev is None:
                    rev = graph.reverse
                    rev_dst = _all_sources(rev)
                if frontier:
                    mask = np.zeros(n, dtype=bool)
                    mask[nodes] = True
                    keep = mask[rev.indices]
                    src, dst = rev.indices[keep], rev_dst[keep]
                    w = None if rev.weights is None else rev.weights[keep]
                else:
                    src, dst, w = rev.indices, rev_dst, rev.weights
                stats["edges_processed"] += rev.n_edges
            else:
                if frontier and _DENSE_FRONTIER * nodes.size <= n:
                    eidx, src = _expand(graph.indptr, nodes)
                    if first_ok is not None:
                        keep = first_ok[eidx]
                        eidx, src = eidx[keep], src[keep]
                    dst = graph.indices[eidx]
                    w = None if graph.weights is None else graph.weights[eidx]
                elif frontier:
                    # a dense frontier: filtering the whole edge list is cheaper than
                    # expanding the nodes' ranges, and keeps the same edge order (the
                    # frontier is sorted)
                    if all_src is None:
                        all_src = _all_sources(graph)
                    if nodes.size == n:  # every node: every edge, nothing to filter
                        src, dst, w = every_edge = _every_edge(graph, all_src, first_ok,
                                                               every_edge)
                    else:
                        if node_mask is None:
                            node_mask = np.zeros(n, dtype=bool)
                        node_mask[nodes] = True
                        keep = node_mask[all_src]
                        node_mask[nodes] = False
                        if first_ok is not None:
                            keep &= first_ok
                        src, dst = all_src[keep], graph.indices[keep]
                        w = None if graph.weights is None else graph.weights[keep]
                else:
                    if all_src is None:
                        all_src = _all_sources(graph)
                    src, dst, w = every_edge = _every_edge(graph, all_src, first_ok,
                                                           every_edge)
                stats["edges_processed"] += int(src.size)
            if timer is not None and local is None and not no_edges:
                # the edge lists it built: written, then read once
                cached = (every_edge is not None and src is every_edge[0]) or (
                    rev is not None and src is rev.indices)
                timer.lap("edge expansion", nbytes=0 if cached else 2 * sum(
                    a.nbytes for a in (src, dst, w) if a is not None))
            if edge_op is not None and local is None and not no_edges:
                if whole and gather is not None:
                    gather.apply(fields, params, it, graph, degrees, activated)
                else:
                    self._edge_phase(edge_op, fields, src, dst, w, params, it, graph,
                                     degrees, activated)
                if timer is not None:
                    timer.lap("edge operator")
            if spec.node is not None and spec.node_after_edges:
                node_env, total, sums = _node_step(node_env, program, fields, nodes, params,
                                                   it, graph, degrees, activated,
                                                   one_state)
                if timer is not None:
                    timer.lap("node operator")
            next_active = activated.take()
            if dstate is not None and step.pushes:
                next_active = driving.admit(dstate, next_active)
            if timer is not None:
                timer.lap("worklist compaction")
            count = int(next_active.size)
            if step.keeps:  # the same items next step; activations only counted
                next_active = nodes
            it += 1
            if progress is not None:
                progress(it, count)
            if deadline_s is not None and time.perf_counter() - t0 > deadline_s:
                elapsed = time.perf_counter() - t0
                raise DeadlineExceeded(
                    f"{spec.name} passed its deadline of {deadline_s:.3g} s after {it} steps "
                    f"({elapsed:.3g} s)", elapsed_s=elapsed, iterations=it)
            if spec.converge_below is not None:
                stats["totals"].append(total)
                if not total >= params[spec.converge_below]:
                    break
            elif (step.items == "nodes" or step.keeps) and count == 0:
                break
            following = driving.next_mode(mode, count, n)
            active = next_active
            if following != mode:
                mode, step = following, driving.mode(following)
            if step.operators and step.items == "worklist" and active.size == 0:
                break
        else:
            # out of steps without the stopping rule firing: the run was cut short
            # (every break above is the stopping rule, which may fire on the last
            # permitted step: that run converged, as the device's decision reports it)
            capped = True
        stats["iterations"] = it
        stats["converged"] = not capped
        if timer is not None:
            timer.lap("convergence and mode decision")
            timer.note_run(spec, stats)
        stats["time_s"] = time.perf_counter() - t0
        return Result(spec.name, fields, stats, backend="cpu", config=config)

    @staticmethod
    def _closure(closure: Closure, spec: AlgorithmSpec, graph: Graph,
                 fields: dict[str, np.ndarray], config: Config, t0: float,
                 progress: Any) -> Result:
        stats = closure.run(graph, fields[closure.field])
        levels = stats.get("levels")
        stats.update(active=[], modes=[], directions=[], totals=[],
                     edges_processed=int(graph.n_edges),
                     iterations=1 if levels is None else levels, converged=True)
        if progress is not None:
            progress(stats["iterations"], 0)
        stats["time_s"] = time.perf_counter() - t0
        return Result(spec.name, fields, stats, backend="cpu", config=config)

    @staticmethod
    def _reach(reach: Reach | MarkStep, spec: AlgorithmSpec, graph: Graph,
               params: dict[str, Any], sources: np.ndarray | None,
               fields: dict[str, np.ndarray], config: Config, t0: float,
               progress: Any) -> Result | None:
        """A run answered whole by ``reach`` (a reach closure, or a one-step marking
        stage), or ``None`` where it declines and the super-steps run.
        """
        start = None if spec.start.kind == "all" else np.asarray(sources, dtype=np.intp)
        stats = reach.run(graph, fields, params, start, derived(graph, "degrees32",
                                                                 _degrees32))
        if stats is None:
            return None
        stats.update(active=[], modes=[], directions=[], totals=[],
                     edges_processed=int(graph.n_edges), iterations=1, converged=True)
        if progress is not None:
            progress(1, 0)
        stats["time_s"] = time.perf_counter() - t0
        return Result(spec.name, fields, stats, backend="cpu", config=config)

    @staticmethod
    def _edge_phase(op: Operator, fields: dict[str, np.ndarray], src: np.ndarray,
                    dst: np.ndarray, w: np.ndarray | None, params: dict[str, Any], it: int,
                    graph: Graph, degrees: dict[str, np.ndarray],
                    activated: _Activations) -> None:
        if src.size == 0:
            return
        if op.raw is not None:
            act = op.raw.numpy_impl(fields, src, dst, w, params)
            act = np.asarray(act)
            if act.dtype == bool:
                activated.add_mask(act)
            else:
                activated.add_indexes(act)
            return
        # as intp once: int32 ids would be converted again by every gather and ufunc.at;
        # the int32 ids stay for reads of e.src.id and e.dst.id
        ids32 = {role: a for role, a in (("src", src), ("dst", dst)) if a.dtype == np.int32}
        src, dst = _wide(graph, src), _wide(graph, dst)
        env = _Env(fields, {"src": src, "dst": dst}, w, src.size, params, it, graph, degrees)
        env.seed_ids32(ids32)
        shared = env.shared = shared_subexpressions(op.statements)
        env.quiet = True
        pending = []
        # once for every statement's expressions, where they may warn at all
        with quiet() if needs_quiet(op.statements) else contextlib.nullcontext():
            for s in op.statements:
                if isinstance(s, ex.Guard):
                    # e.only_if(): the later statements run on the edges kept, and only
                    # their values are computed (as the GPU returns from the operator)
                    ok = _broadcast(evaluate(s.value, env), src.size, "bool")
                    src, dst = src[ok], dst[ok]
                    w = None if w is None else w[ok]
                    if src.size == 0:  # no edge left: the later statements do nothing
                        break
                    env = _Env(fields, {"src": src, "dst": dst}, w, src.size, params, it,
                               graph, degrees)
                    env.shared = shared
                    env.quiet = True
                    continue
                raw = evaluate(s.value, env)
                val = _broadcast(raw, src.size, s.dtype)
                thr = None if s.activate_above is None else evaluate(s.activate_above, env)
                target = dst if s.at is None else _node_index(
                    s, _broadcast(evaluate(s.at, env), src.size, "int64"), graph.n_nodes)
                pending.append((s, val, thr, target, np.ndim(raw) == 0))
        for s, val, thr, target, uniform in pending:
            _apply_reduction(s, fields[s.field], target, val, thr,
                             activated if s.activates else _NO_ACTIVATIONS, uniform)
