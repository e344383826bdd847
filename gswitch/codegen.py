"""Lowering of traced operators to CUDA C and composition of the kernel source.

The composed module is: a short preamble of ``#define``s, ``common.cuh``, the
generated ``GsState`` struct (graph, worklists, control block, fields, parameters:
one ``__device__`` global the host fills before a run), the generated operators, and
``skeleton.cuh`` with each ``/*@slot AXIS@*/`` line replaced by the fragment of the
strategy chosen on that axis. There is no code per combination: every fragment talks
to the skeleton through the contracts in :mod:`gswitch.strategy`.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from . import expr as ex
from ._version import __version__
from .algorithm import AlgorithmSpec, Operator
from .config import Config
from .errors import AlgorithmError
from .plugins import AXES

__all__ = ["CUDA_TYPES", "lower_expr", "generate_source", "GeneratedModule", "state_dtype"]

CUDA_TYPES = {
    "bool": "bool",
    "int32": "int",
    "uint32": "unsigned",
    "int64": "long long",
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
    return str(int(value))


def lower_expr(e: ex.Expr) -> str:
    """CUDA C expression text for an expression tree.

    Inside edge operators the source node is ``v``, the destination ``u`` and the
    edge ``e``; inside node operators the node is ``v``. Statement results are ``s<i>``.
    """
    t = CUDA_TYPES[e.dtype]
    if isinstance(e, ex.Const):
        return _literal(e.value, e.dtype)
    if isinstance(e, ex.ParamRef):
        return f"gs.P_{e.name}"
    if isinstance(e, ex.FieldLoad):
        return f"gs_ld(gs.F_{e.field} + {_ROLE_VAR[e.node]})"
    if isinstance(e, ex.EdgeWeight):
        return "gs_weight(e)"
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


def _lower_reduction(s: ex.Reduction, plain: bool) -> list[str]:
    """Statement lines for one reduction; sets ``act`` when it activates its target."""
    t = CUDA_TYPES[s.dtype]
    var = _ROLE_VAR[s.node]
    ptr = f"gs.F_{s.field} + {var}"
    k = s.kind.name
    lines = [f"const {t} val{s.index} = ({t})({lower_expr(s.value)});"]
    val = f"val{s.index}"
    old = f"s{s.index}"
    if plain and k in ("min", "max", "or"):
        # non-atomic form: a lost update is repaired by the next topology sweep
        lines.append(f"const {t} {old} = gs_ld({ptr});")
        if k == "or":
            lines.append(f"if (({old} | {val}) != {old}) {{ gs.F_{s.field}[{var}] = "
                         f"{old} | {val}; act = true; }}")
        else:
            cmp = "<" if k == "min" else ">"
            lines.append(f"if ({val} {cmp} {old}) {{ gs.F_{s.field}[{var}] = {val}; "
                         "act = true; }")
        return lines
    fn = {"min": "gs_atomic_min", "max": "gs_atomic_max", "add": "gs_atomic_add",
          "or": "gs_atomic_or", "exchange": "gs_atomic_exch"}[k]
    lines.append(f"const {t} {old} = {fn}({ptr}, {val});")
    if not s.activates:
        return lines
    if k == "min":
        lines.append(f"act |= {val} < {old};")
    elif k == "max":
        lines.append(f"act |= {val} > {old};")
    elif k == "or":
        lines.append(f"act |= ({old} | {val}) != {old};")
    elif k == "add":
        if s.activate_above is None:
            lines.append(f"act |= {val} != ({t})0;")
        else:
            thr = f"(({t})({lower_expr(s.activate_above)}))"
            lines.append(f"act |= ({old} < {thr}) && ({old} + {val} >= {thr});")
    return lines


def _lower_assign(s: ex.Assign) -> list[str]:
    t = CUDA_TYPES[s.dtype]
    return [f"const {t} s{s.index} = ({t})({lower_expr(s.value)});",
            f"gs.F_{s.field}[{_ROLE_VAR[s.node]}] = s{s.index};"]


def _edge_function(op: Operator, name: str, plain: bool) -> str:
    head = (f"__device__ __forceinline__ bool {name}(const gs_vid v, const gs_vid u, "
            "const gs_eid e, const int it) {")
    if op.raw is not None:
        return f"{head}\n{op.raw.cuda_body}\n}}\n"
    body = ["bool act = false;"]
    for s in op.statements:
        body += _lower_reduction(s, plain) if isinstance(s, ex.Reduction) else _lower_assign(s)
    body += ["(void)e; (void)it;", "return act;"]
    return head + "\n" + "\n".join("  " + b for b in body) + "\n}\n"


def _node_function(op: Operator) -> str:
    body = []
    for s in op.statements:
        body += _lower_reduction(s, False) if isinstance(s, ex.Reduction) else _lower_assign(s)
    body.append("(void)it;")
    return ("__device__ __forceinline__ void gs_node_op(const gs_vid v, const int it) {\n"
            + "\n".join("  " + b for b in body) + "\n}\n")


# ---------------------------------------------------------------------- state struct
_STATE_FIXED = [
    ("row", "const gs_eid*"), ("col", "const gs_vid*"), ("weights", "const float*"),
    ("in_degree", "const int*"), ("wl0", "gs_vid*"), ("wl1", "gs_vid*"),
    ("ctl", "unsigned*"), ("spill", "unsigned char*"), ("trace_active", "int*"),
    ("trace_mode", "int*"), ("n", "long long"), ("m", "long long"),
    ("wl_cap0", "long long"), ("wl_cap1", "long long"), ("trace_cap", "long long"),
]
_NP_OF_C = {"long long": np.int64, "int": np.int32, "unsigned": np.uint32, "float": np.float32,
            "double": np.float64, "bool": np.bool_}


def state_members(spec: AlgorithmSpec) -> list[tuple[str, str]]:
    """``(name, C type)`` of every member of the generated ``GsState`` struct."""
    members = list(_STATE_FIXED)
    members += [(f"F_{n}", f"{CUDA_TYPES[f.dtype]}*") for n, f in spec.fields.items()]
    members += [(f"P_{n}", CUDA_TYPES[p.dtype]) for n, p in spec.params.items()]
    return members


def state_dtype(spec: AlgorithmSpec) -> np.dtype:
    """NumPy structured dtype laid out exactly like the C ``GsState`` struct."""
    fields = []
    for name, ctype in state_members(spec):
        fields.append((name, np.uint64 if ctype.endswith("*") else _NP_OF_C[ctype]))
    return np.dtype(fields, align=True)


def _state_struct(spec: AlgorithmSpec) -> str:
    lines = ["struct GsState {"]
    lines += [f"  {ctype} {name};" for name, ctype in state_members(spec)]
    lines.append("};")
    lines.append("__device__ GsState gs;")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- composition
@cache
def _core_file(name: str) -> str:
    return resources.files("gswitch").joinpath("cuda", name).read_text()


@dataclass(frozen=True)
class GeneratedModule:
    """A composed CUDA source and what the host needs to drive it."""

    source: str
    key: str
    kernels: tuple[str, ...]
    description: str
    cooperative: bool
    threads_per_item: int
    block_size: int


def _define_lines(defines: dict[str, str]) -> str:
    return "".join(f"#define {k} {v}\n" for k, v in sorted(defines.items()))


def generate_source(spec: AlgorithmSpec, config: Config, weighted: bool) -> GeneratedModule:
    """Compose the full CUDA source for an algorithm and strategy configuration.

    Deterministic: the same (algorithm, config, weighted) always gives the same text.

    Parameters
    ----------
    spec : AlgorithmSpec
        The algorithm.
    config : Config
        Validated strategy configuration.
    weighted : bool
        Whether the graph carries edge weights (else every weight reads as 1).

    Returns
    -------
    GeneratedModule

    """
    strategies = config.strategies()
    block = int(config["block_size"])
    atomic_free = strategies["driving"].atomic_free()
    defines = {
        "GS_BLOCK_SIZE": str(block),
        "GS_WEIGHTED": "1" if weighted else "0",
        "GS_HAS_NODE_OP": "1" if spec.node is not None else "0",
        "GS_ATOMIC_FREE": "1" if atomic_free else "0",
    }
    for s in strategies.values():
        defines.update(s.defines())
    parts = [
        f"// gswitch {__version__}: {spec.name} | "
        + " ".join(f"{a}={config[a]}" for a in AXES) + "\n",
        _define_lines(defines),
        _core_file("common.cuh"),
        _state_struct(spec),
        "__device__ __forceinline__ float gs_weight(const gs_eid e) {\n"
        "#if GS_WEIGHTED\n  return __ldg(gs.weights + e);\n#else\n  (void)e;\n  return 1.0f;\n"
        "#endif\n}\n",
        _edge_function(spec.edge, "gs_edge_op", plain=False),
    ]
    if atomic_free:
        parts.append(_edge_function(spec.edge, "gs_edge_op_plain", plain=True))
    if spec.node is not None:
        parts.append(_node_function(spec.node))
    skeleton = _core_file("skeleton.cuh")
    for axis in ("worklist", "load_balance", "driving", "launch"):
        marker = f"/*@slot {axis}@*/"
        if marker not in skeleton:
            raise AssertionError(f"skeleton has no slot for {axis}")
        skeleton = skeleton.replace(marker, strategies[axis].cuda_source())
    parts.append(skeleton)
    source = "\n".join(parts)
    launch = strategies["launch"]
    if launch.cooperative:
        kernels = ("gs_persistent_kernel", "gs_compact_spill")
    else:
        kernels = ("gs_node_kernel", "gs_edge_kernel", "gs_compact_spill")
    key = hashlib.sha256(source.encode()).hexdigest()
    return GeneratedModule(
        source=source,
        key=key,
        kernels=kernels,
        description=f"{spec.name} with " + ", ".join(
            f"{a}={config[a]}" for a in AXES) + f", block_size={block}",
        cooperative=launch.cooperative,
        threads_per_item=strategies["load_balance"].threads_per_item(),
        block_size=block,
    )


def numbered(source: str) -> str:
    """Source with line numbers, for compile-error reports."""
    return "\n".join(f"{i + 1:5d}  {line}" for i, line in enumerate(source.splitlines()))


def source_files() -> list[str]:
    """Texts of the core CUDA files (part of every cache key)."""
    return [_core_file("common.cuh"), _core_file("skeleton.cuh")]
