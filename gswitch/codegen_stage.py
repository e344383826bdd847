"""Device code that holds a partition's fields in shared memory while a block iterates
inside it (driving strategies with ``stages_partitions``, such as ``spatial``).

A block that owns a partition of contiguous node ids and passes over it until it is
locally stable touches the same few values again and again: the source's value, the
target's value and its atomic. In global memory each is an L2 round trip, and the
passes are a chain of them. Where the edge operator only reduces into ``e.dst`` with
min, max or or (its fixed point does not depend on the order of updates) and reads no
step number, those fields can live in shared memory for the partition's passes:

- ``gs_local_load``: the partition's values of each reduced field, from global memory;
- ``gs_load_src_local`` and ``gs_edge_op_local``: the operator with the reduced fields
  of in-partition nodes in shared memory (shared-memory atomics); targets outside the
  partition take the normal ``gs_edge_op`` and its global atomics;
- ``gs_local_store``: each value that beats the global one is reduced into it with the
  field's own atomic, so an update another block made meanwhile is never lost (that
  block also marked the partition for the next step, which reads it);
- ``GsKeep`` (a node's staged values), ``gs_keep_read`` and ``gs_keep_same``, and
  ``gs_edge_op_pre``: the local operator given the target's staged values as read
  before (a resident pass reads a node's first targets together; a value read early is
  one the target held, and the reductions do not depend on the order of updates).

The answer is the one without staging: every value is still only ever improved by the
same monotone reduction, and what changed is where the block keeps it meanwhile.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from . import expr as ex

if TYPE_CHECKING:
    from .algorithm import AlgorithmSpec

__all__ = ["STAGE_BYTES", "local_reads", "stage_source", "staged_fields"]

#: Shared memory for the staged values of one partition (bytes): a 4096-node partition
#: of one 4-byte field, 2048 of one 8-byte field.
STAGE_BYTES = 16384
#: Reductions whose fixed point does not depend on the order of updates.
_ORDER_FREE = ("min", "max", "or")
_SIZES = {"int32": 4, "uint32": 4, "float32": 4, "int64": 8, "uint64": 8, "float64": 8}
_SHARED_ATOMIC = {"min": "gs_shared_min", "max": "gs_shared_max", "or": "gs_shared_or"}


def staged_fields(spec: AlgorithmSpec) -> dict[str, str]:
    """The fields to hold in shared memory, each with its reduction kind, or an empty
    dict where the edge operator does not allow it.

    It allows it when it is written in the language (not raw CUDA), there is no node
    operator or step total, every statement is a guard or a min/max/or reduction into
    ``e.dst`` (not through ``.at()``), nothing reads the step number, each reduced field
    is reduced one way only, and its type has shared-memory atomics (4 or 8 bytes).
    """
    op = spec.edge
    if op is None or op.raw is not None or spec.node is not None \
            or spec.converge_below is not None or spec.step_totals:
        return {}
    kinds: dict[str, str] = {}
    for s in op.statements:
        if isinstance(s, ex.Guard):
            continue
        if not isinstance(s, ex.Reduction) or s.at is not None or s.node != "dst" \
                or s.kind.name not in _ORDER_FREE:
            return {}
        if kinds.setdefault(s.field, s.kind.name) != s.kind.name \
                or spec.fields[s.field].dtype not in _SIZES:
            return {}
    for s in op.statements:
        for e in ex.walk(s.value):
            if isinstance(e, (ex.Iteration, ex.StepTotalRef)):
                return {}
    return kinds


def capacity(spec: AlgorithmSpec, kinds: dict[str, str]) -> int:
    """Most nodes of a partition whose staged values fit :data:`STAGE_BYTES` (a power of
    two, at most 4096); a larger partition runs from global memory.
    """
    per_node = sum(_SIZES[spec.fields[f].dtype] for f in kinds)
    cap = 4096
    while cap * per_node > STAGE_BYTES:
        cap //= 2
    return cap


def _to_shared(body: str, kinds: dict[str, str]) -> str:
    """``gs_edge_op``'s body with the target's staged fields read and reduced in shared
    memory (``L.f_<field>`` at offset ``u - L.lo``).
    """
    for f, kind in kinds.items():
        body = re.sub(rf"gs_ld\(gs\.F_{f} \+ u\)", f"gs_lds(L.f_{f} + (u - L.lo))", body)
        body = re.sub(rf"gs_atomic_{kind}\(gs\.F_{f} \+ u,",
                      f"{_SHARED_ATOMIC[kind]}(L.f_{f} + (u - L.lo),", body)
        if re.search(rf"gs\.F_{f} \+ u\b", body):
            raise AssertionError(f"staging left a global access to {f} in the operator")
    return body


def local_reads(body: str, kinds: dict[str, str]) -> str:
    """``body`` (code over node ``v``) with ``v``'s staged fields read from shared memory
    (``L.f_<field>`` at offset ``v - L.lo``): a node of the block's staged partition.
    """
    for f in kinds:
        body = re.sub(rf"gs_ld\(gs\.F_{f} \+ v\)", f"gs_lds(L.f_{f} + (v - L.lo))", body)
    return body


_HELPERS = """\
// Shared-memory forms of the reductions (generic atomics)
template <typename T> __device__ __forceinline__ T gs_lds(const T* p) {
  return *(const volatile T*)p;
}
template <typename T> __device__ __forceinline__ T gs_shared_min(T* p, T v) {
  return atomicMin(p, v);
}
template <typename T> __device__ __forceinline__ T gs_shared_max(T* p, T v) {
  return atomicMax(p, v);
}
template <typename T> __device__ __forceinline__ T gs_shared_or(T* p, T v) {
  return atomicOr(p, v);
}
template <> __device__ __forceinline__ long long gs_shared_or(long long* p, long long v) {
  return (long long)atomicOr((unsigned long long*)p, (unsigned long long)v);
}
// equal bits (a NaN equals itself, so a pass that keeps one ends)
template <typename T> __device__ __forceinline__ bool gs_same_bits(T a, T b) { return a == b; }
template <> __device__ __forceinline__ bool gs_same_bits(float a, float b) {
  return __float_as_uint(a) == __float_as_uint(b);
}
template <> __device__ __forceinline__ bool gs_same_bits(double a, double b) {
  return __double_as_longlong(a) == __double_as_longlong(b);
}
// floats: the read, then one integer atomic on the bits (gs_bits_min / max)
#define GS_SHARED_BITS(T)                                              \
  template <> __device__ __forceinline__ T gs_shared_min(T* p, T v) {  \
    const T old = gs_lds(p);                                           \
    return v < old ? gs_bits_min(p, v) : old;                          \
  }                                                                    \
  template <> __device__ __forceinline__ T gs_shared_max(T* p, T v) {  \
    const T old = gs_lds(p);                                           \
    return v > old ? gs_bits_max(p, v) : old;                          \
  }
GS_SHARED_BITS(float)
GS_SHARED_BITS(double)
"""

_BETTER = {"min": "{x} < {g}", "max": "{x} > {g}", "or": "({g} | {x}) != {g}"}


def stage_source(spec: AlgorithmSpec, kinds: dict[str, str], types: dict[str, str],
                 local_edge_op: str, src_fields: list[str]) -> str:
    """CUDA that defines ``GS_LOCAL_STAGE`` (the capacity in nodes), ``GsLocal``, its
    loads and stores and the operator forms above, for the fields ``kinds`` names.

    ``local_edge_op`` is ``gs_edge_op``'s generated source under the name
    ``gs_edge_op_local``; ``src_fields`` are the fields ``GsSrc`` holds.
    """
    cap = capacity(spec, kinds)
    t = {f: types[spec.fields[f].dtype] for f in kinds}
    members = "".join(f"  {t[f]}* f_{f};\n" for f in kinds)
    arrays = "".join(f"  __shared__ {t[f]} a_{f}[GS_LOCAL_STAGE];\n  L.f_{f} = a_{f};\n"
                     for f in kinds)
    src = "".join(
        f"  s.f_{f} = gs_lds(L.f_{f} + (v - L.lo));\n" if f in kinds
        else f"  s.f_{f} = gs_ld(gs.F_{f} + v);\n" for f in src_fields)
    loads = "".join(f"    L.f_{f}[i] = gs_ld(gs.F_{f} + L.lo + i);\n" for f in kinds)
    stores = "".join(
        f"    {{ {t[f]}* g = gs.F_{f} + L.lo + i; const {t[f]} x = L.f_{f}[i];\n"
        f"      if ({_BETTER[k].format(x='x', g='gs_ld(g)')}) gs_atomic_{k}(g, x); }}\n"
        for f, k in kinds.items())
    keep_members = "".join(f"  {t[f]} f_{f};\n" for f in kinds)
    keep_reads = "".join(f"  r.f_{f} = gs_lds(L.f_{f} + k);\n" for f in kinds)
    keep_same = " && ".join(f"gs_same_bits(a.f_{f}, b.f_{f})" for f in kinds)
    head, _, rest = local_edge_op.partition("{\n")
    head = head.replace("const int it)", "const int it, const GsLocal& L)")
    local_rest = _to_shared(rest, kinds)
    # the same operator given the target's staged values read before (a resident pass
    # reads a node's four first targets together, then applies the operator to each)
    pre_head = head.replace("gs_edge_op_local(", "gs_edge_op_pre(").replace(
        "const GsLocal& L)", "const GsLocal& L, const GsKeep& P)")
    pre_rest = local_rest
    for f in kinds:
        pre_rest = pre_rest.replace(f"gs_lds(L.f_{f} + (u - L.lo))", f"P.f_{f}")
    return (
        f"#define GS_LOCAL_STAGE {cap}\n" + _HELPERS
        + "struct GsLocal {\n" + members + "  gs_vid lo;\n};\n"
        "__device__ __forceinline__ GsLocal gs_local_arrays() {\n  GsLocal L;\n"
        + arrays + "  L.lo = 0;\n  return L;\n}\n"
        "__device__ __forceinline__ GsSrc gs_load_src_local(const gs_vid v, "
        "const GsLocal& L) {\n  GsSrc s;\n" + (src or "  s.unused = 0; (void)v; (void)L;\n")
        + "  return s;\n}\n"
        "__device__ __forceinline__ void gs_local_load(const GsLocal& L, unsigned len) {\n"
        "  for (unsigned i = threadIdx.x; i < len; i += blockDim.x) {\n" + loads + "  }\n}\n"
        "__device__ __forceinline__ void gs_local_store(const GsLocal& L, unsigned len) {\n"
        "  for (unsigned i = threadIdx.x; i < len; i += blockDim.x) {\n" + stores + "  }\n}\n"
        # a node's staged values as a resident partition's pass last relaxed them
        "struct GsKeep {\n" + keep_members + "};\n"
        "__device__ __forceinline__ GsKeep gs_keep_read(const GsLocal& L, unsigned k) {\n"
        "  GsKeep r;\n" + keep_reads + "  return r;\n}\n"
        "__device__ __forceinline__ bool gs_keep_same(const GsKeep& a, const GsKeep& b) {\n"
        "  return " + keep_same + ";\n}\n"
        + head + "{\n" + local_rest + pre_head + "{\n" + pre_rest)
