"""A counter that activates on every message: a queue worklist without dedup would hold
its target once per message and run it as often in one step (checked without a device:
the combination checks are pure Python)."""

import numpy as np
import pytest

import gswitch as gs
from gswitch.algorithm import AlgorithmSpec
from gswitch.config import Config
from gswitch.generators import road
from gswitch.plugins import get_registry
from gswitch.runner import check_combination


@gs.algorithm(name="test_counted_messages")
class Counted:
    """Counts, for each node, the messages of the nodes one hop nearer to the source."""

    depth = gs.NodeField("int32", init=gs.INF, at_source=0)
    hits = gs.NodeField("int32", init=0)
    start = gs.from_source()

    @gs.edge_op
    def count(e):
        e.only_if(e.dst.depth > e.src.depth)  # away from the source: the run ends
        e.dst.depth.reduce_min(e.src.depth + 1)
        e.dst.hits.reduce_add(1)


def _reason(spec, **cfg):
    return check_combination(spec, road(6, 6, seed=1), Config(cfg), "gpu")


def test_counted_activation_names_the_field():
    assert Counted.counted_activation == "hits"


@pytest.mark.parametrize("worklist", ["atomic", "warp_aggregated", "block_aggregated",
                                      "chunked", "hierarchical"])
def test_a_queue_without_dedup_is_refused_with_the_fix(worklist):
    reason = _reason(Counted, worklist=worklist, driving="data")
    assert reason and "hits" in reason and "worklist.dedup=true" in reason
    assert _reason(Counted, worklist=worklist, driving="data",
                   **{"worklist.dedup": True}) is None


def test_deduplicating_worklists_and_sweeps_pass():
    assert _reason(Counted, worklist="bitmap", driving="data") is None
    assert _reason(Counted, worklist="prefix_sum", driving="data") is None
    assert _reason(Counted, driving="topology") is None


def test_the_cpu_counts_each_message_once():
    """The CPU engine's active sets are sets, so it takes any worklist."""
    g = road(4, 4, seed=1)
    r = gs.run(Counted, g, source=0, backend="cpu")
    want = gs.run("bfs", g, source=0, backend="cpu").fields["depth"]
    np.testing.assert_array_equal(r.fields["depth"], want)
    assert r.fields["hits"][0] == 0 and np.all(r.fields["hits"][1:] >= 1)


def _specs():
    reg = get_registry()
    for name, family in sorted(reg.variants.items()):
        for variant in family:
            stack = [reg.algorithm(name, variant)]
            while stack:
                spec = stack.pop()
                yield spec
                stack += [s for s in spec.stages if isinstance(s, AlgorithmSpec)]


def test_no_shipped_formulation_counts_activations_under_a_worklist():
    """Every shipped operator activates once per node and step (a threshold, a change of
    a min/max/or, or no activation), or sweeps every node: its default and every queue
    worklist run it."""
    for spec in _specs():
        if spec.counted_activation is None:
            continue
        allowed = spec.supports.get("driving") or ()
        assert spec.fields and any(f.buffered for f in spec.fields.values()) or (
            allowed and set(allowed) <= {"topology"}), spec.label
