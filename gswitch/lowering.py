"""Lowering of traced operators to CUDA device functions.

Each operator of an algorithm becomes one ``__device__`` function: the edge operator's
push form (``gs_edge_op``, with the source node's fields loaded once per node into
``GsSrc``) and, where it has one, its pull form (``gs_pull_value``, ``gs_pull_combine``,
``gs_pull_apply``); the node operator (``gs_node_op``); row guards, prefetches, the
priority key and the intrinsics an operator reads. :mod:`gswitch.codegen` composes them
with the skeleton and the strategies' fragments into a module.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

import numpy as np

from . import expr as ex
from .algorithm import AlgorithmSpec, Operator
from .codegen_stage import local_reads
from .errors import AlgorithmError

__all__ = ["CUDA_TYPES", "lower_expr", "pull_form", "row_guards", "uses_common_neighbours",
           "uses_label_frequency"]

CUDA_TYPES = {
    "bool": "bool",
    "int32": "int",
    "uint32": "unsigned",
    "int64": "long long",
    "uint64": "unsigned long long",
    "float32": "float",
    "float64": "double",
}

_ROLE_VAR = {"src": "v", "dst": "u", "self": "v"}


def _literal(value: Any, dtype: str) -> str:
    if dtype == "bool":
        return "true" if value else "false"
    if dtype in ("float32", "float64"):
        f = float(value)
        if math.isinf(f):
            bits = "__int_as_float(0x7f800000)" if dtype == "float32" else \
                "__longlong_as_double(0x7ff0000000000000LL)"
            return bits if f > 0 else f"(-{bits})"
        if math.isnan(f):
            return "__int_as_float(0x7fffffff)" if dtype == "float32" else "nan(\"\")"
        text = repr(f)
        if "e" not in text and "." not in text:
            text += ".0"
        return text + ("f" if dtype == "float32" else "")
    if dtype == "int64":
        return f"{int(value)}LL"
    if dtype == "uint32":
        return f"{int(value)}u"
    if dtype == "uint64":
        return f"{int(value)}ULL"
    return str(int(value))


def lower_expr(e: ex.Expr) -> str:
    """CUDA C expression text for an expression tree.

    Inside edge operators the source node is ``v`` with its fields preloaded in ``s``
    (``s.f_<field>``), the destination ``u``, the edge ``e`` and its weight ``gs_w``;
    inside node operators the node is ``v``. Statement results are ``s<i>``.
    """
    t = CUDA_TYPES[e.dtype]
    if isinstance(e, ex.Const):
        return _literal(e.value, e.dtype)
    if isinstance(e, ex.Bucket):
        return "GS_BUCKET(st.mode)"
    if isinstance(e, ex.StepTotalRef):
        return f"gs_last_sum(it, {e.slot})"
    if isinstance(e, ex.ParamRef):
        return f"gs.P_{e.name}"
    if isinstance(e, ex.FieldLoad):
        if e.node == "src":
            return f"s.f_{e.field}"
        return f"gs_ld(gs.F_{e.field} + {_ROLE_VAR[e.node]})"
    if isinstance(e, ex.FieldAt):
        return f"gs_ld(gs.F_{e.field} + gs_node_at({lower_expr(e.at)}))"
    if isinstance(e, ex.EdgeWeight):
        return "gs_w"
    if isinstance(e, ex.CommonNeighbours):
        among = "" if e.among == "all" else f"{e.among}_"
        return f"gs_common_neighbours_{among}{e.method}(v, u)"
    if isinstance(e, ex.LabelFrequency):
        ends = "v, u" if e.row == "dst" else "u, v"
        return f"gs_label_frequency(gs.F_{e.field}, {ends})"
    if isinstance(e, ex.NodeId):
        return _ROLE_VAR[e.node]
    if isinstance(e, ex.Degree):
        var = _ROLE_VAR[e.node]
        if e.kind == "out":
            return f"(__ldg(gs.row + {var} + 1) - __ldg(gs.row + {var}))"
        return f"__ldg(gs.in_degree + {var})"
    if isinstance(e, ex.Iteration):
        return "it"
    if isinstance(e, ex.NumNodes):
        return "((int)gs.n)"
    if isinstance(e, ex.StmtValue):
        return f"s{e.index}"
    if isinstance(e, ex.Cast):
        return f"(({t})({lower_expr(e.a)}))"
    if isinstance(e, ex.BinOp):
        a, b = f"(({t})({lower_expr(e.a)}))", f"(({t})({lower_expr(e.b)}))"
        if e.op == "min":
            return f"gs_min<{t}>({a}, {b})"
        if e.op == "max":
            return f"gs_max<{t}>({a}, {b})"
        if e.op == "//" and e.dtype.startswith("float"):
            return f"floor({a} / {b})"
        op = "/" if e.op == "//" else e.op
        return f"({a} {op} {b})"
    if isinstance(e, ex.UnaryOp):
        if e.op == "-":
            return f"(-({lower_expr(e.a)}))"
        if e.op == "abs":
            return f"(({t})abs({lower_expr(e.a)}))" if not e.dtype.startswith("float") \
                else f"fabs({lower_expr(e.a)})"
        return f"(!({lower_expr(e.a)}))"
    if isinstance(e, ex.Compare):
        ct = CUDA_TYPES[ex._promote(e.a.dtype, e.b.dtype)]
        return f"((({ct})({lower_expr(e.a)})) {e.op} (({ct})({lower_expr(e.b)})))"
    if isinstance(e, ex.Select):
        return (f"(({lower_expr(e.cond)}) ? (({t})({lower_expr(e.a)})) : "
                f"(({t})({lower_expr(e.b)})))")
    raise AlgorithmError(f"cannot lower {type(e).__name__} to CUDA")


_ATOMIC = {"min": "gs_atomic_min", "max": "gs_atomic_max", "add": "gs_atomic_add",
           "or": "gs_atomic_or", "exchange": "gs_atomic_exch"}


def _apply_lines(s: ex.Reduction, val: str, plain: bool, op_kind: str = "edge") -> list[str]:
    """Apply reduction ``s`` with value expression ``val`` and report its activation.

    A reduction into ``e.dst`` sets ``act`` (the caller activates ``u``); one through
    ``.at()`` or in a node operator activates its target itself with ``gs_activate``.
    Monotone reductions read the target first and skip the atomic when the value cannot
    improve it (most edges of a traversal, in the common case).
    """
    t = CUDA_TYPES[s.dtype]
    k = s.kind.name
    v, old = f"val{s.index}", f"s{s.index}"
    lines = [f"const {t} {v} = ({t})({val});"]
    if s.at is not None:
        target = f"t{s.index}"
        lines.append(f"const gs_vid {target} = gs_node_at({lower_expr(s.at)});")
    else:
        target = _ROLE_VAR[s.node]
    ptr = f"gs.F_{s.field} + {target}"
    returns_act = op_kind == "edge" and s.at is None

    def activation(cond: str) -> str:
        if returns_act:
            return f"act |= {cond};"
        return f"if ({cond}) gs_activate(st, {target});"

    if k in ("min", "max", "or"):
        better = {"min": f"{v} < cur{s.index}", "max": f"{v} > cur{s.index}",
                  "or": f"(cur{s.index} | {v}) != cur{s.index}"}[k]
        lines.append(f"const {t} cur{s.index} = gs_ld({ptr});")
        lines.append(f"{t} {old} = cur{s.index};")
        if plain:
            # non-atomic form: a lost update is repaired by the next topology sweep
            newv = f"cur{s.index} | {v}" if k == "or" else v
            store = f"gs.F_{s.field}[{target}] = {newv};"
            if s.activates:
                store += " " + activation("true")
            lines.append(f"if ({better}) {{ {store} }}")
            return lines
        # GS_READ_BEFORE_ATOMIC 0: the atomic at once (the read is then dead code)
        lines.append(f"if (!GS_READ_BEFORE_ATOMIC || {better}) {{")
        lines.append(f"  {old} = {_ATOMIC[k]}({ptr}, {v});")
        if s.activates:
            act = {"min": f"{v} < {old}", "max": f"{v} > {old}",
                   "or": f"({old} | {v}) != {old}"}[k]
            lines.append("  " + activation(act))
        lines.append("}")
        return lines
    lines.append(f"const {t} {old} = {_ATOMIC[k]}({ptr}, {v});")
    if s.activates and k == "add":
        if s.activate_above is None:
            lines.append(activation(f"{v} != ({t})0"))
        else:
            thr = f"(({t})({lower_expr(s.activate_above)}))"
            lines.append(activation(f"({old} < {thr}) && ({old} + {v} >= {thr})"))
    return lines


def _lower_reduction(s: ex.Reduction, plain: bool, op_kind: str = "edge") -> list[str]:
    return _apply_lines(s, lower_expr(s.value), plain, op_kind)


def _lower_assign(s: ex.Assign) -> list[str]:
    t = CUDA_TYPES[s.dtype]
    return [f"const {t} s{s.index} = ({t})({lower_expr(s.value)});",
            f"gs.F_{s.field}[{_ROLE_VAR[s.node]}] = s{s.index};"]


def operator_exprs(op: Operator):
    """Every expression node of an (expression) operator's statements."""
    for st in op.statements:
        yield from ex.walk(st.value)
        if getattr(st, "activate_above", None) is not None:
            yield from ex.walk(st.activate_above)
        if getattr(st, "at", None) is not None:
            yield from ex.walk(st.at)


def src_fields(op: Operator) -> list[str]:
    """Fields of the source node the edge operator reads (preloaded once per node)."""
    names: list[str] = []
    for e in operator_exprs(op):
        if isinstance(e, ex.FieldLoad) and e.node == "src" and e.field not in names:
            names.append(e.field)
    return names


def _edge_written(op: Operator) -> set[str]:
    """Fields the edge operator updates (its reductions' targets)."""
    return {st.field for st in op.statements if getattr(st, "field", "")}


def src_struct(spec: AlgorithmSpec) -> str:
    """``GsSrc`` and its loaders: ``gs_load_src`` reads through L2 (``gs_ld``);
    ``gs_load_src_pull``, for the edge-balanced pull's sweep, reads the fields the edge
    operator never updates through L1 (``gs_ld_l1``) and the others as ``gs_load_src``.
    """
    names = [] if spec.edge.raw is not None else src_fields(spec.edge)
    written = _edge_written(spec.edge) if spec.edge.raw is None else set(names)
    members = "".join(f"  {CUDA_TYPES[spec.fields[f].dtype]} f_{f};\n" for f in names)
    empty = "  s.unused = 0; (void)v;\n"

    def loader(name: str, cached: bool) -> str:
        loads = "".join(f"  s.f_{f} = {'gs_ld_l1' if cached and f not in written else 'gs_ld'}"
                        f"(gs.F_{f} + v);\n" for f in names)
        return (f"__device__ __forceinline__ GsSrc {name}(const gs_vid v) {{\n"
                "  GsSrc s;\n" + (loads or empty) + "  return s;\n}\n")

    return ("struct GsSrc {\n" + (members or "  char unused;\n") + "};\n"
            + loader("gs_load_src", False) + loader("gs_load_src_pull", True))


#: Expressions a row guard may hold: what reads only the source node, parameters and
#: constants (no step number, no step total, no destination, edge or indirect read)
_ROW_GUARD_NODES = (ex.Const, ex.ParamRef, ex.FieldLoad, ex.NodeId, ex.Degree, ex.NumNodes,
                    ex.BinOp, ex.UnaryOp, ex.Compare, ex.Select, ex.Cast)


def _reads_only_source(e: ex.Expr) -> bool:
    if isinstance(e, ex.StepTotalRef) or not isinstance(e, _ROW_GUARD_NODES):
        return False
    if isinstance(e, (ex.FieldLoad, ex.NodeId, ex.Degree)) and e.node != "src":
        return False
    return all(_reads_only_source(c) for c in e.children())


def _conjuncts(e: ex.Expr) -> list[ex.Expr]:
    if isinstance(e, ex.BinOp) and e.op == "&" and e.dtype == "bool":
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [e]


def row_guards(op: Operator) -> list[ex.Expr]:
    """The conditions of the edge operator's leading ``only_if`` guards that read the
    source node alone (terms of a conjunction count one by one): where one is false,
    every out-edge of the node returns at its guard, so the node's row is skipped whole.
    """
    if op.raw is None:
        guards: list[ex.Expr] = []
        for st in op.statements:
            if not isinstance(st, ex.Guard):
                break  # a guard after an update: the update runs for every edge
            guards += [c for c in _conjuncts(st.value) if _reads_only_source(c)]
        return guards
    return []


def row_guard_function(spec: AlgorithmSpec) -> str:
    """``gs_row_guard(v)`` (``GS_ROW_GUARD``): false where the edge operator's source-only
    guards fail at ``v``; ``gs_row_end`` then ends the row at its start, and no load
    balancer walks edges that would all return at the guard (a peel step's sweep
    expands only the rows of the nodes peeled in it, not every row).
    """
    guards = row_guards(spec.edge)
    if not guards:
        return ""
    cond = " && ".join(f"({lower_expr(g)})" for g in guards)
    return ("#define GS_ROW_GUARD 1\n"
            "__device__ __forceinline__ bool gs_row_guard_src(const gs_vid v, "
            "const GsSrc& s) {\n"
            f"  (void)v;\n  return {cond};\n}}\n"
            "__device__ __forceinline__ bool gs_row_guard(const gs_vid v) {\n"
            "  return gs_row_guard_src(v, gs_load_src(v));\n}\n")


def prefetch_function(spec: AlgorithmSpec) -> str:
    """``gs_prefetch_node(u)`` (``l2_prefetch``).

    In each field the edge operator updates: the L2 line after ``u``'s when ``u`` starts
    a line, and the one before when ``u`` ends one. The same two guarded lines are
    written out for ``row`` and ``col`` in ``skeleton.cuh``: one templated helper in
    ``common.cuh`` for all of them made grid BFS 2 to 11% slower on an H100 as NVRTC
    compiled it (``benchmarks/results/h100_grid_ab_prefetch_helper_*.log``).
    """
    names = [] if spec.edge.raw is not None else list(dict.fromkeys(
        st.field for st in spec.edge.statements if st.node == "dst"))
    per_line = {f: 128 // np.dtype(spec.fields[f].dtype).itemsize for f in names}
    body = "".join(f"  if ((u & {k - 1}) == 0 && u + {k} < gs.n) "
                   f"gs_prefetch_l2(gs.F_{f} + u + {k});\n"
                   f"  if ((u & {k - 1}) == {k - 1} && u >= {k}) "
                   f"gs_prefetch_l2(gs.F_{f} + u - {k});\n" for f, k in per_line.items())
    return ("__device__ __forceinline__ void gs_prefetch_l2(const void* p) {\n"
            "  asm volatile(\"prefetch.global.L2 [%0];\" :: \"l\"(p));\n}\n"
            "__device__ __forceinline__ void gs_prefetch_node(const gs_vid u) {\n"
            + (body or "  (void)u;\n") + "}\n")


def edge_function(op: Operator, name: str, plain: bool) -> str:
    # a template on the step type: the skeleton, which defines GsStep and gs_activate
    # (an indirect reduction activates its target itself), comes after the operators
    head = (f"template <typename GsStepT>\n__device__ __forceinline__ bool {name}("
            "GsStepT& st, const gs_vid v, const GsSrc& s, const gs_vid u, const gs_eid e, "
            "const int it) {")
    if op.raw is not None:
        return f"{head}\n  (void)s; (void)st;\n{op.raw.cuda_body}\n}}\n"
    body = ["const float gs_w = gs_weight(e);", "bool act = false;"]
    for st in op.statements:
        if isinstance(st, ex.Guard):
            body.append(f"if (!({lower_expr(st.value)})) return act;")
        elif isinstance(st, ex.Reduction):
            body += _lower_reduction(st, plain)
        else:
            body += _lower_assign(st)
    body += ["(void)e; (void)it; (void)s; (void)gs_w; (void)st;", "return act;"]
    return head + "\n" + "\n".join("  " + b for b in body) + "\n}\n"


def pull_form(spec: AlgorithmSpec) -> str | None:
    """Why the edge operator has no pull form, or ``None`` when it has one.

    Pull needs exactly one reduction, into ``e.dst``, of kind min, max, add or or, and
    no other statement but guards before it (an in-edge a guard refuses offers the
    reduction's identity): the values of all in-edges are then combined locally and
    applied to the destination once.
    """
    op = spec.edge
    if op.raw is not None:
        return "a raw CUDA operator has no pull form"
    if not op.statements or not isinstance(op.statements[-1], ex.Reduction) or any(
            not isinstance(g, ex.Guard) for g in op.statements[:-1]):
        return "pull needs an edge operator of exactly one reduction (after any guards)"
    st = op.statements[-1]
    if st.at is not None:
        return "pull cannot apply a reduction through .at() (its target is not e.dst)"
    if st.node != "dst" or st.kind.name not in ("min", "max", "add", "or"):
        return "pull needs a min, max, add or or reduction into e.dst"
    if st.dtype == "bool":
        return "pull cannot combine bool values across lanes"
    if uses_common_neighbours(spec):
        return "common_neighbours() reads both ends' out-rows, which pull does not walk"
    if uses_label_frequency(spec):
        return "label_frequency() reads out-rows, which pull does not walk"
    if not st.activating:
        return "pull activates every destination it changes; this reduction activates none"
    read = [st.value] + ([st.activate_above] if st.activate_above is not None else []) + [
        g.value for g in op.statements[:-1]]
    if any(isinstance(x, ex.Bucket) for r in read for x in ex.walk(r)):
        return "p.bucket is the step's priority bucket, which pull's value function does not see"
    return None


def uses_common_neighbours(spec: AlgorithmSpec) -> bool:
    """Whether the edge operator reads the ``common_neighbours()`` intrinsic (its run
    needs sorted rows, and its module the intersection functions).
    """
    op = spec.edge
    return op is not None and op.raw is None and any(
        isinstance(e, ex.CommonNeighbours) for e in operator_exprs(op))


def uses_label_frequency(spec: AlgorithmSpec) -> bool:
    """Whether the edge operator reads the ``label_frequency()`` intrinsic (its module
    then needs the counting function).
    """
    op = spec.edge
    return op is not None and op.raw is None and any(
        isinstance(e, ex.LabelFrequency) for e in operator_exprs(op))


#: The ``label_frequency()`` intrinsic: the entries of ``b``'s out-row whose label equals
#: ``a``'s, one pass over the row (``b`` is the edge's destination or its source);
#: emitted only into modules whose edge operator reads it.
LABEL_FREQUENCY = """template <typename T>
__device__ __forceinline__ int gs_label_frequency(const T* label, const gs_vid a,
                                                  const gs_vid b) {
  const T want = gs_ld(label + a);
  const gs_eid je = __ldg(gs.row + b + 1);
  int count = 0;
  for (gs_eid j = __ldg(gs.row + b); j < je; ++j) {
    count += gs_ld(label + __ldg(gs.col + j)) == want ? 1 : 0;
  }
  return count;
}
"""


#: The ``common_neighbours()`` intrinsic: distinct ids other than the two ends in both
#: sorted out-rows; emitted only into modules whose edge operator reads it.
COMMON_NEIGHBOURS = """__device__ __forceinline__ int gs_common_neighbours_merge(const gs_vid a,
                                                            const gs_vid b) {
  gs_eid i = __ldg(gs.row + a), j = __ldg(gs.row + b);
  const gs_eid ie = __ldg(gs.row + a + 1), je = __ldg(gs.row + b + 1);
  int count = 0;
  gs_vid last = -1;  // ids are never negative: no match yet
  while (i < ie && j < je) {
    const gs_vid x = __ldg(gs.col + i), y = __ldg(gs.col + j);
    if (x < y) {
      ++i;
    } else if (y < x) {
      ++j;
    } else {
      if (x != a && x != b && x != last) ++count;
      last = x;
      ++i;
      ++j;
    }
  }
  return count;
}
__device__ __forceinline__ int gs_common_neighbours_search(const gs_vid a, const gs_vid b) {
  gs_eid i = __ldg(gs.row + a), ie = __ldg(gs.row + a + 1);
  gs_eid j = __ldg(gs.row + b), je = __ldg(gs.row + b + 1);
  if (ie - i > je - j) {  // walk the shorter row, search the longer
    const gs_eid ti = i, tie = ie;
    i = j; ie = je; j = ti; je = tie;
  }
  int count = 0;
  gs_vid last = -1;
  for (; i < ie; ++i) {
    const gs_vid x = __ldg(gs.col + i);
    if (x == a || x == b || x == last) continue;
    last = x;
    gs_eid lo = j, hi = je;
    while (lo < hi) {
      const gs_eid mid = lo + (hi - lo) / 2;
      if (__ldg(gs.col + mid) < x) lo = mid + 1; else hi = mid;
    }
    if (lo < je && __ldg(gs.col + lo) == x) ++count;
    j = lo;  // the rows are sorted: later ids of the shorter row lie past it
  }
  return count;
}
// the restricted forms: only the part of each sorted row in an id range is walked
__device__ __forceinline__ gs_eid gs_row_lower_bound(gs_eid lo, gs_eid hi, const gs_vid x) {
  while (lo < hi) {  // the first position in [lo, hi) whose id is not below x
    const gs_eid mid = lo + (hi - lo) / 2;
    if (__ldg(gs.col + mid) < x) lo = mid + 1; else hi = mid;
  }
  return lo;
}
__device__ __forceinline__ int gs_common_in_ranges_merge(gs_eid i, const gs_eid ie, gs_eid j,
                                                          const gs_eid je) {
  int count = 0;
  gs_vid last = -1;
  while (i < ie && j < je) {
    const gs_vid x = __ldg(gs.col + i), y = __ldg(gs.col + j);
    if (x < y) {
      ++i;
    } else if (y < x) {
      ++j;
    } else {
      if (x != last) ++count;
      last = x;
      ++i;
      ++j;
    }
  }
  return count;
}
__device__ __forceinline__ int gs_common_in_ranges_search(gs_eid i, gs_eid ie, gs_eid j,
                                                           gs_eid je) {
  if (ie - i > je - j) {  // walk the shorter range, search the longer
    const gs_eid ti = i, tie = ie;
    i = j; ie = je; j = ti; je = tie;
  }
  int count = 0;
  gs_vid last = -1;
  for (; i < ie && j < je; ++i) {
    const gs_vid x = __ldg(gs.col + i);
    if (x == last) continue;
    last = x;
    j = gs_row_lower_bound(j, je, x);
    if (j < je && __ldg(gs.col + j) == x) ++count;
  }
  return count;
}
// ids below both ends
#define GS_COMMON_BELOW(M)                                                              \
  __device__ __forceinline__ int gs_common_neighbours_below_##M(const gs_vid a,         \
                                                               const gs_vid b) {        \
    const gs_vid lo = a < b ? a : b, hi = a < b ? b : a;                                \
    const gs_eid i = __ldg(gs.row + lo), j = __ldg(gs.row + hi);                        \
    return gs_common_in_ranges_##M(i, gs_row_lower_bound(i, __ldg(gs.row + lo + 1), lo), \
                                   j, gs_row_lower_bound(j, __ldg(gs.row + hi + 1), lo)); \
  }
// ids strictly between the two ends
#define GS_COMMON_BETWEEN(M)                                                            \
  __device__ __forceinline__ int gs_common_neighbours_between_##M(const gs_vid a,       \
                                                                 const gs_vid b) {      \
    const gs_vid lo = a < b ? a : b, hi = a < b ? b : a;                                \
    const gs_eid ie = __ldg(gs.row + lo + 1), je = __ldg(gs.row + hi + 1);              \
    const gs_eid i = gs_row_lower_bound(__ldg(gs.row + lo), ie, lo + 1);                \
    const gs_eid j = gs_row_lower_bound(__ldg(gs.row + hi), je, lo + 1);                \
    return gs_common_in_ranges_##M(i, gs_row_lower_bound(i, ie, hi), j,                 \
                                   gs_row_lower_bound(j, je, hi));                      \
  }
GS_COMMON_BELOW(merge)
GS_COMMON_BELOW(search)
GS_COMMON_BETWEEN(merge)
GS_COMMON_BETWEEN(search)
"""


_IDENTITY = {"min": "gs_type_max", "max": "gs_type_lowest", "add": "gs_type_zero",
             "or": "gs_type_zero"}
_COMBINE = {"min": "gs_min<{t}>({a}, {b})", "max": "gs_max<{t}>({a}, {b})",
            "add": "({a} + {b})", "or": "({a} | {b})"}


def pull_functions(spec: AlgorithmSpec) -> str:
    """``gs_pull_value``, ``gs_pull_combine``, ``gs_pull_apply`` and the candidate test."""
    st = spec.edge.statements[-1]
    guards = [g.value for g in spec.edge.statements[:-1]]
    t = CUDA_TYPES[st.dtype]
    k = st.kind.name
    field = spec.fields[st.field]
    init = field.init
    unvisited = "true"
    if isinstance(init, (int, float)) and not isinstance(init, bool):
        lit = _literal(_field_init_value(field), field.dtype)
        unvisited = f"gs_ld(gs.F_{st.field} + u) == {lit}"
    combine = _COMBINE[k].format(t=t, a="a", b="b")
    apply_lines = _apply_lines(st, "acc", plain=False)
    apply_body = "\n".join("  " + x for x in ["bool act = false;"] + apply_lines +
                           ["(void)it;", "return act;"])
    return (
        f"typedef {t} gs_pull_t;\n"
        f"#define GS_PULL_IDENTITY {_IDENTITY[k]}<{t}>()\n"
        f"__device__ __forceinline__ gs_pull_t gs_pull_value(const gs_vid v, const GsSrc& s, "
        f"const gs_vid u, const float gs_w, const int it) {{\n"
        f"  (void)v; (void)s; (void)u; (void)gs_w; (void)it;\n"
        + (f"  if (!({' && '.join(f'({lower_expr(g)})' for g in guards)})) "
           "return GS_PULL_IDENTITY;  // a guard refuses the in-edge\n" if guards else "")
        + f"  return ({t})({lower_expr(st.value)});\n}}\n"
        f"__device__ __forceinline__ gs_pull_t gs_pull_combine(gs_pull_t a, gs_pull_t b) "
        f"{{ return {combine}; }}\n"
        f"__device__ __forceinline__ bool gs_pull_apply(const gs_vid u, const gs_pull_t acc, "
        f"const int it) {{\n{apply_body}\n}}\n"
        f"__device__ __forceinline__ bool gs_pull_candidate(const gs_vid u) "
        f"{{ (void)u; return {unvisited}; }}\n"
    )


def _field_init_value(field: Any) -> Any:
    init = field.init
    if isinstance(init, float) and math.isinf(init) and field.dtype not in ("float32", "float64"):
        from .algorithm import int_inf

        return int_inf(field.dtype) if init > 0 else -int_inf(field.dtype)
    return init


#: What a node operator reads of its own node, of the graph and of the last step's
#: totals, as :func:`lower_expr` writes it: each is read once per node and held in a
#: local (:func:`shared_loads`)
_NODE_LOAD = re.compile(r"gs_ld\(gs\.F_(\w+) \+ v\)|gs_last_sum\(it, \d+\)"
                        r"|__ldg\(gs\.row \+ v(?: \+ 1)?\)")


def shared_loads(statements: list[list[str]], written: list[set[str]]) -> list[str]:
    """The node operator's lines with each load of :data:`_NODE_LOAD` made once.

    A Python variable used in several statements (``new`` in PageRank's update) is
    inlined into each of them, and its loads with it: four reads of ``acc`` and of the
    step total a node, which every thread of the grid reads from the same L2 line. Here
    the first statement that reads one declares a local before it, and later ones use
    it, until a statement writes that field of the node (``written[i]``); the next read
    then loads again, so each statement sees what it saw before. Row bounds and step
    totals do not change during a step.
    """
    held: dict[str, str] = {}
    out: list[str] = []
    count = itertools.count()
    for lines, wrote in zip(statements, written):
        text = "\n".join(lines)
        for m in dict.fromkeys(x.group(0) for x in _NODE_LOAD.finditer(text)):
            if m not in held:
                held[m] = f"gs_l{next(count)}"
                out.append(f"const auto {held[m]} = {m};")
            text = text.replace(m, held[m])
        out += text.split("\n")
        for field in wrote:
            held.pop(f"gs_ld(gs.F_{field} + v)", None)
    return out


def node_function(op: Operator, totals: tuple[str, ...] = ()) -> str:
    statements, written = [], []
    for st in op.statements:
        if isinstance(st, ex.Total) and st.into:
            lines = [f"gs_step_total(st, {totals.index(st.into)}, "
                     f"(double)({lower_expr(st.value)}));"]
        elif isinstance(st, ex.Total):
            lines = [f"gs_total(st, (double)({lower_expr(st.value)}));"]
        else:
            lines = (_lower_reduction(st, False, "node") if isinstance(st, ex.Reduction)
                     else _lower_assign(st))
        statements.append(lines)
        written.append({st.field} if getattr(st, "field", "") else set())
    body = shared_loads(statements, written)
    body.append("(void)it; (void)st;")
    return ("template <typename GsStepT>\n"
            "__device__ __forceinline__ void gs_node_op(GsStepT& st, const gs_vid v, "
            "const int it) {\n"
            + "\n".join("  " + b for b in body) + "\n}\n")


def priority_function(spec: AlgorithmSpec, staged: dict[str, str]) -> str:
    """``gs_priority(v)``: the algorithm's priority key at node ``v`` (driving strategies
    that order work read it; ``GS_HAS_PRIORITY`` says whether the algorithm has one),
    and where fields are staged, ``gs_priority_local(v, L)`` on a staged partition's.
    """
    if spec.priority is None:
        return "#define GS_HAS_PRIORITY 0\n"
    fixed = ("" if spec.priority_width is None
             else f"#define GS_PRIO_WIDTH {float(spec.priority_width)!r}\n")
    body = f"  return (double)({lower_expr(spec.priority)});\n}}\n"
    local = "" if not staged else (
        "__device__ __forceinline__ double gs_priority_local(const gs_vid v, "
        "const GsLocal& L) {\n  const int it = 0;\n  (void)it; (void)L;\n"
        + local_reads(body, staged))
    return (fixed + "#define GS_HAS_PRIORITY 1\n"
            "__device__ __forceinline__ double gs_priority(const gs_vid v) {\n"
            "  const int it = 0;\n  (void)it;\n" + body + local)
