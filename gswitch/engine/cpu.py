"""The CPU engine: vectorised NumPy super-steps over the same traced operators.

Each super-step evaluates the node operator on the active nodes, then the edge
operator on every edge of the active nodes at once (bulk-synchronous, Jacobi style:
all values read at the start of the phase), applies the reductions with ``ufunc.at``
or ``bincount`` and derives the next active set from what changed. Driving styles and
directions change the work done exactly as they do on the GPU; worklists, load
balancing and launch modes are GPU mechanics and are ignored here.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .. import expr as ex
from ..algorithm import AlgorithmSpec, Operator
from ..config import Config
from ..errors import AlgorithmError, DeadlineExceeded
from ..graph import Graph
from ..result import Result

__all__ = ["CpuEngine", "evaluate"]

_NP = {d: np.dtype(d) for d in ex.DTYPES}


class _Env:
    """Arrays an expression is evaluated against: ids per role and the edge weights."""

    def __init__(self, fields: dict[str, np.ndarray], ids: dict[str, np.ndarray],
                 weights: np.ndarray | None, length: int, params: dict[str, Any],
                 iteration: int, graph: Graph, degrees: dict[str, np.ndarray]) -> None:
        self.fields = fields
        self.ids = ids
        self.weights = weights
        self.length = length
        self.params = params
        self.iteration = iteration
        self.graph = graph
        self.degrees = degrees
        self.values: dict[int, np.ndarray] = {}
        #: what the node operator's ``n.total(value)`` statements added up
        self.total = 0.0
        self._gathered: dict[tuple[str, str], np.ndarray] = {}

    def load(self, field: str, role: str) -> np.ndarray:
        key = (field, role)
        if key not in self._gathered:
            self._gathered[key] = self.fields[field][self.ids[role]]
        return self._gathered[key]

    def invalidate(self, field: str) -> None:
        for key in [k for k in self._gathered if k[0] == field]:
            del self._gathered[key]


def _const(value: Any, dtype: str) -> Any:
    return _NP[dtype].type(value)


def evaluate(e: ex.Expr, env: _Env) -> Any:
    """Evaluate an expression tree to a NumPy array (or scalar) of ``e.dtype``."""
    if isinstance(e, ex.Const):
        return _const(e.value, e.dtype)
    if isinstance(e, ex.ParamRef):
        return _const(env.params[e.name], e.dtype)
    if isinstance(e, ex.FieldLoad):
        return env.load(e.field, e.node)
    if isinstance(e, ex.FieldAt):
        return env.fields[e.field][_node_index(e, evaluate(e.at, env), env.graph.n_nodes)]
    if isinstance(e, ex.EdgeWeight):
        if env.weights is None:
            return np.float32(1.0)
        return env.weights
    if isinstance(e, ex.NodeId):
        return env.ids[e.node].astype(np.int32, copy=False)
    if isinstance(e, ex.Degree):
        return env.degrees[e.kind][env.ids[e.node]]
    if isinstance(e, ex.Iteration):
        return np.int32(env.iteration)
    if isinstance(e, ex.NumNodes):
        return np.int32(env.graph.n_nodes)
    if isinstance(e, ex.StmtValue):
        return env.values[e.index]
    if isinstance(e, ex.Cast):
        return np.asarray(evaluate(e.a, env)).astype(_NP[e.dtype])
    if isinstance(e, ex.BinOp):
        dt = _NP[e.dtype]
        a = np.asarray(evaluate(e.a, env)).astype(dt, copy=False)
        b = np.asarray(evaluate(e.b, env)).astype(dt, copy=False)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if e.op == "+":
                return a + b
            if e.op == "-":
                return a - b
            if e.op == "*":
                return a * b
            if e.op == "/":
                return a / b
            if e.op == "//":
                return np.floor_divide(a, b) if dt.kind == "f" else _trunc_div(a, b)
            if e.op == "&":
                return a & b
            if e.op == "|":
                return a | b
            if e.op == "min":
                return np.minimum(a, b)
            if e.op == "max":
                return np.maximum(a, b)
        raise AssertionError(f"unknown operator {e.op}")
    if isinstance(e, ex.UnaryOp):
        a = evaluate(e.a, env)
        if e.op == "-":
            return -a
        if e.op == "abs":
            return np.abs(a)
        return np.logical_not(a)
    if isinstance(e, ex.Compare):
        dt = _NP[ex._promote(e.a.dtype, e.b.dtype)]
        a = np.asarray(evaluate(e.a, env)).astype(dt, copy=False)
        b = np.asarray(evaluate(e.b, env)).astype(dt, copy=False)
        return {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
                "==": np.equal, "!=": np.not_equal}[e.op](a, b)
    if isinstance(e, ex.Select):
        dt = _NP[e.dtype]
        return np.where(evaluate(e.cond, env), np.asarray(evaluate(e.a, env)).astype(dt),
                        np.asarray(evaluate(e.b, env)).astype(dt))
    raise AssertionError(f"cannot evaluate {type(e).__name__}")


def _node_index(e: ex.FieldAt | ex.Reduction, index: Any, n: int) -> np.ndarray:
    """``index`` as node ids, after checking that every one is in ``0..n-1``."""
    idx = np.asarray(index)
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        bad = int(idx[(idx < 0) | (idx >= n)].ravel()[0])
        what = (f"{e.field}.at({ex.format_expr(e.at)})" if e.at is not None else e.field)
        raise AlgorithmError(f"{what} names node {bad}, outside the graph's ids 0..{n - 1}; "
                             "an index given to .at() must be a node id")
    return idx


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # C semantics: integer division truncates toward zero
    q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
    return np.where((a < 0) ^ (b < 0), -q, q).astype(a.dtype)


def _broadcast(v: Any, length: int, dtype: str) -> np.ndarray:
    arr = np.asarray(v).astype(_NP[dtype], copy=False)
    if arr.ndim == 0:
        arr = np.full(length, arr, dtype=_NP[dtype])
    return arr


def _node_phase(op: Operator, env: _Env, activated: _Activations) -> None:
    """The node operator on ``env.ids["self"]`` (distinct ids), statement by statement:
    each sees the stores of the ones before it.
    """
    nodes = env.ids["self"]
    for s in op.statements:
        val = _broadcast(evaluate(s.value, env), nodes.size, s.dtype)
        f = env.fields.get(s.field)
        if isinstance(s, ex.Total):
            env.total += float(np.sum(val, dtype=np.float64))
            continue
        if isinstance(s, ex.Assign):
            f[nodes] = val
        elif s.at is not None:  # indirect: targets may repeat, so a buffered reduction
            targets = _node_index(s, _broadcast(evaluate(s.at, env), nodes.size, "int64"),
                                  f.size)
            env.values[s.index] = f[targets].copy()
            thr = None if s.activate_above is None else evaluate(s.activate_above, env)
            _apply_reduction(s, f, targets, val, thr,
                             activated if s.activates else _Activations.ignored(f.size))
        elif s.kind.name == "exchange":
            env.values[s.index] = f[nodes].copy()
            f[nodes] = val
        else:
            old = f[nodes]
            env.values[s.index] = old.copy()
            new = _combine(s.kind.name, old, val)
            f[nodes] = new
            if s.activates:
                if s.kind.name == "add" and s.activate_above is not None:
                    thr = evaluate(s.activate_above, env)
                    activated.add(nodes[(old < thr) & (new >= thr)])
                else:
                    activated.add(nodes[new != old])
        env.invalidate(s.field)


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
        if ids is not None and _SPARSE_ACTIVATIONS * self.count < self.mask.size:
            active = _sorted_unique(np.concatenate(ids) if len(ids) > 1 else (
                ids[0] if ids else np.empty(0, np.int32)))
            self.mask[active] = False
        else:
            active = np.flatnonzero(self.mask)
            self.mask[:] = False
        self.ids, self.count = [], 0
        return active.astype(np.int32, copy=False)


def _sorted_unique(ids: np.ndarray) -> np.ndarray:
    """``np.unique`` for a few ids: a sort and a comparison with the neighbour (NumPy's
    hash-based unique costs tens of microseconds even for small arrays).
    """
    a = np.sort(ids)
    if a.size < 2:
        return a
    keep = np.empty(a.size, dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


#: A step whose activations number less than 1/16 of the nodes collects them from their
#: ids (a sort of those) rather than from the mask of all nodes.
_SPARSE_ACTIVATIONS = 16


def _apply_reduction(s: ex.Reduction, f: np.ndarray, dst: np.ndarray, val: np.ndarray,
                     thr: Any, activated: _Activations) -> None:
    kind = s.kind.name
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
        cur = f[dst]
        better = val < cur if kind == "min" else val > cur
        d, v = dst[better], val[better]
        if d.size:
            (np.minimum if kind == "min" else np.maximum).at(f, d, v)
            activated.add(d)
    elif kind == "or":
        cur = f[dst]
        changed = (cur | val) != cur
        d, v = dst[changed], val[changed]
        if d.size:
            np.bitwise_or.at(f, d, v)
            activated.add(d)
    elif kind == "add":
        n = f.size
        if f.dtype.kind == "f":
            sums = np.bincount(dst, weights=val.astype(np.float64), minlength=n)
        else:
            sums = np.zeros(n, dtype=f.dtype)
            np.add.at(sums, dst, val)
        touched = np.bincount(dst, minlength=n) > 0
        old = f[touched]
        new = (old + sums[touched]).astype(f.dtype)
        f[touched] = new
        idx = np.flatnonzero(touched)
        if thr is None:
            activated.add(idx[sums[touched] != 0])
        else:
            activated.add(idx[(old < thr) & (new >= thr)])
    else:
        raise AssertionError(kind)


def _expand(indptr: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edge ids and their source ids for all out-edges of ``nodes``."""
    starts = indptr[nodes].astype(np.int64)
    deg = indptr[nodes + 1].astype(np.int64) - starts
    total = int(deg.sum())
    if total == 0:
        return np.empty(0, np.int64), np.empty(0, np.int32)
    excl = np.cumsum(deg) - deg
    eidx = np.arange(total, dtype=np.int64) + np.repeat(starts - excl, deg)
    return eidx, np.repeat(nodes.astype(np.int32), deg)


class _SumGather:
    """An edge operator that only adds a function of its source into ``e.dst``
    (``e.dst.acc.reduce_add(e.src.contrib)``), run over every edge at once: a sparse
    matrix-vector product ``A^T x`` with ``x`` evaluated once per node instead of once per
    edge, which is what a scipy power iteration does (parallel edges count with
    multiplicity, as per edge). Activations are exact: a node whose in-edges offered a
    non-zero value, from a second product of the non-zero pattern, unless the algorithm
    stops on its step total (``converge_below``) and so never reads them.
    """

    def __init__(self, s: ex.Reduction, at: Any, count_activations: bool) -> None:
        self.s = s
        self.at = at
        self.count_activations = count_activations

    @classmethod
    def of(cls, spec: AlgorithmSpec, graph: Graph) -> _SumGather | None:
        op = spec.edge
        if op is None or op.raw is not None or len(op.statements) != 1:
            return None
        s = op.statements[0]
        if not (isinstance(s, ex.Reduction) and s.kind.name == "add" and s.at is None
                and s.node == "dst" and s.activate_above is None):
            return None
        for e in ex.walk(s.value):
            if isinstance(e, (ex.FieldLoad, ex.NodeId, ex.Degree)) and e.node != "src":
                return None
            if isinstance(e, (ex.EdgeWeight, ex.FieldAt, ex.StmtValue)):
                return None
            if isinstance(e, ex.FieldLoad) and e.field == s.field:
                return None  # reads what it writes: keep the per-edge semantics
        if graph.n_edges < graph.n_nodes:
            return None
        import scipy.sparse as sp

        n = graph.n_nodes
        a = sp.csr_array((np.ones(graph.n_edges, np.float64), graph.indices, graph.indptr),
                         shape=(n, n))
        return cls(s, a.T.tocsr(), spec.converge_below is None)

    def apply(self, fields: dict[str, np.ndarray], params: dict[str, Any], it: int,
              graph: Graph, degrees: dict[str, np.ndarray], activated: _Activations) -> None:
        n = graph.n_nodes
        ids = np.arange(n, dtype=np.int32)
        env = _Env(fields, {"src": ids}, None, n, params, it, graph, degrees)
        val = _broadcast(evaluate(self.s.value, env), n, self.s.dtype)
        f = fields[self.s.field]
        sums = self.at @ val.astype(np.float64)
        f += sums.astype(f.dtype, copy=False)
        if self.count_activations:
            reached = self.at @ (val != 0).astype(np.float64)
            activated.add_mask(reached > 0)


class CpuEngine:
    """Runs an :class:`~gswitch.algorithm.AlgorithmSpec` with NumPy super-steps."""

    name = "cpu"

    def run(self, spec: AlgorithmSpec, graph: Graph, params: dict[str, Any],
            sources: np.ndarray | None, config: Config, max_iterations: int,
            progress: Any = None, deadline_s: float | None = None) -> Result:
        t0 = time.perf_counter()
        n = graph.n_nodes
        fields = spec.initial_fields(n, params, sources)
        driving = config.strategy("driving")
        direction = config.strategy("direction")
        degrees = {"out": graph.out_degree.astype(np.int32),
                   "in": graph.in_degree.astype(np.int32)}
        all_nodes = np.arange(n, dtype=np.int32)
        all_src: np.ndarray | None = None
        node_mask: np.ndarray | None = None
        rev = None
        if spec.start.kind == "all":
            active = all_nodes
        else:
            active = np.unique(np.asarray(sources, dtype=np.int32))
        mode = driving.initial_mode(active.size, n)
        stats: dict[str, Any] = {"active": [], "modes": [], "directions": [],
                                 "edges_processed": 0, "totals": []}
        it = 0
        edge_op = spec.edge
        activated = _Activations(n)
        gather = _SumGather.of(spec, graph)
        while it < max_iterations:
            if mode == "data" and active.size == 0:
                break
            nodes = active if mode == "data" else all_nodes
            stats["active"].append(int(nodes.size))
            stats["modes"].append(mode)
            total = 0.0
            if spec.node is not None and not spec.node_after_edges:
                env = _Env(fields, {"self": nodes}, None, nodes.size, params, it, graph, degrees)
                _node_phase(spec.node, env, activated)
                total = env.total
            pull = direction.pull(mode, nodes.size, n)
            stats["directions"].append("pull" if pull else "push")
            whole = nodes.size == n
            if pull:
                if rev is None:
                    rev = graph.reverse
                    rev_dst = rev.sources()
                    mask = np.empty(n, dtype=bool)
                if mode == "data":
                    mask[:] = False
                    mask[nodes] = True
                    keep = mask[rev.indices]
                    src, dst = rev.indices[keep], rev_dst[keep]
                    w = None if rev.weights is None else rev.weights[keep]
                else:
                    src, dst, w = rev.indices, rev_dst, rev.weights
                stats["edges_processed"] += rev.n_edges
            else:
                if mode == "data" and _DENSE_FRONTIER * nodes.size <= n:
                    eidx, src = _expand(graph.indptr, nodes)
                    dst = graph.indices[eidx]
                    w = None if graph.weights is None else graph.weights[eidx]
                elif mode == "data":
                    # a dense frontier: filtering the whole edge list is cheaper than
                    # expanding the nodes' ranges, and keeps the same edge order (the
                    # frontier is sorted)
                    if all_src is None:
                        all_src = graph.sources()
                    if nodes.size == n:  # every node: every edge, nothing to filter
                        src, dst, w = all_src, graph.indices, graph.weights
                    else:
                        if node_mask is None:
                            node_mask = np.zeros(n, dtype=bool)
                        node_mask[nodes] = True
                        keep = node_mask[all_src]
                        node_mask[nodes] = False
                        src, dst = all_src[keep], graph.indices[keep]
                        w = None if graph.weights is None else graph.weights[keep]
                else:
                    if all_src is None:
                        all_src = graph.sources()
                    src, dst, w = all_src, graph.indices, graph.weights
                stats["edges_processed"] += int(src.size)
            if edge_op is not None:
                if whole and gather is not None:
                    gather.apply(fields, params, it, graph, degrees, activated)
                else:
                    self._edge_phase(edge_op, fields, src, dst, w, params, it, graph,
                                     degrees, activated)
            if spec.node is not None and spec.node_after_edges:
                env = _Env(fields, {"self": nodes}, None, nodes.size, params, it, graph, degrees)
                _node_phase(spec.node, env, activated)
                total = env.total
            next_active = activated.take()
            count = int(next_active.size)
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
            elif mode != "data" and count == 0:
                break
            mode = driving.next_mode(mode, count, n)
            active = next_active
            if mode == "data" and active.size == 0:
                break
        stats["iterations"] = it
        stats["converged"] = it < max_iterations
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
        env = _Env(fields, {"src": src, "dst": dst}, w, src.size, params, it, graph, degrees)
        pending = []
        for s in op.statements:
            val = _broadcast(evaluate(s.value, env), src.size, s.dtype)
            thr = None if s.activate_above is None else evaluate(s.activate_above, env)
            target = dst if s.at is None else _node_index(
                s, _broadcast(evaluate(s.at, env), src.size, "int64"), graph.n_nodes)
            pending.append((s, val, thr, target))
        for s, val, thr, target in pending:
            _apply_reduction(s, fields[s.field], target, val, thr, activated)
