"""The load balancers and worklists of issue 25 (block, dynamic_virtual_warp,
dynamic_chunks, edge_balanced, work_donation; block_aggregated, chunked, hierarchical,
prefix_sum): registry, contract, declared spaces, generated source and, with nvcc, that
every one compiles under every launch. Their device code runs in tests/test_gpu_lbwl.py.
"""

import json

import pytest

import gswitch as gs
from gswitch.cli import main
from gswitch.codegen import generate_source, phase_list
from gswitch.combinations import pairwise_configs
from gswitch.errors import InvalidConfig
from gswitch.generators import grid2d
from gswitch.plugins import get_registry
from gswitch.runner import check_combination
from gswitch.testing.conformance import strategy_problems
from gswitch.testing.nvcc import compile_source

LOAD_BALANCERS = ["block", "dynamic_virtual_warp", "dynamic_chunks", "edge_balanced",
                  "work_donation"]
WORKLISTS = ["block_aggregated", "chunked", "hierarchical", "prefix_sum"]
NEW = [("load_balance", n) for n in LOAD_BALANCERS] + [("worklist", n) for n in WORKLISTS]
LAUNCHES = ["host_loop", "persistent", "cuda_graph"]
BUFFERED = ["block_aggregated", "chunked", "hierarchical"]


def _cls(axis, name):
    return get_registry().strategies[axis][name]


@pytest.mark.parametrize("axis,name", NEW)
def test_registered_gpu_only_and_validated(axis, name):
    """Each is registered on its axis, GPU only, conformant and validated (its GPU suite,
    tests/test_gpu_lbwl.py, passed on a device)."""
    cls = _cls(axis, name)
    assert cls.backends == ("gpu",)
    assert cls.validated is True
    assert strategy_problems(cls) == []


def test_strategies_command_lists_them_as_validated(capsys):
    """``gswitch strategies`` lists every new strategy without the unvalidated mark."""
    assert main(["strategies", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for axis, name in NEW:
        assert data[axis][name]["validated"] is True, (axis, name)
    assert main(["strategies"]) == 0
    out = capsys.readouterr().out
    for _axis, name in NEW:
        line = next(ln for ln in out.splitlines() if ln.startswith(f"  {name} "))
        assert "not yet validated" not in line, line


def test_the_tuner_searches_them_on_the_gpu():
    """The tuner's GPU space offers each of them, and excludes none."""
    from gswitch.tuner import build_space

    space = build_space(get_registry().algorithm("bfs"), grid2d(4, 4), "gpu")
    for axis, name in NEW:
        assert f"{axis}={name}" not in space.excluded, (axis, name)
        assert name in space.axis_choices(axis, space.variants[0])[1], (axis, name)


def test_parameters_are_runtime_where_they_can_be():
    """Thresholds, widths and chunk sizes never recompile; buffer sizes do."""
    spec = get_registry().algorithm("bfs")
    for lb, key, a, b in [("dynamic_virtual_warp", "max_log2", 5, 2),
                          ("dynamic_chunks", "chunk", 128, 7),
                          ("work_donation", "chunk", 32, 500),
                          ("edge_balanced", "threads_per_item", 1, 8)]:
        cfg = gs.Config({"load_balance": lb, f"load_balance.{key}": a})
        other = cfg.replace(**{f"load_balance.{key}": b})
        assert generate_source(spec, cfg, False).key == generate_source(spec, other, False).key
    cfg = gs.Config({"worklist": "chunked", "worklist.slots": 4})
    assert generate_source(spec, cfg, False).key != generate_source(
        spec, cfg.replace(**{"worklist.slots": 8}), False).key


def test_values_outside_the_declared_spaces_are_refused():
    """A bad value is refused with the key and the range."""
    with pytest.raises(InvalidConfig, match=r"load_balance.max_log2 must be in \[0, 5\]"):
        gs.Config({"load_balance": "dynamic_virtual_warp", "load_balance.max_log2": 6})
    with pytest.raises(InvalidConfig, match="worklist.slots must be in"):
        gs.Config({"worklist": "hierarchical", "worklist.slots": 0})


@pytest.mark.parametrize("name", BUFFERED)
def test_shared_push_buffer_must_fit(name):
    """A push buffer that, with the other strategies' shared memory, passes what a block
    can declare is refused with the sizes and the fix."""
    spec = get_registry().algorithm("bfs")
    ok = gs.Config({"worklist": name, "worklist.slots": 4, "block_size": 1024})
    assert check_combination(spec, None, ok, "gpu") is None
    big = ok.replace(**{"worklist.slots": 16})
    reason = check_combination(spec, None, big, "gpu")
    assert reason and f"worklist={name} " in reason and "lower block_size" in reason
    # the CPU engine ignores the buffer
    assert check_combination(spec, None, big, "cpu") is None


def test_shared_memory_of_all_axes_adds_up():
    """Strategies that fit alone may not fit together: a full-size merge-path pull tile,
    TWC's bins and a push buffer at 1024 threads are refused, each named with its bytes."""
    spec = get_registry().algorithm("cc", "label_propagation")
    base = {"variant": "label_propagation", "direction": "pull", "driving": "temporal",
            "direction.gather": "edges", "block_size": 1024}
    assert check_combination(spec, None, gs.Config({**base, "load_balance": "thread"}),
                             "gpu") is None
    reason = check_combination(spec, None, gs.Config(
        {**base, "load_balance": "work_donation", "worklist": "block_aggregated"}), "gpu")
    assert reason and "direction=pull" in reason and "load_balance=work_donation" in reason
    assert "worklist=block_aggregated" in reason
    assert check_combination(spec, None, gs.Config(
        {**base, "block_size": 256, "load_balance": "work_donation",
         "worklist": "block_aggregated"}), "gpu") is None


@pytest.mark.parametrize("name", BUFFERED)
def test_buffered_worklists_flush_after_every_phase(name):
    """A buffering worklist's begin and flush hooks surround every phase; the others
    get the skeleton's no-ops."""
    spec = get_registry().algorithm("pagerank", "residual_push")
    src = generate_source(spec, gs.Config({"worklist": name, "variant": "residual_push"}),
                          False).source
    run = src.split("void gs_run_phase(int phase, GsStep& st) {", 1)[1].split("\n}\n", 1)[0]
    assert run.index("gs_wl_begin(st)") < run.index("switch") < run.index("gs_wl_flush(st)")
    assert "#define GS_WL_BUFFERED 1" in src
    plain = generate_source(spec, gs.Config({"worklist": "atomic"}), False).source
    assert "#define GS_WL_BUFFERED" not in plain and "gs_wl_flush(st)" in plain


def test_phases_of_the_partitioning_strategies():
    """edge_balanced scans degrees before the push expansion; prefix_sum finishes every
    step with count, scan and write after the operators."""
    spec = get_registry().algorithm("sssp")
    names = [p.name for p in phase_list(spec, gs.Config({"load_balance": "edge_balanced"}))]
    assert names.index("eb_degrees") < names.index("eb_tiles") < names.index("expand")
    eb = {p.name: p for p in phase_list(spec, gs.Config({"load_balance": "edge_balanced"}))}
    assert all(eb[n].direction == "push" and eb[n].runs_in == "operators"
               for n in ("eb_degrees", "eb_tiles"))
    ps = [p for p in phase_list(spec, gs.Config({"worklist": "prefix_sum"}))]
    names = [p.name for p in ps]
    assert names[-3:] == ["ps_count", "ps_scan", "ps_write"]
    assert all(p.runs_in == "all" for p in ps[-3:])


def test_block_gives_the_host_loop_a_block_per_item():
    """block's expansion asks the host loop for block_size threads per item."""
    spec = get_registry().algorithm("bfs")
    ph = {p.name: p for p in phase_list(spec, gs.Config({"load_balance": "block",
                                                          "block_size": 128}))}
    assert ph["expand"].threads_per_item == 128


def test_bounded_worklists_allow_cuda_graph():
    """prefix_sum never overflows; the buffered queues do so only with dedup."""
    spec = get_registry().algorithm("sssp")
    assert check_combination(spec, None, gs.Config({"worklist": "prefix_sum",
                                                    "launch": "cuda_graph"}), "gpu") is None
    for name in BUFFERED:
        plain = gs.Config({"worklist": name, "launch": "cuda_graph"})
        assert check_combination(spec, None, plain, "gpu")
        assert check_combination(spec, None, plain.replace(**{"worklist.dedup": True}),
                                 "gpu") is None


def test_all_pairs_pair_each_with_every_option_of_the_other_axes():
    """The all-pairs configurations the compile and GPU suites walk hold each new
    strategy with every launch and every option of every other axis (bfs)."""
    from gswitch.combinations import axis_options
    from gswitch.strategy import AXES

    spec = get_registry().algorithm("bfs")
    configs = pairwise_configs(spec)
    options = dict(zip(AXES, axis_options()))
    for axis, name in NEW:
        mine = [dict(o) for o in options[axis] if dict(o)[axis] == name]
        for other in AXES:
            if other == axis:
                continue
            for opt in options[other]:
                for m in mine:
                    want = m | dict(opt)
                    hit = any(all(c.get(k) == v for k, v in want.items()) for c in configs)
                    assert hit or check_combination(spec, None, gs.Config(want), "gpu"), want


# each strategy under each launch, on an algorithm with a node operator or weights in
# turn (the formulations that push); block sizes at both ends of the range
_ALGS = ["sssp", "pagerank", "bfs"]
CLASSIC = {"sssp": "bellman_ford", "pagerank": "residual_push", "bfs": "default"}
COMPILE = [(axis, name, launch, _ALGS[(i + j) % 3])
           for i, (axis, name) in enumerate(NEW) for j, launch in enumerate(LAUNCHES)]


@pytest.mark.compile_all
@pytest.mark.parametrize("axis,name,launch,alg", COMPILE,
                         ids=[f"{c[1]}-{c[2]}-{c[3]}" for c in COMPILE])
def test_compiles_under_every_launch(axis, name, launch, alg, nvcc):
    """The module compiles with nvcc for sm_90 (cuda_graph with a bounded worklist)."""
    spec = get_registry().algorithm(alg, CLASSIC[alg])
    cfg = {axis: name, "launch": launch, "block_size": 1024 if launch == "persistent" else 64,
           "variant": CLASSIC[alg]}
    if launch == "cuda_graph" and axis == "load_balance":
        cfg["worklist"] = "bitmap"
    if launch == "cuda_graph" and name in BUFFERED:
        cfg["worklist.dedup"] = True
    if axis == "worklist" and name in BUFFERED and launch == "persistent":
        cfg["worklist.slots"] = 4
    config = gs.Config(cfg)
    assert check_combination(spec, None, config, "gpu") is None
    ok, out = compile_source(generate_source(spec, config, weighted=alg == "sssp").source,
                             nvcc=nvcc)
    assert ok, out[-3000:]


@pytest.mark.parametrize("axis,name", NEW)
def test_buffers_and_arguments_have_host_types(axis, name):
    """Every buffer's element type and runtime argument's type is one the engine can
    allocate and pack (a missing one would fail only on a device)."""
    from gswitch.codegen import _NP_OF_C
    from gswitch.engine.memory import _NP_CTYPES

    spec = get_registry().algorithm("bfs")
    graph = grid2d(5, 5)
    cfg = gs.Config({axis: name})
    strat = cfg.strategy(axis)
    for b in strat.buffers(spec, graph, cfg):
        assert b.ctype in _NP_CTYPES, (b.name, b.ctype)
        assert b.size >= 1
    for arg, (ctype, _v) in strat.runtime_args(graph, cfg).items():
        assert ctype in _NP_OF_C, (arg, ctype)


def test_the_shipped_selector_model_is_current_and_would_go_stale(monkeypatch):
    """The shipped selector model was trained on the space with these strategies
    validated, and goes stale when one of them is marked unvalidated again."""
    from gswitch import selector

    assert selector.load_model() is not None  # current: no stale-model fallback
    before = selector.model_version()
    monkeypatch.setattr(_cls("worklist", "prefix_sum"), "validated", False)
    assert selector.model_version() != before


NEAR_LIMIT = [
    # a merge-path pull tile, TWC's bins and a block push buffer: 45.6 KB declared
    ("cc", "label_propagation", {"worklist": "block_aggregated", "direction": "pull",
                                 "direction.gather": "edges", "driving": "temporal",
                                 "launch": "persistent", "block_size": 512,
                                 "load_balance": "twc"}),
    # priority driving's refill phases with the atomic-free worklist and the scans
    ("sssp", "delta_stepping", {"driving": "priority", "worklist": "prefix_sum",
                                "load_balance": "edge_balanced", "launch": "persistent"}),
    ("sssp", "delta_stepping", {"driving": "priority", "worklist": "hierarchical",
                                "worklist.dedup": True, "load_balance": "dynamic_chunks",
                                "launch": "cuda_graph"}),
]


@pytest.mark.compile_all
@pytest.mark.parametrize("alg,variant,cfg", NEAR_LIMIT,
                         ids=[f"{a}-{v}-{c['worklist']}" for a, v, c in NEAR_LIMIT])
def test_accepted_combinations_near_the_shared_memory_limit_compile(alg, variant, cfg, nvcc):
    """What the shared-memory check accepts near its limit, and with priority driving's
    own phases, compiles."""
    spec = get_registry().algorithm(alg, variant)
    config = gs.Config({**cfg, "variant": variant})
    assert check_combination(spec, None, config, "gpu") is None
    ok, out = compile_source(generate_source(spec, config, weighted=True).source, nvcc=nvcc)
    assert ok, out[-3000:]
