"""The ``gswitch`` command line: ``run``, ``info``, ``strategies``, ``algorithms``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ._version import __version__
from .errors import GswitchError, InvalidInput

__all__ = ["main", "build_parser"]


def _add_graph_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("graph", nargs="?", help="graph file (.mtx, .txt/.el/.snap edge list, .gr, "
                   ".graph, .npz; .gz accepted)")
    p.add_argument("--generate", metavar="SPEC",
                   help="generate the graph instead, e.g. rmat:16, grid:64x64, road:256x256")
    p.add_argument("--undirected", action="store_true",
                   help="treat an edge-list file as undirected")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = argparse.ArgumentParser(
        prog="gswitch",
        description="Irregular graph algorithms with per-graph execution strategies.",
    )
    parser.add_argument("--version", action="version", version=f"gswitch {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run an algorithm on a graph")
    run.add_argument("algorithm", help="bfs, sssp, cc, pagerank, or a plugin's algorithm")
    _add_graph_args(run)
    run.add_argument("--source", type=int, help="source node for bfs/sssp")
    run.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu"],
                     help="auto uses the GPU when CuPy sees one (default)")
    run.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                     help="strategy config, e.g. --set driving=temporal --set block_size=128")
    run.add_argument("--config", metavar="FILE.json", help="strategy config file (JSON)")
    run.add_argument("--param", dest="params", action="append", default=[],
                     metavar="NAME=VALUE", help="algorithm parameter, e.g. --param alpha=0.9")
    run.add_argument("--output", metavar="FILE", help="save results: .npy (main field) or .npz")
    run.add_argument("--json", action="store_true", help="machine-readable output")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")

    info = sub.add_parser("info", help="describe a graph")
    _add_graph_args(info)
    info.add_argument("--json", action="store_true", help="machine-readable output")

    strat = sub.add_parser("strategies", help="list the registered strategies")
    strat.add_argument("--json", action="store_true", help="machine-readable output")

    algos = sub.add_parser("algorithms", help="list the registered algorithms")
    algos.add_argument("--json", action="store_true", help="machine-readable output")
    algos.add_argument("--describe", action="store_true", help="show traced operators")
    return parser


def _load(args: argparse.Namespace):
    from .generators import parse_generator_spec
    from .io import load_graph

    if args.generate and args.graph:
        raise InvalidInput("give either a graph file or --generate, not both")
    if args.generate:
        return parse_generator_spec(args.generate)
    if not args.graph:
        raise InvalidInput("no graph given: pass a graph file or --generate SPEC (e.g. rmat:12)")
    return load_graph(args.graph, directed=False if args.undirected else None)


def _parse_params(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InvalidInput(f"--param expects NAME=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
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


def _check_output(path: str) -> Path:
    target = Path(path)
    if target.suffix not in (".npy", ".npz"):
        raise InvalidInput(f"--output must end in .npy or .npz, got {path!r}")
    if not target.parent.exists():
        raise InvalidInput(f"cannot write {path}: directory {target.parent} does not exist")
    return target


def _save(path: str, result) -> None:
    target = _check_output(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=target.suffix)
    os.close(fd)
    try:
        if target.suffix == ".npy":
            main_field = next(iter(result.fields))
            np.save(tmp, result.fields[main_field], allow_pickle=False)
        else:
            np.savez(tmp, **result.fields)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _cmd_run(args: argparse.Namespace) -> int:
    from .config import Config, parse_set_options
    from .runner import run

    values: dict[str, Any] = {}
    if args.config:
        values.update(Config.from_file(args.config).to_dict())
    values.update(parse_set_options(args.sets))
    config = Config(values)
    if args.output:
        _check_output(args.output)  # refuse before running, not after
    graph = _load(args)
    params = _parse_params(args.params)
    bar = None
    progress = None
    if not args.json and not args.no_progress and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(desc=f"{args.algorithm} steps", unit="step", leave=False)

        def progress(it: int, active: int) -> None:
            bar.update(1)
            bar.set_postfix(activated=active)

    try:
        result = run(args.algorithm, graph, source=args.source, backend=args.backend,
                     config=config, progress=progress, **params)
    finally:
        if bar is not None:
            bar.close()
    if args.output:
        _save(args.output, result)
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
          f"({graph.n_nodes} nodes, {graph.n_edges} edges), backend {result.backend}")
    print("config: " + ", ".join(f"{k}={v}" for k, v in result.config.items()))
    line = (f"iterations: {st['iterations']}  edges processed: {st['edges_processed']}  "
            f"time: {st['time_s'] * 1e3:.2f} ms")
    if "kernel_time_s" in st:
        line += f"  (kernels {st['kernel_time_s'] * 1e3:.2f} ms)"
    print(line)
    if not st.get("converged", True):
        print("warning: stopped at the iteration limit before converging", file=sys.stderr)
    for key, desc in summary["result"].items():
        print(f"{key}: " + ", ".join(f"{k}={v}" for k, v in desc.items()))
    if args.output:
        print(f"saved to {args.output}")
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


def _cmd_strategies(args: argparse.Namespace) -> int:
    from .config import DEFAULTS
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
                "params": {k: {"type": type(p).__name__, **{
                    f: getattr(p, f) for f in ("choices", "low", "high", "default")
                    if hasattr(p, f)}} for k, p in cls.params.items()},
                "plugin": reg.sources[(axis, name)],
            }
    if args.json:
        print(json.dumps(data, indent=2, default=str))
        return 0
    for axis, entries in data.items():
        print(f"{axis}:")
        for name, d in entries.items():
            mark = " (default)" if d["default"] else ""
            backends = "" if d["backends"] == ["cpu", "gpu"] else f" [{'/'.join(d['backends'])}]"
            print(f"  {name}{mark}{backends}: {d['summary']}")
            for pname, p in d["params"].items():
                rng = p.get("choices") or f"[{p.get('low')}, {p.get('high')}]"
                print(f"      {axis}.{pname} = {p['default']}  {rng}")
    if reg.failures:
        print("plugins that failed to load:", file=sys.stderr)
        for f in reg.failures:
            print(f"  {f}", file=sys.stderr)
    return 0


def _cmd_algorithms(args: argparse.Namespace) -> int:
    from .plugins import get_registry

    reg = get_registry()
    if args.json:
        print(json.dumps({n: {"summary": s.summary, "reference": s.reference,
                              "params": {k: p.default for k, p in s.params.items()},
                              "start": s.start.kind} for n, s in reg.algorithms.items()},
                         indent=2))
        return 0
    for name, spec in reg.algorithms.items():
        if args.describe:
            print(spec.describe())
        else:
            print(f"{name}: {spec.summary}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gswitch`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    handler = {"run": _cmd_run, "info": _cmd_info, "strategies": _cmd_strategies,
               "algorithms": _cmd_algorithms}[args.command]
    try:
        return handler(args)
    except GswitchError as exc:
        if args.debug:
            raise
        print(f"gswitch: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gswitch: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
