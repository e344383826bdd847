"""Minimum spanning forest on the CPU engine (or the GPU) against scipy and networkx, on
~100k-edge road and RMAT graphs.

Targets (issue 26): at most 5x the faster peer and never slower than networkx. The
peers are ``scipy.sparse.csgraph.minimum_spanning_tree`` on a CSR matrix and
``networkx.minimum_spanning_tree`` on an ``nx.Graph``, each built beforehand, as gswitch
gets its ``Graph``; the networkx backend's ``minimum_spanning_tree`` (converting the
networkx graph on every call) is timed beside them. Median of ``--repeats`` calls; each
gswitch call is on a fresh copy of the graph object (a first call). Every answer is
checked before its time counts. The same calls on one resident graph object (its
device copy and derived data kept, as the other benchmarks time them) are reported
beside them; the GPU target is read on those. The forest weighs what scipy's and networkx's weigh,
has ``n - components`` edges and joins exactly the graph's components.

The RMAT graph is made simple (the lightest of parallel edges, no self loops) so that
the three agree on what an edge is: scipy would add up duplicate entries, networkx keep
the last one.

``--road N`` adds the NxN road grid (the GPU target: N = 2048, at most 50 ms), timed
against scipy only (networkx would take minutes there).

Usage: python benchmarks/bench_msf.py [--backend cpu|gpu] [--repeats 5] [--road N]
           [--tag NAME]
Writes <backend>_msf[_NAME].json to $OUT (or ./bench-results).
"""

from __future__ import annotations

import statistics
import time

import networkx as nx
import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
from _common import peer_parser, peer_ratios, require_gpu, timed, write_json
from gswitch.algorithms.msf import forest_edges

import gswitch as gs
from gswitch.generators import rmat, road


def _graphs(large: int) -> list[tuple[gs.Graph, bool]]:
    """The graphs, each with whether networkx runs on it too."""
    out = [(road(180, 180, seed=1), True),
           (rmat(14, 6, seed=2, weighted=True, directed=False, duplicates="min",
                 self_loops="drop"), True)]
    return out + ([(road(large, large, seed=1), False)] if large else [])


def _check(g: gs.Graph, edges: list[tuple[int, int, float]], want: float) -> None:
    """The forest weighs ``want``, has n - components edges and the graph's components."""
    u, v, w = (np.array(x) for x in zip(*edges)) if edges else (np.zeros(0),) * 3
    n_comp, labels = csgraph.connected_components(g.to_scipy(), directed=False)
    forest = sp.coo_array((np.ones(len(edges)), (u, v)), shape=(g.n_nodes, g.n_nodes))
    f_comp, f_labels = csgraph.connected_components(forest, directed=False)
    assert len(edges) == g.n_nodes - n_comp, f"{len(edges)} edges, {n_comp} components"
    # the same partition: as many components, each forest component inside one of G's
    assert f_comp == n_comp
    assert np.unique(np.stack([f_labels, labels]), axis=1).shape[1] == n_comp
    assert abs(float(w.sum()) - want) <= 1e-6 * max(1.0, want), (float(w.sum()), want)


def main() -> None:
    ap = peer_parser(__doc__, repeats=5)
    ap.add_argument("--road", type=int, default=0,
                    help="also the NxN road grid, against scipy only (GPU target: 2048)")
    args = ap.parse_args()
    if args.backend == "gpu":
        require_gpu("bench_msf.py")
    nx.config.backends.gswitch.backend = args.backend
    rows = []
    for g, with_nx in _graphs(args.road):
        a = g.to_scipy()
        scipy_s, tree = timed(lambda a=a: csgraph.minimum_spanning_tree(a), args.repeats)
        want = float(tree.sum())
        if with_nx:
            src, dst = g.edges()
            once = src < dst
            G = nx.Graph()
            G.add_nodes_from(range(g.n_nodes))
            G.add_weighted_edges_from(zip(src[once].tolist(), dst[once].tolist(),
                                          g.weights[once].astype(float).tolist()))
            nx_s, T = timed(lambda G=G: nx.minimum_spanning_tree(G, backend="networkx"),
                            args.repeats)
            assert abs(T.size(weight="weight") - want) <= 1e-6 * want
        ts = []
        for _ in range(args.repeats):
            copy = gs.Graph(g.indptr, g.indices, g.weights, directed=g.directed,
                            validate=False)
            t = time.perf_counter()
            r = gs.run("minimum_spanning_forest", copy, backend=args.backend)
            ts.append(time.perf_counter() - t)
            _check(g, forest_edges(r), want)
        t = statistics.median(ts)
        # the same graph object again and again: its device copy and derived data kept
        resident_s, r = timed(lambda g=g: gs.run("minimum_spanning_forest", g,
                                                 backend=args.backend), args.repeats,
                              warmup=1)
        _check(g, forest_edges(r), want)

        if not with_nx:
            rows.append({"graph": g.name, "nodes": g.n_nodes, "edges": g.n_edges,
                         "forest_weight": want, "backend": args.backend, "gswitch_s": t,
                         "gswitch_resident_s": resident_s,
                         "scipy_s": scipy_s, "gswitch_over_scipy": t / scipy_s,
                         "iterations": r.stats["iterations"], "verified": True})
            print(f"{g.name}: {g.n_nodes:,} nodes, {g.n_edges:,} edges: gswitch "
                  f"{t * 1e3:8.1f} ms first call, {resident_s * 1e3:7.1f} ms resident "
                  f"({r.stats['iterations']} steps)  scipy {scipy_s * 1e3:7.1f} ms  -> "
                  f"{t / scipy_s:5.2f}x scipy", flush=True)
            continue

        def via_backend(G=G):
            G.__networkx_cache__.clear()  # convert on every call, as a first call does
            return nx.minimum_spanning_tree(G, backend="gswitch")

        backend_s, B = timed(via_backend, args.repeats)
        assert B._adj == T._adj  # the backend gives networkx's own (Kruskal's) tree
        best = min(scipy_s, nx_s)
        rows.append({"graph": g.name, "nodes": g.n_nodes, "edges": g.n_edges,
                     "forest_weight": want, "backend": args.backend, "gswitch_s": t,
                     "gswitch_resident_s": resident_s, "scipy_s": scipy_s,
                     "networkx_s": nx_s, "nx_backend_s": backend_s,
                     **peer_ratios(t, scipy_s, nx_s),
                     "iterations": r.stats["iterations"], "verified": True})
        print(f"{g.name}: {g.n_nodes:,} nodes, {g.n_edges:,} edges: gswitch "
              f"{t * 1e3:8.1f} ms first call, {resident_s * 1e3:7.1f} ms resident "
              f"({r.stats['iterations']} steps)  scipy {scipy_s * 1e3:7.1f} "
              f"ms  networkx {nx_s * 1e3:7.1f} ms  -> {t / best:5.2f}x fastest peer, "
              f"{t / nx_s:5.2f}x networkx; networkx backend call {backend_s * 1e3:7.1f} ms",
              flush=True)
    name = f"{args.backend}_msf" + (f"_{args.tag}" if args.tag else "")
    print("wrote", write_json(name, {"backend": args.backend, "repeats": args.repeats,
                                     "rows": rows}))


if __name__ == "__main__":
    main()
