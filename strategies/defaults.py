"""The default configuration, and the configurations the tuner tries first.

Both were measured on the device (H100, RMAT-22 and a 2048x2048 road grid; see
``benchmarks/results``): the default is good on most graphs; the suggestions are the
best configurations of those measurements, one per kind of graph and algorithm.
"""

from __future__ import annotations

from typing import Any

from gswitch import hookimpl

#: Above this estimated diameter a graph counts as road-like: many small steps, where
#: launch overhead dominates.
HIGH_DIAMETER = 64

_POWER_LAW_TRAVERSAL = {  # frontier as bits, degree bins, Beamer's switch
    "worklist": "bitmap", "load_balance": "twc", "driving": "data",
    "direction": "direction_optimizing", "launch": "host_loop",
}
_PULL_SWEEP = {  # every node gathers from its in-edges each step: PageRank-like
    "worklist": "bitmap", "load_balance": "twc", "driving": "topology",
    "direction": "pull", "direction.group": 32, "launch": "host_loop",
}
_DEDUP_PUSH = {  # deduplicated queue and degree bins, push only
    "worklist": "atomic", "worklist.dedup": True, "load_balance": "twc",
    "driving": "data", "direction": "push", "launch": "host_loop",
}
_PERSISTENT = {  # one kernel for the whole run: thousands of tiny steps
    "worklist": "warp_aggregated", "worklist.dedup": True, "load_balance": "virtual_warp",
    "load_balance.size": 4, "driving": "data", "direction": "push", "launch": "persistent",
}
# the persistent kernels below ran 2x to 2.8x faster with 544 to 672 threads a block than
# with 256 on an H100 (BFS 0.73 vs 1.47 ms, CC 3.6 vs 10.0 ms on RMAT-22)
_POWER_LAW_PERSISTENT = {  # Beamer's switch inside one persistent kernel
    "worklist": "bitmap", "load_balance": "twc", "driving": "data",
    "direction": "direction_optimizing", "launch": "persistent", "block_size": 672,
}
_BITMAP_PERSISTENT = {  # bit frontier, degree bins, one kernel: SSSP- and CC-like
    "worklist": "bitmap", "load_balance": "twc", "driving": "data",
    "direction": "push", "launch": "persistent", "block_size": 544,
}
# 200-trial studies on two H200s (benchmarks/results/h200x2_tuner_200_*): the best of CC on
# a 1024x1024 road grid (24.1 ms, 10x the default; the sampler needed 82 trials to come
# within 5% of it) and of PageRank on RMAT-20 (25.3 ms, 18.5x; 38 trials) were persistent
# kernels with as many blocks as fit on a multiprocessor (blocks_per_sm 0), where the
# suggestions above keep the default of one block: steps with thousands of active nodes
# want the occupancy more than a cheaper grid barrier.
# With these suggestions, on graphs the studies had not seen (same machine, 200 trials
# each): CC on a 1536x1536 road grid came within 4.4% of its best at trial 2 (the push
# entry); PageRank on RMAT-19 reached 1.48x its best at trial 3 (the pull entry), and the
# sampler needed 117 trials for the last 5% (its best: a lower temporal threshold, 0.0005).
_FULL_PERSISTENT_PUSH = {
    "worklist": "bitmap", "load_balance": "virtual_warp", "load_balance.size": 4,
    "driving": "data", "direction": "push", "launch": "persistent",
    "launch.blocks_per_sm": 0, "block_size": 544, "read_before_atomic": False,
}
_FULL_PERSISTENT_PULL = {
    "worklist": "warp_aggregated", "load_balance": "virtual_warp", "load_balance.size": 16,
    "driving": "temporal", "driving.threshold": 0.0125, "direction": "pull",
    "launch": "persistent", "launch.blocks_per_sm": 0, "block_size": 512,
    "read_before_atomic": False, "l2_prefetch": True,
}
# 200-trial studies of the eight cases on one H100 (benchmarks/results/h100_s8_tuner200_*):
# on RMAT-22 the bests of BFS, SSSP and CC were persistent kernels with as many blocks of
# 768 to 960 threads as fit on a multiprocessor (blocks_per_sm 3 to 22, which the occupancy
# limit caps alike), 1.5x to 2x faster than the entries above with one block of 544 or 672;
# the local search needed 70 to 115 trials to walk there one step at a time.
_POWER_LAW_FULL_PERSISTENT = {  # Beamer's switch, every block that fits
    "worklist": "bitmap", "load_balance": "twc", "driving": "data",
    "direction": "direction_optimizing", "launch": "persistent",
    "launch.blocks_per_sm": 0, "block_size": 768,
}
_BITMAP_FULL_PERSISTENT = {  # push only, every block that fits: SSSP- and CC-like
    "worklist": "bitmap", "load_balance": "twc", "load_balance.block_threshold": 1024,
    "driving": "data", "direction": "push", "launch": "persistent",
    "launch.blocks_per_sm": 0, "block_size": 960, "read_before_atomic": False,
}
# PageRank on RMAT-22 there: pull with temporal driving (a low threshold) and wide virtual
# warps in a host loop, 86 ms against 138 ms for the best entry above (trial 93)
_PULL_TEMPORAL = {
    "worklist": "bitmap", "load_balance": "virtual_warp", "load_balance.size": 32,
    "driving": "temporal", "driving.threshold": 0.00625, "direction": "pull",
    "launch": "host_loop",
}
_GRAPH_REPLAY = {  # steps captured in a CUDA graph, replayed in batches
    "worklist": "bitmap", "load_balance": "virtual_warp", "load_balance.size": 4,
    "driving": "data", "direction": "push", "launch": "cuda_graph",
}

# Level-synchronous algorithms (first_hit_final, e.g. BFS) activate a node once per step,
# so they need no dedup stamp, and cuda_graph accepts their plain queue. BFS on the
# 2048x2048 grid, H100 (benchmarks/sweep_grid.py): persistent 15.5 ms without the stamp vs
# 17.1 with it; cuda_graph 23.4 ms with block 64 and 64 steps a replay vs 26.1 with dedup.
# Block 128, the atomic without a read first and l2_prefetch then give persistent 11.1 ms
# (12.8 without the prefetch) and cuda_graph 19.1 ms (20.2).
_LEVEL_PERSISTENT = {
    "worklist": "warp_aggregated", "load_balance": "virtual_warp", "load_balance.size": 4,
    "driving": "data", "direction": "push", "launch": "persistent", "block_size": 128,
    "read_before_atomic": False, "l2_prefetch": True,
}
_LEVEL_REPLAY = {
    "worklist": "warp_aggregated", "load_balance": "virtual_warp", "load_balance.size": 4,
    "driving": "data", "direction": "push", "launch": "cuda_graph", "block_size": 64,
    "launch.steps": 64, "read_before_atomic": False, "l2_prefetch": True,
}

# Resident partitions from a shared ring on a compact renumbering: BFS on the 2048x2048
# road grid (10% of its edges removed) 6.3 ms a call against 12.7 ms for _LEVEL_PERSISTENT,
# on the full grid 3.5 against 13.1 with the second (H200, same run,
# benchmarks/results/h200_s49_road_grid_ring_pre.log). The renumbering is computed once per
# graph (seconds on 4M nodes), so these come first for the tuner only.
_RING = {
    "driving": "spatial", "direction": "push", "launch": "persistent", "renumber": "hilbert",
    "driving.schedule": "ring", "driving.resident": 1, "driving.partition_size": 1024,
    "block_size": 1024,
}
_RING_SMALL = {**_RING, "driving.partition_size": 512, "block_size": 512,
               "launch.blocks_per_sm": 2}


@hookimpl
def gswitch_default_config():
    return {
        "worklist": "warp_aggregated",
        "load_balance": "virtual_warp",
        "driving": "data",
        "direction": "push",
        "launch": "host_loop",
    }


def _fit(algorithm: Any, configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The suggestions made valid for a formulation that supports only some strategies:
    an axis it refuses takes the formulation's own default (and that default's
    parameters) instead; duplicates go.
    """
    supports = getattr(algorithm, "supports", {}) or {}
    own = getattr(algorithm, "config_defaults", {}) or {}
    out: list[dict[str, Any]] = []
    for c in configs:
        c = dict(c)
        for axis, allowed in supports.items():
            if c.get(axis, own.get(axis, allowed[0])) in allowed and axis in c:
                continue
            c = {k: v for k, v in c.items() if k != axis and not k.startswith(axis + ".")}
            c[axis] = own.get(axis, allowed[0])
            c.update({k: v for k, v in own.items() if k.startswith(axis + ".")})
        if c not in out:
            out.append(c)
    return out


@hookimpl
def gswitch_suggested_configs(algorithm: Any, features: dict,
                              backend: str) -> list[dict[str, Any]]:
    return _fit(algorithm, _suggestions(algorithm, features, backend))


def _suggestions(algorithm: Any, features: dict, backend: str) -> list[dict[str, Any]]:
    if backend != "gpu":
        return [{"direction": "direction_optimizing"},
                {"driving": "topology", "direction": "pull"}]
    # orders from the tuner's studies on an H100 (benchmarks/results/h100_tuner_cold.log):
    # each entry was the best, or within a few percent of it, for one algorithm there
    if float(features.get("diameter_estimate", 0)) > HIGH_DIAMETER:
        if algorithm.first_hit_final:
            return [_RING, _RING_SMALL, _LEVEL_PERSISTENT, _LEVEL_REPLAY, _PERSISTENT,
                    _GRAPH_REPLAY, _FULL_PERSISTENT_PUSH, _BITMAP_PERSISTENT,
                    _POWER_LAW_TRAVERSAL]
        road = [_FULL_PERSISTENT_PUSH, _PERSISTENT, _GRAPH_REPLAY, _BITMAP_PERSISTENT,
                _POWER_LAW_TRAVERSAL]
        if algorithm.start.kind == "all":
            # PageRank on the 2048x2048 road grid (two H200s, h200x2_s7_tuner_*): both
            # studies' bests pulled in a persistent kernel with temporal driving (8.5 and
            # 8.8 ms), 4.2x faster than the first push entry, which the 200-trial study
            # needed 43 trials to leave 5% behind; CC's best there stayed push
            road.insert(1, _FULL_PERSISTENT_PULL)
        return road
    if algorithm.start.kind == "all":  # every node starts active: sweeps, pull pays
        return [_BITMAP_FULL_PERSISTENT, _PULL_TEMPORAL, _POWER_LAW_FULL_PERSISTENT,
                _POWER_LAW_PERSISTENT, _FULL_PERSISTENT_PULL, _DEDUP_PUSH, _BITMAP_PERSISTENT,
                _POWER_LAW_TRAVERSAL, _PULL_SWEEP]
    if algorithm.first_hit_final:  # bottom-up steps stop at the first parent: BFS-like
        return [_POWER_LAW_FULL_PERSISTENT, _BITMAP_FULL_PERSISTENT, _POWER_LAW_PERSISTENT,
                _DEDUP_PUSH, _BITMAP_PERSISTENT, _POWER_LAW_TRAVERSAL, _PULL_SWEEP,
                _FULL_PERSISTENT_PULL]
    # without that early exit the switch to pull costs: SSSP on RMAT-22 (H100,
    # h100_s8_tuner80_*) ran 11.5 ms with the first entry above and 2.48 ms pushing
    return [_BITMAP_FULL_PERSISTENT, _DEDUP_PUSH, _BITMAP_PERSISTENT, _POWER_LAW_FULL_PERSISTENT,
            _POWER_LAW_PERSISTENT, _POWER_LAW_TRAVERSAL, _PULL_SWEEP, _FULL_PERSISTENT_PULL]
