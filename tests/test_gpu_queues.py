"""GPU suite: every formulation under every worklist on graphs where one step reaches a
node along many edges (a skewed RMAT graph), so a queue without dedup would hold it many
times: the answer is still the reference. The zoo's graphs rarely do this; a counter
that activated on every message once passed the zoo and failed here."""

import pytest

import gswitch as gs
from gswitch.errors import InvalidConfig
from gswitch.generators import rmat
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

WORKLISTS = ["atomic", "warp_aggregated", "block_aggregated", "chunked", "hierarchical",
             "bitmap", "prefix_sum"]
CASES = [(name, v) for name, family in sorted(get_registry().variants.items())
         for v, spec in family.items() if "gpu" in spec.backends]


def _graph(directed):
    g = rmat(8, 6, seed=4).remove_self_loops().deduplicate()
    return g if directed else g.symmetrize().deduplicate()


def _inputs(spec, graph):
    """Arguments of the run and of its reference (as in tests/test_renumber.py)."""
    kwargs = {"source": 1} if spec.start.kind == "source" else {}
    given = dict(kwargs)
    if "sources" in spec.inputs:
        given["sources"] = [0, 1, 2]
        kwargs["sources"] = spec.inputs["sources"][1].prepare(given["sources"],
                                                              {"n_nodes": graph.n_nodes})
    return given, kwargs


@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
@pytest.mark.parametrize("worklist", WORKLISTS)
@pytest.mark.parametrize("name,variant", CASES)
def test_every_worklist_gives_the_reference(name, variant, worklist, launch):
    spec = get_registry().algorithm(name, variant)
    graph = _graph(directed=name == "scc")
    given, kwargs = _inputs(spec, graph)
    try:
        r = gs.run(name, graph, backend="gpu",
                   config={"variant": variant, "worklist": worklist, "launch": launch},
                   **given)
    except InvalidConfig as exc:  # a refusal names its reason; nothing ran
        assert "invalid strategy combination" in str(exc)
        return
    problem = compare(name, r.fields[spec.outputs[0]], reference(name, graph, **kwargs))
    assert problem is None, problem
