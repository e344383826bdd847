"""Where the gswitch networkx backend stops losing to networkx: the should_run thresholds.

Random graphs of mean degree 6 from 100 to 10,000 nodes (weights uniform in [0, 1) for
the spanning tree); each function timed (median)
(``maximal_independent_set``'s answer, which is not unique, checked independent and
maximal)
through networkx's dispatch with ``backend="networkx"`` and ``backend="gswitch"`` on an
already converted graph, answers compared. The sizes (nodes plus edges) where gswitch
starts to win are ``gswitch.nxbackend._dispatch.SMALL_GRAPH``.

    python benchmarks/nx_should_run.py | tee benchmarks/results/cpu_nx_should_run.txt
"""

import time

import networkx as nx
import numpy as np

from gswitch.runner import gpu_available


def median(f, repeat=15):
    f()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def _independent_maximal(G, chosen):
    return (all(u not in chosen or v not in chosen for u, v in G.edges() if u != v)
            and all(v in chosen or any(w in chosen for w in G[v]) for v in G))


def main():
    nx.config.warnings_to_ignore.add("cache")
    print("engine:", "gpu" if gpu_available() else "cpu", "; times in ms, networkx / gswitch")
    for n in (100, 300, 1000, 3000, 10000):
        G = nx.gnm_random_graph(n, 3 * n, seed=1)
        W = G.copy()  # random weights for the spanning tree
        for (_, _, d), x in zip(W.edges(data=True), np.random.default_rng(1).random(3 * n)):
            d["weight"] = float(x)
        calls = {
            "sssp_length": lambda G=G, **k: nx.single_source_shortest_path_length(G, 0, **k),
            "dijkstra": lambda G=G, **k: nx.single_source_dijkstra_path_length(G, 0, **k),
            "components": lambda G=G, **k: list(nx.connected_components(G, **k)),
            "pagerank": lambda G=G, **k: nx.pagerank(G, **k),
            "mst": lambda W=W, **k: nx.minimum_spanning_tree(W, **k)._adj,
            "mst_edges": lambda W=W, **k: list(nx.minimum_spanning_edges(W, data=False,
                                                                         **k)),
            "mis": lambda G=G, **k: nx.maximal_independent_set(G, seed=1, **k),
        }
        cells = []
        for name, f in calls.items():
            want, got = f(backend="networkx"), f(backend="gswitch")
            if name == "pagerank":
                ok = max(abs(got[v] - want[v]) for v in want) < 1e-6
            elif name == "mis":  # not unique: independent and maximal
                ok = _independent_maximal(G, set(got))
            else:
                ok = got == want
            assert ok, name
            a = median(lambda f=f: f(backend="networkx"))
            b = median(lambda f=f: f(backend="gswitch"))
            cells.append(f"{name} {a * 1e3:.2f}/{b * 1e3:.2f}{' *' if b < a else ''}")
        print(f"{n:6d} nodes + {3 * n:6d} edges = {4 * n:6d}: " + " | ".join(cells), flush=True)
    print("* gswitch faster")


if __name__ == "__main__":
    main()
