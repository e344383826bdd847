"""A driving strategy written as a third-party plugin would be: its own step modes.

The core names no driving mode; this plugin declares two of its own (``queue``: the
worklist's items, and ``sweep``: every node, pushing what it activates) and alternates
between them. The test-suites register it next to the built-ins (see
:data:`PLUGIN_MODULE`), run it on both engines and compile its device code, which shows
that a driving mode needs no change to the core.
"""

from __future__ import annotations

from gswitch import hookimpl
from gswitch.strategy import DrivingStrategy, StepMode

__all__ = ["AlternatingDriving", "PLUGIN_MODULE"]

#: Module name to register as a plugin.
PLUGIN_MODULE = "gswitch.testing.user_strategies"

_CUDA = """
// Alternating: a sweep of every node after each worklist step; done after a step that
// activated nothing.
__device__ __forceinline__ int gs_decide(int mode, unsigned count, const unsigned* slot,
                                         int* done) {
  (void)slot;
  *done = count == 0u;
  return gs_mode_id(mode) == GS_MODE_QUEUE ? GS_MODE_SWEEP : GS_MODE_QUEUE;
}
"""


class AlternatingDriving(DrivingStrategy):
    """Alternating: a worklist step, then a sweep over every node that pushes what it
    activates, and so on; a test plugin for open driving modes.

    The sweep is the transition step of Nasre, Burtscher & Pingali's hybrid (IPDPS 2013,
    §V-A) used every other step: it wins nowhere, it shows that a plugin can add step
    modes. A sweep re-runs nodes nobody activated, so the algorithm's reductions must be
    monotone (re-offering a value changes nothing).
    """

    name = "alternating"
    modes = (StepMode("queue", items="worklist", pushes=True),
             StepMode("sweep", items="nodes", pushes=True))

    @classmethod
    def cuda_source(cls) -> str:
        return f"// ---- driving/{cls.name} (test plugin)\n{_CUDA}"

    def check(self, algorithm, graph, config, backend):
        bad = [k.name for k in algorithm.edge.activating if not k.monotone]
        if bad or algorithm.edge.raw is not None or algorithm.node is not None:
            return (f"alternating sweeps re-run nodes nobody activated; {algorithm.label} "
                    "needs operators of monotone reductions only")
        return None

    def initial_mode(self, n_active, n_nodes):
        return "queue"

    def next_mode(self, mode, n_next, n_nodes):
        return "sweep" if mode == "queue" and n_next else "queue"


@hookimpl
def gswitch_strategies():
    return [AlternatingDriving]
