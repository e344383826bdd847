"""Host side shared by the strategies that may pull: phases, frontier bitmap, checks."""

from __future__ import annotations

from typing import ClassVar

from gswitch.codegen import pull_form
from gswitch.strategy import Buffer, Categorical, DirectionStrategy, Phase


class PullCapable(DirectionStrategy):
    """Base of directions that may pull (not registered itself)."""

    may_pull = True
    params: ClassVar[dict] = {"group": Categorical((1, 4, 8, 32), 1, compile_time=True)}

    def defines(self) -> dict[str, str]:
        return {"GS_PULL_GROUP": str(int(self.options["group"]))}

    def check(self, algorithm, graph, config, backend):
        if backend != "gpu":
            return None  # the CPU engine pulls any operator
        reason = pull_form(algorithm)
        if reason:
            return f"{algorithm.name} cannot pull: {reason}; use direction=push"
        return None

    def _membership(self, config) -> bool:
        return bool(config is not None and config.strategy("worklist").membership)

    def buffers(self, spec, graph, config):
        if self._membership(config):
            return []
        n = 0 if graph is None else graph.n_nodes
        return [Buffer("front", "unsigned", (n + 31) // 32, zero=True)]

    def phases(self, spec, config):
        group = int(self.options["group"])
        out = [Phase("pull", 20, items="nodes", direction="pull", threads_per_item=group)]
        if not self._membership(config):
            out += [Phase("pull_mark", 15, modes=("data",), direction="pull"),
                    Phase("pull_unmark", 28, modes=("data",), direction="pull")]
        return out
