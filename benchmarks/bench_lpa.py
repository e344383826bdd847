"""Label-propagation communities against networkx, every answer checked.

CPU engine on a planted-partition graph of about 100k edges (20 groups of 250 nodes):

- ``semi_synchronous`` against ``networkx.community.label_propagation_communities`` on
  the same graph: the partitions must be equal (issue target: at most 5x networkx's
  time, never slower);
- ``asynchronous`` against ``networkx.community.asyn_lpa_communities``: every label must
  be among its neighbours' most frequent, and the modularity within 0.05 of networkx's.

GPU (when CuPy sees one): both variants, labels equal to the CPU engine's.

Usage: python benchmarks/bench_lpa.py [--groups 20] [--size 250] [--repeats 3]
Writes lpa[_TAG].json to $OUT (or ./bench-results).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from _common import write_json
from gswitch.algorithms.lpa import compare_most_frequent, expected_neighbours

import gswitch as gs


def _time(fn, repeats: int) -> tuple[float, object]:
    ts, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), out


def _graph(groups: int, size: int):
    import networkx as nx

    # p_in, p_out for about 100k edges at the defaults: mean degree about 40
    G = nx.planted_partition_graph(groups, size, 0.12, 0.002, seed=1)
    position = {v: i for i, v in enumerate(G)}
    pairs = np.array([(position[a], position[b]) for a, b in G.edges()], dtype=np.int64)
    g = gs.Graph.from_edges(pairs[:, 0], pairs[:, 1], n_nodes=len(G), directed=False)
    return G, g


def _sets(G, labels) -> list[set]:
    nodes, groups = list(G), {}
    for i, lab in enumerate(np.asarray(labels).tolist()):
        groups.setdefault(lab, set()).add(nodes[i])
    return list(groups.values())


def cpu_rows(groups: int, size: int, repeats: int) -> list[dict]:
    import networkx as nx

    G, g = _graph(groups, size)
    rows = []
    gs.run("label_propagation", g, backend="cpu")  # imports, first-call caches
    nx_s, want = _time(lambda: list(nx.community.label_propagation_communities(G)), repeats)
    gs_s, r = _time(lambda: gs.run("label_propagation", g, backend="cpu"), repeats)
    got = _sets(G, r.fields["label"])
    assert {frozenset(c) for c in got} == {frozenset(c) for c in want}, "semi_synchronous"
    rows.append({"backend": "cpu", "variant": "semi_synchronous", "nodes": g.n_nodes,
                 "edges": G.number_of_edges(), "communities": len(got), "gswitch_s": gs_s,
                 "networkx_s": nx_s, "ratio_to_networkx": gs_s / nx_s,
                 "modularity": nx.community.modularity(G, got),
                 "networkx_modularity": nx.community.modularity(G, want)})
    nx_s, want = _time(lambda: list(nx.community.asyn_lpa_communities(G, seed=1)), repeats)
    cfg = {"variant": "asynchronous"}
    gs_s, r = _time(lambda: gs.run("label_propagation", g, backend="cpu", config=cfg,
                                   seed=1), repeats)
    assert compare_most_frequent(r.fields["label"], expected_neighbours(g)) is None
    got = _sets(G, r.fields["label"])
    ours, theirs = nx.community.modularity(G, got), nx.community.modularity(G, want)
    assert ours >= theirs - 0.05, (ours, theirs)
    rows.append({"backend": "cpu", "variant": "asynchronous", "nodes": g.n_nodes,
                 "edges": G.number_of_edges(), "communities": len(got), "gswitch_s": gs_s,
                 "networkx_s": nx_s, "ratio_to_networkx": gs_s / nx_s, "modularity": ours,
                 "networkx_modularity": theirs})
    return rows


def gpu_rows(groups: int, size: int, repeats: int) -> list[dict]:
    G, g = _graph(groups, size)
    rows = []
    for variant in ("semi_synchronous", "asynchronous"):
        cfg = {"variant": variant}
        cpu = gs.run("label_propagation", g, backend="cpu", config=cfg).fields["label"]
        gs.run("label_propagation", g, backend="gpu", config=cfg)  # compile
        call_s, r = _time(lambda cfg=cfg: gs.run("label_propagation", g, backend="gpu",
                                                 config=cfg), repeats)
        assert np.array_equal(r.fields["label"], cpu), variant
        rows.append({"backend": "gpu", "variant": variant, "nodes": g.n_nodes,
                     "edges": G.number_of_edges(), "gswitch_call_s": call_s,
                     "device_s": r.stats.get("device_time_s")})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--groups", type=int, default=20)
    ap.add_argument("--size", type=int, default=250)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    rows = cpu_rows(args.groups, args.size, args.repeats)
    if gs.gpu_available():
        rows += gpu_rows(args.groups, args.size, args.repeats)
    else:
        print("no usable GPU: CPU rows only")
    for row in rows:
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()})
    print("wrote", write_json(f"lpa{'_' + args.tag if args.tag else ''}", {"rows": rows}))


if __name__ == "__main__":
    main()
