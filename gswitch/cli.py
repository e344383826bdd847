"""The ``gswitch`` command line: ``run``, ``profile``, ``info``, ``convert``, ``strategies``,
``algorithms``.

Every problem with the input ends as one line on stderr and exit status 2 (``--debug``,
anywhere on the line, shows the traceback instead). Errors raised by the library inside a
command name command-line flags (``--source NODE``), not Python keywords.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import os
import re
import sys
import tempfile
import textwrap
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from ._hints import cli_names
from ._version import __version__
from .declare import Input
from .errors import GswitchError, InvalidConfig, InvalidInput

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors, like every other gswitch error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_debug(p: argparse.ArgumentParser) -> None:
    # main() takes --debug from anywhere on the line; listing it here puts it in each --help
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show the traceback on errors (accepted anywhere on the line)")


def _add_graph_args(p: argparse.ArgumentParser, positional: bool = True) -> None:
    if positional:
        p.add_argument("graph", nargs="?", help="graph file (.mtx, .txt/.el/.snap edge list, "
                       ".gr, .graph, .npz; .gz accepted)")
    p.add_argument("--generate", metavar="SPEC",
                   help="generate the graph instead, e.g. rmat:16, grid:64x64, road:256x256")
    p.add_argument("--format", dest="fmt", metavar="FORMAT",
                   help="file format when the extension does not say: mtx, edgelist, dimacs, "
                   "metis, npz")
    p.add_argument("--undirected", action="store_true",
                   help="treat every edge of the file as undirected (adds its reverse)")
    p.add_argument("--no-weights", action="store_true",
                   help="ignore the weights in the file")
    p.add_argument("--renumber", action="store_true",
                   help="edge lists: number the ids that occur 0..k-1 (for sparse or huge ids)")
    p.add_argument("--simple", action="store_true",
                   help="drop self loops and merge parallel edges (at the lightest weight) "
                   "after loading or generating: what core numbers and label propagation "
                   "need")


def _add_run_args(p: argparse.ArgumentParser) -> None:
    """The algorithm, graph and configuration flags ``run`` and ``profile`` share."""
    p.add_argument("algorithm", help="bfs, sssp, cc, pagerank, or a plugin's algorithm")
    _add_graph_args(p)
    p.add_argument("--source", type=int, metavar="NODE",
                   help="source node for bfs/sssp (0-based, also for 1-based files)")
    p.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu"],
                   help="auto uses the GPU when CuPy sees one (default)")
    p.add_argument("--device", type=int, metavar="N",
                   help="run on GPU N (default: the current GPU, normally 0)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="strategy config, e.g. --set driving=temporal --set block_size=128")
    p.add_argument("--config", metavar="FILE.json",
                   help="strategy config file (JSON); 'default' for the algorithm's "
                   "default; 'tuned' for a study's best, 'auto' for that or else the "
                   "selector (without --config or --set, a GPU run takes the selector's "
                   "pick for the graph)")
    p.add_argument("--param", dest="params", action="append", default=[],
                   metavar="NAME=VALUE", help="algorithm parameter, e.g. --param alpha=0.9")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = _Parser(
        prog="gswitch",
        description="Irregular graph algorithms with per-graph execution strategies.",
    )
    parser.add_argument("--version", action="version", version=f"gswitch {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show tracebacks on errors (accepted anywhere on the line)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run an algorithm on a graph")
    _add_run_args(run)
    run.add_argument("--output", metavar="FILE", help="save results: .npy (main field) or .npz "
                     "(every field); checked before the run, written atomically")
    run.add_argument("--json", action="store_true", help="machine-readable output")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_debug(run)

    prof = sub.add_parser(
        "profile", help="time each phase of one run, with bytes moved and bandwidth",
        description="Run an algorithm once (after a warm-up run) with the configuration "
        "gswitch run would take, and report per phase and stage: time in total and per "
        "call, calls, an estimate of the bytes moved, the bandwidth achieved and its "
        "fraction of the machine's peak; on the GPU also Nsight Compute's control-flow "
        "and memory-access irregularity when ncu is on PATH. Example: gswitch profile "
        "bfs --generate rmat:16 --source 0 --plot bfs.png")
    _add_run_args(prof)
    prof.add_argument("--json", action="store_true", help="machine-readable output")
    prof.add_argument("--plot", metavar="FILE", help="write a bar chart of time per phase "
                      "with its bandwidth (.png, .svg or .pdf; needs matplotlib)")
    prof.add_argument("--no-ncu", action="store_true",
                      help="skip Nsight Compute even when ncu is on PATH")
    _add_debug(prof)

    expl = sub.add_parser("explain", help="show the selector's features and pick for a graph",
                          description="The features the configuration selector computes "
                          "for a graph, its training graphs nearest first, and the "
                          "configuration it picks (what gswitch run uses on the GPU without "
                          "--config). Example: gswitch explain bfs --generate road:512x512")
    expl.add_argument("algorithm", help="an algorithm the selector models (bfs, sssp)")
    _add_graph_args(expl)
    expl.add_argument("--json", action="store_true", help="machine-readable output")
    _add_debug(expl)

    info = sub.add_parser("info", help="describe a graph")
    _add_graph_args(info)
    info.add_argument("--json", action="store_true", help="machine-readable output")
    _add_debug(info)

    convert = sub.add_parser(
        "convert", help="write a graph to another format",
        description="Read a graph (any supported file, or --generate) and write it as Matrix "
        "Market (.mtx), an edge list (.txt, .el, .edges, ...), DIMACS (.gr) or gswitch's npz "
        "cache (.npz); add .gz to compress a text format. Example: gswitch convert "
        "roads.gr roads.npz")
    convert.add_argument("input", nargs="?", metavar="IN", help="graph file to read")
    convert.add_argument("output", nargs="?", metavar="OUT", help="file to write")
    _add_graph_args(convert, positional=False)
    convert.add_argument("--to", metavar="FORMAT",
                         help="output format when OUT's extension does not say: mtx, edgelist, "
                         "dimacs, npz")
    _add_debug(convert)

    strat = sub.add_parser("strategies", help="list the registered strategies")
    strat.add_argument("--json", action="store_true", help="machine-readable output")
    _add_debug(strat)

    algos = sub.add_parser("algorithms", help="list the registered algorithms")
    algos.add_argument("--json", action="store_true", help="machine-readable output")
    algos.add_argument("--describe", action="store_true", help="show traced operators")
    _add_debug(algos)

    comp = sub.add_parser(
        "compile", help="build CUDA modules ahead into the kernel cache",
        description="Compile, into CuPy's kernel cache on this machine, the CUDA modules "
        "that untuned GPU runs use: each algorithm's default configuration and, with "
        "--portfolio, every configuration the shipped selector may pick. A first run in a "
        "new process then skips its compilation. Example: gswitch compile --portfolio")
    comp.add_argument("algorithms", nargs="*", metavar="ALG",
                      help="algorithms to compile (default: every registered one)")
    comp.add_argument("--portfolio", action="store_true",
                      help="also the selector's portfolio configurations")
    comp.add_argument("--list", action="store_true",
                      help="list the modules without compiling (no GPU needed)")
    _add_debug(comp)

    # plugins add their commands (the tuner: tune, report, run --storage) with handlers
    from .plugins import get_plugin_manager

    get_plugin_manager().hook.gswitch_add_commands(subparsers=sub)
    return parser


# ---------------------------------------------------------------------------- graphs
def _load(args: argparse.Namespace):
    from .generators import parse_generator_spec
    from .io import load_graph

    path = args.graph
    if args.generate and path:
        raise InvalidInput("give either a graph file or --generate, not both")
    if args.generate:
        for flag, given in (("--format", args.fmt), ("--renumber", args.renumber),
                            ("--no-weights", args.no_weights)):
            if given:
                raise InvalidInput(f"{flag} applies to graph files, not to --generate")
        graph = parse_generator_spec(args.generate)
        if args.undirected and graph.directed:
            graph = graph.symmetrize()
    elif not path:
        raise InvalidInput("no graph given: pass a graph file or --generate SPEC (e.g. rmat:12)")
    else:
        graph = load_graph(path, fmt=args.fmt, directed=False if args.undirected else None,
                           weighted=not args.no_weights, renumber=args.renumber)
    return graph.simple() if getattr(args, "simple", False) else graph


# ---------------------------------------------------------------------------- output files
def _check_output(path: str, suffixes: Sequence[str] = (".npy", ".npz"),
                  flag: str = "--output") -> Path:
    """Refuse an output path that cannot be written, before any work is done."""
    target = Path(path)
    if target.is_dir():
        raise InvalidInput(f"{flag} {path} is a directory; give a file name such as "
                           f"{target / ('result' + (suffixes[0] if suffixes else '.mtx'))}")
    if suffixes and target.suffix.lower() not in suffixes:
        raise InvalidInput(f"{flag} must end in {' or '.join(suffixes)}, got {path!r}")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.exists():
        raise InvalidInput(f"cannot write {flag} {path}: directory {parent} does not exist; "
                           "create it first")
    if not parent.is_dir():
        raise InvalidInput(f"cannot write {flag} {path}: {parent} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=parent)
    except OSError as exc:
        raise InvalidInput(f"cannot write {flag} {path}: {exc.strerror or exc}; choose a "
                           "writable directory") from None
    os.close(fd)
    os.unlink(probe)
    return target


def _save(path: str, result) -> list[str]:
    """Write ``result``'s fields to ``path`` (``.npy``: its first field only; ``.npz``:
    all) through a temporary file renamed when complete; the fields a ``.npy`` left out.
    """
    target = _check_output(path)
    parent = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=parent,
                                   suffix=target.suffix)
    except OSError as exc:
        raise InvalidInput(f"cannot write --output {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            if target.suffix.lower() == ".npy":
                main_field = next(iter(result.fields))
                np.save(f, result.fields[main_field], allow_pickle=False)
            else:
                np.savez(f, **result.fields)
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # mkstemp makes it private; keep the usual mode
        os.replace(tmp, target)
        return list(result.fields)[1:] if target.suffix.lower() == ".npy" else []
    except OSError as exc:
        raise InvalidInput(f"cannot write --output {path}: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


# ---------------------------------------------------------------------------- run
def _parse_params(items: list[str], algorithm: str | None = None,
                  source: Any = None) -> dict[str, Any]:
    """``--param NAME=VALUE`` items as a mapping. With ``algorithm``, an input that lists
    nodes (``per_node_input(..., names="list")``: msbfs's and betweenness's sources) is
    read from ``ID,ID,...``; one the algorithm cannot run without (its default is no
    node) is required, and ``--source`` on such an algorithm names the flag to use.
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InvalidInput(f"--param expects NAME=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    if algorithm is None:
        return out
    from .plugins import get_registry

    try:
        spec = get_registry().algorithm(algorithm)
    except InvalidInput:
        return out  # the run names the unknown algorithm in its own line
    for key, (_field, given) in spec.inputs.items():
        if given.names != "list":
            continue
        flag = f"--param {key}=ID,ID,..."
        if source is not None and spec.start.kind == "all":
            raise InvalidInput(f"{algorithm} takes no --source; give its {given.doc or key} "
                               f"as {flag}")
        if key in out:
            try:
                out[key] = [int(x) for x in str(out[key]).split(",") if x.strip()]
            except ValueError:
                raise InvalidInput(f"--param {key}={out[key]}: give node ids separated by "
                                   f"commas ({flag})") from None
        elif given.required:
            raise InvalidInput(f"{algorithm} needs its {given.doc or key}: {flag}")
    return out


def _summarise(name: str, fields: dict[str, np.ndarray]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, arr in fields.items():
        if arr.size == 0:
            out[key] = {"n": 0}
            continue
        if name == "cc" or key == "comp":
            out[key] = {"components": int(np.unique(arr).size)}
        elif key == "depth":
            reached = arr >= 0
            out[key] = {"reached": int(reached.sum()), "max": int(arr[reached].max())}
        elif arr.dtype.kind == "f" and name != "pagerank":
            fin = np.isfinite(arr)
            out[key] = {"reached": int(fin.sum()),
                        "max": float(arr[fin].max()) if fin.any() else None}
        else:
            top = np.argsort(arr)[::-1][:5]
            out[key] = {"sum": float(arr.sum()),
                        "top": [[int(i), float(arr[i])] for i in top]}
    return out


def _number(value: Any) -> str:
    """Numbers as a person reads them: six significant digits, no float noise."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _config_line(result: Any) -> str:
    """The ``config:`` line of ``gswitch run``: the strategies that ran, or for a
    formulation run by array code (no strategy applies) its variant and renumbering.
    """
    from .plugins import get_registry

    variant = result.stats.get("variant")
    try:
        spec = get_registry().algorithm(result.algorithm, variant) if variant else None
    except InvalidInput:  # an algorithm that is not registered (a spec object)
        spec = None
    if spec is not None and spec.direct is not None:
        renumber = result.config.get("renumber", "none")
        extra = f", renumber={renumber}" if renumber not in (None, "none") else ""
        return f"config: variant={variant}{extra} (array code: no strategy applies)"
    shown = dict(result.config.items())
    suffix = ""
    if result.backend == "cpu":
        shown = _cpu_relevant(result.config)
        suffix = " (GPU-only settings not shown)"
    return "config: " + ", ".join(f"{k}={_number(v)}" for k, v in shown.items()) + suffix


def _describe_summary(desc: dict[str, Any]) -> str:
    parts = []
    for k, v in desc.items():
        if k == "top":
            parts.append("top: " + ", ".join(f"node {i} = {_number(x)}" for i, x in v))
        else:
            parts.append(f"{k}={_number(v) if v is not None else 'none'}")
    return ", ".join(parts)


def _gpu_only_settings(config, given: dict[str, Any]) -> list[str]:
    """The explicitly given settings that the CPU engine ignores."""
    from .config import GLOBAL_KEYS
    from .plugins import AXES, get_registry

    reg = get_registry()
    ignored = []
    for key in given:
        axis = key.split(".", 1)[0]
        if axis in AXES:
            cls = reg.strategy(axis, config[axis])
            if "cpu" not in cls.backends:
                ignored.append(f"{key}={_number(config[key])}")
        elif key in GLOBAL_KEYS:
            ignored.append(f"{key}={_number(config[key])}")
    return ignored


def _cpu_relevant(config) -> dict[str, Any]:
    """The part of a config that changes what the CPU engine does."""
    from .plugins import AXES, get_registry

    reg = get_registry()
    keep = {axis for axis in AXES if "cpu" in reg.strategy(axis, config[axis]).backends}
    if config["variant"] != "default":
        keep.add("variant")
    return {k: v for k, v in config.items() if k.split(".", 1)[0] in keep}


def _naming_set(message: str, sets: dict[str, Any]) -> str:
    """``message`` led by the ``--set KEY=VALUE`` it is about, when one is."""
    if "--set" in message:
        return message
    # the most specific key first: driving.threshold before driving
    for key, value in sorted(sets.items(), key=lambda kv: -len(kv[0])):
        if key in message or repr(str(value)) in message:
            return f"--set {key}={_number(value)}: {message}"
    return message


def _run_inputs(args: argparse.Namespace, before_load: Callable[[], None] | None = None
                ) -> tuple[Any, str, Any, dict[str, Any]]:
    """What ``run`` and ``profile`` run: the graph, the backend, the configuration as
    :func:`gswitch.run` takes it (``None`` lets the GPU take the selector's pick) and the
    algorithm parameters, from the shared flags (``--set``, ``--config``, ``--param``,
    ``--backend`` and the graph's). ``before_load`` checks what must be refused before
    any work.
    """
    from .config import Config, parse_set_options
    from .runner import check_device, resolve_backend

    # a --device on the cpu backend or past the GPUs present is refused before any work
    args.backend = check_device(getattr(args, "device", None), args.backend)
    values: dict[str, Any] = {}
    given: dict[str, Any] = {}  # what the user chose, for the note on GPU-only settings
    # a value that names no file and is not 'default' is a plugin's mode (the tuner's
    # auto and tuned)
    tuned_mode = args.config if args.config and args.config != "default" and not Path(
        args.config).suffix and not Path(args.config).exists() else None
    default_mode = args.config == "default"
    if args.config and not tuned_mode and not default_mode:
        try:
            values.update(Config.from_file(args.config).to_dict())
        except InvalidConfig as exc:
            raise InvalidConfig(f"--config {args.config}: {exc}") from None
        # a file (an exported tuning result, say) spells out every key: only those it
        # changes from the default were chosen
        default = Config().to_dict()
        given.update({k: v for k, v in values.items() if default.get(k) != v})
    sets = parse_set_options(args.sets)
    chosen = _variant_spec(args.algorithm, str(sets["variant"])) if "variant" in sets \
        else None
    values.update(sets)
    given.update(sets)
    try:
        config = Config(values)
    except InvalidConfig as exc:
        raise InvalidConfig(_naming_set(str(exc), sets)) from None
    if chosen is not None:
        from .runner import with_variant_defaults

        # the variant's own defaults for the keys neither --set nor the file chose
        config = with_variant_defaults(chosen, values)
    if before_load is not None:
        before_load()
    backend = resolve_backend(args.backend)
    if backend == "cpu":
        ignored = _gpu_only_settings(config, given)
        if ignored:
            print(f"note: {', '.join(ignored)} {'has' if len(ignored) == 1 else 'have'} no "
                  "effect on the cpu backend (GPU-only); they apply with --backend gpu",
                  file=sys.stderr)
    graph = _load(args)
    if tuned_mode:  # a plugin's configuration for this graph, then --set on top
        from .plugins import get_plugin_manager

        answer = get_plugin_manager().hook.gswitch_resolve_config(
            algorithm=args.algorithm, graph=graph, mode=tuned_mode, backend=backend,
            options=vars(args))
        if answer is None:
            raise InvalidInput(f"--config {tuned_mode}: no such file, and no plugin knows "
                               "this mode; give a JSON file, 'default', or (with the tuner) "
                               "'auto' or 'tuned'")
        tuned, where = answer
        config = tuned.replace(**sets)
        print(f"config {tuned_mode}: {where}", file=sys.stderr)
    params = _parse_params(args.params, args.algorithm, args.source)
    # no file and no --set: the selector's pick on the GPU (gswitch.run), else the default
    chosen_config: Any = config
    if not sets and not tuned_mode and (not args.config or default_mode):
        chosen_config = "default" if default_mode else None
    return graph, backend, chosen_config, params


def _cmd_run(args: argparse.Namespace) -> int:
    from .runner import run

    def refuse_output() -> None:
        if args.output:
            _check_output(args.output)  # refuse before running, not after

    graph, backend, chosen_config, params = _run_inputs(args, refuse_output)
    bar = None
    progress = None
    if not args.json and not args.no_progress and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(desc=f"{args.algorithm} steps", unit="step", leave=False)

        def progress(it: int, active: int) -> None:
            bar.update(1)
            bar.set_postfix(activated=active)

    try:
        result = run(args.algorithm, graph, source=args.source, backend=backend,
                     config=chosen_config, progress=progress, device=args.device, **params)
    finally:
        if bar is not None:
            bar.close()
    left_out = _save(args.output, result) if args.output else []
    if left_out:
        print(f"note: {args.output} holds {next(iter(result.fields))} only; "
              f"{', '.join(left_out)} need an .npz file", file=sys.stderr)
    summary = result.summary()
    summary["graph"] = {"name": graph.name, "n_nodes": graph.n_nodes, "n_edges": graph.n_edges}
    summary["result"] = _summarise(result.algorithm, result.fields)
    if args.output:
        summary["output"] = args.output
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
        return 0
    st = result.stats
    print(f"{result.algorithm} on {graph.name or 'graph'} "
          f"({graph.n_nodes:,} nodes, {graph.n_edges:,} edges), backend {result.backend}")
    print(_config_line(result))
    if str(st.get("config_source", "")).startswith(("selector", "default (")):
        print(f"config from the {st['config_source']}")
    line = (f"iterations: {st['iterations']:,}  edges processed: {st['edges_processed']:,}  "
            f"time: {st['time_s'] * 1e3:.2f} ms")
    if "kernel_time_s" in st:
        line += f"  (kernels {st['kernel_time_s'] * 1e3:.2f} ms)"
    print(line)
    if not st.get("converged", True):
        print("warning: stopped at the iteration limit before converging", file=sys.stderr)
    for key, desc in summary["result"].items():
        print(f"{key}: {_describe_summary(desc)}")
    if args.output:
        print(f"saved to {args.output}")
    return 0


# ---------------------------------------------------------------------------- profile
_PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def _run_argv(args: argparse.Namespace) -> list[str]:
    """``gswitch run`` arguments that repeat this command's run on the GPU (for ncu)."""
    out = [args.algorithm]
    if args.graph:
        out.append(str(Path(args.graph).resolve()))
    for flag, value in (("--generate", args.generate), ("--format", args.fmt),
                        ("--source", args.source), ("--config", args.config)):
        if value is not None:
            if flag == "--config" and Path(str(value)).exists():
                value = str(Path(str(value)).resolve())
            out += [flag, str(value)]
    for flag, given in (("--undirected", args.undirected), ("--no-weights", args.no_weights),
                        ("--renumber", args.renumber), ("--simple", args.simple)):
        if given:
            out.append(flag)
    for item in args.sets:
        out += ["--set", item]
    for item in args.params:
        out += ["--param", item]
    return out + ["--backend", "gpu", "--json", "--no-progress"]


def _irregularity(args: argparse.Namespace, backend: str) -> dict[str, Any]:
    """Nsight Compute's irregularity metrics of the same run, or why there are none."""
    from .ncu import find_ncu, run_under_ncu

    if args.no_ncu:
        return {"available": False, "note": "irregularity not measured (--no-ncu)"}
    ncu = find_ncu()
    if ncu is None:
        return {"available": False, "note": "ncu (Nsight Compute) is not on PATH: no "
                "irregularity metrics; put its bin directory on PATH to measure them"}
    if backend != "gpu":
        return {"available": False, "note": "the cpu backend launches no kernels: "
                "irregularity metrics need --backend gpu"}
    return run_under_ncu([sys.executable, "-m", "gswitch", "run", *_run_argv(args)], ncu)


def _cmd_profile(args: argparse.Namespace) -> int:
    from .plugins import get_registry
    from .profile import format_profile, plot_profile, profile

    get_registry().algorithm(args.algorithm)  # an unknown name: one line naming the known

    def refuse_plot() -> None:
        if args.plot:
            _check_output(args.plot, suffixes=_PLOT_SUFFIXES, flag="--plot")
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                raise InvalidInput("--plot needs matplotlib: pip install matplotlib") \
                    from None

    graph, backend, chosen_config, params = _run_inputs(args, refuse_plot)
    data = profile(args.algorithm, graph, backend=backend, config=chosen_config,
                   source=args.source, device=args.device, **params)
    data["irregularity"] = irr = _irregularity(args, backend)
    if args.plot:
        plot_profile(data, args.plot)
    if args.json:
        print(json.dumps(data, indent=2, default=str))
    else:
        print(format_profile(data))
        if irr["available"]:
            print(f"irregularity ({irr['note']}): control flow "
                  f"{_number(irr['control_flow'])} divergent branches per instruction, "
                  f"memory access {_number(irr['memory_access'])} replayed per issued "
                  "memory instruction")
        if args.plot:
            print(f"plot written to {args.plot}")
    if not irr["available"]:
        print(f"note: {irr['note']}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------- info, convert
def _cmd_explain(args: argparse.Namespace) -> int:
    from .plugins import get_registry
    from .selector import explain, graph_features, select

    get_registry().algorithm(args.algorithm)  # an unknown name: one line naming the known
    graph = _load(args)
    if args.json:
        pick = select(args.algorithm, graph)
        print(json.dumps({
            "algorithm": args.algorithm, "features": graph_features(graph),
            "config": None if pick is None else pick.config,
            "nearest": None if pick is None else pick.nearest,
            "distance": None if pick is None else pick.distance,
            "neighbours": [] if pick is None else [
                {"graph": g, "distance": d, "entry": i} for g, d, i in pick.neighbours]},
            indent=2))
    else:
        print(explain(args.algorithm, graph))
    return 0


def _cmd_compile(args: argparse.Namespace) -> int:
    from .plugins import get_registry
    from .precompile import compile_modules, planned_modules, warm_engine

    modules = planned_modules(args.algorithms or None, portfolio=args.portfolio)
    if args.list:
        for m in modules:
            print(m.label)
        print(f"{len(modules)} modules")
        return 0
    width = len(str(len(modules)))

    def show(i: int, m: Any) -> None:
        print(f"[{i + 1:{width}d}/{len(modules)}] {m.label}", end="", flush=True)

    times = []
    for i, m in enumerate(modules):  # one at a time, to print each one's time
        times += compile_modules([m], lambda _, m=m, i=i: show(i, m))
        print(f"  {times[-1]:.2f} s")
    # the engine's own CuPy kernels around the modules, compiled on first use
    warm_engine(args.algorithms or list(get_registry().algorithms), portfolio=args.portfolio)
    print(f"{len(modules)} modules in {sum(times):.1f} s, cached for later runs")
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from .analysis import format_info, graph_info

    graph = _load(args)
    info = graph_info(graph)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        print(format_info(info))
    return 0


def _cmd_convert(args: argparse.Namespace) -> int:
    from .io import EXTENSIONS, WRITE_FORMATS, extension_of, save_graph

    source, target = args.input, args.output
    if args.generate and target is None:
        source, target = None, source
    if not target:
        raise InvalidInput("convert needs IN and OUT, e.g. gswitch convert graph.gr graph.mtx "
                           "(or --generate SPEC OUT)")
    if args.to is None:
        kind = EXTENSIONS.get(extension_of(Path(target)))
        if kind not in WRITE_FORMATS:
            raise InvalidInput(
                f"cannot tell the output format from {target!r}; end it in .mtx, .txt, .gr "
                f"or .npz (.gz compresses text formats), or pass --to "
                f"({', '.join(WRITE_FORMATS)})")
    _check_output(target, suffixes=(), flag="OUT")
    args.graph = source
    graph = _load(args)
    written = save_graph(graph, target, fmt=args.to)
    print(f"wrote {written} ({graph.n_nodes:,} nodes, {graph.n_edges:,} edges, "
          f"{'directed' if graph.directed else 'undirected'}"
          f"{', weighted' if graph.weighted else ''})")
    return 0


# ---------------------------------------------------------------------------- listings
_REST_ROLE = re.compile(r":[a-z:]+:`~?([^`]+)`")
_REST_LITERAL = re.compile(r"``([^`]+)``|`([^`]+)`")


def plain_text(text: str) -> str:
    """Strip reStructuredText markup (roles, literals) from a docstring sentence."""
    text = _REST_ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text)
    return _REST_LITERAL.sub(lambda m: m.group(1) or m.group(2), text)


def _param_line(axis: str | None, name: str, p: dict[str, Any]) -> str:
    default = _number(p.get("default"))
    if p.get("choices") is not None:
        rng = "one of " + ", ".join(_number(c) for c in p["choices"])
    elif p.get("low") is not None or p.get("high") is not None:
        rng = f"range {_number(p.get('low'))} .. {_number(p.get('high'))}"
        if p.get("searched"):
            rng += "; the tuner tries " + ", ".join(_number(v) for v in p["searched"])
    else:
        rng = ""
    key = name if axis is None else f"{axis}.{name}"
    return f"      --set {key}=VALUE   default {default}" + (f", {rng}" if rng else "")


def _space_dict(p: Any) -> dict[str, Any]:
    return {"type": type(p).__name__, **{f: getattr(p, f) for f in (
        "choices", "low", "high", "default", "step", "compile_time", "searched")
        if hasattr(p, f) and (f != "searched" or p.searched)}}


def _cmd_strategies(args: argparse.Namespace) -> int:
    from .config import DEFAULTS, GLOBAL_DOCS, GLOBAL_KEYS
    from .plugins import AXES, get_registry

    reg = get_registry()
    data = {}
    for axis in AXES:
        data[axis] = {}
        for name, cls in sorted(reg.strategies[axis].items()):
            data[axis][name] = {
                "summary": cls.summary(),
                "backends": list(cls.backends),
                "default": DEFAULTS.get(axis) == name,
                "validated": cls.validated,
                "params": {k: _space_dict(p) for k, p in cls.params.items()},
                "plugin": reg.sources[(axis, name)],
            }
    # keys of no single strategy, searched by the tuner like strategy parameters
    data["global"] = {k: {"summary": GLOBAL_DOCS.get(k, ""), **_space_dict(p)}
                      for k, p in GLOBAL_KEYS.items()}
    if args.json:
        print(json.dumps(data, indent=2, default=str))
        return 0
    globals_ = data.pop("global")
    for axis, entries in data.items():
        print(f"{axis}:")
        for name, d in entries.items():
            mark = " (default)" if d["default"] else ""
            backends = ("" if sorted(d["backends"]) == ["cpu", "gpu"]
                        else f" [{'/'.join(d['backends'])} only]")
            if not d["validated"]:
                backends += " [not yet validated for the tuner: its GPU search leaves it out]"
            head = f"  {name}{mark}{backends}: "
            body = textwrap.fill(plain_text(d["summary"]), width=96, initial_indent=head,
                                 subsequent_indent=" " * 6)
            print(body)
            for pname, p in d["params"].items():
                print(_param_line(axis, pname, p))
    print("global (any strategy combination):")
    for key, p in globals_.items():
        print(textwrap.fill(p["summary"], width=96, initial_indent=f"  {key}: ",
                            subsequent_indent=" " * 6))
        print(_param_line(None, key, p))
    if reg.failures:
        print("plugins that failed to load:", file=sys.stderr)
        for f in reg.failures:
            print(f"  {f}", file=sys.stderr)
    return 0


def _callable_text(fn: Callable) -> str:
    """A readable form of a field's computed initial value (the lambda's expression)."""
    fallback = "computed from the parameters at run time"
    try:
        source = textwrap.dedent(inspect.getsource(fn)).strip()
    except (OSError, TypeError):
        return fallback
    for candidate in (source, f"({source})", source.rstrip(",") + ")"):
        try:
            tree = ast.parse(candidate)
        except SyntaxError:
            continue
        lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
        if len(lambdas) == 1:
            args = ", ".join(a.arg for a in lambdas[0].args.args)
            return f"computed: {ast.unparse(lambdas[0].body)} (from {args} = the parameters)"
    return fallback


def _describe(spec) -> str:
    text = spec.describe()
    for field in spec.fields.values():
        init = field.init
        if callable(init) and repr(init) in text:
            text = text.replace(f"init={init!r}", f"init {_callable_text(init)}")
        elif isinstance(init, Input):
            default = (_callable_text(init.default) if callable(init.default)
                       else repr(init.default))
            what = f" ({init.doc})" if init.doc else ""
            text = text.replace(f"init={init!r}",
                                f"init from run argument {init.name!r}{what}, default {default}")
    return text


def _variants(name: str) -> list:
    """The formulations of algorithm ``name``, the default first."""
    from .plugins import get_registry

    family = get_registry().variants.get(name, {})
    return sorted(family.values(), key=lambda s: (not s.default_variant, s.variant))


def _supports_text(spec) -> str:
    return "; ".join(f"{axis} {' or '.join(names)} only" for axis, names in spec.supports.items())


def _cmd_algorithms(args: argparse.Namespace) -> int:
    from .plugins import get_registry

    reg = get_registry()
    if args.json:
        print(json.dumps({n: {"summary": s.summary, "reference": s.reference,
                              "params": {k: p.default for k, p in s.params.items()},
                              "start": s.start.kind, "default_variant": s.variant,
                              "variants": {v.variant: {
                                  "default": v.default_variant, "summary": v.summary,
                                  "default_on": list(v.default_on),
                                  "supports": {a: list(x) for a, x in v.supports.items()},
                                  "direct": v.direct is not None,
                                  "config_defaults": v.config_defaults,
                                  "params": {k: p.default for k, p in v.params.items()}}
                                  for v in _variants(n)}}
                          for n, s in reg.algorithms.items()}, indent=2, default=str))
        return 0
    for name, spec in reg.algorithms.items():
        family = _variants(name)
        if args.describe:
            for v in family or [spec]:
                print(_describe(v))
            continue
        print(f"{name}: {plain_text(spec.summary)}")
        if len(family) > 1:
            for v in family:
                mark = " (default)" if v.default_variant else (
                    f" (default on {', '.join(v.default_on)})" if v.default_on else "")
                only = f" [{_supports_text(v)}]" if v.supports else ""
                if v.direct is not None:
                    only = " [array code: no strategy applies]"
                head = f"  variant {v.variant}{mark}: "
                print(textwrap.fill(plain_text(v.summary) + only, width=96,
                                    initial_indent=head, subsequent_indent=" " * 6))
    if any(len(_variants(n)) > 1 for n in reg.algorithms) and not args.describe:
        print("(choose a variant with --set variant=NAME)")
    return 0


def _variant_spec(algorithm: str, variant: str):
    """The spec ``--set variant=`` selects, refused in one line that names the flag and the
    valid variants.
    """
    from .plugins import get_registry

    reg = get_registry()
    spec = reg.algorithm(algorithm)  # an unknown algorithm: its own message
    family = reg.variants.get(algorithm, {spec.variant: spec})
    if variant in ("default", spec.variant):
        return spec
    if variant not in family:
        names = [v.variant for v in _variants(algorithm)]
        raise InvalidInput(f"--set variant={variant}: {algorithm} has no such variant; "
                           f"choose one of {', '.join(names)}"
                           + ("" if "default" in names else " (or default)"))
    return family[variant]


# ---------------------------------------------------------------------------- entry point
_HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": _cmd_run,
    "profile": _cmd_profile,
    "info": _cmd_info,
    "explain": _cmd_explain,
    "compile": _cmd_compile,
    "convert": _cmd_convert,
    "strategies": _cmd_strategies,
    "algorithms": _cmd_algorithms,
}


def _split_debug(argv: list[str]) -> tuple[list[str], bool]:
    """Take ``--debug`` out of the line wherever it is (before a ``--``)."""
    if "--" in argv:
        cut = argv.index("--")
        head, tail = argv[:cut], argv[cut:]
    else:
        head, tail = argv, []
    rest = [a for a in head if a != "--debug"]
    return rest + tail, len(rest) != len(head)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning under the command line: one line on stderr, without the source line."""
    print(f"gswitch: warning: {_one_line(message)}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gswitch`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    argv, debug = _split_debug(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.debug = debug
    if args.command is None:
        parser.print_help()
        return 2
    handler = _HANDLERS.get(args.command) or getattr(args, "handler", None)
    if handler is None:  # pragma: no cover - every subcommand has a handler
        parser.error(f"no handler for command {args.command!r}")
    try:
        with cli_names(), warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return handler(args)
    except GswitchError as exc:
        if debug:
            raise
        print(f"gswitch: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gswitch: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        if debug:
            raise
        print("gswitch: error: ran out of memory; try a smaller graph or a machine with more "
              "memory (--debug shows where)", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader went away (gswitch ... | head); nothing left to say to it
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces the closed pipe
        except OSError:
            pass
        return 1
    except Exception as exc:
        if debug:
            raise
        print(f"gswitch: internal error: {type(exc).__name__}: {_one_line(exc)} (this is a "
              "bug; --debug shows the traceback to report)", file=sys.stderr)
        return 1


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
