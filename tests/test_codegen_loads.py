"""How generated CUDA reads memory: a node operator's shared loads and the pull sweep's
L1 source loads (``gswitch.codegen``). The sources are inspected as text; the compile
tests build them with nvcc where it is installed."""

from __future__ import annotations

import re

import pytest

import gswitch as gs
from gswitch.codegen import generate_source
from gswitch.config import Config
from gswitch.lowering import shared_loads
from gswitch.plugins import get_registry
from gswitch.testing.nvcc import compile_source

PULL = {"driving": "topology", "direction": "pull", "direction.gather": "edges"}


def _function(source: str, name: str) -> str:
    """The body of the generated device function ``name`` (up to its closing brace)."""
    start = source.index(f" {name}(")
    return source[start:source.index("\n}\n", start)]


def _power_pull(launch: str = "persistent") -> str:
    spec = get_registry().variants["pagerank"]["power_pull"]
    cfg = Config({"variant": "power_pull", **PULL, "launch": launch})
    return generate_source(spec, cfg, weighted=False).source


@gs.algorithm(name="rewrite_then_read", max_iterations_param="max_iterations",
              node_after_edges=True)
class RewriteThenRead:
    """A node operator that writes a field and reads it back in a later statement
    (test algorithm)."""

    max_iterations = gs.Param("int32", 1, low=1, high=10, doc="step limit")
    a = gs.NodeField("float32", init=1.0)
    b = gs.NodeField("float32", init=0.0)
    c = gs.NodeField("float32", init=0.0)
    start = gs.all_nodes()

    @gs.edge_op
    def spread(e):
        e.dst.b.reduce_add(e.src.a)

    @gs.node_op
    def update(n):
        before = n.a * 2.0
        n.c = before + n.a
        n.a = n.b + before
        n.b = n.a * 3.0


def test_pagerank_update_loads_acc_and_the_step_total_once():
    node = _function(_power_pull(), "gs_node_op")
    # ``new`` is inlined into four statements; each load is made once and held
    assert node.count("gs_ld(gs.F_acc + v)") == 1
    assert node.count("gs_last_sum(it, 0)") == 1
    assert node.count("gs_ld(gs.F_rank + v)") == 1
    assert node.count("__ldg(gs.row + v + 1)") == 1
    # the held values are used by every statement that read them
    held = re.search(r"const auto (gs_l\d+) = gs_ld\(gs\.F_acc \+ v\);", node).group(1)
    assert node.count(held) == 5  # the declaration and the four statements


def test_a_write_makes_the_next_read_load_again():
    cfg = Config({"driving": "topology", "direction": "push"})
    node = _function(generate_source(RewriteThenRead, cfg, weighted=False).source,
                     "gs_node_op")
    lines = node.splitlines()
    loads_a = [i for i, x in enumerate(lines) if "= gs_ld(gs.F_a + v);" in x]
    store_a = next(i for i, x in enumerate(lines) if "gs.F_a[v] =" in x)
    # a is read before its store (held for both statements that read it) and again after
    assert len(loads_a) == 2 and loads_a[0] < store_a < loads_a[1]
    # b is read once before its store; nothing reads it after
    assert node.count("gs_ld(gs.F_b + v)") == 1


def test_shared_loads_replace_within_a_statement_and_respect_writes():
    out = shared_loads([["x = gs_ld(gs.F_f + v) + gs_ld(gs.F_f + v);"],
                         ["gs.F_f[v] = gs_last_sum(it, 1);"],
                         ["y = gs_ld(gs.F_f + v) * gs_last_sum(it, 1);"]],
                        [set(), {"f"}, set()])
    text = "\n".join(out)
    assert text.count("gs_ld(gs.F_f + v)") == 2  # once before the write, once after
    assert text.count("gs_last_sum(it, 1)") == 1  # a step total does not change
    assert out[0].startswith("const auto gs_l0 = gs_ld(gs.F_f + v);")
    assert "x = gs_l0 + gs_l0;" in out


def test_pull_sweep_reads_untouched_source_fields_through_l1():
    src = _power_pull()
    assert "s.f_contrib = gs_ld_l1(gs.F_contrib + v);" in _function(src, "gs_load_src_pull")
    assert "s.f_contrib = gs_ld(gs.F_contrib + v);" in _function(src, "gs_load_src")
    assert "ss[j] = gs_load_src_pull(vs[j]);" in src


def test_pull_sweep_reads_a_field_it_updates_through_l2():
    # label propagation pulls the neighbours' labels into the label itself
    spec = get_registry().variants["cc"]["label_propagation"]
    src = generate_source(spec, Config({"variant": "label_propagation", **PULL}),
                          weighted=False).source
    pull = _function(src, "gs_load_src_pull")
    assert "gs_ld_l1" not in pull and "s.f_comp = gs_ld(gs.F_comp + v);" in pull


@pytest.mark.compile
@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
def test_shared_and_l1_loads_compile(launch, nvcc):
    ok, out = compile_source(_power_pull(launch), nvcc=nvcc)
    assert ok, out[-3000:]
    cfg = Config({"driving": "topology", "direction": "pull", "launch": launch})
    ok, out = compile_source(generate_source(RewriteThenRead, cfg, False).source, nvcc=nvcc)
    assert ok, out[-3000:]


def test_rewrite_then_read_matches_numpy_on_the_cpu_engine():
    """The operator the tests above inspect means what its statements say."""
    import numpy as np

    g = gs.Graph.from_edges([0, 1, 2], [1, 2, 0])
    got = gs.run(RewriteThenRead, g, backend="cpu", max_iterations=1)
    a0 = np.ones(3, dtype=np.float32)
    b = np.zeros(3, dtype=np.float32) + a0[[2, 0, 1]]
    before = a0 * 2
    assert np.allclose(got.fields["c"], before + a0)
    assert np.allclose(got.fields["a"], b + before)
    assert np.allclose(got.fields["b"], (b + before) * 3)
