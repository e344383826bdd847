"""Spatial driving and topology kernel unrolling against data and topology driving on
the CPU engine (or the GPU), with scipy and networkx as peers.

Graphs: a chain of 256 cliques of 32 nodes (dense local clusters in a line, ids in
clique order) and a 128x128 road grid (ids in row order). Algorithms: BFS and SSSP from
node 0, CC. Configurations: ``driving=data`` (``topology`` for CC), ``spatial`` at
partition sizes 32, 256 and 2048 iterating to local stability, and ``topology`` with
``unroll=8``. Peers: ``scipy.sparse.csgraph`` (``shortest_path`` unweighted and
Dijkstra, ``connected_components``) on a CSR matrix and networkx
(``single_source_shortest_path_length``, ``single_source_dijkstra_path_length``,
``connected_components``) on an ``nx.Graph``, built beforehand. Median of ``--repeats``
calls; every answer is compared with the reference before its time counts. The CPU
engine runs its super-steps (``GSWITCH_CPU_STEPS=1``) so the strategies do their steps.

Usage: python benchmarks/bench_spatial.py [--backend cpu|gpu] [--repeats 3] [--tag NAME]
Writes <backend>_spatial[_NAME].json to $OUT (or ./bench-results).
"""

from __future__ import annotations

import functools
import os

import networkx as nx
import scipy.sparse.csgraph as csgraph
from _common import peer_parser, require_gpu, timed, write_json

import gswitch as gs
from gswitch.generators import clique_chain, road
from gswitch.testing.reference import compare, reference

FIELD = {"bfs": "depth", "sssp": "dist", "cc": "comp"}


def _configs(alg):
    base = {"driving": "topology"} if alg == "cc" else {"driving": "data"}
    out = {"baseline": base}
    for size in (32, 256, 2048):
        out[f"spatial-{size}"] = {"driving": "spatial", "driving.partition_size": size}
    out["unroll-8"] = {"driving": "topology", "driving.unroll": 8}
    extra = {"variant": "label_propagation"} if alg == "cc" else {}
    return {k: {"direction": "push", **extra, **v} for k, v in out.items()}


def _peers(alg, g, G, repeats):
    a = g.to_scipy()
    if alg == "bfs":
        sp = lambda: csgraph.shortest_path(a, unweighted=True, indices=0)  # noqa: E731
        nxf = lambda: nx.single_source_shortest_path_length(G, 0)  # noqa: E731
    elif alg == "sssp":
        sp = lambda: csgraph.dijkstra(a, indices=0)  # noqa: E731
        nxf = lambda: nx.single_source_dijkstra_path_length(G, 0)  # noqa: E731
    else:
        sp = lambda: csgraph.connected_components(a, directed=False)  # noqa: E731
        nxf = lambda: list(nx.connected_components(G))  # noqa: E731
    return timed(sp, repeats)[0], timed(nxf, repeats)[0]


def main() -> None:
    ap = peer_parser(__doc__, repeats=3)
    args = ap.parse_args()
    if args.backend == "gpu":
        require_gpu("bench_spatial.py")
    os.environ["GSWITCH_CPU_STEPS"] = "1"
    rows = []
    for g in (clique_chain(256, 32, weighted=True, seed=1), road(128, 128, seed=1)):
        G = nx.Graph()
        G.add_nodes_from(range(g.n_nodes))
        src, dst = g.edges()
        w = g.weights.tolist() if g.weights is not None else [1.0] * src.size
        G.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w, strict=True))
        for alg in ("bfs", "sssp", "cc"):
            kw = {} if alg == "cc" else {"source": 0}
            ref = reference(alg, g, **kw)
            scipy_s, nx_s = _peers(alg, g, G, args.repeats)
            print(f"{g.name} {alg}: scipy {scipy_s * 1e3:.1f} ms, networkx "
                  f"{nx_s * 1e3:.1f} ms")
            for label, cfg in _configs(alg).items():
                call = functools.partial(gs.run, alg, g, backend=args.backend, config=cfg,
                                         **kw)
                t, r = timed(call, args.repeats)
                problem = compare(alg, r.fields[FIELD[alg]], ref)
                assert problem is None, f"{alg} {label} on {g.name}: {problem}"
                rows.append({"graph": g.name, "algorithm": alg, "config": label,
                             "backend": args.backend, "gswitch_s": t, "scipy_s": scipy_s,
                             "networkx_s": nx_s, "steps": r.stats["iterations"],
                             "edges_processed": r.stats["edges_processed"],
                             "verified": True})
                print(f"  {label:12s} {t * 1e3:8.1f} ms  {r.stats['iterations']:6d} steps "
                      f"{r.stats['edges_processed']:>11,} edges  {t / scipy_s:6.2f}x scipy "
                      f"{t / nx_s:6.2f}x networkx")
    name = f"{args.backend}_spatial" + (f"_{args.tag}" if args.tag else "")
    print("wrote", write_json(name, {"backend": args.backend, "repeats": args.repeats,
                                     "rows": rows}))


if __name__ == "__main__":
    main()
