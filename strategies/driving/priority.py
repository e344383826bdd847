"""Priority driving: near-far piles and delta-stepping buckets over an activation key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gswitch import hookimpl
from gswitch.strategy import Buffer, Categorical, DrivingStrategy, FloatRange, Phase, StepMode

from ._modes import DATA

#: The step that moves kept-back nodes of the next bucket into the worklist: it sweeps
#: the far set (a bitmap), runs no operator.
REFILL = StepMode("refill", items="nodes", pushes=True, operators=False)
#: Buckets are numbered in 22 bits of the control block's mode word.
MAX_BUCKET = (1 << 22) - 1
#: Lanes whose work one bucket should hold (Davidson et al.: a warp's worth per edge).
_WARP = 32


def default_width(graph: Any) -> float:
    """Bucket width from the graph: ``32 * mean weight / mean out-degree``.

    Davidson, Baxter, Garland & Owens (IPDPS 2014, §4.2) size the near pile so that a
    step has about a warp of work per active edge; a width of the mean weight times
    warp size over mean degree does that on their graphs. 1.0 for an empty graph.
    """
    n, m = graph.n_nodes, graph.n_edges
    if n == 0 or m == 0:
        return 1.0
    w = float(graph.mean_weight)
    if not np.isfinite(w) or w <= 0:
        w = 1.0
    return _WARP * w / (m / n)


@dataclass
class _HostState:
    """CPU engine: the far set and the current bucket of one run."""

    key: Any
    width: float
    near_far: bool
    pending: np.ndarray
    bucket: int = 0
    spare: list = field(default_factory=list)

    def buckets(self, nodes: np.ndarray) -> np.ndarray:
        k = np.asarray(self.key(nodes), dtype=np.float64) / self.width
        k = np.where(np.isnan(k), 0.0, k)
        return np.clip(np.floor(k), 0, MAX_BUCKET).astype(np.int64)


class PriorityDriving(DrivingStrategy):
    """Priority: process activations in order of the algorithm's priority key, a bucket
    of width ``delta`` at a time; nodes of later buckets wait in a far set.

    A data-driven step pushes an activated node only if its key falls in the current
    bucket (``key / delta <= b``); any other waits in a far bitmap. When a step pushes
    nothing, a *refill* step sweeps the far set and pushes the nodes of the next bucket.
    ``policy=near_far`` moves the threshold one width on (Davidson, Baxter, Garland &
    Owens, "Work-efficient parallel GPU methods for single-source shortest paths", IPDPS
    2014: the near and far piles) and jumps to the smallest waiting bucket when that one
    is empty; ``policy=buckets`` finds the smallest waiting bucket first, with one more
    sweep, and takes it (Meyer & Sanders, "Delta-stepping", J. Algorithms 2003). The
    width is ``width_scale`` times :func:`default_width` of the graph, a runtime
    argument: changing it never recompiles.

    Wins on weighted high-diameter graphs (road networks), where Bellman-Ford's frontier
    re-relaxes the same nodes many times; on low-diameter graphs the buckets are few and
    it costs the far sweeps. The result never depends on it, only the work does: every
    node kept back is pushed by a later refill, and the run ends only when the far set
    is empty. Needs an algorithm that declares ``priority=``.
    """

    name = "priority"
    params = {
        "policy": Categorical(("near_far", "buckets"), "near_far", compile_time=True),
        "width_scale": FloatRange(1.0 / 64, 64.0, 1.0, log=True),
    }
    cuda_files = ("priority.cuh",)
    modes = (DATA, REFILL)
    in_activation_order = False

    def check(self, algorithm, graph, config, backend):
        if algorithm.priority is None:
            return (f"driving priority needs an algorithm that declares a priority key "
                    f"(priority=...); {algorithm.label} declares none")
        held = self.held_params(algorithm).get("width_scale")
        if held is not None and self.options["width_scale"] != held:
            return (f"{algorithm.label} fixes its bucket width at {algorithm.priority_width:g} "
                    f"key units; leave driving.width_scale at 1 (got "
                    f"{self.options['width_scale']:g})")
        if algorithm.converge_below is not None:
            return (f"{algorithm.label} stops on a reduced total, which a step that only "
                    "refills the worklist does not compute; use another driving")
        return None

    @classmethod
    def held_params(cls, algorithm):
        # operators that read p.bucket as a key value need the formulation's own width
        return {} if algorithm.priority_width is None else {"width_scale": 1.0}

    def width(self, graph: Any) -> float:
        """Bucket width on ``graph``."""
        return float(self.options["width_scale"]) * default_width(graph)

    def defines(self) -> dict[str, str]:
        return {"GS_DRIVE_ADMIT": "1",
                "GS_PRIO_BUCKETS": "1" if self.options["policy"] == "buckets" else "0",
                # p.bucket: the mode word's bits 9 and up (priority.cuh)
                "GS_BUCKET(mode)": "((int)(((unsigned)(mode)) >> 9))"}

    def runtime_args(self, graph, config):
        inv = 1.0 if graph is None else 1.0 / self.width(graph)
        return {"inv_width": ("float", inv)}

    def buffers(self, spec, graph, config):
        n = 0 if graph is None else graph.n_nodes
        return [Buffer("far", "unsigned", (n + 31) // 32, zero=True)]

    def phases(self, spec, config):
        out = [Phase("priority_refill", 25, items="words", modes=("refill",))]
        if self.options["policy"] == "buckets":
            out.append(Phase("priority_min", 5, items="words", modes=("refill",)))
        return out

    # ---- CPU engine
    def begin(self, graph, config, key):
        width = key.width if key.width is not None else self.width(graph)
        return _HostState(key, width, self.options["policy"] == "near_far",
                          np.zeros(graph.n_nodes, dtype=bool))

    def bucket(self, state):
        return state.bucket

    def admit(self, state, nodes):
        if nodes.size == 0:
            return nodes
        near = state.buckets(nodes) <= state.bucket
        state.pending[nodes[~near]] = True
        return nodes[near]

    def next_mode(self, mode, n_next, n_nodes):
        return "data" if mode == "refill" or n_next else "refill"

    def refill(self, state, mode):
        waiting = np.flatnonzero(state.pending).astype(np.int32)
        if waiting.size == 0:
            return waiting, None
        b = state.buckets(waiting)
        step = state.bucket + 1 if state.near_far else state.bucket
        state.bucket = int(max(step, b.min()))
        take = waiting[b <= state.bucket]
        state.pending[take] = False
        return take, "data"


@hookimpl
def gswitch_strategies():
    return [PriorityDriving]
