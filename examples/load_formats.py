"""Load the sample graph from every file format gswitch reads, and convert between them.

Run from anywhere: ``python examples/load_formats.py``.
"""

import tempfile
from pathlib import Path

import gswitch as gs

DATA = Path(__file__).parent / "data"

# the same undirected road graph, five ways; ids are 1-based in .mtx, .gr and METIS files
# and 0-based in edge lists, and always 0-based once loaded
graphs = {
    "Matrix Market": gs.load_graph(DATA / "sample.mtx"),
    "METIS": gs.load_graph(DATA / "sample.graph"),
    "npz cache": gs.load_graph(DATA / "sample.npz"),
    # an edge list lists each street once: say it is undirected
    "edge list": gs.load_graph(DATA / "sample.txt", directed=False),
    # DIMACS .gr is directed and lists both directions as arcs
    "DIMACS": gs.load_graph(DATA / "sample.gr"),
}
for label, g in graphs.items():
    print(f"{label:14} {g}")

reference = graphs["Matrix Market"]
assert all(graphs[k] == reference for k in ("METIS", "npz cache", "edge list"))
assert graphs["DIMACS"].n_edges == reference.n_edges  # same arcs, marked directed

# sparse, huge ids: renumber them 0..k-1; the original ids stay in node_labels
social = gs.load_graph(DATA / "sparse_ids.txt", renumber=True)
print(f"renumbered     {social}; node 0 was id {social.node_labels[0]}")

# write any of them back out, in any format (the extension decides)
with tempfile.TemporaryDirectory() as tmp:
    for name in ("copy.mtx", "copy.txt", "copy.gr", "copy.npz", "copy.mtx.gz"):
        path = gs.save_graph(reference, Path(tmp) / name)
        again = gs.load_graph(path)
        print(f"wrote {name:12} -> read back {again.n_nodes} nodes, {again.n_edges} edges")
