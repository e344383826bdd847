"""Locality-aware renumbering (the ``renumber`` key): BFS, SSSP and CC on graphs whose
ids were shuffled (as ids from a crawl or a hash often are) and on RMAT, under each order.

Per graph and order: the order's one-time cost (the permutation and the renumbered copy,
kept per graph afterwards) and the median time of a call once it is kept, against the
same call with ``renumber=none`` in the same run; scipy's BFS/Dijkstra/components on
the caller's graph are the outside peer. Every answer is checked against scipy before
its time counts.

Usage: python benchmarks/bench_renumber.py [--backend cpu|gpu] [--repeats 5] [--tag NAME]
Writes <backend>_renumber[_NAME].json to $OUT (or ./bench-results).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
from _common import peer_parser, require_gpu, timed, write_json

import gswitch as gs
from gswitch import locality
from gswitch.generators import rmat, road
from gswitch.testing.reference import compare, reference


def _shuffled(g: gs.Graph, seed: int = 0) -> gs.Graph:
    perm = np.random.default_rng(seed).permutation(g.n_nodes)
    src, dst = g.edges()
    once = src < dst if not g.directed else np.ones(src.size, dtype=bool)  # each edge once
    weights = None if g.weights is None else g.weights[once]
    return gs.Graph.from_edges(perm[src[once]], perm[dst[once]], weights, n_nodes=g.n_nodes,
                               directed=g.directed, name=f"{g.name} shuffled")


def _graphs(scale: int) -> list[gs.Graph]:
    side = 256 * scale
    return [_shuffled(road(side, side, seed=1)), road(side, side, seed=1),
            rmat(14 + scale, 8, seed=2)]


def _scipy_peer(alg: str, g: gs.Graph):
    a = sp.csr_array((np.ones(g.n_edges) if g.weights is None else g.weights, g.indices,
                      g.indptr), shape=(g.n_nodes,) * 2)
    if alg == "bfs":
        return lambda: csgraph.breadth_first_order(a, 0, directed=g.directed)
    if alg == "sssp":
        return lambda: csgraph.dijkstra(a, directed=g.directed, indices=0)
    return lambda: csgraph.connected_components(a, directed=g.directed, connection="weak")


def main() -> None:
    ap = peer_parser(__doc__, repeats=5)
    ap.add_argument("--scale", type=int, default=1, help="road side 256*SCALE, RMAT 14+SCALE")
    args = ap.parse_args()
    if args.backend == "gpu":
        require_gpu("bench_renumber.py")
    rows = []
    for g in _graphs(args.scale):
        print(f"{g.name}: {g.n_nodes:,} nodes, {g.n_edges:,} edges")
        for alg, field in (("bfs", "depth"), ("sssp", "dist"), ("cc", "comp")):
            kw = {"source": 0} if alg != "cc" else {}
            ref = reference(alg, g, **kw)
            peer_s, _ = timed(_scipy_peer(alg, g), args.repeats, warmup=1)
            base_s = None
            for method in locality.METHODS:
                t0 = time.perf_counter()
                locality.renumbered(g, method)
                build_s = time.perf_counter() - t0

                def call(method=method, alg=alg, kw=kw, g=g):
                    return gs.run(alg, g, backend=args.backend,
                                  config={"renumber": method}, **kw)

                t, r = timed(call, args.repeats, warmup=1)
                problem = compare(alg, r.fields[field], ref)
                assert problem is None, f"{alg} renumber={method} on {g.name}: {problem}"
                base_s = t if method == "none" else base_s
                rows.append({"graph": g.name, "nodes": g.n_nodes, "edges": g.n_edges,
                             "algorithm": alg, "renumber": method, "backend": args.backend,
                             "order_build_s": build_s, "call_s": t,
                             "speedup_vs_none": base_s / t, "scipy_s": peer_s,
                             "ratio_to_scipy": t / peer_s, "verified": True})
                print(f"  {alg:5s} renumber={method:6s} order {build_s * 1e3:8.1f} ms  "
                      f"call {t * 1e3:8.2f} ms  x{base_s / t:5.2f} vs none  "
                      f"scipy {peer_s * 1e3:8.2f} ms")
    name = f"{args.backend}_renumber" + (f"_{args.tag}" if args.tag else "")
    print("wrote", write_json(name, {"backend": args.backend, "repeats": args.repeats,
                                     "rows": rows}))


if __name__ == "__main__":
    main()
