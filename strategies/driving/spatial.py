"""Spatial hybrid: contiguous partitions of nodes, activated and processed together."""

from __future__ import annotations

from typing import Any

import numpy as np

from gswitch import expr as ex
from gswitch import hookimpl
from gswitch.codegen_stage import STAGE_BYTES, capacity, staged_fields
from gswitch.strategy import (
    Buffer,
    Categorical,
    DrivingStrategy,
    FloatRange,
    IntRange,
    Phase,
    StepMode,
)

from ._local import local_problem, pulls
from .priority import default_width

#: The active partitions' nodes; the strategy's phases apply the edge operator.
SPATIAL = StepMode("spatial", items="worklist", pushes=False, own_operators=True)
#: Largest partition: its node bitmap (128 words) lives in a block's shared memory.
MAX_PARTITION = 4096
#: Resident partitions: the most edges whose columns a block holds in shared memory
#: (``GS_RES_EDGES``; spatial.cuh).
RESIDENT_EDGES = 6144
#: Ring slots beyond twice the partition count (``schedule=ring``): more than the blocks
#: that can wait on a ticket at once on any device.
RING_SLACK = 65536


class SpatialDriving(DrivingStrategy):
    """Spatial hybrid: nodes form contiguous partitions of ``partition_size`` ids (32 to
    4096, a runtime argument; powers of two are the natural choices, any size works);
    activating any node activates its partition, and a step processes every active
    partition, one block per partition, iterating inside it (its first pass takes every
    node of it, or with local iteration those activated since it last ran; see below).

    Nasre, Burtscher & Pingali, "Data-driven versus topology-driven irregular
    computations on GPUs" (IPDPS 2013, §V-B, the spatial hybrid): the worklist holds
    partitions (here a bitmap of them, two halves by step parity), each standing for its
    nodes, so a step costs one bit per partition instead of a push per node, and the
    nodes of a partition are read together. With ``local_iterations`` k > 0 a partition
    then loops inside itself: a block keeps a bitmap of its nodes in shared memory and
    repeats, with ``__syncthreads`` between passes, over the nodes an in-partition edge
    updated, at most k more passes (k >= ``partition_size`` means until locally stable;
    0: no inner loop). An update that leaves the partition uses the normal atomics and
    activates the target's partition for the next step. Wins on graphs with locality in
    their numbering (road networks, meshes, dense local clusters) where data-driven
    steps would walk a long in-partition path one level per step: the steps drop to
    about the number of partitions a wave crosses. Loses on randomly numbered
    power-law graphs, where every partition is active and whole partitions are redone.

    How it decides: the inner loop needs a fixed point that does not depend on the order
    of updates, so ``check`` accepts local iteration only for edge operators whose every
    statement is a guard or a min/max/or reduction into ``e.dst`` that reads no step
    number, with no node operator (BFS, SSSP, CC by label propagation, widest path); it
    refuses the rest with the reason. Without the loop (``local_iterations=0``) any edge
    operator without node operator or ``.at()`` reductions is accepted. Push only.

    CPU engine: honours the same semantics (active partitions, their first passes as
    above; passes over the nodes in-partition edges activated, edges between partitions
    reporting to the next step), so answers and step counts are testable; only the
    one-block-per-partition mapping is GPU mechanics. On the GPU a warp takes a queued
    node and its lanes the node's edges (a pass of many nodes gives each warp up to 32
    consecutive ones, whose row bounds it reads up front), so ``block_size=1024`` (32
    warps) suits dense partitions. Where the edge operator is order-free (the
    local-iteration condition), a partition that fits holds the fields the operator
    reduces into in shared memory for its passes (:mod:`gswitch.codegen_stage`): loaded
    once, reduced back into global memory with the field's own atomic at the end, so an
    update another block made meanwhile is never lost; one barrier per pass.

    With local iteration (so an order-free operator), a partition's first pass takes
    only the nodes activated since it last ran, not all its nodes: a node not activated
    has not changed since its edges were last applied, and applying min, max or or again
    changes nothing, so the answer and the steps are those of whole partitions with
    fewer edges. Both engines do this; on the GPU the marks are a node bitmap in two
    halves by step parity, set along with the partition's mark, and partitions must be a
    multiple of 32 nodes (other sizes run whole first passes). ``local_iterations=0``
    keeps whole partitions, the hybrid as Nasre et al. define it. On the 1M-node chain
    of 32-node cliques (H200, ``benchmarks/results/h200_s40_chain_bfs_ab.log``, two
    rounds alternating with the whole first passes) BFS took 64.2 ms at partitions of
    4096 and 1024 threads (persistent), against 88.8 ms before and scipy's 641 to 756 ms
    in the same rounds; each node's edges are read once, where whole first passes read
    them twice. A BFS level costs about 1 us there, a chain of dependent loads, shared
    atomics and a block barrier per pass.

    Ordered passes, for an algorithm with a priority key (SSSP's ``delta_stepping``
    variant): after a partition's first pass, a pass takes the queued nodes of priority
    bucket at most ``b`` (the largest lowest bucket of a queue so far) and holds the
    rest for a later pass; the last pass takes every node (on the GPU, like the marked
    first pass, where partitions are a multiple of 32 nodes). The bucket width is
    ``width_scale`` times :func:`~gswitch.strategies.driving.priority.default_width`
    of the graph (no effect without a priority key or without local iteration).
    Unordered (``bellman_ford``), a clique passes on its exit's distance before it
    settles, and every improvement is relaxed again downstream: on the chain, 186M
    edge relaxations for 32.6M edges at 512-node partitions, 1,027M at 4,096. Ordered,
    88M at width 4 (H200, same run, ``benchmarks/results/h200_s41_chain_sssp_ordered_ab.log``):
    258 ms at 4096-node partitions against 370 ms for the best unordered configuration,
    and scipy's 541 to 746 ms (2.1x to 2.9x). A shared-memory float min is one integer
    atomic there (no compare-and-swap loop), which took Bellman-Ford from 475 to 370 ms.

    Partition shape matters as much as size. On the 2048x2048 road grid in row order a
    partition is a band of rows that the wave crosses in a level or two (BFS, 1024-node
    partitions, 256 threads: 2,049 steps, 399 ms). ``renumber=hilbert``
    (:mod:`gswitch.locality`) makes partitions compact patches: 83 steps and 30.0 ms at
    4096-node partitions and 1024 threads, against 12.1 ms for the tuned level-synchronous
    configuration in the same run (H200,
    ``benchmarks/results/h200_s42_road_bfs_hilbert.log``). It still loses there: the
    wave reaches a patch on several sides at different times, and each arrival redoes
    the nodes behind it (66M edges for the grid's 15M). SSSP likewise: 206 ms against
    40.6 ms for priority driving. A block reads the active bits of up to ``block_size``
    of its partitions at once (one ballot a warp), so a step with few active partitions
    among thousands costs one read of the bitmap.

    Resident partitions (``resident`` = 1, 2 or 4 nodes a thread, 0 off; GPU only, the
    CPU engine gives the same answer and ignores it): where the operator is staged and
    local iteration is on, a block loads a partition's rows and columns (16-bit offsets; at most
    :data:`RESIDENT_EDGES` columns, else read from global memory) with its staged values
    into shared memory once per visit. Thread ``t`` owns nodes ``t + j * block_size``
    (``j < resident``, so ``partition_size`` is at most ``resident`` times
    ``block_size``) and keeps in registers each one's values as last relaxed and its
    first four edges' targets. A pass relaxes the in-partition edges of every owned node
    whose value changed, one barrier a pass; the edges that leave the partition are
    applied once per visit, from final values (so ``check`` refuses operators that guard
    on a staged source value). Each step's active partitions are listed, and blocks take
    them in turn instead of owning every ``gridDim``-th partition (1.3x in a stand-alone
    kernel of the same design, ``benchmarks/experiments/tile_bfs.py``; register-held
    targets and change test: 1.6x over flag arrays). Wins on meshes: BFS on the
    2048x2048 grid's ``hilbert`` copy, 512-node partitions, ``resident=1``, 512 threads,
    two blocks a multiprocessor, 6.3 ms a call against 13.2 ms for the tuned
    level-synchronous configuration in the same run (H200,
    ``benchmarks/results/h200_s48_grid_road_resident.log``). Loses on the road grid with
    10% of its edges removed: 15.3 ms at best against 13.1, since a removed edge sends a
    shortest path around through a neighbouring partition, which then corrects the first
    arrival (3 to 4 times the grid's visits a partition). The list and the marks cross
    blocks and steps through atomics and volatile reads: with plain stores and cached
    reads the persistent launch lost a mark in 7 of 36 runs of the road graph, the host
    loop in none. The tuner's GPU search draws it; the shipped selector's training runs
    have no candidate with it.

    Partitions from a ring (``schedule=ring``, always resident: ``resident=0`` stands
    for 4 nodes a thread there; GPU only, the CPU engine gives the same answer in
    steps): no steps at all. The start set's partitions
    are pushed onto a shared FIFO ring; each block takes the next one, visits it as
    above, and pushes the partitions its leaving edges activate, until none is queued
    or running (the termination count of Chen et al., "Atos", ICPP 2022, over partitions
    rather than nodes). A state word per partition (idle, queued, running, running and
    activated again) keeps a partition on at most one block and in the ring at most
    once; an activation writes the value, then the node's mark, then reads the state
    behind a fence, and a block takes a partition's marks before it reads its values, so
    a block either sees an update or visits the partition again. With steps, about two
    thirds of a road grid's time went to waiting at the step barrier for the step's
    slowest partition; the ring lets a block take the next partition at once. In a
    stand-alone kernel of this design (``benchmarks/experiments/tile_bfs_async.py``,
    H200, ``benchmarks/results/h200_s49_tile_bfs_async_fixed.log``): BFS on the road
    grid's ``hilbert`` copy 4.05 ms of device time at 2048-node partitions and 1024
    threads, against 8.58 ms with steps and 10.98 ms for the tuned level-synchronous
    configuration (``h200_s49_tile_bfs_peer.log``); the full grid 2.31 ms against 3.31.
    In the engine (the generic staged operator, the same run as its peers,
    ``h200_s49_road_grid_ring_pre.log``): the road grid 6.3 ms a call (5.70 device) at
    1024-node partitions, ``resident=1``, 1024 threads, against 12.7 ms (10.97) for the
    tuned level-synchronous configuration and 17.6 ms for the best resident run with
    steps; the full grid 3.5 ms (2.81) at 512-node partitions, 512 threads and two blocks
    a multiprocessor, against 13.1 and 6.4 ms. SSSP on the 1024x1024 road grid: 12.1 ms
    against the plain call's 16.9 (``h200_s49_road_ring_sssp_cc.log``). Where it loses:
    CC by label propagation there, 19.0 ms against 2.2: the kernels take 2.8 ms, but a
    renumbered graph's component labels go back to the caller's ids on the host.

    The GPU phase passes the GPU suite (``tests/test_spatial.py``, the all-pairs
    configurations of ``tests/test_gpu.py``, ``tests/test_spatial_resident.py`` and
    ``tests/test_spatial_ring.py``), and the
    tuner's GPU search offers all of it. For BFS-like algorithms on graphs of large
    diameter the tuner tries the ring first (:mod:`gswitch.strategies.defaults`).
    """

    name = "spatial"
    params = {
        "partition_size": IntRange(32, MAX_PARTITION, 256, log=True,
                                   searched=tuple(32 << k for k in range(8))),
        "local_iterations": IntRange(0, MAX_PARTITION, MAX_PARTITION),
        "width_scale": FloatRange(1.0 / 64, 64.0, 1.0, log=True),
        "resident": IntRange(0, 4, 0, compile_time=True, searched=(0, 1, 2, 4)),
        "schedule": Categorical(("steps", "ring"), "steps", compile_time=True),
    }
    cuda_files = ("spatial.cuh", "spatial_resident.cuh", "spatial_ring.cuh")
    modes = (SPATIAL,)
    in_activation_order = False
    stages_partitions = True

    def check(self, algorithm, graph, config, backend):
        if pulls(config):
            return ("spatial processes partitions along out-edges; set direction=push")
        problem = self._base_problem(algorithm)
        if problem is None and int(self.options["local_iterations"]) > 0:
            problem = local_problem(algorithm, "spatial local iteration")
            if problem:
                problem += " (or set driving.local_iterations=0)"
        if problem is None and self.resident() and backend == "gpu":
            problem = self._resident_problem(algorithm, config)
        return problem if problem is not None else self._width_problem(algorithm)

    def _resident_problem(self, algorithm: Any, config: Any) -> str | None:
        label = getattr(algorithm, "label", algorithm.name)
        size = self.size()
        block = int(config.get("block_size", 256)) if config is not None else 256
        kinds = staged_fields(algorithm)
        if not kinds:
            return (f"driving.resident holds the fields an order-free edge operator reduces "
                    f"into in shared memory, and {label}'s operator cannot be held there; "
                    "set driving.resident=0")
        if int(self.options["local_iterations"]) == 0:
            return "driving.resident iterates inside partitions; set driving.local_iterations > 0"
        if size % 32:
            return (f"driving.resident needs partitions of a multiple of 32 nodes; got "
                    f"driving.partition_size={size}")
        cap = capacity(algorithm, kinds)
        if size > cap:
            return (f"driving.resident holds at most {cap} nodes of {label}'s fields in shared "
                    f"memory; lower driving.partition_size (got {size})")
        per = self.resident()
        if size > per * block:
            given = int(self.options["resident"])
            what = (f"driving.resident={per} gives a thread {per} node{'s' if per > 1 else ''}"
                    if given else "driving.schedule=ring gives a thread 4 nodes")
            return (f"{what}: driving.partition_size ({size}) must be at most {per} x "
                    f"block_size ({block}); "
                    + ("raise driving.resident or block_size" if per < 4 else
                       "lower driving.partition_size or raise block_size"))
        for st in algorithm.edge.statements:
            if isinstance(st, ex.Guard) and any(
                    isinstance(e, ex.FieldLoad) and e.node == "src" and e.field in kinds
                    for e in ex.walk(st.value)):
                return (f"driving.resident applies a node's edges that leave the partition once, "
                        f"from its final values, and {label}'s operator guards on the source's "
                        f"{', '.join(sorted(kinds))}; set driving.resident=0")
        return None

    def _width_problem(self, algorithm: Any) -> str | None:
        # no effect without a priority key or without local iteration (nothing to
        # order), so not refused there: the sampler and the tuner draw it freely
        held = self.held_params(algorithm).get("width_scale")
        if held is not None and float(self.options["width_scale"]) != held:
            return (f"{getattr(algorithm, 'label', algorithm.name)} fixes its bucket width "
                    f"at {algorithm.priority_width:g} key units; leave driving.width_scale "
                    f"at 1 (got {float(self.options['width_scale']):g})")
        return None

    @classmethod
    def held_params(cls, algorithm):
        # a formulation that fixes its bucket width orders the passes by it
        return {} if getattr(algorithm, "priority_width", None) is None \
            else {"width_scale": 1.0}

    def pushes_only(self) -> bool:
        return True

    @staticmethod
    def _base_problem(algorithm: Any) -> str | None:
        label = getattr(algorithm, "label", algorithm.name)
        if algorithm.edge is None or algorithm.node is not None:
            return (f"spatial applies the edge operator of whole partitions and no node "
                    f"operator; {label} has {'none' if algorithm.edge is None else 'one'}")
        if algorithm.edge.raw is None and any(
                getattr(s, "at", None) is not None for s in algorithm.edge.statements):
            return (f"spatial activates partitions of e.dst, and {label} reduces through "
                    ".at(); use data or topology driving")
        if algorithm.converge_below is not None or algorithm.step_totals:
            return f"{label} stops on a step total, which spatial steps do not compute"
        return None

    def shared_bytes(self, spec, config):
        # two node bitmaps, two pass queues of 2-byte offsets, three counters and three
        # lowest buckets, a word per warp of active partitions, and the staged fields
        # where the operator is staged
        block = int(config.get("block_size", 256)) if config is not None else 1024
        staged = STAGE_BYTES if spec is not None and staged_fields(spec) else 0
        per = self.resident()
        if per and staged:  # rows and columns, 16 bits each, and a mark word per 32 nodes
            return 2 * (per * block + 1) + 2 * RESIDENT_EDGES + per * block // 8 + staged
        total = 2 * 4 * (MAX_PARTITION // 32) + 2 * 2 * MAX_PARTITION + 24 + 4 * (block // 32)
        return total + staged

    def size(self) -> int:
        """Nodes per partition."""
        return int(self.options["partition_size"])

    def resident(self) -> int:
        """Nodes a thread owns in a resident partition (0: not resident). The ring
        visits partitions resident only, so there ``resident=0`` stands for 4.
        """
        return int(self.options["resident"]) or (4 if self.ring() else 0)

    def ring(self) -> bool:
        """Whether partitions come from a shared ring, with no steps."""
        return self.options["schedule"] == "ring"

    def ring_capacity(self, n_nodes: int) -> int:
        """Ring slots for a graph of ``n_nodes`` nodes."""
        return 2 * -(-n_nodes // self.size()) + RING_SLACK

    def local_width(self, graph, priority_width):
        if int(self.options["local_iterations"]) == 0:
            return None
        if priority_width is not None:
            return float(priority_width)
        return float(self.options["width_scale"]) * default_width(graph)

    def runtime_args(self, graph, config):
        # inv_width: read only by algorithms with a priority key (GS_SPATIAL_ORDER)
        width = None if graph is None else self.local_width(graph, None)
        n = 0 if graph is None else graph.n_nodes
        return {"partition_size": ("long long", self.size()),
                "local_iterations": ("int", int(self.options["local_iterations"])),
                "inv_width": ("float", 1.0 if not width else 1.0 / width),
                "ring_capacity": ("long long", self.ring_capacity(n))}

    def defines(self) -> dict[str, str]:
        return {"GS_SPATIAL_RESIDENT": str(self.resident()),
                "GS_SPATIAL_RING": "1" if self.ring() else "0"}

    def buffers(self, spec, graph, config):
        n = 0 if graph is None else graph.n_nodes
        words = (-(-n // self.size()) + 31) // 32
        out = [Buffer("parts", "unsigned", 2 * max(words, 1), zero=True)]
        parts = max(-(-n // self.size()), 1)
        if self.resident():  # each step's active partitions (two halves)
            out.append(Buffer("list", "int", 2 * parts))
        if self.ring():  # emptied by every run that ends; zeroed all the same
            out += [Buffer("ring", "unsigned", self.ring_capacity(n), zero=True),
                    Buffer("state", "unsigned", parts, zero=True),
                    Buffer("ring_ctr", "unsigned", 96, zero=True)]
        if spec is not None and staged_fields(spec):
            # the nodes marked since their partition last ran, two halves by step parity
            # (GS_SPATIAL_DIRTY: the first pass of an order-free operator reads only them)
            out.append(Buffer("dirty", "unsigned", 2 * max((n + 31) // 32, 1), zero=True))
        return out

    def phases(self, spec, config):
        return [Phase("spatial_seed", 5, items="active", modes=("spatial",)),
                Phase("spatial_run", 20, items="nodes", modes=("spatial",))]

    # ---- CPU engine
    def initial_mode(self, n_active, n_nodes):
        return "spatial"

    def next_mode(self, mode, n_next, n_nodes):
        return "spatial"

    def items(self, nodes, n_nodes):
        # with local iteration (an order-free operator, which check() ensures) the first
        # pass takes the activated nodes: the others have not changed since their edges
        # were applied, so whole partitions would reach the same values in the same steps
        if nodes.size == 0 or int(self.options["local_iterations"]) > 0:
            return nodes
        size = self.size()
        parts = np.unique(nodes // size).astype(np.int64)
        lo = parts * size
        hi = np.minimum(lo + size, n_nodes)
        count = hi - lo
        starts = np.repeat(lo - (np.cumsum(count) - count), count)
        return (np.arange(int(count.sum()), dtype=np.int64) + starts).astype(np.int32)

    def local_rounds(self, graph, mode):
        rounds = int(self.options["local_iterations"])
        return (self.size(), rounds) if rounds > 0 else None


@hookimpl
def gswitch_strategies():
    return [SpatialDriving]
