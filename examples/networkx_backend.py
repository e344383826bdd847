"""A networkx script run unchanged on gswitch, through networkx's backend dispatch.

gswitch installs a networkx backend named ``gswitch``. The functions below are plain
networkx; the same script runs on networkx, on gswitch by ``backend="gswitch"``, and on
gswitch for every supported call once ``nx.config.backend_priority`` names it.

Run from anywhere: ``python examples/networkx_backend.py``.
"""

import networkx as nx


def analyse(G: nx.Graph, **backend) -> dict:
    """An ordinary networkx analysis; ``backend`` is empty or ``backend="gswitch"``."""
    hub = max(G.degree, key=lambda item: item[1])[0]
    return {
        "hops": nx.single_source_shortest_path_length(G, hub, **backend),
        "distances": nx.single_source_dijkstra_path_length(G, hub, **backend),
        "layers": list(nx.bfs_layers(G, hub, **backend)),
        "components": list(nx.connected_components(G, **backend)),
        "pagerank": nx.pagerank(G, **backend),
    }


def same(a: dict, b: dict) -> bool:
    """Equal answers (PageRank to 1e-6 per node)."""
    ranks = all(abs(a["pagerank"][v] - b["pagerank"][v]) < 1e-6 for v in b["pagerank"])
    return ranks and all(a[k] == b[k] for k in a if k != "pagerank")


# a town of named places: any hashable node names, weights in an edge attribute
G = nx.connected_watts_strogatz_graph(3000, 6, 0.1, seed=7)
G = nx.relabel_nodes(G, {i: f"stop-{i}" for i in G})
for i, (_, _, d) in enumerate(G.edges(data=True)):
    d["weight"] = i % 9 + 1
G.add_edge("depot", "yard", weight=2)  # a second component

nx.config.warnings_to_ignore.add("cache")  # reusing the converted graph is the point
plain = analyse(G)                          # networkx itself
chosen = analyse(G, backend="gswitch")      # each call names the backend
nx.config.backend_priority = ["gswitch"]    # or: every supported call goes to gswitch
routed = analyse(G)
nx.config.backend_priority = []

top = max(chosen["pagerank"], key=chosen["pagerank"].get)
print(f"{len(chosen['components'])} components, {len(chosen['layers'])} BFS layers, "
      f"top PageRank {top} ({chosen['pagerank'][top]:.5f})")
print("gswitch engine:", nx.config.backends.gswitch.backend, "(auto: the GPU when CuPy sees one)")
print("same answers as networkx:", same(chosen, plain) and same(routed, plain))
assert same(chosen, plain) and same(routed, plain)
