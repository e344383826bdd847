"""Composition of the kernel source from the lowered operators (:mod:`gswitch.lowering`).

The composed module is: a short preamble of ``#define``s (compile-time parameters),
``common.cuh``, the generated parameter block ``GsState`` (graph, control block,
fields, algorithm parameters, and every chosen strategy's buffers and runtime
arguments as ``<axis>_<name>``: one ``__constant__`` struct the host writes before a
run, so kernels read it through the constant cache, never from global memory on every
edge), the generated operators (push form with the source node's fields loaded once
per node into ``GsSrc``; pull form when the operator has one), ``skeleton.cuh`` with
each ``/*@slot AXIS@*/`` line replaced by the fragment of the strategy chosen on that
axis, and the phase table assembled from the strategies' :class:`~gswitch.strategy.Phase`
lists. There is no code per combination: every fragment talks to the skeleton
through the contracts in :mod:`gswitch.strategy`.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from . import expr as ex
from ._version import __version__
from .algorithm import AlgorithmSpec
from .codegen_stage import stage_source, staged_fields
from .config import Config
from .errors import AlgorithmError
from .lowering import (
    COMMON_NEIGHBOURS,
    CUDA_TYPES,
    LABEL_FREQUENCY,
    edge_function,
    lower_expr,
    node_function,
    operator_exprs,
    prefetch_function,
    priority_function,
    pull_form,
    pull_functions,
    row_guard_function,
    src_fields,
    src_struct,
    uses_common_neighbours,
    uses_label_frequency,
)
from .strategy import AXES, Phase

__all__ = ["CUDA_TYPES", "lower_expr", "generate_source", "GeneratedModule", "state_dtype",
           "pull_form", "phase_list"]

# ---------------------------------------------------------------------- parameter block
_STATE_FIXED = [
    ("row", "const gs_eid*"), ("col", "const gs_vid*"), ("weights", "const float*"),
    ("in_degree", "const int*"), ("rrow", "const gs_eid*"), ("rcol", "const gs_vid*"),
    ("rweights", "const float*"), ("ctl", "unsigned*"), ("ctl_mirror", "unsigned*"),
    ("trace", "int*"),
    ("n", "long long"), ("m", "long long"),
    ("trace_cap", "long long"), ("max_it", "long long"), ("deadline_ns", "long long"),
]
_NP_OF_C = {"long long": np.int64, "int": np.int32, "unsigned": np.uint32, "float": np.float32,
            "double": np.float64, "bool": np.bool_, "unsigned long long": np.uint64}


def _strategy_members(spec: AlgorithmSpec, config: Config, graph: Any
                      ) -> list[tuple[str, str]]:
    members = []
    for axis, strat in config.strategies().items():
        for b in strat.buffers(spec, graph, config):
            members.append((f"{axis}_{b.name}", f"{b.ctype}*"))
        for name, (ctype, _v) in strat.runtime_args(graph, config).items():
            members.append((f"{axis}_{name}", ctype))
    return members


def state_members(spec: AlgorithmSpec, config: Config | None = None,
                  graph: Any = None) -> list[tuple[str, str]]:
    """``(name, C type)`` of every member of the generated ``GsState`` struct."""
    members = list(_STATE_FIXED)
    members += [(f"F_{n}", f"{CUDA_TYPES[f.dtype]}*") for n, f in spec.fields.items()]
    members += [(f"P_{n}", CUDA_TYPES[p.dtype]) for n, p in spec.params.items()]
    if config is not None:
        members += _strategy_members(spec, config, graph)
    return members


def state_dtype(members: list[tuple[str, str]]) -> np.dtype:
    """NumPy structured dtype laid out exactly like the C ``GsState`` struct."""
    fields = []
    for name, ctype in members:
        fields.append((name, np.uint64 if ctype.endswith("*") else _NP_OF_C[ctype]))
    return np.dtype(fields, align=True)


def _state_struct(members: list[tuple[str, str]]) -> str:
    lines = ["struct GsState {"]
    lines += [f"  {ctype} {name};" for name, ctype in members]
    lines.append("};")
    lines.append("__constant__ GsState gs;")
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
    block_size: int
    phases: tuple[Phase, ...]
    members: tuple[tuple[str, str], ...]


def _define_lines(defines: dict[str, str]) -> str:
    return "".join(f"#define {k} {v}\n" for k, v in sorted(defines.items()))


def phase_list(spec: AlgorithmSpec, config: Config) -> list[Phase]:
    """Every phase of a step, in order: the node operator's and each strategy's."""
    phases: list[Phase] = []
    if spec.node is not None:
        # after the expansion, its outliers and the pull bookkeeping, before a worklist
        # finishes the step's pushes
        phases.append(Phase("node", 29 if spec.node_after_edges else 10, "active",
                            runs_in="operators"))
    keeping = [m.name for m in config.strategy("driving").modes if m.keeps]
    if keeping:  # a mode whose items are the next step's too: push them again
        phases.append(Phase("keep", 27, "active", modes=tuple(keeping)))
    for strat in config.strategies().values():
        phases.extend(strat.phases(spec, config))
    names = [p.name for p in phases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise AlgorithmError(f"two strategies contribute a phase named {sorted(dup)[0]!r}")
    return sorted(phases, key=lambda p: p.order)


def mode_table(driving: Any) -> str:
    """``GS_MODE_<NAME>`` for each of the driving strategy's step modes and the core's
    predicates over a mode word (bit masks over mode numbers, folded at compile time).
    """
    modes = driving.modes
    if not modes or len(modes) > 15:
        raise AlgorithmError(f"driving {driving.name} must declare 1 to 15 step modes")

    def mask(pred: Any) -> int:
        return sum(1 << i for i, m in enumerate(modes) if pred(m))

    lines = [f"#define GS_MODE_{m.name.upper()} {i}\n" for i, m in enumerate(modes)]
    for fn, pred in (("worklist", lambda m: m.items == "worklist"),
                     ("pushes", lambda m: m.pushes),
                     ("operators", lambda m: m.core_operators)):
        lines.append(f"#define gs_mode_{fn}(mode) ((0x{mask(pred):x}u >> gs_mode_id(mode)) & 1u)\n")
    return "".join(lines)


def _phase_cond(p: Phase, driving: Any) -> str:
    conds = []
    names = driving.mode_names()
    if p.modes:
        ids = [names.index(m) for m in p.modes if m in names]
        conds.append("(" + (" || ".join(f"gs_mode_id(st.mode) == {i}" for i in ids)
                            or "false") + ")")
    if p.runs_in in ("operators", "frontier"):
        conds.append("gs_mode_operators(st.mode)")
    if p.runs_in == "frontier":
        conds.append("gs_mode_worklist(st.mode)")
    if p.direction == "push":
        conds.append("!st.pull")
    elif p.direction == "pull":
        conds.append("st.pull")
    return " && ".join(conds) or "true"


def _phase_table(phases: list[Phase], driving: Any) -> str:
    en = "".join(f"    case {i}: return {_phase_cond(p, driving)};\n"
                 for i, p in enumerate(phases))
    run = "".join(f"    case {i}: gs_phase_{p.name}(st); break;\n" for i, p in enumerate(phases))
    return (f"#define GS_N_PHASES {len(phases)}\n"
            "__device__ __forceinline__ bool gs_phase_enabled(int phase, const GsStep& st) {\n"
            f"  switch (phase) {{\n{en}  }}\n  return false;\n}}\n"
            "__device__ __forceinline__ void gs_run_phase(int phase, GsStep& st) {\n"
            f"  gs_wl_begin(st);\n  switch (phase) {{\n{run}  }}\n"
            "#if GS_UNROLL\n  gs_unroll_drain(st);\n#endif\n  gs_wl_flush(st);\n"
            "  gs_flush_counts(st);\n}\n")


_GENERATED: dict[tuple[int, str, bool, str], tuple[AlgorithmSpec, GeneratedModule]] = {}


def generate_source(spec: AlgorithmSpec, config: Config, weighted: bool,
                    graph: Any = None) -> GeneratedModule:
    """Compose the full CUDA source for an algorithm and strategy configuration.

    Deterministic: the same (algorithm, config, weighted) always gives the same text
    (buffers and runtime arguments are members of the parameter block whose values,
    not layout, depend on the graph). Memoised per process, so a repeated call on a
    resident graph costs a dictionary lookup.

    Parameters
    ----------
    spec : AlgorithmSpec
        The algorithm.
    config : Config
        Validated strategy configuration.
    weighted : bool
        Whether the graph carries edge weights (else every weight reads as 1).
    graph : Graph, optional
        Unused for the text; accepted so callers can pass what they have.

    Returns
    -------
    GeneratedModule

    """
    memo = (id(spec), config.key(), bool(weighted), "")
    hit = _GENERATED.get(memo)
    if hit is not None and hit[0] is spec:
        return hit[1]
    gen = _generate(spec, config, weighted)
    _GENERATED[memo] = (spec, gen)
    return gen


def reads_weights(spec: AlgorithmSpec) -> bool:
    """Whether the edge operator reads edge weights (a raw one: names ``gs_weight``).

    An operator that does not compiles to the same module on weighted and unweighted
    graphs, so BFS on a weighted graph reuses the module of an unweighted one and the
    compile suite covers what the GPU runs whatever the graph carries.
    """
    op = spec.edge
    if op.raw is not None:
        return re.search(r"\bgs_r?weight\s*\(|\bgs\.r?weights\b",
                         op.raw.cuda_body) is not None
    return any(isinstance(e, ex.EdgeWeight) for e in operator_exprs(op))


#: ``gs_node_at(i)``: a node id an operator computed (``.at()``); under
#: ``GSWITCH_CUDA_DEBUG=1`` one outside the graph stops the kernel with a message, which
#: the host reports as a device error.
_NODE_AT = """template <typename T> __device__ __forceinline__ gs_vid gs_node_at(const T i) {
#if GS_DEBUG
  if ((long long)i < 0 || (long long)i >= gs.n) {
    printf("gswitch: .at() index %lld is outside the graph's node ids 0..%lld\\n",
           (long long)i, gs.n - 1);
    __trap();
  }
#endif
  return (gs_vid)i;
}
"""


def _generate(spec: AlgorithmSpec, config: Config, weighted: bool) -> GeneratedModule:
    weighted = weighted and reads_weights(spec)
    strategies = config.strategies()
    block = int(config["block_size"])
    atomic_free = strategies["driving"].atomic_free()
    direction = strategies["direction"]
    pulls = direction.may_pull and pull_form(spec) is None
    first_hit = pulls and spec.first_hit_final and strategies["driving"].worklist_only()
    defines = {
        "GS_BLOCK_SIZE": str(block),
        "GS_WEIGHTED": "1" if weighted else "0",
        "GS_HAS_NODE_OP": "1" if spec.node is not None else "0",
        "GS_ATOMIC_FREE": "1" if atomic_free else "0",
        "GS_COUNT_FRONTIER_EDGES": "1" if direction.counts_frontier_edges else "0",
        "GS_WL_MEMBERSHIP": "1" if strategies["worklist"].membership else "0",
        "GS_PULL": "1" if pulls else "0",
        "GS_PULL_FIRST_HIT": "1" if first_hit else "0",
        "GS_READ_BEFORE_ATOMIC": "1" if config["read_before_atomic"] else "0",
        "GS_L2_PREFETCH": "1" if config["l2_prefetch"] else "0",
        "GS_DEBUG": "1" if os.environ.get("GSWITCH_CUDA_DEBUG") == "1" else "0",
        "GS_CONVERGE": "0" if spec.converge_below is None else "1",
        "GS_N_SUMS": str(len(spec.step_totals)),
        "GS_UNROLL": "0",  # a driving strategy's per-thread queue of activations
    }
    if spec.converge_below is not None:
        defines["GS_CONVERGE_BELOW"] = f"((double)gs.P_{spec.converge_below})"
    if spec.edge.first is not None:
        defines["GS_EDGE_FIRST"] = f"(gs.P_{spec.edge.first})"
    for st in strategies.values():
        defines.update(st.defines())
    members = state_members(spec, config, None)
    parts = [
        f"// gswitch {__version__}: {spec.name} | "
        + " ".join(f"{a}={config[a]}" for a in AXES) + "\n",
        _define_lines(defines),
        _core_file("common.cuh"),
        mode_table(strategies["driving"]),
        _state_struct(members),
        "__device__ __forceinline__ float gs_weight(const gs_eid e) {\n"
        "#if GS_WEIGHTED\n  return __ldg(gs.weights + e);\n#else\n  (void)e;\n  return 1.0f;\n"
        "#endif\n}\n",
        "__device__ __forceinline__ float gs_rweight(const gs_eid e) {\n"
        "#if GS_WEIGHTED\n  return __ldg(gs.rweights + e);\n#else\n  (void)e;\n  return 1.0f;\n"
        "#endif\n}\n",
        _NODE_AT,
        *([COMMON_NEIGHBOURS] if uses_common_neighbours(spec) else []),
        *([LABEL_FREQUENCY] if uses_label_frequency(spec) else []),
        src_struct(spec),
        row_guard_function(spec),
        prefetch_function(spec),
        edge_function(spec.edge, "gs_edge_op", plain=False),
    ]
    if atomic_free:
        parts.append(edge_function(spec.edge, "gs_edge_op_plain", plain=True))
    staged = staged_fields(spec) if strategies["driving"].stages_partitions else {}
    if staged:
        parts.append(stage_source(spec, staged, CUDA_TYPES,
                                  edge_function(spec.edge, "gs_edge_op_local", plain=False),
                                  src_fields(spec.edge)))
    if pulls:
        parts.append(pull_functions(spec))
    if spec.node is not None:
        parts.append(node_function(spec.node, spec.step_totals))
    parts.append(priority_function(spec, staged))
    skeleton = _core_file("skeleton.cuh")
    for axis in AXES:
        marker = f"/*@slot {axis}@*/"
        if marker not in skeleton:
            raise AssertionError(f"skeleton has no slot for {axis}")
        skeleton = skeleton.replace(marker, strategies[axis].cuda_source())
    phases = phase_list(spec, config)
    skeleton = skeleton.replace("/*@phases@*/", _phase_table(phases, strategies["driving"]))
    parts.append(skeleton)
    parts.append(_core_file("fill.cuh"))  # the fields' initial values, one launch
    source = "\n".join(parts)
    kernels = ("gs_phase_kernel",) + tuple(
        k for axis in ("launch", "worklist", "load_balance", "driving", "direction")
        for k in strategies[axis].kernels)
    key = hashlib.sha256(source.encode()).hexdigest()
    return GeneratedModule(
        source=source,
        key=key,
        kernels=kernels,
        description=f"{spec.name} with " + ", ".join(
            f"{a}={config[a]}" for a in AXES) + f", block_size={block}",
        cooperative=strategies["launch"].cooperative,
        block_size=block,
        phases=tuple(phases),
        members=tuple(members),
    )


def numbered(source: str) -> str:
    """Source with line numbers, for compile-error reports."""
    return "\n".join(f"{i + 1:5d}  {line}" for i, line in enumerate(source.splitlines()))

