"""Conversion of a networkx graph for the gswitch backend against nx.to_scipy_sparse_array.

Both in the same run on the same graphs (a 10k-node/30k-edge and a 100k-edge random
graph, undirected and directed, with a ``weight`` attribute), best of ``--repeat``;
every conversion is checked against the scipy matrix. Target: the backend's conversion
takes at most 1.5x networkx's own ``to_scipy_sparse_array``.

    python benchmarks/bench_nx_convert.py --out benchmarks/results/cpu_nx_convert.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import networkx as nx
import numpy as np
import scipy.sparse as sp

from gswitch.graph import Graph
from gswitch.nxbackend._graph import from_networkx

TARGET_RATIO = 1.5


def _graph(n: int, m: int, directed: bool, seed: int) -> nx.Graph:
    G = nx.gnm_random_graph(n, m, seed=seed, directed=directed)
    rng = np.random.default_rng(seed)
    for (_, _, d), w in zip(G.edges(data=True), rng.integers(1, 100, m).tolist()):
        d["weight"] = w
    return G


def _best(f, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def _check(G: nx.Graph, weight: str | None) -> None:
    """The converted CSR holds the scipy matrix's entries (summed over parallel ones)."""
    B = from_networkx(G, None if weight is None else {weight: 1})
    n = len(G)
    data = np.ones(B.indices.size) if weight is None else B.weights[weight].astype(float)
    got = sp.csr_array((data, B.indices, B.indptr), shape=(n, n))
    got.sum_duplicates()
    want = nx.to_scipy_sparse_array(G, weight=weight, format="csr")
    if (got != want).nnz:
        raise AssertionError("the backend's conversion differs from to_scipy_sparse_array")
    g = Graph.from_networkx(G, weight=weight)
    if g.n_edges != B.indices.size:
        raise AssertionError("Graph.from_networkx stores another number of edges")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    cases = [("10k nodes / 30k edges", 10_000, 30_000), ("100k edges", 30_000, 100_000)]
    rows = []
    for label, n, m in cases:
        for directed in (False, True):
            G = _graph(n, m, directed, seed=n + m)
            for weight in ("weight", None):
                _check(G, weight)
                attrs = None if weight is None else {weight: 1}
                t_nx = _best(lambda G=G, w=weight: nx.to_scipy_sparse_array(G, weight=w),
                             args.repeat)
                t_backend = _best(lambda G=G, a=attrs: from_networkx(G, a), args.repeat)
                t_graph = _best(lambda G=G, w=weight: Graph.from_networkx(G, weight=w),
                                args.repeat)
                row = {"graph": label, "directed": directed, "weight": weight,
                       "nodes": n, "edges": m, "nx_to_scipy_s": t_nx,
                       "backend_convert_s": t_backend, "graph_from_networkx_s": t_graph,
                       "ratio": t_backend / t_nx, "verified": True}
                rows.append(row)
                print(f"{label:22s} {'directed' if directed else 'undirected':10s} "
                      f"weight={weight!s:6s} to_scipy {t_nx * 1e3:7.2f} ms  backend "
                      f"{t_backend * 1e3:7.2f} ms ({row['ratio']:.2f}x)  "
                      f"Graph.from_networkx {t_graph * 1e3:7.2f} ms")
    worst = max(r["ratio"] for r in rows)
    print(f"worst ratio {worst:.2f}x (target <= {TARGET_RATIO}x)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"benchmark": "nx_convert", "machine": platform.processor() or
                       platform.machine(), "python": platform.python_version(),
                       "networkx": nx.__version__, "target_ratio": TARGET_RATIO,
                       "worst_ratio": worst, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
