"""Host side shared by the strategies that may pull: phases, frontier bitmap, checks."""

from __future__ import annotations

from typing import ClassVar

from gswitch import expr as ex
from gswitch.lowering import pull_form
from gswitch.strategy import Buffer, Categorical, DirectionStrategy, IntRange, Phase


def _value_reads_dst(spec) -> bool:
    """Whether the value an in-edge offers, or a guard before it, reads its destination
    (``e.dst``).
    """
    read = [s.value for s in spec.edge.statements]  # the guards, then the reduction
    return any(getattr(e, "node", None) == "dst" for v in read for e in ex.walk(v))


class PullCapable(DirectionStrategy):
    """Base of directions that may pull (not registered itself).

    ``group`` lanes gather the in-edges of one node. With ``gather=edges``, steps that
    sweep every node and only count activations (topology) instead cut the reverse CSR
    into tiles of ``block_size * ipt`` merge-path items (row ends and in-edges, Merrill &
    Garland, SC 2016), so every thread gets the same share of edges whatever the
    degrees; other steps keep the node gather.
    """

    may_pull = True
    params: ClassVar[dict] = {
        "group": Categorical((1, 4, 8, 32), 1, compile_time=True),
        "gather": Categorical(("nodes", "edges"), "edges", compile_time=True),
        "ipt": IntRange(3, 11, 5, step=2, compile_time=True),
    }

    def defines(self) -> dict[str, str]:
        return {"GS_PULL_GROUP": str(int(self.options["group"])),
                "GS_PULL_EDGES": "1" if self.options["gather"] == "edges" else "0",
                "GS_PULL_IPT": str(int(self.options["ipt"]))}

    def check(self, algorithm, graph, config, backend):
        if backend != "gpu":
            return None  # the CPU engine pulls any operator
        reason = pull_form(algorithm)
        if reason:
            return f"{algorithm.name} cannot pull: {reason}; use direction=push"
        return None

    def _membership(self, config) -> bool:
        return bool(config is not None and config.strategy("worklist").membership)

    def _edge_modes(self, spec, config) -> tuple[str, ...]:
        """Step modes pulled edge-balanced: with ``gather=edges``, those that sweep every
        node and only count activations, when the operator's value reads no ``e.dst``.
        """
        if self.options["gather"] != "edges" or spec is None or config is None:
            return ()
        if pull_form(spec) is not None or _value_reads_dst(spec):
            return ()
        return tuple(m.name for m in config.strategy("driving").modes
                     if m.items == "nodes" and not m.pushes and m.operators)

    def shared_bytes(self, spec, config):
        if spec is None or config is None or pull_form(spec) is not None:
            return 0  # no pull phase in the module
        b = int(config["block_size"])
        # the node gather: heavy-node slots, their count, per-warp partials (values of at
        # most 8 bytes)
        total = 4 * 64 + 4 + 12 * (b // 32)
        if self._edge_modes(spec, config):
            # a merge-path tile of values and row ends; pull_edges.cuh shrinks its items
            # per thread to fit min(96 * block_size, 40960) bytes
            item = 8 + 4
            budget = min(96 * b, 40960)
            total += min(b * int(self.options["ipt"]) * item, max(budget, b * item)) + 4
        return total

    def buffers(self, spec, graph, config):
        out = []
        if not self._membership(config):
            n = 0 if graph is None else graph.n_nodes
            out.append(Buffer("front", "unsigned", (n + 31) // 32, zero=True))
        if self.options["gather"] == "edges":
            # word 0: the tile size the starts hold; then a start per tile (the smallest
            # tile is one item a thread) and the end
            size = 1
            if graph is not None and self._edge_modes(spec, config):
                block = int(config["block_size"])
                size = -(-(graph.n_nodes + graph.n_edges) // block) + 2
            out.append(Buffer("tiles", "int", size))
        return out

    def phases(self, spec, config):
        group = int(self.options["group"])
        edges = self._edge_modes(spec, config)
        others = tuple(m.name for m in config.strategy("driving").modes
                       if m.name not in edges) if edges else ()
        out = []
        if not edges or others:
            out.append(Phase("pull", 20, items="nodes", modes=others, direction="pull",
                             threads_per_item=group, runs_in="operators"))
        if edges:
            # the split returns at once after its first step on a graph: a small grid;
            # the tiles follow the edges, not the nodes: as many blocks as may help
            out += [Phase("pull_split", 19, items="words", modes=edges, direction="pull",
                          runs_in="operators"),
                    Phase("pull_edges", 20, items="queued", modes=edges, direction="pull",
                          runs_in="operators")]
        if not self._membership(config):
            out += [Phase("pull_mark", 15, direction="pull", runs_in="frontier"),
                    Phase("pull_unmark", 28, direction="pull", runs_in="frontier")]
        return out
