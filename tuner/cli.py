"""``gswitch tune`` and ``gswitch report``: the tuner's subcommands.

:func:`add_tuner_commands` is called by :func:`gswitch.cli.build_parser`; each
subcommand sets its own handler, which :func:`gswitch.cli.main` dispatches to.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gswitch.errors import InvalidInput

from .progress import fmt_s as _fmt_s

__all__ = ["add_tuner_commands", "cmd_tune", "cmd_report"]


def _devices(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InvalidInput(f"--devices expects GPU numbers like 0,1; got {text!r}") from None
    if not out or any(d < 0 for d in out) or len(set(out)) != len(out):
        raise InvalidInput(f"--devices expects distinct GPU numbers like 0,1; got {text!r}")
    return out


def add_tuner_commands(sub: Any) -> None:
    """Add ``tune`` and ``report`` to the ``gswitch`` subparsers, and ``--storage`` plus the
    ``auto`` / ``tuned`` values of ``--config`` to ``run``.
    """
    from gswitch.cli import _add_debug, _add_graph_args

    from .study import SAMPLERS

    storage_help = ("Optuna storage URL: sqlite:///FILE.db, postgresql://..., "
                    "journal:///FILE.journal (default: $GSWITCH_STORAGE, else a journal file "
                    "in the gswitch cache directory)")
    tune = sub.add_parser(
        "tune", help="search the fastest correct strategy configuration for a graph",
        description="Run an Optuna study over the strategy combinations the installed plugins "
        "offer for this algorithm, graph and backend. Every trial's answer is checked against "
        "a reference; slow trials are cut short; the study is stored and resumed by running "
        "the same command again.")
    tune.add_argument("algorithm", help="bfs, sssp, cc, pagerank, or a plugin's algorithm")
    _add_graph_args(tune)
    _reword(tune, "graph", "GRAPH|DIR|LIST",
            "graph file; or a batch: a folder of graph files or a .list file of paths (one "
            "study per graph, spread over --devices, resumed by running the same command "
            "again)")
    tune.add_argument("--source", type=int, metavar="NODE",
                      help="source node for bfs/sssp (default: the node of highest degree)")
    tune.add_argument("--param", dest="params", action="append", default=[],
                      metavar="NAME=VALUE", help="algorithm parameter, e.g. --param alpha=0.9")
    tune.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                      help="pin a config key instead of searching it; the tuner takes "
                      "variant=NAME (tune one formulation of the algorithm, see gswitch "
                      "algorithms; default: the variant is searched too)")
    tune.add_argument("--trials", type=int, default=50, metavar="N",
                      help="finished trials the study should have (default 50); running the "
                      "command again resumes up to N")
    tune.add_argument("--timeout", type=float, metavar="S",
                      help="start no new trial after S seconds")
    tune.add_argument("--storage", metavar="URL", help=storage_help)
    tune.add_argument("--study", metavar="NAME",
                      help="study name (default: algorithm@fingerprint on device (space V))")
    tune.add_argument("--devices", metavar="LIST",
                      help="GPUs to use, e.g. 0,1 (default: the current GPU): one worker "
                      "each on one study, or for a batch one graph at a time each; on the "
                      "CPU backend, simulated devices (one worker process each)")
    tune.add_argument("--sampler", default="tpe", choices=list(SAMPLERS),
                      help="Optuna sampler (default tpe; grid keeps parameters at defaults)")
    tune.add_argument("--seed", type=int, help="sampler seed")
    tune.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu"],
                      help="auto uses the GPU when CuPy sees one (default)")
    tune.add_argument("--objective", default="call", choices=["call", "device"],
                      help="what a trial's time is: the whole gswitch run call, what a user "
                      "waits for (default), or the engine's device time; both are recorded")
    tune.add_argument("--repeats", type=int, default=3, metavar="R",
                      help="timed runs per trial; the median counts (default 3)")
    tune.add_argument("--warmup", type=int, default=1, metavar="W",
                      help="untimed runs after the compiling run (default 1)")
    tune.add_argument("--prune-factor", type=float, default=3.0, metavar="F",
                      help="cut a run short once it passes F x the best time (default 3)")
    tune.add_argument("--trial-timeout", type=float, default=120.0, metavar="S",
                      help="kill a trial's worker after S seconds (default 120)")
    tune.add_argument("--warm-start", type=int, default=2, metavar="K",
                      help="enqueue the best configs of the K most similar tuned graphs "
                      "(default 2)")
    tune.add_argument("--refine", type=float, default=0.5, metavar="F",
                      help="share of the trials after the warm start that try a neighbour "
                      "of the best configuration so far (default 0.5; 0: the sampler only)")
    tune.add_argument("--compile-ahead", type=int, metavar="P",
                      help="background processes compiling the trials to come (default on "
                      "the GPU: one per spare core, at most 8 per GPU; 0: each trial "
                      "compiles when it runs)")
    tune.add_argument("--export", metavar="FILE.json", help="write the best config as JSON")
    tune.add_argument("--json", action="store_true", help="machine-readable output")
    tune.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_debug(tune)
    tune.set_defaults(handler=cmd_tune)

    report = sub.add_parser(
        "report", help="plots and a markdown summary of a tuning study",
        description="Write optimization history and parameter-importance plots (PNG, needs "
        "matplotlib: pip install 'gswitch[report]'), the best time per option of each axis, "
        "and a markdown summary. Name the study by ALGORITHM and GRAPH, or with --study.")
    report.add_argument("algorithm", nargs="?", help="algorithm of the study")
    _add_graph_args(report)
    report.add_argument("--study", metavar="NAME", help="study name instead of ALGORITHM GRAPH")
    report.add_argument("--storage", metavar="URL", help=storage_help)
    report.add_argument("--objective", default="call", choices=["call", "device"],
                        help="which study of the graph: timed by whole calls (default) or "
                        "by device time")
    report.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu"],
                        help="device of the study when naming it by graph (default auto)")
    report.add_argument("--out", metavar="DIR", help="output folder (default: gswitch-report)")
    report.add_argument("--json", action="store_true", help="machine-readable output")
    _add_debug(report)
    report.set_defaults(handler=cmd_report)

    run = sub.choices.get("run")
    if run is not None:
        _reword(run, "config", "FILE.json|auto|tuned",
                "strategy config: a JSON file; 'tuned' (the study of this very graph); or "
                "'auto' (tuned, else the nearest tuned graph's, else the default)")
        if "--storage" not in run._option_string_actions:
            run.add_argument("--storage", metavar="URL",
                             help="tuning storage for --config auto|tuned; " + storage_help)


def _reword(parser: argparse.ArgumentParser, dest: str, metavar: str, text: str) -> None:
    """Give the argument ``dest`` of ``parser`` (added elsewhere) the tuner's wording."""
    for action in parser._actions:
        if action.dest == dest:
            action.metavar, action.help = metavar, text


def _bars(args: argparse.Namespace, graphs: int | None = None) -> Any:
    if args.json or args.no_progress or not sys.stderr.isatty():
        return None
    from .progress import TuneBars

    return TuneBars(args.trials, f"tune {args.algorithm}" if graphs is None
                    else f"tune {args.algorithm}, graphs", graphs)


def _table(result: Any) -> str:
    from gswitch.config import Config

    default = Config().to_dict()
    best = result.best_config or {}
    keys = list(default)
    # the best's own parameters (a strategy the default does not use) after their axis
    for k in best:
        if k not in keys:
            axis = k.split(".", 1)[0]
            at = max((i for i, x in enumerate(keys) if x.split(".", 1)[0] == axis),
                     default=len(keys) - 1)
            keys.insert(at + 1, k)
    if result.backend == "cpu":
        axes = set(result.space.get("axes", {}))
        keys = [k for k in keys if k.split(".", 1)[0] in axes]
    width = max([len(k) for k in keys] + [6])
    vwidth = max([len(str(best.get(k, ""))) for k in keys] + [4])
    lines = [f"  {'key':<{width}}  {'best':<{vwidth}}  default"]
    for k in keys:
        mark = "  *" if best.get(k) != default.get(k) else ""
        lines.append(f"  {k:<{width}}  {str(best.get(k, '-')):<{vwidth}}  "
                     f"{default.get(k, '-')}{mark}")
    return "\n".join(lines)


def cmd_tune(args: argparse.Namespace) -> int:
    """Handler of ``gswitch tune``."""
    from gswitch.cli import _check_output, _load, _parse_params, _variant_spec
    from gswitch.config import Config, parse_set_options

    from .study import tune

    if args.trials < 1:
        raise InvalidInput(f"--trials must be at least 1; got {args.trials}")
    sets = parse_set_options(args.sets)
    others = sorted(set(sets) - {"variant"})
    if others:
        raise InvalidInput(f"gswitch tune --set takes variant=NAME only, got "
                           f"{others[0]}={sets[others[0]]}; "
                           "the tuner searches the strategies and their parameters")
    variant = None
    if "variant" in sets:
        variant = _variant_spec(args.algorithm, str(sets["variant"])).variant
    options = dict(trials=args.trials, timeout_s=args.timeout, storage=args.storage,
                   sampler=args.sampler, seed=args.seed, backend=args.backend,
                   source=args.source,
                   params=_parse_params(args.params, args.algorithm, args.source),
                   warmup=args.warmup, repeats=args.repeats,
                   prune_factor=args.prune_factor, trial_timeout_s=args.trial_timeout,
                   warm_start=args.warm_start, refine=args.refine,
                   compile_ahead=args.compile_ahead, variant=variant,
                   objective=args.objective)
    from .batch import is_batch

    if is_batch(args.graph):
        return _cmd_tune_batch(args, options)
    export = None
    if args.export:
        export = _check_output(args.export, (".json",), "--export")
    graph = _load(args)
    bars = _bars(args)
    try:
        result = tune(args.algorithm, graph, devices=_devices(args.devices), name=args.study,
                      progress=None if bars is None else bars.study, **options)
    finally:
        if bars is not None:
            bars.close()
    if export is not None and result.best_config:
        from gswitch.io._common import _atomic_write

        text = Config(result.best_config).to_json() + "\n"
        _atomic_write(export, lambda f: f.write(text.encode()))  # never half a file
    if args.json:
        out = result.to_dict()
        out["export"] = str(export) if export is not None and result.best_config else None
        print(json.dumps(out, indent=2, default=str))
        return 0 if result.best_config else 1
    c = result.counts
    parts = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in sorted(c.items()))
    print(f"study: {result.study_name}")
    print(f"storage: {result.storage}")
    print(f"trials: {sum(c.values())} ({parts}); {result.new_trials} this run in "
          f"{result.wall_s:.1f} s")
    if not result.best_config:
        print("no correct configuration found yet; see `gswitch report` for the reasons",
              file=sys.stderr)
        return 1
    speed = f"  speedup {result.speedup:.2f}x" if result.speedup else ""
    print(f"best: trial {result.best_trial}, {_fmt_s(result.best_time_s)}; default "
          f"{_fmt_s(result.default_time_s)}{speed}")
    print(_table(result))
    if export is not None:
        print(f"best config written to {export}")
    return 0


def _on_cpu(items: list[dict[str, Any]]) -> bool:
    return any(i.get("result", {}).get("backend") == "cpu" for i in items)


def _cmd_tune_batch(args: argparse.Namespace, options: dict[str, Any]) -> int:
    """``gswitch tune ALG DIR_OR_LIST``: one study per graph, spread over ``--devices``."""
    from gswitch.cli import _load

    from .batch import graph_paths, tune_batch

    for flag, given in (("--study", args.study), ("--export", args.export),
                        ("--generate", args.generate)):
        if given:
            raise InvalidInput(f"{flag} names one graph's study; a batch ({args.graph}) makes "
                               "one study per graph: drop it, or tune one graph")
    paths = graph_paths(args.graph)
    devices = _devices(args.devices)
    if options["backend"] != "cpu" and devices:
        from gswitch.runner import resolve_backend

        from .storage import device_key

        device_key(resolve_backend(options["backend"]), devices)  # absent or mixed GPUs

    def load(path: Path) -> Any:
        return _load(argparse.Namespace(**{**vars(args), "graph": str(path)}))

    bars = _bars(args, len(paths))
    try:
        items = tune_batch(args.algorithm, paths, load=load, devices=devices,
                           progress=None if bars is None else bars.batch, **options)
    finally:
        if bars is not None:
            bars.close()
    failed = [i for i in items if "error" in i or not i["result"].get("best_config")]
    if args.json:
        print(json.dumps({"algorithm": args.algorithm, "graphs": items}, indent=2,
                         default=str))
        return 1 if failed else 0
    lanes = ("one device" if not devices else
             f"{'simulated devices' if items and _on_cpu(items) else 'GPUs'} "
             + ",".join(map(str, devices)))
    print(f"batch: {len(items)} graphs of {args.graph} on {lanes}")
    print(f"  {'graph':<28} {'lane':>5} {'trials':>7} {'best':>12} {'default':>12} "
          f"{'speedup':>8} {'wall':>8}")
    for item in items:
        name = Path(item["graph"]).name[:28]
        if "error" in item:
            print(f"  {name:<28} {item['lane']:>5}  error: {item['error']}")
            continue
        r = item["result"]
        speed = f"{r['speedup']:.2f}x" if r.get("speedup") else "-"
        print(f"  {name:<28} {item['lane']:>5} {sum(r['counts'].values()):>7} "
              f"{_fmt_s(r['best_time_s']):>12} {_fmt_s(r['default_time_s']):>12} "
              f"{speed:>8} {item['wall_s']:>7.1f}s")
    if failed:
        print(f"{len(failed)} of {len(items)} graphs have no correct configuration yet; run "
              "the same command to resume, or `gswitch report ALG GRAPH` for a graph's "
              "reasons", file=sys.stderr)
        return 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Handler of ``gswitch report``."""
    from gswitch.cli import _load

    from .report import write_report

    if args.study and (args.algorithm or args.graph or args.generate):
        raise InvalidInput("name the study either with --study or with ALGORITHM GRAPH, "
                           "not both")
    graph = None
    if not args.study:
        if not args.algorithm:
            raise InvalidInput("give ALGORITHM and GRAPH (or --generate), or --study NAME")
        graph = _load(args)
    out = Path(args.out or "gswitch-report")
    summary = write_report(out, algorithm=args.algorithm, graph=graph, study=args.study,
                           storage=args.storage, backend=args.backend,
                           objective=args.objective)
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
        return 0
    print(f"study: {summary['study_name']}")
    for f in summary["files"]:
        print(f"wrote {f}")
    for note in summary["notes"]:
        print(f"note: {note}", file=sys.stderr)
    return 0
