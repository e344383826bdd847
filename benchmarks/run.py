"""One entry point for the maintained benchmarks: what each measures, against which peer.

Usage::

    python benchmarks/run.py                      # the list: name, device, peers, targets
    python benchmarks/run.py NAME [ARGS...]       # run one (ARGS go to its script)
    python benchmarks/run.py NAME --help          # its own options

Every benchmark checks each answer before its time counts and measures its peers in the
same process. Results go to ``$OUT`` (else ``benchmarks/results/``) as JSON, with a log
or plot where the script makes one. ``experiments/`` keeps one-off A/B scripts that
produced figures in ``RESULTS.md``; they are not maintained.
"""

from __future__ import annotations

import os
import runpy
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Bench:
    script: str
    device: str
    what: str
    peers: str


BENCHES: dict[str, Bench] = {
    "cpu": Bench("bench_cpu.py", "cpu", "CPU engine: BFS, CC on RMAT, BFS/SSSP on a road grid",
                 "scipy.sparse.csgraph"),
    "cpu-calls": Bench("bench_cpu_calls.py", "cpu",
                       "CPU engine per call: fixed cost, BFS/SSSP on 34k-258k-node graphs",
                       "scipy breadth_first_order, dijkstra"),
    "engine": Bench("bench_engine.py", "gpu",
                    "BFS RMAT-22 and road grid, PageRank per step, 4-node call",
                    "plain-CuPy frontier BFS"),
    "gpu": Bench("bench_gpu.py", "gpu", "GPU engine steps and active nodes per step",
                 "scipy on the CPU"),
    "end-to-end": Bench("bench_end_to_end.py", "gpu",
                        "gswitch.run from call to result on RMAT-22: BFS, CC, PageRank",
                        "device time and the copy of the result (CuPy get)"),
    "first-call": Bench("bench_first_call.py", "gpu",
                        "first call in a fresh process (empty cache, after gswitch compile) "
                        "and the 4-node call",
                        "a fresh process running one CuPy kernel; an empty kernel launch"),
    "formulations": Bench("bench_formulations.py", "cpu|gpu",
                          "every variant of every algorithm on RMAT, uniform, road, star, "
                          "bipartite", "cuSPARSE PageRank, CuPy FastSV, Bellman-Ford, BFS; "
                          "scipy on the CPU"),
    "selector": Bench("bench_selector.py", "gpu",
                      "selector pick vs default on graphs outside its training set",
                      "plain-CuPy peers, the default configuration"),
    "selector-tuned": Bench("bench_selector_tuned.py", "gpu",
                            "selector pick vs a 40-trial tuned study on 20 unseen graphs of "
                            "1M to 4M nodes, BFS or SSSP (--alg)",
                            "plain-CuPy frontier BFS / Bellman-Ford, the default, the study"),
    "tuner": Bench("bench_tuner.py", "cpu|gpu", "trials to the best, tuned vs default",
                   "the default configuration"),
    "loaders": Bench("bench_loaders.py", "cpu", "graph file loading per format",
                     "scipy.io.mmread, numpy.loadtxt"),
    "new-algorithms": Bench("bench_new_algorithms.py", "cpu|gpu",
                            "core_number, MIS, triangles, personalised PageRank, "
                            "betweenness (k=64) on ~100k-edge graphs", "networkx"),
    "betweenness-weighted": Bench("bench_betweenness_weighted.py", "cpu|gpu",
                                  "weighted and edge betweenness (k sources) on a road grid "
                                  "and an integer-weighted RMAT",
                                  "networkx betweenness_centrality(weight), "
                                  "edge_betweenness_centrality"),
    "scc": Bench("bench_scc.py", "cpu|gpu", "strongly connected components on ~100k-edge "
                 "directed RMAT and one-way road graphs",
                 "scipy connected_components(strong), networkx"),
    "scale-targets": Bench("bench_scale_targets.py", "gpu|cpu",
                           "sampled betweenness (k=64) and core_number on RMAT-22",
                           "one BFS of the same run (x 64 x 3), a NumPy peel"),
    "msf": Bench("bench_msf.py", "cpu|gpu", "minimum spanning forest (Boruvka) on ~100k-edge "
                 "road and simple RMAT graphs (--road 2048: the GPU target); the networkx "
                 "backend's call beside",
                 "scipy minimum_spanning_tree, networkx minimum_spanning_tree"),
    "apsp": Bench("bench_apsp.py", "cpu|gpu", "all-pairs shortest path lengths: hops by "
                  "multi-source BFS on 2000 nodes, blocked Floyd-Warshall on 800",
                  "scipy shortest_path / floyd_warshall, networkx"),
    "renumber": Bench("bench_renumber.py", "cpu|gpu",
                      "BFS, SSSP, CC under each renumbering on shuffled road and RMAT",
                      "renumber=none in the same run; scipy.sparse.csgraph"),
    "triangles": Bench("bench_triangles.py", "cpu|gpu",
                       "triangle counting per node, both variants",
                       "networkx.triangles; CuPy SpGEMM (A @ A) .* A"),
    "lpa": Bench("bench_lpa.py", "cpu|gpu",
                 "label propagation, both variants, ~100k-edge planted partition",
                 "networkx label_propagation_communities, asyn_lpa_communities"),
    "spatial": Bench("bench_spatial.py", "cpu|gpu",
                     "spatial driving and topology unrolling vs data/topology driving, "
                     "BFS/SSSP/CC on a clique chain and a road grid",
                     "scipy.sparse.csgraph, networkx; data/topology driving in the same run"),
    "stages": Bench("profile_stages.py", "gpu", "where a default run's time goes, per stage",
                    "-"),
}

#: Scripts that produce shipped data from benchmark results, not measurements.
TOOLS = {"choose-defaults": "choose_defaults.py", "train-selector": "train_selector.py"}


def _listing() -> str:
    rows = [f"{'name':16s} {'device':8s} {'measures':62s} peers"]
    for name, b in BENCHES.items():
        rows.append(f"{name:16s} {b.device:8s} {b.what:62s} {b.peers}")
    rows.append("")
    rows.append("tools: " + ", ".join(f"{k} ({v})" for k, v in TOOLS.items()))
    rows.append("one-off experiments: benchmarks/experiments/ (not maintained)")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "list"):
        print(__doc__.split("\n\n")[0])
        print()
        print(_listing())
        return 0
    name, rest = argv[0], argv[1:]
    script = BENCHES[name].script if name in BENCHES else TOOLS.get(name)
    if script is None:
        print(f"run.py: unknown benchmark {name!r}; choose one of "
              f"{', '.join(list(BENCHES) + list(TOOLS))}", file=sys.stderr)
        return 2
    os.environ.setdefault("GSWITCH_BENCH_OUT", str(HERE / "results"))
    sys.path.insert(0, str(HERE))
    sys.argv = [str(HERE / script), *rest]
    runpy.run_path(str(HERE / script), run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
