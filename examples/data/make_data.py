"""Re-create the sample graphs in this folder (they are committed; run only to change them).

One small road-like graph (a 6 x 6 grid with a tenth of its streets removed, integer
weights 1..63, undirected) written in every format gswitch reads, plus an edge list with
sparse, huge ids for ``--renumber``.

    python examples/data/make_data.py
"""

from pathlib import Path

import numpy as np

import gswitch as gs
from gswitch.generators import road

HERE = Path(__file__).parent


def main() -> None:
    g = road(6, 6, seed=4)
    g.name = "sample"
    gs.save_graph(g, HERE / "sample.mtx")  # symmetric: each street once, 1-based
    gs.save_graph(g, HERE / "sample.gr")  # DIMACS arcs in both directions, 1-based
    gs.save_graph(g, HERE / "sample.npz")
    src, dst = g.edges()
    once = src < dst
    w = g.weights[once].astype(int)
    lines = ["# sample road graph: one line per street 'src dst weight', 0-based ids;",
             "# load with --undirected (Python: directed=False)"]
    lines += [f"{u} {v} {x}" for u, v, x in zip(src[once], dst[once], w)]
    (HERE / "sample.txt").write_text("\n".join(lines) + "\n")
    # METIS: header 'nodes edges 001' (edge weights), then per vertex 'neighbour weight' pairs
    rows = [f"% sample road graph, 1-based\n{g.n_nodes} {int(once.sum())} 001"]
    for v in range(g.n_nodes):
        lo, hi = g.indptr[v], g.indptr[v + 1]
        rows.append(" ".join(f"{int(u) + 1} {int(x)}" for u, x in
                             zip(g.indices[lo:hi], g.weights[lo:hi])))
    (HERE / "sample.graph").write_text("\n".join(rows) + "\n")
    rng = np.random.default_rng(7)
    ids = rng.choice(10**12, size=12, replace=False) + 10**9
    pairs = {(int(ids[i]), int(ids[(i * 5 + 3) % 12])) for i in range(12)}
    pairs |= {(int(ids[i]), int(ids[i + 1])) for i in range(11)}
    (HERE / "sparse_ids.txt").write_text(
        "# follower graph with 12 accounts whose ids are huge and sparse: load with --renumber\n"
        + "".join(f"{u} {v}\n" for u, v in sorted(pairs) if u != v))


if __name__ == "__main__":
    main()
