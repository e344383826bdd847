"""Compile suite: generated CUDA compiles for sm_90 with nvcc (no GPU needed).

The whole matrix (marker ``compile_all``: samples of all pairs of strategy options,
every pair of strategies and every option for the four classic formulations, every
strategy and each launch with each direction and driving style for every other
formulation and stage; the GPU sweep's drawn configurations; the user-operator
algorithms; deduplicated by source hash and compiled in parallel) runs in ``.ci/run``
with the other nvcc tests (marker ``compile``), after the README's test command, which
deselects both to stay under five minutes;
``python -m pytest -m "compile or compile_all"`` runs them locally.
"""

import functools
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.combinations import pair_cover, pairwise_configs, strategy_cover
from gswitch.plugins import get_registry
from gswitch.staging import stage_config
from gswitch.testing.nvcc import compile_source
from gswitch.testing.user_algorithms import USER_ALGORITHMS, USER_CONFIGS
from gswitch.testing.zoo import sweep_configs

ALGORITHMS = ["bfs", "sssp", "cc", "pagerank", "core_number", "maximal_independent_set",
              "label_propagation", "scc", "minimum_spanning_forest", "weighted_betweenness",
              "msbfs"]
SPECS = {a: get_registry().algorithm(a) for a in ALGORITHMS}
SPECS.update({u.name: u for u in USER_ALGORITHMS})


# the formulations the GPU suite runs under every strategy: every pair of strategies of
# two axes and every option (pair_cover); every other formulation and stage shares their
# generated strategy code, so each strategy once and each launch with each direction and
# driving style (strategy_cover). Both are samples of all pairs of options.
FULL_PAIRS = {("bfs", "default"), ("sssp", "bellman_ford"), ("cc", "label_propagation"),
              ("pagerank", "residual_push")}


def _pairs(spec: gs.AlgorithmSpec) -> list:
    pairs = pairwise_configs(spec)
    return pair_cover(pairs) if (spec.name, spec.variant) in FULL_PAIRS else \
        strategy_cover(pairs)


@functools.cache
def _cases() -> list:
    """The whole matrix (many seconds to enumerate: only where it is selected). Fills
    ``SPECS`` with each other formulation and stage it names."""
    # the user-operator algorithms test the lowering, not the strategies: the GPU suite's
    # five configurations of them, one per launch and direction
    cases = [(a, c) for a in ALGORITHMS for c in _pairs(SPECS[a])]
    cases += [(u.name, gs.Config(c)) for u in USER_ALGORITHMS for c in USER_CONFIGS]
    # the global compile-time switch, with each launch (the GPU suite runs the same ones)
    cases += [(a, gs.Config({"read_before_atomic": False, "launch": launch}))
              for a in ALGORITHMS for launch in ("host_loop", "persistent")]
    cases += [(a, gs.Config({"l2_prefetch": True, "launch": launch}))
              for a in ALGORITHMS for launch in ("host_loop", "persistent")]
    cases += [(u.name, gs.Config({"l2_prefetch": True, "launch": "persistent"}))
              for u in USER_ALGORITHMS]
    # the GPU sweep's drawn configurations (every parameter drawn, block_size included)
    cases += [(a, c) for a in ("bfs", "sssp", "cc", "pagerank") for c in sweep_configs(SPECS[a])]
    # every other formulation of each algorithm: all pairs of the strategies it supports
    for alg in ALGORITHMS:
        for var in get_registry().variants[alg].values():
            pairs = _pairs(var) if (var is not SPECS[alg] or var.stages) else []
            if var is not SPECS[alg] and not var.stages:
                SPECS[var.label] = var
                cases += [(var.label, c.replace(variant=var.variant)) for c in pairs]
            for st in var.stages:  # a staged formulation: each operator stage's own module
                if isinstance(st, gs.AlgorithmSpec):
                    SPECS[f"{var.label}:{st.stage_name}"] = st
                    cases += [(f"{var.label}:{st.stage_name}",
                               stage_config(st, c.replace(variant=var.variant)))
                              for c in pairs]
    # kernel unrolling (a compile-time queue length; pairs keep it at 0) of topology and
    # data driving with each launch and a thread- and a block-cooperative load balancer;
    # data driving's leftovers are pushed, so with each kind of worklist push too
    cases += [(a, gs.Config({"variant": a[3:-1] if a.startswith("cc") else "default",
                             "driving": driving, "driving.unroll": k, "direction": "push",
                             "launch": launch, "load_balance": lb, "worklist": wl,
                             "driving.unroll_lanes_log2": lanes.bit_length() - 1}))
              for a in ("bfs", "sssp", "cc[label_propagation]")
              for launch in ("host_loop", "persistent")
              for driving, k, lanes, lb, wl in (
                  ("topology", 1, 1, "thread", "warp_aggregated"),
                  ("topology", 8, 8, "twc", "warp_aggregated"),
                  ("data", 1, 1, "thread", "block_aggregated"),
                  ("data", 8, 32, "twc", "warp_aggregated"),
                  ("data", 4, 4, "virtual_warp", "bitmap"),
                  ("data", 16, 2, "edge_balanced", "prefix_sum"),
                  ("data", 2, 16, "work_donation", "hierarchical"))]
    return cases


# weighted matters only for weight-reading operators
WEIGHTED = {"sssp", "widest", "dist64"}


def _case_id(case):
    alg, cfg = case
    parts = [alg] + [str(cfg[a]) for a in ("worklist", "load_balance", "driving", "direction",
                                           "launch")]
    parts += [f"{k.split('.')[1]}={v}" for k, v in cfg.items()
              if "." in k and (isinstance(v, bool) or k in ("load_balance.size",
                                                            "direction.group",
                                                            "driving.unroll",
                                                            "driving.unroll_lanes_log2"))]
    if not cfg["read_before_atomic"]:
        parts.append("read_before_atomic=False")
    if cfg["l2_prefetch"]:
        parts.append("l2_prefetch=True")
    return "-".join(parts)


@pytest.fixture(scope="module")
def compiled(nvcc):
    """Compile every distinct generated source once, in parallel."""
    sources = {}
    for alg, cfg in _cases():
        gen = generate_source(SPECS[alg], cfg, weighted=alg in WEIGHTED)
        sources[(alg, cfg.key())] = gen
    unique = {g.key: g.source for g in sources.values()}
    print(f"\ncompile suite: {len(_cases())} configurations, {len(unique)} distinct modules")
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        results = dict(zip(unique, pool.map(lambda s: compile_source(s, nvcc=nvcc),
                                            unique.values())))
    return {k: results[g.key] for k, g in sources.items()}


@pytest.mark.compile_all
@pytest.mark.cases("case", _cases, ids=_case_id)
def test_combination_compiles(case, compiled):
    """The composed module compiles without errors."""
    alg, cfg = case
    ok, output = compiled[(alg, cfg.key())]
    assert ok, f"{alg} {cfg.to_dict()}:\n{output[-3000:]}"


def test_pairs_cover_every_option_pair():
    """Every pair of options of two axes appears in some configuration (bfs)."""
    from itertools import combinations

    from gswitch.combinations import axis_options
    from gswitch.runner import check_combination

    spec = SPECS["bfs"]
    configs = pairwise_configs(spec)
    for cfg in configs:
        assert check_combination(spec, None, cfg, "gpu") is None
    options = axis_options()
    for a, b in combinations(options, 2):
        for oa in a:
            for ob in b:
                merged = dict(oa) | dict(ob)
                hit = any(all(cfg.get(k) == v for k, v in merged.items()) for cfg in configs)
                if not hit:
                    # only pairs that no valid configuration can hold may be missing
                    trial = gs.Config(merged)
                    assert check_combination(spec, None, trial, "gpu") is not None, merged


def test_sampled_configs_are_valid_distinct_deterministic_and_drawn_widely():
    """The sweep's draw: valid for the algorithm, no two alike, the same for the same seed,
    another for another seed, every value inside its declared space, and spread over
    every option of every axis and over non-default numeric parameters."""
    from gswitch.combinations import sampled_configs
    from gswitch.config import GLOBAL_KEYS
    from gswitch.runner import check_combination

    reg = get_registry()
    spec = SPECS["sssp"]
    draw = sampled_configs(spec, 64, seed=7)
    assert len(draw) == 64 and len({c.key() for c in draw}) == 64
    assert [c.key() for c in draw] == [c.key() for c in sampled_configs(spec, 64, seed=7)]
    assert [c.key() for c in draw] != [c.key() for c in sampled_configs(spec, 64, seed=8)]
    for cfg in draw:
        assert check_combination(spec, None, cfg, "gpu") is None
        for axis in reg.strategies:
            for pname, space in reg.strategies[axis][cfg[axis]].params.items():
                space.validate(pname, cfg[f"{axis}.{pname}"])
        for key, space in GLOBAL_KEYS.items():
            space.validate(key, cfg[key])
    for axis, strategies in reg.strategies.items():
        for name, cls in strategies.items():
            if "gpu" in cls.backends and not check_combination(
                    spec, None, gs.Config({axis: name}), "gpu"):
                assert any(c[axis] == name for c in draw), (axis, name)
    assert len({c["block_size"] for c in draw}) > 16
    assert any(0 < c["worklist_capacity"] for c in draw)
    assert any(c["worklist_capacity"] == 0 for c in draw)


@pytest.mark.compile_all
def test_enumeration_covers_every_strategy():
    """Each registered GPU strategy appears in at least one compiled combination."""
    reg = get_registry()
    for axis, strategies in reg.strategies.items():
        for name, cls in strategies.items():
            if "gpu" not in cls.backends:
                continue
            assert any(c[axis] == name for _, c in _cases()), (axis, name)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_generation_is_deterministic(algorithm):
    """The same configuration always yields the same source text and cache key."""
    spec = get_registry().algorithm(algorithm)
    cfg = gs.Config({"launch": "persistent", "driving": "temporal"})
    a = generate_source(spec, cfg, weighted=True)
    b = generate_source(spec, gs.Config(cfg.to_dict()), weighted=True)
    assert a.source == b.source and a.key == b.key
    other = generate_source(spec, cfg.replace(block_size=128), weighted=True)
    assert other.key != a.key and "#define GS_BLOCK_SIZE 128" in other.source


@pytest.mark.parametrize("worklist", ["warp_aggregated", "hierarchical", "bitmap"])
def test_modules_include_no_header(worklist):
    """A composed module includes no CUDA header (``<cooperative_groups.h>`` alone cost a
    second of compile per module) and is not built as relocatable code: the persistent
    kernel's barrier and the lane groups are the module's own."""
    spec = get_registry().algorithm("bfs")
    for launch in ("persistent", "host_loop"):
        gen = generate_source(spec, gs.Config({"launch": launch, "worklist": worklist}), False)
        assert "#include" not in gen.source and "cg::" not in gen.source
        assert ("gs_grid_sync();" in gen.source) == (launch == "persistent")


def test_runtime_parameters_do_not_change_the_module():
    """Runtime parameters are kernel arguments: changing one keeps the source; a
    compile-time one changes it."""
    spec = get_registry().algorithm("bfs")
    base = gs.Config({"driving": "temporal", "load_balance": "twc",
                      "direction": "direction_optimizing"})
    same = base.replace(**{"driving.threshold": 0.3, "load_balance.warp_threshold": 64,
                           "direction.alpha": 4.0})
    assert generate_source(spec, base, False).key == generate_source(spec, same, False).key
    other = base.replace(**{"direction.group": 8})
    assert generate_source(spec, base, False).key != generate_source(spec, other, False).key


def test_core_names_no_builtin_strategy():
    """The core (gswitch/) names no built-in strategy or strategy parameter in code:
    no string literal equal to a strategy name or ``axis.param`` key, and no core CUDA
    file touching a strategy's parameter-block member (prose may mention them)."""
    import ast
    import io
    import re
    import tokenize
    from pathlib import Path

    root = Path(gs.__file__).parent
    reg = get_registry()
    # push/pull are also the vocabulary of phase directions, which the core does speak;
    # step modes are the driving strategies' own (the core names none)
    names = {n for axis in reg.strategies.values() for n in axis} - {"push", "pull"}
    keys = {f"{cls.axis}.{p}" for axis in reg.strategies.values() for cls in axis.values()
            for p in cls.params}
    offenders = []
    for path in root.rglob("*.py"):
        if "testing" in path.parts:
            continue
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            if tok.type == tokenize.STRING:
                try:
                    value = ast.literal_eval(tok.string)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(value, str) and (value in names or value in keys):
                    offenders.append(f"{path.name}:{tok.start[0]}: {value!r}")
    member = re.compile(r"gs\.(worklist|load_balance|driving|direction|launch)_\w+")
    for path in root.rglob("*.cuh"):
        code = re.sub(r"//[^\n]*", "", path.read_text())
        offenders += [f"{path.name}: {m}" for m in member.findall(code)]
    assert not offenders, offenders


def test_compile_error_is_reported(nvcc):
    """Broken source fails to compile with the compiler's message."""
    ok, out = compile_source("__global__ void k() { undefined_symbol(); }")
    assert not ok and "undefined_symbol" in out


def test_raw_operator_with_documented_names_compiles(nvcc):
    """A raw operator written with the names its docstring gives compiles."""
    import numpy as np

    def numpy_impl(fields, src, dst, w, params):
        d = fields["depth"]
        val = d[src] + 1
        better = val < d[dst]
        np.minimum.at(d, dst[better], val[better])
        return dst[better]

    @gs.algorithm(name="raw_bfs")
    class RawBfs:
        depth = gs.NodeField("int32", init=gs.INF, at_source=0)
        start = gs.from_source()
        visit = gs.raw_edge_op(
            "  const int val = gs_ld(gs.F_depth + v) + 1 + (int)(gs_weight(e) * 0.0f) + 0 * it;\n"
            "  return val < gs_atomic_min(gs.F_depth + u, val);", numpy_impl)

    for cfg in ({}, {"launch": "persistent", "load_balance": "twc"}):
        gen = generate_source(RawBfs, gs.Config(cfg), weighted=True)
        ok, out = compile_source(gen.source, nvcc=nvcc)
        assert ok, out[-2000:]
    g = gs.Graph.from_edges([0, 1], [1, 2])
    assert gs.run(RawBfs, g, source=0, backend="cpu").fields["depth"].tolist() == [0, 1, 2]


def test_edge_gather_phases_only_in_sweeps():
    """direction.gather=edges adds the edge-balanced phases for the step modes that sweep
    every node and only count activations, keeps the node gather for the others, and adds
    none for data-driven steps or for an operator whose value reads ``e.dst``."""
    from gswitch.codegen import phase_list

    reg = get_registry()
    power = reg.variants["pagerank"]["power_pull"]

    def names(spec, **cfg):
        return {p.name: p for p in phase_list(spec, gs.Config(cfg))}

    sweep = names(power, variant="power_pull", driving="topology", direction="pull")
    assert "pull" not in sweep and sweep["pull_edges"].modes == ("topology",)
    hybrid = names(reg.variants["cc"]["label_propagation"], driving="temporal",
                   direction="pull")
    assert hybrid["pull_edges"].modes == ("topology",)
    assert "topology" not in hybrid["pull"].modes and "data" in hybrid["pull"].modes
    data = names(reg.algorithm("bfs"), direction="direction_optimizing")
    assert "pull_edges" not in data and data["pull"].modes == ()
    nodes = names(power, variant="power_pull", driving="topology", direction="pull",
                  **{"direction.gather": "nodes"})
    assert "pull_edges" not in nodes

    @gs.algorithm(name="reads_dst")
    class ReadsDst:
        x = gs.NodeField("float32", init=1.0)
        start = gs.all_nodes()

        @gs.edge_op
        def gather(e):
            e.dst.x.reduce_min(e.src.x + e.dst.x * 0.5)

    own = names(ReadsDst, driving="topology", direction="pull")
    assert "pull_edges" not in own and own["pull"].modes == ()


@pytest.mark.compile
@pytest.mark.parametrize("case", [
    ("power_pull", {"block_size": 64, "direction.ipt": 11}),
    ("power_pull", {"block_size": 1024, "launch": "persistent"}),
    ("power_pull", {"launch": "cuda_graph", "direction.ipt": 3}),
    ("cc", {"driving": "temporal", "direction": "direction_optimizing"}),
    ("sssp", {"driving": "topology", "direction": "pull", "direction.group": 8}),
], ids=lambda c: f"{c[0]}-" + "-".join(f"{k}={v}" for k, v in c[1].items()))
def test_edge_gather_compiles(case, nvcc):
    """The edge-balanced pull compiles with every value type, block size and launch."""
    name, extra = case
    reg = get_registry()
    if name == "power_pull":
        spec = reg.variants["pagerank"]["power_pull"]
        cfg = {"variant": "power_pull", "driving": "topology", "direction": "pull"}
    else:  # the formulations that pull (the defaults hook or order by priority)
        classic = {"cc": "label_propagation", "sssp": "bellman_ford"}[name]
        spec, cfg = reg.variants[name][classic], {"variant": classic}
    cfg = gs.Config({**cfg, "direction.gather": "edges", **extra})
    gen = generate_source(spec, cfg, weighted=name == "sssp")
    assert any(p.name == "pull_edges" for p in gen.phases)
    ok, out = compile_source(gen.source, nvcc=nvcc)
    assert ok, out[-3000:]


@pytest.mark.compile
@pytest.mark.parametrize("launch,worklist", [("host_loop", "atomic"), ("persistent", "bitmap"),
                                             ("cuda_graph", "bitmap")])
def test_staged_and_buffered_test_algorithms_compile(launch, worklist, nvcc):
    """What the GPU suite runs of the staged example (each stage's module), of the
    buffered-field example, of the step-total example and of the edge-limit example
    under each load balancer compiles."""
    from gswitch.testing.staged_algorithms import DoubleSweep, FirstEdgesDepth, StepSums, Walks

    cfg = gs.Config({"launch": launch, "worklist": worklist})
    specs = [st for st in DoubleSweep.stages if isinstance(st, gs.AlgorithmSpec)]
    jobs = [(st, stage_config(st, cfg)) for st in specs]
    jobs.append((Walks, cfg.replace(driving="topology")))
    jobs.append((StepSums, cfg.replace(driving="topology")))
    for lb in ("thread", "twc", "virtual_warp"):
        jobs.append((FirstEdgesDepth, cfg.replace(load_balance=lb)))
    for spec, c in jobs:
        ok, out = compile_source(generate_source(spec, c, weighted=False).source, nvcc=nvcc)
        assert ok, out[-3000:]


def test_covers_keep_what_they_promise():
    """The matrix's samples of a formulation's pairs: smaller subsets that keep every
    pair of strategies and every option (pair_cover), or every strategy and each launch
    with each direction and driving style (strategy_cover), found in the pairs."""
    from itertools import combinations

    from gswitch.combinations import axis_options
    from gswitch.strategy import AXES

    pairs = pairwise_configs(SPECS["scc"])

    def has(configs, items):
        return any(all(c.get(k) == v for k, v in items) for c in configs)

    both = pair_cover(pairs)
    some = strategy_cover(pairs)
    assert set(both) <= set(pairs) and set(some) <= set(pairs)
    assert len(some) < len(both) < len(pairs)
    for option in (o for per_axis in axis_options() for o in per_axis):
        assert has(both, option) == has(pairs, option), option
    for c in pairs:
        for a, b in combinations(AXES, 2):
            assert has(both, ((a, c[a]), (b, c[b]))), (a, c[a], b, c[b])
        for axis in AXES:
            assert has(some, ((axis, c[axis]),)), (axis, c[axis])
        for axis in ("direction", "driving"):
            assert has(some, (("launch", c["launch"]), (axis, c[axis]))), (axis, c[axis])
