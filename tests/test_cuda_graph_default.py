"""A caller's config that picks ``launch=cuda_graph`` and names no worklist: the bitmap
where the default queue could grow inside a replay (checked without a device: the
combination checks are pure Python)."""

import gswitch as gs
from gswitch.config import Config
from gswitch.generators import road
from gswitch.plugins import get_registry
from gswitch.runner import _fallback_worklist, check_combination


def _check(alg, given):
    spec = get_registry().algorithm(alg)
    graph = road(8, 8, seed=1)
    cfg = Config(given)
    reason = check_combination(spec, graph, cfg, "gpu")
    return reason, _fallback_worklist(spec, graph, cfg, given, "gpu", reason, "given")


def test_a_growing_queue_is_replaced_by_the_bitmap():
    given = {"launch": "cuda_graph", "driving": "spatial", "direction": "push"}
    reason, (cfg, left, note) = _check("bfs", given)
    assert reason and "cannot grow" in reason
    assert left is None and cfg["worklist"] == "bitmap" and cfg["driving"] == "spatial"
    assert "worklist=bitmap" in note and "launch=cuda_graph" in note


def test_a_named_worklist_is_kept_and_refused():
    given = {"launch": "cuda_graph", "driving": "spatial", "worklist": "atomic"}
    reason, (cfg, left, note) = _check("bfs", given)
    assert left == reason and cfg["worklist"] == "atomic" and note == "given"


def test_a_bounded_queue_stays():
    """Level-synchronous BFS under data driving queues a node once a step: no change."""
    reason, (cfg, left, _) = _check("bfs", {"launch": "cuda_graph", "driving": "data"})
    assert reason is None and left is None and cfg["worklist"] == "warp_aggregated"


def test_the_cpu_is_untouched():
    spec = get_registry().algorithm("bfs")
    given = {"launch": "cuda_graph", "driving": "spatial"}
    cfg = Config(given)
    out = _fallback_worklist(spec, road(4, 4), cfg, given, "cpu", "x", "given")
    assert out == (cfg, "x", "given")
    assert gs.run("bfs", road(6, 6), backend="cpu", source=0, config=given).fields["depth"][0] == 0
