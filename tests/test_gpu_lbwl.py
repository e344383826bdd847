"""GPU suite for the load balancers and worklists of issue 25: each paired with every
option of every other axis (the all-pairs configurations that hold it) on every zoo
graph, then each under the conditions its device code is most likely to get wrong
(overflowing queues, full donation boxes, one-item chunks, duplicates past the
partition, block sizes at both ends) against the reference. These strategies are
``validated`` because this file passes on a device."""

import functools

import numpy as np
import pytest

import gswitch as gs
from gswitch.combinations import pairwise_configs
from gswitch.generators import rmat, star
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import ZOO_NAMES, zoo_graph

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

ALGORITHMS = ["bfs", "sssp", "cc", "pagerank"]
OUTPUT = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}
NEW = {"load_balance": ["block", "dynamic_virtual_warp", "dynamic_chunks", "edge_balanced",
                        "work_donation"],
       "worklist": ["block_aggregated", "chunked", "hierarchical", "prefix_sum"]}
#: the formulations that run under every strategy (the defaults of cc and pagerank pull)
CLASSIC = {"bfs": "default", "sssp": "bellman_ford", "cc": "label_propagation",
           "pagerank": "residual_push"}
LAUNCHES = ["host_loop", "persistent", "cuda_graph"]


def _cases():
    """The all-pairs cases with a new strategy (a minute to build: only where they run)."""
    return [(a, c.replace(variant=CLASSIC[a])) for a in ALGORITHMS
            for c in pairwise_configs(get_registry().algorithm(a, CLASSIC[a]))
            if any(c[axis] in names for axis, names in NEW.items())]


def _kwargs(algorithm):
    return {"source": 0} if algorithm in ("bfs", "sssp") else {}


@functools.cache
def _zoo(name):
    return zoo_graph(name)


@functools.cache
def _big(name):
    if name == "star":  # one hub of 20000 edges among leaves of one
        return star(20_001)
    return rmat(13, 16, seed=3, weighted=True)


@functools.cache
def _reference(algorithm, key):
    g = _zoo(key[1]) if key[0] == "zoo" else _big(key[1])
    return reference(algorithm, g, **_kwargs(algorithm))


def _check(algorithm, key, cfg):
    g = _zoo(key[1]) if key[0] == "zoo" else _big(key[1])
    if algorithm in ("bfs", "sssp") and g.n_nodes == 0:
        return None
    cfg = cfg.replace(variant=CLASSIC[algorithm]) if isinstance(cfg, gs.Config) \
        else {**cfg, "variant": CLASSIC[algorithm]}
    r = gs.run(algorithm, g, backend="gpu", config=cfg, **_kwargs(algorithm))
    return r, compare(algorithm, r.fields[OUTPUT[algorithm]], _reference(algorithm, key))


def _id(case):
    alg, cfg = case
    return "-".join([alg] + [str(cfg[a]) for a in ("worklist", "load_balance", "driving",
                                                     "direction", "launch")]
                    + [f"{k.split('.')[1]}={v}" for k, v in cfg.items()
                       if "." in k and isinstance(v, bool)])


@pytest.mark.cases("case", _cases, ids=_id)
def test_pairs_match_reference_on_the_zoo(case):
    """This all-pairs configuration gives the reference answer on every zoo graph."""
    algorithm, cfg = case
    failures = []
    for name in ZOO_NAMES:
        out = _check(algorithm, ("zoo", name), cfg)
        if out is not None and out[1]:
            failures.append(f"{name}: {out[1]}")
    assert not failures, "; ".join(failures)


@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
@pytest.mark.parametrize("worklist", ["block_aggregated", "chunked", "hierarchical"])
@pytest.mark.parametrize("slots", [1, 4])
def test_buffered_queue_overflows_and_grows_without_loss(worklist, slots, launch):
    """A one-slot queue overflows from the buffered flushes and the spill path, grows,
    and every push still lands (sssp pushes a node many times without dedup)."""
    cfg = {"worklist": worklist, "worklist.slots": slots, "worklist_capacity": 1,
           "launch": launch}
    r, problem = _check("sssp", ("big", "rmat"), cfg)
    assert r.stats["overflows"] > 0
    assert problem is None, problem


@pytest.mark.parametrize("block_size", [64, 1024])
@pytest.mark.parametrize("worklist", ["block_aggregated", "hierarchical", "prefix_sum"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_block_level_worklists_at_both_block_sizes(algorithm, worklist, block_size):
    """Block scans and per-warp queues are right with 2 and 32 warps per block."""
    for launch in LAUNCHES:
        cfg = {"worklist": worklist, "block_size": block_size, "launch": launch,
               "worklist.dedup": worklist != "prefix_sum"}
        if worklist == "prefix_sum":
            cfg.pop("worklist.dedup")
        _r, problem = _check(algorithm, ("big", "rmat"), cfg)
        assert problem is None, (launch, problem)


@pytest.mark.parametrize("launch", LAUNCHES)
@pytest.mark.parametrize("params", [
    {"load_balance": "work_donation", "load_balance.chunk": 4},     # the box fills up
    {"load_balance": "work_donation", "load_balance.chunk": 4096},  # nothing donated
    {"load_balance": "dynamic_chunks", "load_balance.chunk": 1},
    {"load_balance": "dynamic_chunks", "load_balance.chunk": 4096},
    {"load_balance": "dynamic_virtual_warp", "load_balance.max_log2": 0},
    {"load_balance": "dynamic_virtual_warp", "load_balance.max_log2": 5},
    {"load_balance": "edge_balanced", "load_balance.threads_per_item": 32},
    {"load_balance": "block", "block_size": 1024},
    {"load_balance": "block", "block_size": 64},
], ids=lambda p: "-".join(f"{k.split('.')[-1]}={v}" for k, v in p.items()))
@pytest.mark.parametrize("graph", ["star", "rmat"])
@pytest.mark.parametrize("algorithm", ["bfs", "sssp", "pagerank"])
def test_load_balancer_parameter_extremes(algorithm, graph, params, launch):
    """Each load balancer at the ends of its space, on a hub and on a power-law graph."""
    cfg = {**params, "launch": launch, "worklist": "bitmap"}
    _r, problem = _check(algorithm, ("big", graph), cfg)
    assert problem is None, problem


@pytest.mark.parametrize("launch", ["host_loop", "persistent"])
def test_edge_balanced_expands_duplicates_past_its_partition(launch):
    """With a queue that may hold a node many times (sssp without dedup), items past the
    n-item partition are expanded one thread each; the answer is still the reference."""
    cfg = {"load_balance": "edge_balanced", "worklist": "atomic", "launch": launch}
    _r, problem = _check("sssp", ("big", "rmat"), cfg)
    assert problem is None, problem


@pytest.mark.parametrize("worklist", ["prefix_sum", "hierarchical"])
def test_new_worklists_agree_with_cpu_engine_on_pagerank(worklist):
    """Node operators (pagerank's residual push) see each queued node's pushes once."""
    g = _big("rmat")
    cfg = {"worklist": worklist, "variant": "residual_push"}
    if worklist != "prefix_sum":
        cfg["worklist.dedup"] = True
    a = gs.run("pagerank", g, backend="gpu", config=cfg).fields["rank"]
    b = gs.run("pagerank", g, backend="cpu").fields["rank"]
    assert np.abs(a.astype(np.float64) - b).sum() < 1e-4
