"""``nx.<fn>(G, backend="gswitch")`` against networkx itself, answers verified.

Graphs: a 1,000-node graph (the per-call cost: target 2 ms per call on the GPU) and a
1M-edge graph, undirected and directed random graphs with integer weights. On the large
undirected graph, sampled betweenness (``k=64``) too; networkx's pure-Python Brandes is
timed with ``--bc-nx-k`` sources and scaled (its cost is the same per source), and both
answers are compared on those sources (target: 50x networkx for betweenness, PageRank,
connected components, core numbers and triangles). Each
function is timed on an already converted graph (networkx keeps the conversion in
``G.__networkx_cache__``; the conversion is timed apart) and compared with networkx's
answer. The engine is the GPU when CuPy sees one, else the CPU (``--backend``).

    python benchmarks/bench_nx_backend.py --out benchmarks/results/cpu_nx_backend.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable

import networkx as nx
import numpy as np

from gswitch.runner import gpu_available


def _graph(n: int, m: int, directed: bool, seed: int) -> nx.Graph:
    G = nx.gnm_random_graph(n, m, seed=seed, directed=directed)
    rng = np.random.default_rng(seed)
    for (_, _, d), w in zip(G.edges(data=True), rng.integers(1, 20, m).tolist()):
        d["weight"] = w
    return G


def _same(name: str, got, want) -> None:
    if name == "pagerank":
        err = max(abs(got[k] - want[k]) for k in want)
        if got.keys() != want.keys() or err > 1e-6:
            raise AssertionError(f"pagerank differs from networkx by {err:g}")
    elif name == "connected_components":
        if [sorted(c) for c in got] != [sorted(c) for c in want]:
            raise AssertionError(f"{name} differs from networkx")
    elif got != want:
        raise AssertionError(f"{name} differs from networkx")


def _calls(G: nx.Graph, source) -> dict[str, Callable]:
    calls = {
        "single_source_shortest_path_length":
            lambda **kw: nx.single_source_shortest_path_length(G, source, **kw),
        "bfs_layers": lambda **kw: list(nx.bfs_layers(G, source, **kw)),
        "bfs_edges": lambda **kw: list(nx.bfs_edges(G, source, **kw)),
        "single_source_dijkstra_path_length":
            lambda **kw: nx.single_source_dijkstra_path_length(G, source, **kw),
        "pagerank": lambda **kw: nx.pagerank(G, tol=1e-8, **kw),
    }
    if not G.is_directed():
        # the sets, as networkx returns them (sorted for the comparison, untimed)
        calls["connected_components"] = \
            lambda **kw: list(nx.connected_components(G, **kw))
        calls["is_connected"] = lambda **kw: nx.is_connected(G, **kw)
        calls["core_number"] = lambda **kw: nx.core_number(G, **kw)
        calls["triangles"] = lambda **kw: nx.triangles(G, **kw)
    return calls


def _betweenness(G: nx.Graph, k: int, nx_k: int) -> dict:
    """Sampled betweenness: gswitch with ``k`` sources against networkx with ``nx_k``
    (its pure-Python Brandes costs the same per source, so its time for ``k`` sources is
    ``k / nx_k`` times that), both answers checked on the same ``nx_k`` sources.
    """
    t = time.perf_counter()
    want = nx.betweenness_centrality(G, k=nx_k, seed=7, backend="networkx")
    t_nx = (time.perf_counter() - t) * k / nx_k
    got = nx.betweenness_centrality(G, k=nx_k, seed=7, backend="gswitch")
    err = max(abs(got[v] - want[v]) for v in want)
    if got.keys() != want.keys() or err > 1e-6 * max(1.0, max(want.values())):
        raise AssertionError(f"betweenness differs from networkx by {err:g}")
    t_gs, _ = _time(lambda: nx.betweenness_centrality(G, k=k, seed=7, backend="gswitch"),
                    2, 30.0)
    return {"function": f"betweenness_centrality k={k}", "networkx_s": t_nx,
            "networkx_note": f"networkx timed with k={nx_k}, times {k / nx_k:g}",
            "gswitch_s": t_gs, "speedup": t_nx / t_gs, "verified": True}


def _time(f: Callable, repeat: int, budget_s: float) -> tuple[float, object]:
    out = f()
    times = []
    start = time.perf_counter()
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
        if time.perf_counter() - start > budget_s:
            break
    return float(np.median(times)), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--large-edges", type=int, default=1_000_000)
    ap.add_argument("--out", default="")
    ap.add_argument("--bc-k", type=int, default=64,
                    help="betweenness samples on the large graph (0: skip it)")
    ap.add_argument("--bc-nx-k", type=int, default=4,
                    help="samples networkx runs (its time is scaled to --bc-k)")
    ap.add_argument("--only", default="",
                    help="comma-separated function names to time (default: all; "
                         "betweenness_centrality is the large graph's sampled run)")
    ap.add_argument("--large-only", action="store_true", help="skip the 1k-node graph")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    engine = ("gpu" if gpu_available() else "cpu") if args.backend == "auto" else args.backend
    nx.config.backends.gswitch.backend = engine
    nx.config.warnings_to_ignore.add("cache")
    cases = [("1k nodes / 4k edges", 1_000, 4_000),
             (f"{args.large_edges // 1000}k edges", args.large_edges // 4, args.large_edges)]
    if args.large_only:
        cases = cases[1:]
    rows = []
    for label, n, m in cases:
        for directed in (False, True):
            G = _graph(n, m, directed, seed=n)
            t = time.perf_counter()
            nx.pagerank(G, backend="gswitch", max_iter=1000)  # converts and caches "weight"
            first_call = time.perf_counter() - t
            nx.single_source_shortest_path_length(G, 0, backend="gswitch")  # unweighted key
            for name, call in _calls(G, 0).items():
                if only and name not in only:
                    continue
                repeat = args.repeat if n <= 10_000 else 3
                t_nx, want = _time(lambda c=call: c(backend="networkx"), repeat, 30.0)
                t_gs, got = _time(lambda c=call: c(backend="gswitch"), repeat, 30.0)
                _same(name, got, want)
                row = {"graph": label, "directed": directed, "nodes": n, "edges": m,
                       "function": name, "networkx_s": t_nx, "gswitch_s": t_gs,
                       "speedup": t_nx / t_gs, "verified": True, "engine": engine}
                rows.append(row)
                print(f"{label:20s} {'dir' if directed else 'und'} {name:36s} networkx "
                      f"{t_nx * 1e3:9.2f} ms  gswitch {t_gs * 1e3:9.2f} ms  "
                      f"{row['speedup']:6.2f}x", flush=True)
            if not directed and n > 10_000 and args.bc_k and (
                    not only or "betweenness_centrality" in only):
                row = {"graph": label, "directed": directed, "nodes": n, "edges": m,
                       **_betweenness(G, args.bc_k, args.bc_nx_k), "engine": engine}
                rows.append(row)
                print(f"{label:20s} und {row['function']:36s} networkx "
                      f"{row['networkx_s'] * 1e3:9.2f} ms  gswitch "
                      f"{row['gswitch_s'] * 1e3:9.2f} ms  {row['speedup']:6.2f}x "
                      f"({row['networkx_note']})", flush=True)
            rows.append({"graph": label, "directed": directed, "nodes": n, "edges": m,
                         "function": "first pagerank call (conversion included)",
                         "gswitch_s": first_call, "engine": engine})
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"benchmark": "nx_backend", "engine": engine,
                       "machine": platform.processor() or platform.machine(),
                       "python": platform.python_version(), "networkx": nx.__version__,
                       "target_per_call_s_gpu_1k": 0.002, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
