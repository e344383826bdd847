"""The GPU engine: composed CUDA modules run through CuPy.

Graph arrays are uploaded once per graph (kept while the same :class:`Graph` object is
used), node fields are allocated per run, and the module for an (algorithm, config,
weighted) triple is compiled once per process (plus CuPy's on-disk cache, keyed by
the full source text, compile options, architecture and NVRTC version). The host
fills the ``gs`` state struct in device memory, then drives either the host loop
(one launch per phase per step, a small control-block read-back each step) or the
persistent kernel (one cooperative launch, relaunched only after a worklist overflow).
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
import weakref
from typing import Any

import numpy as np

from ..algorithm import AlgorithmSpec
from ..codegen import GeneratedModule, generate_source, numbered, state_dtype
from ..config import Config
from ..errors import DeviceError, InvalidConfig, KernelCompileError
from ..graph import Graph
from ..result import Result

__all__ = ["GpuEngine", "estimate_bytes"]

_MODES = {"data": 0, "topology": 1, "transition": 2}
_MODE_NAMES = {v: k for k, v in _MODES.items()}
_CTL_WORDS = 20
_SLOT = lambda it: (it % 3) * 4  # noqa: E731  (mirrors GS_CTL_SLOT)
_TRACE_CAP = 1 << 16


def estimate_bytes(graph: Graph, spec: AlgorithmSpec, wl_capacity: int) -> int:
    """Device bytes a run needs: graph arrays, fields, worklists, spill flags."""
    n, m = graph.n_nodes, graph.n_edges
    total = 4 * (n + 1) + 4 * m + (4 * m if graph.weighted else 0) + 4 * n
    total += sum(np.dtype(f.dtype).itemsize * n for f in spec.fields.values())
    total += 2 * 4 * wl_capacity + n + 8 * _TRACE_CAP
    return total


class _DeviceGraph:
    def __init__(self, cp: Any, graph: Graph) -> None:
        self.row = cp.asarray(graph.indptr.astype(np.int32))
        self.col = cp.asarray(graph.indices)
        self.weights = cp.asarray(graph.weights) if graph.weights is not None else None
        self.in_degree = cp.asarray(graph.in_degree.astype(np.int32))


class GpuEngine:
    """Runs algorithm specs on the current CUDA device through CuPy."""

    name = "gpu"
    _instance: GpuEngine | None = None

    def __init__(self) -> None:
        try:
            import cupy as cp
        except ImportError as exc:  # pragma: no cover - depends on the machine
            raise DeviceError(
                "the gpu backend needs CuPy: pip install 'gswitch[cuda12]' or 'gswitch[cuda13]'"
            ) from exc
        self.cp = cp
        self._modules: dict[str, Any] = {}
        self._graphs: weakref.WeakKeyDictionary[Graph, _DeviceGraph] = weakref.WeakKeyDictionary()
        dev = cp.cuda.Device()
        self.n_sm = int(dev.attributes["MultiProcessorCount"])
        self.arch = "".join(map(str, dev.compute_capability)) if isinstance(
            dev.compute_capability, tuple) else str(dev.compute_capability)
        self.device_name = cp.cuda.runtime.getDeviceProperties(dev.id)["name"].decode()

    @classmethod
    def instance(cls) -> GpuEngine:
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    # ------------------------------------------------------------------ compilation
    def module(self, gen: GeneratedModule) -> Any:
        """Compiled CuPy ``RawModule`` for a generated source (memoised by source hash)."""
        mod = self._modules.get(gen.key)
        if mod is not None:
            return mod
        cp = self.cp
        options = ("-std=c++17",)
        try:
            mod = cp.RawModule(code=gen.source, options=options,
                               enable_cooperative_groups=gen.cooperative)
            for k in gen.kernels:
                mod.get_function(k)  # forces compilation now, not at first launch
        except Exception as exc:
            msg = str(exc).strip().splitlines()
            first = next((ln for ln in msg if "error" in ln), msg[0] if msg else repr(exc))
            detail = f"CUDA compile failed for {gen.description}: {first}"
            if os.environ.get("GSWITCH_DUMP_CUDA_SOURCE_ON_ERROR") == "1":
                print(numbered(gen.source), file=sys.stderr)
                print(str(exc), file=sys.stderr)
            else:
                detail += " (set GSWITCH_DUMP_CUDA_SOURCE_ON_ERROR=1 to print the source)"
            raise KernelCompileError(detail) from None
        self._modules[gen.key] = mod
        return mod

    def device_graph(self, graph: Graph) -> _DeviceGraph:
        dg = self._graphs.get(graph)
        if dg is None:
            dg = _DeviceGraph(self.cp, graph)
            self._graphs[graph] = dg
        return dg

    def persistent_grid(self, kernel: Any, block: int, config: Config) -> int:
        """Blocks for a cooperative launch: all must be co-resident, else refuse."""
        cp = self.cp
        try:
            per_sm = int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                kernel.kernel.ptr, block, 0))
        except Exception as exc:  # pragma: no cover - CuPy API drift
            raise DeviceError(f"cannot query occupancy for the persistent kernel: {exc}") from None
        if per_sm < 1:
            raise InvalidConfig(
                f"launch=persistent cannot run: not even one block of {block} threads fits on "
                f"a multiprocessor ({kernel.num_regs} registers per thread); lower block_size "
                "or use launch=host_loop"
            )
        cap = int(config.get("launch.blocks_per_sm", 0) or 0)
        if cap:
            per_sm = min(per_sm, cap)
        return per_sm * self.n_sm

    # ------------------------------------------------------------------ run
    def run(self, spec: AlgorithmSpec, graph: Graph, params: dict[str, Any],
            sources: np.ndarray | None, config: Config, max_iterations: int,
            progress: Any = None) -> Result:
        cp = self.cp
        t_start = time.perf_counter()
        n, m = graph.n_nodes, graph.n_edges
        if m >= 2**31:
            raise DeviceError(
                f"graph has {m} edges; the gpu backend supports fewer than 2^31 edges until "
                "64-bit edge offsets are supported end to end. Use --backend cpu"
            )
        fields0 = spec.initial_fields(n, params, sources)
        start = np.arange(n, dtype=np.int32) if spec.start.kind == "all" else \
            np.unique(sources).astype(np.int32)
        stats: dict[str, Any] = {"active": [], "modes": [], "edges_processed": 0,
                                 "device": self.device_name, "overflows": 0}
        if n == 0 or start.size == 0:
            stats.update(iterations=0, converged=True, time_s=time.perf_counter() - t_start,
                         kernel_time_s=0.0, compile_time_s=0.0)
            return Result(spec.name, fields0, stats, backend="gpu", config=config)
        cap = int(config["worklist_capacity"]) or max(1024, n, int(start.size))
        cap = max(cap, 1)
        need = estimate_bytes(graph, spec, cap)
        free, _total = cp.cuda.runtime.memGetInfo()
        if need > free:
            raise DeviceError(
                f"graph needs about {need / 2**30:.2f} GiB on the GPU but only "
                f"{free / 2**30:.2f} GiB are free; use a smaller graph or --backend cpu"
            )
        t_c = time.perf_counter()
        gen = generate_source(spec, config, weighted=graph.weighted)
        mod = self.module(gen)
        stats["compile_time_s"] = time.perf_counter() - t_c
        dg = self.device_graph(graph)
        fields = {k: cp.asarray(v) for k, v in fields0.items()}
        wl = [cp.zeros(max(cap, int(start.size)), dtype=np.int32), cp.zeros(cap, dtype=np.int32)]
        wl[0][: start.size] = cp.asarray(start)
        ctl = cp.zeros(_CTL_WORDS, dtype=np.uint32)
        ctl[_SLOT(2)] = start.size  # slot of "step -1" holds the first worklist size
        spill = cp.zeros(n, dtype=np.uint8)
        trace_active = cp.zeros(_TRACE_CAP, dtype=np.int32)
        trace_mode = cp.zeros(_TRACE_CAP, dtype=np.int32)

        state = np.zeros(1, dtype=state_dtype(spec))

        def write_state() -> None:
            st = state[0]
            st["row"] = dg.row.data.ptr
            st["col"] = dg.col.data.ptr
            st["weights"] = dg.weights.data.ptr if dg.weights is not None else 0
            st["in_degree"] = dg.in_degree.data.ptr
            st["wl0"], st["wl1"] = wl[0].data.ptr, wl[1].data.ptr
            st["wl_cap0"], st["wl_cap1"] = wl[0].size, wl[1].size
            st["ctl"] = ctl.data.ptr
            st["spill"] = spill.data.ptr
            st["trace_active"] = trace_active.data.ptr
            st["trace_mode"] = trace_mode.data.ptr
            st["n"], st["m"], st["trace_cap"] = n, m, _TRACE_CAP
            for name, arr in fields.items():
                st[f"F_{name}"] = arr.data.ptr
            for name in spec.params:
                st[f"P_{name}"] = params[name]
            mod.get_global("gs").copy_from_host(state.ctypes.data_as(ctypes.c_void_p),
                                                state.nbytes)

        write_state()
        driving = config.strategy("driving")
        mode = _MODES[driving.initial_mode(int(start.size), n)]
        threshold = np.float32(config.get("driving.threshold", 0.0))
        block = gen.block_size

        def grow(it: int) -> None:
            """After step ``it`` overflowed: enlarge its output worklist, compact the spill."""
            h = ctl.get()
            requested = int(h[_SLOT(it)])
            par = (it + 1) & 1
            old = wl[par]
            new = cp.zeros(max(2 * old.size, requested + 1024), dtype=np.int32)
            new[: old.size] = old
            wl[par] = new
            ctl[_SLOT(it)] = old.size
            ctl[_SLOT(it) + 2] = 0
            write_state()
            grid = min(-(-n // block), self.n_sm * 32)
            mod.get_function("gs_compact_spill")((grid,), (block,), (np.int32(it),))
            stats["overflows"] += 1

        ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
        ev0.record()
        it = 0
        converged = False
        if gen.cooperative:
            kern = mod.get_function("gs_persistent_kernel")
            grid = self.persistent_grid(kern, block, config)
            stats["persistent_grid"] = grid
            while True:
                kern((grid,), (block,), (np.int32(it), np.int32(mode),
                                         np.int32(max_iterations), threshold))
                h = ctl.get()
                new_it = int(h[15])
                mode = int(h[13])
                overflow = int(h[_SLOT(new_it - 1) + 2]) if new_it > it else 0
                it = new_it
                if progress is not None:
                    progress(it, int(h[_SLOT(it - 1)]))
                if overflow:
                    # an overflowing step always pushed something, so it never ends a run
                    grow(it - 1)
                    if it < max_iterations:
                        continue
                converged = bool(h[14])
                break
        else:
            node_k = mod.get_function("gs_node_kernel")
            edge_k = mod.get_function("gs_edge_kernel")
            tpi = gen.threads_per_item
            max_grid = self.n_sm * (2048 // block) * 8
            n_items = int(start.size) if mode == 0 else n
            while it < max_iterations:
                if spec.node is not None:
                    g = max(1, min(-(-n_items // block), max_grid))
                    node_k((g,), (block,), (np.int32(it), np.int32(mode)))
                g = max(1, min(-(-(n_items * tpi) // block), max_grid))
                edge_k((g,), (block,), (np.int32(it), np.int32(mode), threshold))
                h = ctl.get()
                if int(h[_SLOT(it) + 2]):
                    grow(it)
                    h = ctl.get()
                done, next_mode = bool(h[14]), int(h[13])
                count = int(h[_SLOT(it) + (1 if mode == 1 else 0)])
                it += 1
                if progress is not None:
                    progress(it, count)
                if done:
                    converged = True
                    break
                mode = next_mode
                n_items = int(h[_SLOT(it - 1)]) if mode == 0 else n
        ev1.record()
        ev1.synchronize()
        h = ctl.get()
        stats["edges_processed"] = int(h[16]) | (int(h[17]) << 32)
        steps = min(it, _TRACE_CAP)
        stats["active"] = trace_active[:steps].get().tolist()
        stats["modes"] = [_MODE_NAMES[x] for x in trace_mode[:steps].get().tolist()]
        stats["iterations"] = it
        stats["converged"] = converged
        stats["kernel_time_s"] = cp.cuda.get_elapsed_time(ev0, ev1) / 1000.0
        out = {k: v.get() for k, v in fields.items()}
        stats["time_s"] = time.perf_counter() - t_start
        return Result(spec.name, out, stats, backend="gpu", config=config)
