"""The selector's pick against a tuned study of the same graph, on graphs it never saw.

Twenty graphs of 1M to 4M nodes, none of them a training graph of the shipped model
(those are RMAT-22 edge factor 16, uniform 2^22 edge factor 16, road 2048x2048, a star
of 2^20 and a Zipf bipartite graph of 2^20): other sizes, seeds, edge factors and skews
of RMAT, directed RMAT and uniform graphs, sparse uniform graphs, plain grids, road
grids of other shapes, larger stars and bipartite graphs of other exponents.

For each graph, in one process: the GPU peer, a ``--trials``-trial study
(``gswitch.tuner.tune``, its own SQLite file, so no other graph's study warms it; the
default, the selector's pick and its portfolio are enqueued first as every study does),
then ``--repeats`` calls in rotation of the selector's pick (a plain ``gs.run`` with no
config), the study's best, the default, and the pick again with ``arrays="cupy"`` (its
answer left on the device, as the peer leaves its own); every answer is checked. The
ratios to the study are of the plain calls; to the peer, of both. The targets: the
geometric mean of selector / tuned within 1.25x, never above 2x, and never slower than
the GPU peer: the CuPy frontier BFS, for ``--alg sssp`` the
frontier Bellman-Ford, for ``--alg cc`` CuPy FastSV, for ``--alg pagerank`` the faster
of the float32 and float64 cuSPARSE power iterations that reach the peers' L1 error
(PageRank's answers are checked against a float64 power iteration to 1e-12). SSSP runs
on the same graphs with integer weights in [1, 64) drawn per stored edge (the road
grids keep their own); CC and PageRank run on every node, BFS and SSSP from the hub.
Usage::

    python benchmarks/bench_selector_tuned.py [--alg bfs|sssp|cc|pagerank]
        [--graphs 0-19|9,10,13-15] [--trials 40] [--budget-s S] [--tag NAME]
    python benchmarks/bench_selector_tuned.py --table results/a.json results/b.json \
        [--plot FILE.png]
    python benchmarks/bench_selector_tuned.py --recheck results/a.json [...] [--tag NAME]
    python benchmarks/bench_selector_tuned.py --picks [results/a.json ...] [--alg bfs]
        [--graphs 9,10]

``--recheck`` times each row of saved result files again without a study: its graph
rebuilt from :data:`SPECS` by name (SSSP: the weights of that run), the selector's pick
now, the row's ``tuned_config`` and the default in rotation, next to the CuPy peer, every
answer checked; each row says whether the pick is the one recorded (``pick``). After a
retrain it shows what the new model changed, at the cost of the timed calls alone;
``--graphs`` keeps the rows of those graphs.
``--picks`` needs no GPU: for each graph and algorithm it prints the configuration
source line a plain GPU ``gs.run`` would record (``stats["config_source"]``, resolved on
the host as the run resolves it) and, against saved files, ``same`` or ``changed`` next
to the pick recorded there (``selector_config``, compared on the keys both name).
Building the twenty graphs takes minutes on a small host: ``--graphs`` takes a subset.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import write_json

SPECS = [
    ("rmat-20-16-s21", lambda: _rmat(20, 16, seed=21)),
    ("rmat-21-8-s22", lambda: _rmat(21, 8, seed=22)),
    ("rmat-22-8-s23", lambda: _rmat(22, 8, seed=23)),
    ("rmat-22-4-s24", lambda: _rmat(22, 4, seed=24)),
    ("rmat-21-16-lowskew", lambda: _rmat(21, 16, a=0.45, b=0.22, c=0.22, seed=25)),
    ("rmat-21-16-highskew", lambda: _rmat(21, 16, a=0.65, b=0.15, c=0.15, seed=26)),
    ("rmat-21-8-directed", lambda: _rmat(21, 8, seed=27, sym=False)),
    ("uniform-1M-16", lambda: _uniform(1 << 20, 1 << 24, 28)),
    ("uniform-2M-2", lambda: _uniform(1 << 21, 1 << 22, 29)),
    ("uniform-3M-8", lambda: _uniform(3_000_000, 24_000_000, 30)),
    ("uniform-2M-8-directed", lambda: _uniform(1 << 21, 1 << 24, 31, sym=False)),
    ("grid-1024x1024", lambda: _gen("grid2d", 1024, 1024)),
    ("grid-2048x1024", lambda: _gen("grid2d", 2048, 1024)),
    ("road-1200x1200", lambda: _gen("road", 1200, 1200, seed=32)),
    ("road-1800x1800", lambda: _gen("road", 1800, 1800, seed=33)),
    ("road-2896x1448", lambda: _gen("road", 2896, 1448, seed=34)),
    ("star-2M", lambda: _gen("star", (1 << 21) + 1, seed=35)),
    ("star-4M", lambda: _gen("star", 4_000_001, seed=36)),
    ("bipartite-2M-0.8", lambda: _bipartite(1 << 21, 1 << 24, 0.8, 37)),
    ("bipartite-1M-1.1", lambda: _bipartite(1 << 20, 1 << 23, 1.1, 38)),
]


def _rmat(scale, ef, a=0.57, b=0.19, c=0.19, seed=0, sym=True):
    from gswitch.generators import rmat

    g = rmat(scale, ef, a, b, c, seed=seed)
    return g.symmetrize() if sym else g


def _uniform(n, m, seed, sym=True):
    from gswitch.generators import uniform_random

    g = uniform_random(n, m, seed=seed)
    return g.symmetrize() if sym else g


def _gen(name, *args, **kw):
    from gswitch import generators

    return getattr(generators, name)(*args, **kw)


def _bipartite(n, m, exponent, seed):
    from bench_formulations import bipartite_zipf

    return bipartite_zipf(n, m, exponent=exponent, seed=seed)


FIELD = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}
#: The algorithms that start from a source (the graph's hub); the others run on every node.
FROM_SOURCE = ("bfs", "sssp")
#: Weights of the ``i``-th graph of a run (``--alg sssp``) hash with seed ``WEIGHT_SEED + i``.
WEIGHT_SEED = 100


def build(name: str, alg: str, weight_seed: int | None = None):
    """The graph of :data:`SPECS` called ``name``; for SSSP with integer weights in
    [1, 64) hashed from each edge's ends with ``weight_seed`` (the road grids keep their
    own).
    """
    makers = dict(SPECS)
    if name not in makers:
        raise SystemExit(f"bench_selector_tuned: no graph {name!r} in SPECS; known: "
                         f"{', '.join(makers)}")
    g = makers[name]()
    g.name = name
    if alg == "sssp":
        from bench_formulations import hashed_weights

        g = hashed_weights(g, weight_seed)
    return g


def source_kw(alg: str, src: int) -> dict:
    """``{"source": src}`` for an algorithm that starts from one, else nothing."""
    return {"source": src} if alg in FROM_SOURCE else {}


def peer_and_reference(alg: str, g, src: int, repeats: int) -> tuple[dict | None, object]:
    """The GPU peer's row (the CuPy frontier BFS or Bellman-Ford, CuPy FastSV, or the
    fastest cuSPARSE power iteration that reaches the peers' L1 error; ``None`` when it
    failed) and the reference answer every call is checked against (scipy's, or for
    PageRank a float64 power iteration to 1e-12 on the device)."""
    from bench_formulations import gpu_peers, primary_peer

    peer_args = argparse.Namespace(repeats=repeats, host_repeats=1, backend="gpu")
    if alg == "cc" and g.directed:
        # FastSV hooks over a symmetric edge list; CC of a directed graph is its weak
        # components, the symmetrised graph's components
        g = g.symmetrize()
    peers, refs = gpu_peers(alg, g, src, peer_args)
    return primary_peer(peers, "gpu"), refs[FIELD[alg]]


def time_in_rotation(alg: str, name: str, g, src: int, ref, runs: dict, repeats: int,
                     on_device: tuple[str, ...] = ()) -> dict:
    """``repeats`` calls (after one untimed round) of each configuration of ``runs``
    (label -> config; ``None``: the selector's pick, a plain ``gs.run`` with no config),
    in rotation, every answer checked against ``ref``: per label the median wall and
    device milliseconds, and the pick's ``selector_source`` and ``selector_config``.
    Labels in ``on_device`` run with ``arrays="cupy"``: the answer stays on the device,
    as the GPU peers' does (it is copied back after the timing to be checked).
    """
    import gswitch as gs
    from gswitch.testing.reference import compare

    out: dict = {}
    walls: dict[str, list[float]] = {k: [] for k in runs}
    devs: dict[str, list[float]] = {k: [] for k in runs}
    names = list(runs)
    for r_ in range(repeats + 1):
        k = r_ % len(names)
        for label in names[k:] + names[:k]:
            arrays = "cupy" if label in on_device else "numpy"
            t = time.perf_counter()
            r = gs.run(alg, g, backend="gpu", config=runs[label], arrays=arrays,
                       **source_kw(alg, src))
            wall = time.perf_counter() - t
            got = r.fields[FIELD[alg]]
            bad = compare(alg, got if isinstance(got, np.ndarray) else got.get(), ref)
            if bad:
                raise AssertionError(f"{alg} on {name}, {label}: wrong answer: {bad}")
            if r_:
                walls[label].append(wall * 1e3)
                devs[label].append(r.stats["device_time_s"] * 1e3)
            if runs[label] is None:
                out["selector_source"] = r.stats.get("config_source")
                out["selector_config"] = r.config.to_dict()
    for label in names:
        out[label] = {"wall_ms": statistics.median(walls[label]),
                      "device_ms": statistics.median(devs[label])}
    return out


def measure(name: str, g, trials: int, repeats: int, alg: str = "bfs",
            tuned_config: dict | None = None) -> dict:
    """One row: the CuPy peer, a fresh ``trials``-trial study of ``g`` (its own SQLite
    file, so no other graph's study warms it), then the selector's pick, the study's best
    and the default in rotation (:func:`time_in_rotation`), with their ratios. Given a
    ``tuned_config`` (``--recheck``), no study runs and that configuration stands for
    its best.
    """
    src = int(np.argmax(g.out_degree))
    peer, ref = peer_and_reference(alg, g, src, repeats)
    row = {"graph": name, "algorithm": alg, "n_nodes": g.n_nodes, "n_edges": g.n_edges,
           "directed": g.directed}
    if tuned_config is None:
        from gswitch.tuner import tune

        t = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            res = tune(alg, g, trials=trials, storage=f"sqlite:///{tmp}/study.db",
                       backend="gpu", name=f"sel-{name}", **source_kw(alg, src))
        tuned_config = res.best_config
        row.update(tune_s=time.perf_counter() - t, trials=res.new_trials)
    row.update(tuned_config=tuned_config, peer=peer and peer["name"],
               peer_ms=peer and peer["wall_ms"])
    row.update(time_in_rotation(alg, name, g, src, ref, {
        "selector": None, "tuned": tuned_config, "default": "default",
        "selector_on_device": None}, repeats, on_device=("selector_on_device",)))
    s, tu = row["selector"], row["tuned"]
    row["selector_over_tuned"] = s["wall_ms"] / tu["wall_ms"]
    row["selector_over_tuned_device"] = s["device_ms"] / tu["device_ms"]
    row["selector_over_peer"] = s["wall_ms"] / row["peer_ms"] if row["peer_ms"] else None
    # the peer's answer stays on the device: so does this call's
    row["selector_on_device_over_peer"] = (row["selector_on_device"]["wall_ms"]
                                           / row["peer_ms"] if row["peer_ms"] else None)
    tune_note = f"  tune {row['tune_s']:.0f} s" if "tune_s" in row else ""
    print(f"{alg} {name:24s} {g.n_nodes:>9,} nodes {g.n_edges:>11,} edges  selector "
          f"{s['wall_ms']:9.3f} ms  tuned {tu['wall_ms']:9.3f} ms  default "
          f"{row['default']['wall_ms']:9.3f}  peer {row['peer_ms'] or 0:9.3f}  sel/tuned "
          f"{row['selector_over_tuned']:.2f}x (device {row['selector_over_tuned_device']:.2f}x)"
          f"  sel/peer {row['selector_over_peer'] or 0:.2f}x (result on the device "
          f"{row['selector_on_device_over_peer'] or 0:.2f}x){tune_note}", flush=True)
    return row


def saved_rows(paths: list[str]) -> list[tuple[str, int, dict]]:
    """``(algorithm, weight seed, row)`` of each row of saved result files. Files written
    before rows named their algorithm are BFS runs; before rows kept their weight seed,
    the ``i``-th row of a file had ``WEIGHT_SEED + i`` (one run, one file)."""
    out = []
    for path in paths:
        data = json.loads(Path(path).read_text())
        for i, row in enumerate(data["rows"]):
            alg = row.get("algorithm") or data.get("algorithm") or "bfs"
            out.append((alg, row.get("weight_seed", WEIGHT_SEED + i), row))
    return out


def recheck(paths: list[str], repeats: int, graphs: set[str]) -> list[dict]:
    """Each saved row of a graph in ``graphs`` again, without a study: the selector's
    pick now, the row's ``tuned_config`` and the default in rotation, next to the peer;
    the row's earlier pick (``recorded``) and whether the pick changed."""
    rows = []
    for alg, seed, old in saved_rows(paths):
        if old["graph"] not in graphs:
            continue
        g = build(old["graph"], alg, seed)
        row = measure(old["graph"], g, 0, repeats, alg, tuned_config=old["tuned_config"])
        if alg == "sssp":
            row["weight_seed"] = seed
        row["recorded"] = {k: old.get(k) for k in ("selector_source", "selector_config",
                                                   "selector_over_tuned")}
        row["pick"] = pick_status(row["selector_config"], old.get("selector_config"))
        print(f"    pick {row['pick']} (was: {old.get('selector_source')}; "
              f"selector/tuned was {old.get('selector_over_tuned') or 0:.2f}x)", flush=True)
        rows.append(row)
    return rows


def pick_status(now: dict, recorded: dict | None) -> str:
    """``same`` or ``changed``: the two configurations compared on the keys both name (a
    row saved before an axis gained a parameter lacks that key), or ``not recorded``."""
    if not recorded:
        return "not recorded"
    shared = set(now) & set(recorded)
    return "same" if all(now[k] == recorded[k] for k in shared) else "changed"


def selector_pick(alg: str, g) -> tuple[dict, str]:
    """The configuration a plain GPU ``gs.run(alg, g)`` takes and its
    ``stats["config_source"]`` line, resolved as the run resolves them, on the host."""
    from gswitch.runner import _plan_call

    plan = _plan_call(alg, g, None, "gpu")
    return plan.config.to_dict(), plan.note


def picks(indices: list[int], algs: list[str], paths: list[str]) -> list[dict]:
    """Print, for each graph and algorithm, the selector's pick and, where a saved file
    holds that row, whether it is the pick recorded there; no GPU needed. SSSP graphs
    get the weights of their index (the selector weighs no weight feature)."""
    from bench_formulations import hashed_weights

    recorded = {(alg, row["graph"]): row for alg, _seed, row in saved_rows(paths)}
    out = []
    for i in indices:
        name = SPECS[i][0]
        g = build(name, "bfs")
        for alg in algs:
            config, note = selector_pick(
                alg, hashed_weights(g, WEIGHT_SEED + i) if alg == "sssp" else g)
            old = recorded.get((alg, name))
            status = pick_status(config, old and old.get("selector_config"))
            print(f"{alg:4s} {name:24s} {status:12s} {note}", flush=True)
            if status == "changed":
                print(f"{'':30s} was: {old.get('selector_source')}", flush=True)
            out.append({"graph": name, "algorithm": alg, "selector_source": note,
                        "selector_config": config, "pick": status})
    return out


def table(rows: list[dict]) -> str:
    lines = ["| graph | nodes | edges | selector ms | tuned ms | default ms | GPU peer ms | "
             "selector/tuned | selector/peer | the same, result on the device |",
             "|---" * 10 + "|"]

    def ratio(x: float | None) -> str:
        return f"{x:.2f}x" if x else "-"

    for r in rows:
        # no peer: it failed, or its answer was wrong; rows before the selector's call
        # with the result on the device was timed have no such ratio
        peer = f"{r['peer_ms']:.3f}" if r["peer_ms"] else "none verified"
        lines.append(f"| {r['graph']} | {r['n_nodes']:,} | {r['n_edges']:,} | "
                     f"{r['selector']['wall_ms']:.3f} | {r['tuned']['wall_ms']:.3f} | "
                     f"{r['default']['wall_ms']:.3f} | {peer} | "
                     f"{r['selector_over_tuned']:.2f}x | {ratio(r['selector_over_peer'])} | "
                     f"{ratio(r.get('selector_on_device_over_peer'))} |")
    ratios = [r["selector_over_tuned"] for r in rows]
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    dev = [r["selector_over_tuned_device"] for r in rows]
    geo_dev = math.exp(sum(math.log(x) for x in dev) / len(dev))
    slower = [r["graph"] for r in rows if r["selector_over_peer"] and r["selector_over_peer"] > 1]
    timed = [r for r in rows if r.get("selector_on_device_over_peer")]
    slower_dev = [r["graph"] for r in timed if r["selector_on_device_over_peer"] > 1]
    lines.append("")
    lines.append(f"{len(rows)} graphs: geomean selector/tuned {geo:.3f}x end to end "
                 f"({geo_dev:.3f}x device time; target <= 1.25x), worst {max(ratios):.2f}x "
                 f"(target <= 2x), slower than the GPU peer on {len(slower)} "
                 f"{slower if slower else ''}"
                 + (f"; with the result on the device, on {len(slower_dev)} of "
                    f"{len(timed)} {slower_dev if slower_dev else ''}" if timed else ""))
    return "\n".join(lines)


def plot(rows: list[dict], path: str, title: str = "") -> None:
    """Per graph, the pick's time over the study's and over the GPU peer's (the plain
    call, and where timed the call with its result on the device): stems from 1x on log
    scales, the targets drawn, written to ``path`` (.png, .svg or .pdf)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FixedLocator, NullLocator
    except ImportError:
        raise SystemExit("bench_selector_tuned: --plot needs matplotlib: "
                         "pip install matplotlib") from None
    names = [r["graph"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 0.32 * len(rows) + 1.6),
                                      sharey=True)

    def stems(ax, points, color, label=None, shift=0.0):
        ys = [i + shift for i, _ in points]
        xs = [x for _, x in points]
        ax.hlines(ys, 1.0, xs, color=color, linewidth=2)
        ax.plot(xs, ys, "o", color=color, label=label)
        return xs

    xs = stems(left, [(i, r["selector_over_tuned"]) for i, r in enumerate(rows)], "tab:blue")
    for x, style in ((1.25, "--"), (2.0, ":")):
        left.axvline(x, color="tab:red", linestyle=style, linewidth=1)
    left.set_xlabel("selector / 40-trial study (targets: geomean 1.25x, each 2x)")
    peer = [(i, r["selector_over_peer"]) for i, r in enumerate(rows) if r["selector_over_peer"]]
    dev = [(i, r["selector_on_device_over_peer"]) for i, r in enumerate(rows)
           if r.get("selector_on_device_over_peer")]
    right_xs = stems(right, peer, "tab:green", "plain call (result on the host)",
                     -0.15 if dev else 0.0)
    if dev:
        right_xs += stems(right, dev, "tab:olive", "result left on the device", 0.15)
    right.axvline(1.0, color="tab:red", linestyle="--", linewidth=1)
    right.set_xlabel("selector / GPU peer (target: at most 1x)")
    right.legend(loc="upper left", fontsize="small", framealpha=0.9)
    for ax, values, ticks in ((left, xs + [2.1], (0.5, 0.8, 1, 1.25, 1.5, 2)),
                              (right, right_xs, (0.05, 0.1, 0.2, 0.5, 1, 2))):
        ax.set_xscale("log")
        lo, hi = min(values + [0.9]) / 1.15, max(values + [1.1]) * 1.15
        ax.set_xlim(lo, hi)
        ax.xaxis.set_major_locator(FixedLocator([t for t in ticks if lo <= t <= hi]))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(lambda v, _pos: f"{v:g}x")
        ax.grid(axis="x", color="0.9")
    left.set_yticks(range(len(rows)), names)
    left.invert_yaxis()
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _indices(text: str) -> list[int]:
    """``"9,10,13-15"`` as ``[9, 10, 13, 14, 15]``."""
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graphs", default=f"0-{len(SPECS) - 1}",
                    help="indices and ranges, e.g. 0-9 or 9,10,13-15")
    ap.add_argument("--alg", choices=sorted(FIELD),
                    help="algorithm (default: bfs; --picks: all)")
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--tag", default="")
    ap.add_argument("--budget-s", type=float, default=0.0,
                    help="start no further graph once this many seconds have passed "
                         "(0: no limit); the rows done are written after each graph")
    ap.add_argument("--table", nargs="+", help="print the table of these JSON files")
    ap.add_argument("--plot", metavar="FILE",
                    help="with --table: also draw the ratios per graph into FILE")
    ap.add_argument("--recheck", nargs="+", metavar="FILE",
                    help="time each row of these result files again, without a study")
    ap.add_argument("--picks", nargs="*", metavar="FILE",
                    help="print the selector's picks (no GPU), compared with these files'")
    args = ap.parse_args()
    if args.table:
        rows = [r for f in args.table for r in json.loads(Path(f).read_text())["rows"]]
        print(table(rows))
        if args.plot:
            algs = sorted({r.get("algorithm") or "bfs" for r in rows})
            plot(rows, args.plot, f"{', '.join(algs)}: the selector's pick on "
                 f"{len(rows)} unseen graphs")
            print(f"wrote {args.plot}")
        return
    if args.picks is not None:
        picks(_indices(args.graphs), [args.alg] if args.alg else sorted(FIELD), args.picks)
        return
    from _common import require_gpu

    require_gpu("bench_selector_tuned.py")
    from gswitch.engine.gpu import GpuEngine

    tag = "_" + args.tag if args.tag else ""
    if args.recheck:
        rows = recheck(args.recheck, args.repeats,
                       {SPECS[i][0] for i in _indices(args.graphs)})
        write_json(f"bench_selector_tuned_recheck{tag}",
                   {"device": GpuEngine.instance().device_name, "rechecked": args.recheck,
                    "rows": rows})
        for alg in sorted({r["algorithm"] for r in rows}):
            print(f"\n{alg}:\n" + table([r for r in rows if r["algorithm"] == alg]))
        return
    alg = args.alg or "bfs"
    rows = []
    t0 = time.perf_counter()
    for name, _make in [SPECS[i] for i in _indices(args.graphs)]:
        if args.budget_s and time.perf_counter() - t0 > args.budget_s:
            print(f"--budget-s {args.budget_s:g} spent: {name} and the graphs after it "
                  "not measured", flush=True)
            break
        seed = WEIGHT_SEED + len(rows)  # saved_rows relies on it for rows without a seed
        g = build(name, alg, seed)
        rows.append(measure(name, g, args.trials, args.repeats, alg))
        if alg == "sssp":
            rows[-1]["weight_seed"] = seed
        write_json(f"bench_selector_tuned_{alg}{tag}",
                   {"device": GpuEngine.instance().device_name, "trials": args.trials,
                    "algorithm": alg, "rows": rows})
    print(table(rows))


if __name__ == "__main__":
    main()
