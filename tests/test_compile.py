"""Every valid (algorithm x strategy combination) generates CUDA that compiles for sm_90."""

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.combinations import valid_configs
from gswitch.plugins import get_registry
from gswitch.testing.nvcc import compile_source, find_nvcc

pytestmark = pytest.mark.compile

ALGORITHMS = ["bfs", "sssp", "cc", "pagerank"]
CASES = [(a, c) for a in ALGORITHMS for c in valid_configs(get_registry().algorithm(a))]
# weighted matters only for weight-reading operators
WEIGHTED = {"bfs": False, "sssp": True, "cc": False, "pagerank": False}


def _case_id(case):
    alg, cfg = case
    parts = [alg] + [str(cfg[a]) for a in ("worklist", "load_balance", "driving", "launch")]
    parts += [f"{k.split('.')[1]}={v}" for k, v in cfg.items() if "." in k and k not in
              ("driving.threshold", "launch.blocks_per_sm")]
    return "-".join(parts)


@pytest.fixture(scope="module")
def compiled():
    """Compile every distinct generated source once, in parallel."""
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found: install the CUDA toolkit (CI installs it in .ci/run)")
    sources = {}
    for alg, cfg in CASES:
        gen = generate_source(get_registry().algorithm(alg), cfg, weighted=WEIGHTED[alg])
        sources[(alg, cfg.key())] = gen
    unique = {g.key: g.source for g in sources.values()}
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        results = dict(zip(unique, pool.map(lambda s: compile_source(s, nvcc=nvcc),
                                            unique.values())))
    return {k: results[g.key] for k, g in sources.items()}


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_combination_compiles(case, compiled):
    """The composed module compiles without errors."""
    alg, cfg = case
    ok, output = compiled[(alg, cfg.key())]
    assert ok, f"{alg} {cfg.to_dict()}:\n{output[-3000:]}"


def test_enumeration_covers_every_strategy():
    """Each registered GPU strategy appears in at least one compiled combination."""
    reg = get_registry()
    for axis, strategies in reg.strategies.items():
        for name, cls in strategies.items():
            if "gpu" not in cls.backends:
                continue
            assert any(c[axis] == name for _, c in CASES), (axis, name)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_generation_is_deterministic(algorithm):
    """The same configuration always yields the same source text and cache key."""
    spec = get_registry().algorithm(algorithm)
    cfg = gs.Config({"launch": "persistent", "driving": "temporal"})
    a = generate_source(spec, cfg, weighted=True)
    b = generate_source(spec, gs.Config(cfg.to_dict()), weighted=True)
    assert a.source == b.source and a.key == b.key
    other = generate_source(spec, cfg.replace(block_size=128), weighted=True)
    assert other.key != a.key


def test_compile_error_is_reported():
    """Broken source fails to compile with the compiler's message."""
    if find_nvcc() is None:
        pytest.skip("nvcc not found")
    ok, out = compile_source("__global__ void k() { undefined_symbol(); }")
    assert not ok and "undefined_symbol" in out
