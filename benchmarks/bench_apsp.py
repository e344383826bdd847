"""All-pairs shortest path lengths on the CPU engine (or the GPU) against scipy and
networkx, on few-thousand-node graphs.

Targets (issue 26): at most 5x the faster peer and never slower than networkx. Two
cases: hop counts on a directed uniform graph (gswitch ``repeated_sssp``: multi-source
BFS, 64 sources per traversal; scipy ``shortest_path(unweighted=True)``; networkx
``all_pairs_shortest_path_length`` into a dict), and weighted lengths on a smaller graph
(gswitch blocked ``floyd_warshall``; scipy ``floyd_warshall``; networkx
``floyd_warshall_numpy``). Peers get their matrix or ``nx.DiGraph`` built beforehand,
as gswitch gets its ``Graph``. Median of ``--repeats`` calls; every answer is compared
with scipy's before its time counts.

Usage: python benchmarks/bench_apsp.py [--backend cpu|gpu] [--repeats 3] [--tag NAME]
Writes <backend>_apsp[_NAME].json to $OUT (or ./bench-results).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import scipy.sparse.csgraph as csgraph
from _common import peer_parser, peer_ratios, require_gpu, timed, write_json
from gswitch.algorithms.apsp import shortest_path_lengths

from gswitch.generators import uniform_random


def _digraph(g):
    G = nx.DiGraph()
    G.add_nodes_from(range(g.n_nodes))
    w = g.weights if g.weighted else np.ones(g.n_edges)
    G.add_weighted_edges_from(zip(*(x.tolist() for x in g.edges()), w.tolist()))
    return G


def _nx_hops(G, n):
    out = np.full((n, n), np.inf)
    for s, row in nx.all_pairs_shortest_path_length(G):
        out[s, list(row)] = list(row.values())
    return out


def _cases():
    hops = uniform_random(2000, 8000, seed=1).deduplicate()
    # scipy sums parallel edges and networkx keeps the last one: give them none
    weighted = uniform_random(800, 4000, seed=2, weighted=True).deduplicate()
    return [
        ("hops", "repeated_sssp", hops,
         lambda a: csgraph.shortest_path(a, unweighted=True),
         lambda G, n: _nx_hops(G, n), "all_pairs_shortest_path_length"),
        ("weighted", "floyd_warshall", weighted,
         lambda a: csgraph.floyd_warshall(a),
         lambda G, n: np.asarray(nx.floyd_warshall_numpy(G, nodelist=range(n))),
         "floyd_warshall_numpy"),
    ]


def main() -> None:
    ap = peer_parser(__doc__, repeats=3)
    args = ap.parse_args()
    if args.backend == "gpu":
        require_gpu("bench_apsp.py")
    rows = []
    for label, method, g, scipy_fn, nx_fn, nx_name in _cases():
        a = g.to_scipy()
        a.sum_duplicates()
        assert a.nnz == g.n_edges, "the cases must have no parallel edges"
        G = _digraph(g)
        scipy_s, want = timed(lambda f=scipy_fn, a=a: f(a), args.repeats)
        nx_s, nx_d = timed(lambda f=nx_fn, G=G, n=g.n_nodes: f(G, n), args.repeats)
        np.testing.assert_allclose(nx_d, want, rtol=1e-5)
        t, got = timed(lambda g=g, m=method: shortest_path_lengths(
            g, method=m, backend=args.backend), args.repeats)
        np.testing.assert_allclose(got, want, rtol=1e-5)
        best = min(scipy_s, nx_s)
        rows.append({"case": label, "method": method, "graph": g.name, "nodes": g.n_nodes,
                     "edges": g.n_edges, "backend": args.backend, "gswitch_s": t,
                     "scipy_s": scipy_s, "networkx_s": nx_s, "networkx_function": nx_name,
                     **peer_ratios(t, scipy_s, nx_s),
                     "verified": True})
        print(f"{label} ({method}) on {g.name}: {g.n_nodes:,} nodes, {g.n_edges:,} edges: "
              f"gswitch {t:7.2f} s  scipy {scipy_s:7.2f} s  networkx {nx_s:7.2f} s  -> "
              f"{t / best:5.2f}x fastest peer, {t / nx_s:5.2f}x networkx")
    name = f"{args.backend}_apsp" + (f"_{args.tag}" if args.tag else "")
    print("wrote", write_json(name, {"backend": args.backend, "repeats": args.repeats,
                                     "rows": rows}))


if __name__ == "__main__":
    main()
