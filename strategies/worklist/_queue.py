"""Shared host mechanics of the queue worklists: two queues, a spill, growth, dedup."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gswitch.strategy import Buffer, Categorical, WorklistStrategy


class QueueWorklist(WorklistStrategy):
    """Base of the queue worklists (not registered itself).

    Storage: two queues used in turn, their capacities as runtime arguments, a spill
    flag per node for pushes past the capacity and, with ``dedup``, a per-node stamp
    that queues a node at most once per step (a node pushed twice in one step would
    otherwise run its node operator twice, concurrently).
    """

    params = {"dedup": Categorical((False, True), False, compile_time=True)}
    cuda_files: ClassVar[tuple[str, ...]] = ("queue.cuh",)
    kernels: ClassVar[tuple[str, ...]] = ("gs_wl_compact_spill",)

    def defines(self) -> dict[str, str]:
        return {"GS_WL_DEDUP": "1" if self.options.get("dedup") else "0"}

    def check(self, algorithm, graph, config, backend):
        if backend != "gpu" or self.options.get("dedup") or algorithm is None:
            return None
        field = getattr(algorithm, "counted_activation", None)
        modes = config.strategy("driving").modes if config is not None else ()
        if field is None or not any(m.items == "worklist" and m.pushes for m in modes):
            return None
        return (f"{algorithm.label}'s edge operator adds into {field} and activates on "
                f"every message, so {self.name} without dedup would queue a node once per "
                "message and run it as often in one step; set worklist.dedup=true or use "
                "worklist=bitmap")

    @staticmethod
    def capacity(graph: Any, config: Any, start: int = 0) -> int:
        """Initial slots per queue: the config's worklist_capacity, else the node count."""
        n = 0 if graph is None else graph.n_nodes
        cap = int(config["worklist_capacity"]) if config is not None else 0
        return max(1, cap or max(1024, n), start)

    def bounded(self, graph: Any, config: Any, algorithm: Any = None) -> bool:
        # n slots suffice when a step queues each node at most once: with dedup, or when
        # every step is data-driven and the algorithm is level-synchronous (first hit
        # final: all pushes of a step offer the same value, so the reduction that
        # activates a node succeeds for one of them only)
        n = 0 if graph is None else graph.n_nodes
        cap = int(config["worklist_capacity"]) if config is not None else 0
        if cap and cap < n:
            return False
        if self.options.get("dedup"):
            return True
        driving = config.strategy("driving") if config is not None else None
        return bool(algorithm is not None and algorithm.first_hit_final
                    and driving is not None and driving.worklist_only())

    def buffers(self, spec, graph, config):
        n = 0 if graph is None else graph.n_nodes
        cap = self.capacity(graph, config)
        out = [Buffer("q0", "gs_vid", cap), Buffer("q1", "gs_vid", cap),
               Buffer("spill", "unsigned char", n)]  # compaction leaves it clear
        if self.options.get("dedup"):
            out.append(Buffer("stamp", "int", n, zero=True))
        return out

    def runtime_args(self, graph, config):
        cap = self.capacity(graph, config)
        return {"cap0": ("long long", cap), "cap1": ("long long", cap)}

    def seed(self, ctx: Any, start: Any, all_nodes: bool) -> None:
        need = int(start.size)
        if need > ctx.arg("worklist", "cap0"):
            ctx.replace_buffer("worklist", "q0", ctx.cp.zeros(need, dtype=np.int32))
            ctx.set_arg("worklist", "cap0", need)
        ctx.copy(ctx.buffer("worklist", "q0"), start, need)

    def grow(self, ctx: Any, it: int) -> None:
        """Enlarge the output queue of step ``it`` to what was asked, then compact."""
        requested = int(ctx.control()[ctx.slot(it)])
        par = (it + 1) & 1
        name, cap_name = f"q{par}", f"cap{par}"
        old = ctx.buffer("worklist", name)
        landed = int(ctx.arg("worklist", cap_name))  # a pooled array may be longer
        new = ctx.cp.zeros(max(2 * landed, requested + 1024), dtype=np.int32)
        new[:landed] = old[:landed]
        ctx.replace_buffer("worklist", name, new)
        ctx.set_arg("worklist", cap_name, int(new.size))
        ctx.set_control(ctx.slot(it), landed)          # the slots that did land
        ctx.set_control(ctx.slot(it) + 2, 0)           # overflow handled
        ctx.launch_kernel("gs_wl_compact_spill", ctx.nodes_grid(), (np.int32(it),))
