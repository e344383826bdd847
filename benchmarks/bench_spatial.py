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

On the GPU the issue's sizes are ``--cliques 32768 --grid 2048`` (1M-node clique chain,
4M-node road grid); ``--no-networkx`` leaves networkx out at those sizes, and
``--renumber`` adds the baseline with ``renumber=rcm`` (and ``bfs``); ``--graphs``,
``--only`` and ``--extra`` pick graphs and configurations and add further ones
(``benchmarks/configs/chain_sssp_ordered.json``: SSSP's ordered passes, the
``delta_stepping`` variant under spatial driving, against ``bellman_ford``'s unordered
ones; ``road_sssp_ordered.json``: the same on the road grid against priority driving;
``chain_overlay.json``: the ``overlay`` variants of BFS and SSSP, with their parts' entry
searches kept from the last call on the graph and, ``-cold``, redone on every call).
An entry may carry ``"params"`` (run arguments such as ``partition_size``),
``"cold": true`` and ``"plain": true`` (no config: the selector's pick, as a call
without one gets; ``no-config-cold`` is that call with nothing kept from the last).
Each row gives the call's wall time and the device time the run reports.

Usage: python benchmarks/bench_spatial.py [--backend cpu|gpu] [--repeats 3] [--tag NAME]
       [--cliques 256] [--grid 128] [--algs bfs,sssp,cc] [--no-networkx] [--renumber]
Writes <backend>_spatial[_NAME].json to $OUT (or ./bench-results).
"""

from __future__ import annotations

import functools
import json
import os

import networkx as nx
import scipy.sparse.csgraph as csgraph
from _common import peer_parser, require_gpu, timed, write_json

import gswitch as gs
from gswitch.generators import clique_chain, grid2d, road
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference

FIELD = {"bfs": "depth", "sssp": "dist", "cc": "comp"}


def _configs(alg, renumber=False):
    base = {"driving": "topology"} if alg == "cc" else {"driving": "data"}
    out = {"baseline": base}
    if renumber:
        for method in ("rcm", "bfs"):
            out[f"baseline-{method}"] = {**base, "renumber": method}
    for size in (32, 256, 2048):
        out[f"spatial-{size}"] = {"driving": "spatial", "driving.partition_size": size}
    out["unroll-8"] = {"driving": "topology", "driving.unroll": 8}
    extra = {"variant": "label_propagation"} if alg == "cc" else {}
    out = {k: {"direction": "push", **extra, **v} for k, v in out.items()}
    out["no-config"] = None  # what a call without a config runs (the selector's pick)
    out["no-config-cold"] = {"plain": True, "cold": True}  # the same, a first call each time
    return out


def _peers(alg, g, G, repeats):
    if G is None:
        return timed(_scipy(alg, g), repeats)[0], float("nan")
    return timed(_scipy(alg, g), repeats)[0], timed(_networkx(alg, G), repeats)[0]


def _scipy(alg, g):
    a = g.to_scipy()
    if alg == "bfs":
        return lambda: csgraph.shortest_path(a, unweighted=True, indices=0)
    if alg == "sssp":
        return lambda: csgraph.dijkstra(a, indices=0)
    return lambda: csgraph.connected_components(a, directed=False)


def _networkx(alg, G):
    if alg == "bfs":
        return lambda: nx.single_source_shortest_path_length(G, 0)
    if alg == "sssp":
        return lambda: nx.single_source_dijkstra_path_length(G, 0)
    return lambda: list(nx.connected_components(G))


def _nx_graph(g):
    G = nx.Graph()
    G.add_nodes_from(range(g.n_nodes))
    src, dst = g.edges()
    w = g.weights.tolist() if g.weights is not None else [1.0] * src.size
    G.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w, strict=True))
    return G


def _run_options(cfg: dict | None) -> tuple[dict | None, dict, bool]:
    """A configuration's entry split into the config, the run's parameters (its
    ``"params"`` key: ``partition_size`` of the overlay variants, say) and whether each
    call starts cold (``"cold": true``: what a call derives from the graph and keeps with
    it, :meth:`gswitch.Graph.cached`, its selector features and its device copy are
    dropped before each call).
    """
    if cfg is None:
        return None, {}, False
    cfg = dict(cfg)
    params, cold = cfg.pop("params", {}), bool(cfg.pop("cold", False))
    # "plain": no config at all, what a call without one runs (the selector's pick)
    return (None if cfg.pop("plain", False) else cfg), params, cold


def _cold(g, call):
    # a first call on the graph: nothing derived from it kept, no selector features, no
    # device copy (the kernels stay compiled: that is per process, not per graph)
    g._derived = None
    g._selector_features = None
    if gs.gpu_available():
        gs.release(g)
    return call()


def _json_arg(text: str) -> dict:
    """A JSON object given inline or as ``@path``."""
    if text.startswith("@"):
        with open(text[1:]) as f:
            return json.load(f)
    return json.loads(text)


def main() -> None:
    ap = peer_parser(__doc__, repeats=3)
    ap.add_argument("--cliques", type=int, default=256, help="cliques of 32 in the chain")
    ap.add_argument("--grid", type=int, default=128, help="road grid side")
    ap.add_argument("--algs", default="bfs,sssp,cc")
    ap.add_argument("--no-networkx", action="store_true", help="leave networkx out")
    ap.add_argument("--renumber", action="store_true",
                    help="add the baseline with renumber=rcm and renumber=bfs")
    ap.add_argument("--graphs", default="chain,road",
                    help="chain, road, grid (the road's full grid), comma-separated")
    ap.add_argument("--only", default="",
                    help="comma-separated configuration labels to time (default: all)")
    ap.add_argument("--extra", type=_json_arg, default={},
                    help='JSON {label: config} of further configurations (or @FILE of '
                         'it), e.g. \'{"spatial-2048-b1024": {"driving": "spatial", '
                         '"driving.partition_size": 2048, "block_size": 1024}}\'')
    args = ap.parse_args()
    if args.backend == "gpu":
        require_gpu("bench_spatial.py")
    os.environ["GSWITCH_CPU_STEPS"] = "1"
    rows = []
    graphs = {"chain": lambda: clique_chain(args.cliques, 32, weighted=True, seed=1),
              "road": lambda: road(args.grid, args.grid, seed=1),
              # the full grid (no edge removed, unweighted): call_breakdown.py --grid's graph
              "grid": lambda: grid2d(args.grid, args.grid)}
    only = set(filter(None, args.only.split(",")))
    for g in (graphs[name]() for name in args.graphs.split(",")):
        G = None if args.no_networkx else _nx_graph(g)
        for alg in args.algs.split(","):
            kw = {} if alg == "cc" else {"source": 0}
            ref = reference(alg, g, **kw)
            scipy_s, nx_s = _peers(alg, g, G, args.repeats)
            print(f"{g.name} {alg}: scipy {scipy_s * 1e3:.1f} ms, networkx "
                  f"{nx_s * 1e3:.1f} ms")
            variants = get_registry().variants[alg]
            # a configuration naming another algorithm's variant is left out of this one
            extra = {k: v if v.get("plain") else {"direction": "push", **v}
                     for k, v in args.extra.items()
                     if v.get("variant", "default") in ("default", *variants)}
            for label, cfg in {**_configs(alg, args.renumber), **extra}.items():
                if only and label not in only:
                    continue
                cfg, params, cold = _run_options(cfg)
                call = functools.partial(gs.run, alg, g, backend=args.backend, config=cfg,
                                         **kw, **params)
                if cold:  # nothing derived from the graph kept from the last call
                    call = functools.partial(_cold, g, call)
                t, r = timed(call, args.repeats, warmup=1 if args.backend == "gpu" else 0)
                problem = compare(alg, r.fields[FIELD[alg]], ref)
                assert problem is None, f"{alg} {label} on {g.name}: {problem}"
                rows.append({"graph": g.name, "algorithm": alg, "config": label,
                             "backend": args.backend, "gswitch_s": t, "scipy_s": scipy_s,
                             "networkx_s": nx_s, "steps": r.stats["iterations"],
                             "device_s": r.stats.get("device_time_s"),
                             "edges_processed": r.stats["edges_processed"],
                             "verified": True})
                dev = r.stats.get("device_time_s")
                dev_ms = f"{dev * 1e3:8.2f}" if dev is not None else "       -"
                print(f"  {label:12s} {t * 1e3:8.1f} ms (device {dev_ms}) "
                      f"{r.stats['iterations']:6d} steps "
                      f"{r.stats['edges_processed']:>11,} edges  {t / scipy_s:6.2f}x scipy "
                      f"{t / nx_s:6.2f}x networkx")
    name = f"{args.backend}_spatial" + (f"_{args.tag}" if args.tag else "")
    print("wrote", write_json(name, {"backend": args.backend, "repeats": args.repeats,
                                     "rows": rows}))


if __name__ == "__main__":
    main()
