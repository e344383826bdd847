"""Weighted betweenness and edge betweenness (sampled, k sources) against networkx.

Rows in bench_new_algorithms.py's style: per graph, gswitch's ``weighted_betweenness``
against ``networkx.betweenness_centrality(weight="weight", k, seed)``, and
``edge_betweenness`` (weighted and unweighted) against
``networkx.edge_betweenness_centrality``, the same k sources (networkx's sample with
the seed). gswitch's time is one call on a fresh copy of the graph (nothing cached on
it), median of ``--repeats``; networkx is given its ``nx.Graph`` built beforehand.
Every answer is verified against networkx's after networkx's rescaling before its time
counts.

Graphs: the road-like grid (float32 weights) and a symmetrised RMAT with integer weights
1..8 (many equal-length paths), both small: the formulation runs two stages per hop
level per source, so high-diameter graphs pay per level.

Usage: python benchmarks/bench_betweenness_weighted.py [--backend cpu|gpu] [--repeats 3]
           [--k 16] [--tag NAME] [--large]

``--large`` swaps in graphs of about 100k undirected edges (road 180x180, RMAT-14), the
size of the CPU target "at most 5x the fastest peer".
Writes <backend>_betweenness_weighted[_NAME].json to $OUT (or ./bench-results).
"""

from __future__ import annotations

import argparse
import statistics
import time

import networkx as nx
import numpy as np
from _common import require_gpu, write_json
from gswitch.algorithms.betweenness import rescale
from gswitch.algorithms.betweenness_weighted import rescale_edges

import gswitch as gs
from gswitch.generators import rmat, road

SEED = 1


def _graphs(large: bool = False) -> list[tuple[str, gs.Graph]]:
    if large:  # the size for the CPU targets: about 100k undirected edges
        return [("road 180x180", road(180, 180, seed=1)),
                ("rmat 14 ef4 sym, weights 1..8", _integer_weights(rmat(14, 4, seed=2)))]
    return [("road 40x40", road(40, 40, seed=1)),
            ("rmat 10 ef4 sym, weights 1..8", _integer_weights(rmat(10, 4, seed=2)))]


def _integer_weights(g: gs.Graph) -> gs.Graph:
    g = g.symmetrize().remove_self_loops()
    src, dst = g.edges()
    lo, hi = np.minimum(src, dst).astype(np.int64), np.maximum(src, dst).astype(np.int64)
    w = (lo * 7919 + hi * 104729) % 8 + 1  # the same weight both ways
    return g.with_weights(w.astype(np.float32))


def _nx_graph(g: gs.Graph) -> nx.Graph:
    G = nx.Graph()
    G.add_nodes_from(range(g.n_nodes))
    src, dst = g.edges()
    G.add_weighted_edges_from(zip(src.tolist(), dst.tolist(),
                                  np.asarray(g.weights, dtype=np.float64).tolist()))
    return G


def _fresh(g: gs.Graph) -> gs.Graph:
    return gs.Graph(g.indptr, g.indices, g.weights, directed=g.directed, validate=False,
                    name=g.name)


def _timed(fn, repeats: int, fresh: gs.Graph | None = None):
    ts, out = [], None
    for _ in range(repeats):
        arg = () if fresh is None else (_fresh(fresh),)
        t = time.perf_counter()
        out = fn(*arg)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), out


def _edge_values(g: gs.Graph, raw: np.ndarray, n: int, k: int, keys: list) -> np.ndarray:
    """Per-direction sums added per undirected edge, rescaled, in ``keys`` order."""
    src, dst = g.simple().edges()
    pair = np.minimum(src, dst).astype(np.int64) * n + np.maximum(src, dst)
    summed = {}
    for p, x in zip(pair.tolist(), raw.tolist()):
        summed[p] = summed.get(p, 0.0) + x
    vals = np.array([summed.get(min(u, v) * n + max(u, v), 0.0) for u, v in keys])
    return rescale_edges(vals, n, directed=False, k=k)


def _rows(gname: str, g: gs.Graph, backend: str, repeats: int, k: int) -> list[dict]:
    G = _nx_graph(g)
    n = g.n_nodes
    nodes = np.array(nx.utils.create_py_random_state(SEED).sample(list(G), k))
    rows = []
    peer_s, want = _timed(lambda: nx.betweenness_centrality(G, k=k, seed=SEED,
                                                            weight="weight"), repeats)
    t, r = _timed(lambda graph: gs.run("weighted_betweenness", graph, backend=backend,
                                       sources=nodes), repeats, g)
    got = rescale(r.fields["betweenness"], directed=False, sources=nodes)
    np.testing.assert_allclose(got, [want[v] for v in range(n)], rtol=1e-6, atol=1e-12)
    rows.append(("weighted_betweenness", f"k={k}",
                 f"networkx.betweenness_centrality(weight, k={k})", t, peer_s))
    for weight in ("weight", None):
        graph_in = g if weight else g.with_weights(None)
        peer_s, want = _timed(lambda weight=weight: nx.edge_betweenness_centrality(
            G, k=k, seed=SEED, weight=weight), repeats)
        t, r = _timed(lambda graph: gs.run("edge_betweenness", graph, backend=backend,
                                           sources=nodes), repeats, graph_in)
        keys = list(want)
        got = _edge_values(graph_in, r.fields["edge_betweenness"], n, k, keys)
        np.testing.assert_allclose(got, [want[e] for e in keys], rtol=1e-6, atol=1e-12)
        rows.append(("edge_betweenness", f"k={k}, {'weighted' if weight else 'unweighted'}",
                     f"networkx.edge_betweenness_centrality(weight={weight!r}, k={k})",
                     t, peer_s))
    out = []
    for alg, variant, peer, t, peer_s in rows:
        out.append({"graph": gname, "nodes": n, "edges": g.n_edges, "algorithm": alg,
                    "variant": variant, "backend": backend, "gswitch_s": t, "peer": peer,
                    "peer_s": peer_s, "ratio_to_peer": t / peer_s, "verified": True})
        print(f"  {alg}[{variant}]: {t * 1e3:9.1f} ms  {peer} {peer_s * 1e3:9.1f} ms  "
              f"ratio {t / peer_s:5.2f}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--tag", default="")
    ap.add_argument("--large", action="store_true",
                    help="graphs of about 100k undirected edges instead of the small ones")
    args = ap.parse_args()
    if args.backend == "gpu":
        require_gpu("bench_betweenness_weighted.py")
    rows = []
    for gname, g in _graphs(args.large):
        print(f"{gname}: {g.n_nodes:,} nodes, {g.n_edges:,} stored edges")
        rows += _rows(gname, g, args.backend, args.repeats, args.k)
    name = f"{args.backend}_betweenness_weighted" + (f"_{args.tag}" if args.tag else "")
    path = write_json(name, {"backend": args.backend, "repeats": args.repeats, "k": args.k,
                             "rows": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
