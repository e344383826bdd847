"""Ahead-of-time compilation: ``gswitch compile``.

A first GPU run in a fresh process compiles its CUDA module (NVRTC, about a second and
a half) unless CuPy's kernel cache (``CUPY_CACHE_DIR``, ``~/.cupy/kernel_cache`` by
default) already holds it. The module of a run depends only on the algorithm's
formulation, the configuration and whether the graph carries weights the operator
reads (:func:`gswitch.codegen.generate_source`), so the modules a machine will need
without tuning are known in advance: the default configuration of every registered
algorithm and each entry of the shipped selector's portfolio. ``gswitch compile
--portfolio`` builds them into the cache; a later first run then finds its module there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .algorithm import AlgorithmSpec
from .config import Config
from .errors import InvalidInput

__all__ = ["Module", "planned_modules", "compile_modules", "warm_engine"]


@dataclass(frozen=True)
class Module:
    """One CUDA module a run would compile.

    Attributes
    ----------
    label : str
        ``algorithm[variant]`` (and ``:stage`` for a stage of a staged formulation),
        the origin (``default`` or ``portfolio #i``) and ``weighted`` where it applies.
    spec : AlgorithmSpec
        The formulation (or stage) the module runs.
    config : Config
        Its configuration.
    weighted : bool
        Whether the graph carries weights that the operator reads.
    """

    label: str
    spec: AlgorithmSpec
    config: Config
    weighted: bool


def _configs(name: str, portfolio: bool, model_path: Any) -> list[tuple[str, dict]]:
    """``(origin, values)`` of the configurations a run of ``name`` may take untuned."""
    out: list[tuple[str, dict]] = [("default", {})]
    if portfolio:
        from .selector import load_model

        model = load_model(model_path)
        entry = (model or {}).get("algorithms", {}).get(name)
        for i, values in enumerate((entry or {}).get("portfolio", [])):
            out.append((f"portfolio #{i}", dict(values)))
    return out


def planned_modules(algorithms: Iterable[str] | None = None, *, portfolio: bool = True,
                    model_path: Any = None) -> list[Module]:
    """Every distinct module a GPU run of ``algorithms`` (default: every registered one)
    compiles with the default configuration or, with ``portfolio``, a selector pick.

    Parameters
    ----------
    algorithms : iterable of str, optional
        Algorithm names; an unknown one raises :class:`~gswitch.errors.InvalidInput`
        naming the registered ones.
    portfolio : bool
        Include the selector model's portfolio entries.
    model_path : str or Path, optional
        Selector model file (default: the shipped one).

    Returns
    -------
    list of Module
        One per distinct generated source, in algorithm order.
    """
    from .codegen import generate_source, reads_weights
    from .plugins import get_registry
    from .runner import _spec, check_combination, with_variant_defaults
    from .staging import stage_config

    reg = get_registry()
    names = list(reg.algorithms) if algorithms is None else list(algorithms)
    for name in names:
        if name not in reg.algorithms:
            raise InvalidInput(f"unknown algorithm {name!r}; registered: "
                               f"{', '.join(sorted(reg.algorithms))}")
    seen: set[str] = set()
    out: list[Module] = []
    for name in names:
        for origin, values in _configs(name, portfolio, model_path):
            chosen = _spec(name, Config.shared(values), values, "gpu")
            forms = [chosen]
            if chosen.default_if is not None:  # the formulation other graphs run untuned
                forms += [v for v in reg.variants[name].values()
                          if v is not chosen and "gpu" in v.backends][:1]
            parts = []
            for spec in forms:
                config = with_variant_defaults(spec, values, "gpu")
                if check_combination(spec, None, config, "gpu"):
                    continue  # a stale portfolio entry: the run falls back to the default
                if spec.direct is not None:
                    continue  # array code compiles its own kernels (warm_engine runs it)
                parts += [(f"{spec.label}:{st.stage_name}", st, stage_config(st, config))
                          for st in spec.stages if isinstance(st, AlgorithmSpec)] \
                    if spec.stages else [(spec.label, spec, config)]
            for label, part, cfg in parts:
                for weighted in (False, True) if reads_weights(part) else (False,):
                    key = generate_source(part, cfg, weighted).key
                    if key in seen:
                        continue
                    seen.add(key)
                    tag = f"{label} ({origin}{', weighted' if weighted else ''})"
                    out.append(Module(tag, part, cfg, weighted))
    return out


def compile_modules(modules: list[Module],
                    progress: Callable[[int, Module], None] | None = None) -> list[float]:
    """Compile ``modules`` into CuPy's kernel cache on this machine's GPU.

    Parameters
    ----------
    modules : list of Module
        What :func:`planned_modules` returned.
    progress : callable, optional
        Called with ``(index, module)`` before each compilation.

    Returns
    -------
    list of float
        Seconds each compilation took (near zero for one already in the cache).

    Raises
    ------
    InvalidInput
        Where CuPy or a GPU is missing: the modules are built for this GPU.
    """
    import time

    from .codegen import generate_source
    from .runner import gpu_available

    if not gpu_available():
        raise InvalidInput("gswitch compile builds CUDA modules for this machine's GPU into "
                           "CuPy's kernel cache, and needs CuPy and an NVIDIA GPU; none is "
                           "usable here (pip install 'gswitch[cuda12]', or list the modules "
                           "with --list)")
    from .engine.gpu import GpuEngine

    engine = GpuEngine.instance()
    times = []
    for i, m in enumerate(modules):
        if progress is not None:
            progress(i, m)
        t = time.perf_counter()
        engine.module(generate_source(m.spec, m.config, m.weighted))
        times.append(time.perf_counter() - t)
    return times


#: Algorithms that warm_engine also runs on a graph large enough for the engine's
#: large-graph paths (fills and ``finalize`` on the device, results page-locked).
_MEDIUM_ALGORITHMS = ("bfs", "sssp", "cc", "pagerank")


def warm_engine(algorithms: Iterable[str], portfolio: bool = True) -> None:
    """Run each algorithm on a four-node graph, so the CuPy kernels the engine itself
    uses around the modules (fills, comparisons, copies, the selector's graph features;
    compiled by CuPy on first use) are in the cache too: with its default configuration,
    through the selector (no configuration) and, with ``portfolio``, with each entry of
    the selector's portfolio (each takes its own paths: a bitmap, a pull, a persistent
    grid). An entry that is not valid on the four-node graph is skipped. The classic
    algorithms (:data:`_MEDIUM_ALGORITHMS`) also run on a graph of 2^18 nodes, whose
    fields take the engine's large-graph paths, and the device's build of a reverse
    graph (a pull on a large directed graph) runs once.
    """
    from .engine.gpu import GpuEngine
    from .errors import GswitchError
    from .generators import rmat
    from .graph import Graph
    from .plugins import get_registry
    from .runner import run

    reg = get_registry()
    tiny = Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 0], [1.0, 2.0, 1.0, 3.0])
    engine = GpuEngine.instance()
    with engine.stream:
        engine.resident(tiny).reverse_arrays(on_device=True)
    engine.stream.synchronize()
    medium = rmat(18, 4, seed=1, weighted=True)
    for name in algorithms:
        spec = reg.algorithm(name)
        kwargs: dict[str, Any] = {"source": 0} if spec.start.kind == "source" else {}
        # a run cannot do without these (msbfs's sources): node 0 of either graph
        kwargs.update({key: [0] for key, (_f, given) in spec.inputs.items() if given.required})
        configs: list[Any] = [None]
        configs += [values for _, values in _configs(name, portfolio, None)[1:]]
        graphs = (tiny, medium) if name in _MEDIUM_ALGORITHMS else (tiny,)
        for base in graphs:
            for graph in (base, base.with_weights(None)):
                for arrays in ("numpy", "cupy"):
                    run(name, graph, backend="gpu", config="default", arrays=arrays,
                        **kwargs)
                for config in configs:
                    try:  # a fresh graph each time: features and plans are kept per graph
                        fresh = Graph(graph.indptr, graph.indices, graph.weights,
                                      directed=graph.directed, validate=False)
                        run(name, fresh, backend="gpu", config=config, **kwargs)
                    except GswitchError:
                        continue
