"""Strongly connected components on the CPU engine (or the GPU) against scipy and
networkx, on ~100k-edge directed graphs.

Targets (issue 26): at most 5x the faster peer and never slower than networkx. Wall
time and process CPU time are both recorded (the second for a machine shared with
other work). The
peers are ``scipy.sparse.csgraph.connected_components(connection='strong')`` on a CSR
matrix and ``networkx.strongly_connected_components`` on an ``nx.DiGraph``, each built
beforehand, as gswitch gets its ``Graph``. Median of ``--repeats`` calls; each gswitch
call is on a fresh copy of the graph object (a first call: the reverse graph and the
engine's per-graph arrays are built inside the timed call). Every formulation (``coloring``,
``forward_backward``) is timed; every answer is compared with scipy's before its time
counts.

Usage: python benchmarks/bench_scc.py [--backend cpu|gpu] [--repeats 5] [--tag NAME]
Writes <backend>_scc[_NAME].json to $OUT (or ./bench-results).
"""

from __future__ import annotations

import argparse
import statistics
import time

import networkx as nx
import numpy as np
import scipy.sparse.csgraph as csgraph
from _common import require_gpu, write_json

import gswitch as gs
import gswitch.plugins
from gswitch.generators import rmat, road
from gswitch.testing.reference import compare, reference


def _road_directed(side: int, seed: int = 0) -> gs.Graph:
    """A road grid whose streets are two-way with probability 0.7, else one-way in a
    random direction: many strong components, some large."""
    g = road(side, side, seed=seed)
    src, dst = g.edges()
    once = src < dst
    src, dst = src[once], dst[once]
    rng = np.random.default_rng(seed)
    both = rng.random(src.size) < 0.7
    flip = rng.random(src.size) < 0.5
    a = np.where(flip, dst, src)
    b = np.where(flip, src, dst)
    s = np.concatenate([a, b[both]])
    d = np.concatenate([b, a[both]])
    return gs.Graph.from_edges(s, d, n_nodes=g.n_nodes, name=f"road-{side} one-way 30%")


def _graphs():
    return [rmat(14, 6, seed=2), _road_directed(180)]


def _median(fn, repeats):
    """Median wall time, median process CPU time and the last answer of ``repeats``
    calls (CPU time stays meaningful on a machine shared with other work)."""
    ts, cs, out = [], [], None
    for _ in range(repeats):
        c, t = time.process_time(), time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
        cs.append(time.process_time() - c)
    return statistics.median(ts), statistics.median(cs), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    if args.backend == "gpu":
        require_gpu("bench_scc.py")
    rows = []
    for g in _graphs():
        ref = reference("scc", g)
        a = g.to_scipy()
        G = nx.DiGraph()
        G.add_nodes_from(range(g.n_nodes))
        G.add_edges_from(zip(*(x.tolist() for x in g.edges())))
        scipy_s, scipy_c, _ = _median(lambda a=a: csgraph.connected_components(
            a, directed=True, connection="strong"), args.repeats)
        nx_s, nx_c, comps = _median(lambda G=G: list(nx.strongly_connected_components(G)),
                                    args.repeats)
        assert len(comps) == np.unique(ref).size
        best = min(scipy_s, nx_s)
        for variant in sorted(gs.plugins.get_registry().variants["scc"]):
            answers = []
            copies = iter([gs.Graph(g.indptr, g.indices, g.weights, directed=True,
                                    validate=False) for _ in range(args.repeats)])

            def call(variant=variant, answers=answers, copies=copies):
                answers.append(gs.run("scc", next(copies), backend=args.backend,
                                      config={"variant": variant}))

            t, c, _ = _median(call, args.repeats)
            for r in answers:
                problem = compare("scc", r.fields["scc"], ref)
                assert problem is None, f"scc[{variant}] on {g.name}: {problem}"
            r = answers[-1]
            rows.append({"graph": g.name, "variant": variant, "nodes": g.n_nodes,
                         "edges": g.n_edges, "components": int(np.unique(ref).size),
                         "backend": args.backend, "gswitch_s": t, "scipy_s": scipy_s,
                         "networkx_s": nx_s, "ratio_to_fastest_peer": t / best,
                         "ratio_to_networkx": t / nx_s, "gswitch_cpu_s": c,
                         "scipy_cpu_s": scipy_c, "networkx_cpu_s": nx_c,
                         "cpu_ratio_to_fastest_peer": c / min(scipy_c, nx_c),
                         "cpu_ratio_to_networkx": c / nx_c,
                         "iterations": r.stats["iterations"], "verified": True})
            print(f"{g.name}: {g.n_nodes:,} nodes, {g.n_edges:,} edges, "
                  f"{np.unique(ref).size:,} components: {variant:>16} "
                  f"{t * 1e3:7.1f} ms ({r.stats['iterations']} steps)  scipy "
                  f"{scipy_s * 1e3:6.1f} ms  networkx {nx_s * 1e3:6.1f} ms  -> "
                  f"{t / best:5.2f}x fastest peer, {t / nx_s:4.2f}x networkx; CPU time "
                  f"{c * 1e3:6.1f} / {scipy_c * 1e3:5.1f} / {nx_c * 1e3:6.1f} ms -> "
                  f"{c / min(scipy_c, nx_c):5.2f}x, {c / nx_c:4.2f}x")
    name = f"{args.backend}_scc" + (f"_{args.tag}" if args.tag else "")
    print("wrote", write_json(name, {"backend": args.backend, "repeats": args.repeats,
                                     "rows": rows}))


if __name__ == "__main__":
    main()
