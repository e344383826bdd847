"""Two user-defined algorithms: widest path (an edge operator) and hub-avoiding shortest
paths (a node operator feeding an edge operator), each checked against networkx.

Run from anywhere: ``python examples/user_algorithms.py``.
"""

from pathlib import Path

import networkx as nx
import numpy as np

import gswitch as gs

DATA = Path(__file__).parent / "data"


@gs.algorithm(name="widest", reference="networkx")
class WidestPath:
    """Maximum bottleneck capacity from a source: the widest edge-by-edge route."""

    width = gs.NodeField("float32", init=0.0, at_source=gs.INF)
    start = gs.from_source()

    @gs.edge_op
    def relax(e):
        # a route is as wide as its narrowest edge; keep the widest route found so far
        e.dst.width.reduce_max(gs.minimum(e.src.width, e.weight))


@gs.algorithm(name="hub_avoiding_sssp", weights="nonnegative", reference="networkx")
class HubAvoidingPaths:
    """Shortest paths where passing through a node costs its out-degree (avoid hubs)."""

    dist = gs.NodeField("float32", init=gs.INF, at_source=0.0)
    leave = gs.NodeField("float32", init=gs.INF, output=False, doc="dist + toll of the node")
    start = gs.from_source()

    @gs.node_op
    def toll(n):
        # runs once per active node per step, before its edges
        n.leave = n.dist + n.out_degree

    @gs.edge_op
    def relax(e):
        e.dst.dist.reduce_min(e.src.leave + e.weight)


graph = gs.load_graph(DATA / "sample.mtx")
nxg = graph.to_networkx()

# widest path, checked on the maximum spanning tree (its tree path is a widest path)
width = gs.run(WidestPath, graph, source=0).fields["width"]
tree = nx.maximum_spanning_tree(nxg)
expected = np.zeros(graph.n_nodes)
for v in range(graph.n_nodes):
    if v == 0:
        expected[v] = np.inf
    elif nx.has_path(tree, 0, v):
        path = nx.shortest_path(tree, 0, v)
        expected[v] = min(tree[a][b]["weight"] for a, b in zip(path, path[1:]))
assert np.allclose(width, expected), (width, expected)
print("widest path from node 0:", width[:8].tolist(), "...")

# hub-avoiding paths, checked with Dijkstra on edge weights plus the tail's out-degree
dist = gs.run(HubAvoidingPaths, graph, source=0).fields["dist"]
tolled = nx.DiGraph()
tolled.add_nodes_from(range(graph.n_nodes))
for u, v, w in nxg.to_directed().edges(data="weight"):
    tolled.add_edge(u, v, weight=w + nxg.degree(u))
ref = nx.single_source_dijkstra_path_length(tolled, 0)
expected = np.array([ref.get(v, np.inf) for v in range(graph.n_nodes)])
assert np.allclose(dist, expected), (dist, expected)
print("hub-avoiding distances from node 0:", dist[:8].tolist(), "...")
print(HubAvoidingPaths.describe())
