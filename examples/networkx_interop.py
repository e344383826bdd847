"""Run gswitch on a networkx graph and get the answers back by node name.

Run from anywhere: ``python examples/networkx_interop.py``.
"""

import networkx as nx

import gswitch as gs

# any networkx graph: nodes can be any hashable names, weights live in an edge attribute
city = nx.Graph(name="city")
city.add_weighted_edges_from([
    ("harbour", "market", 4), ("market", "station", 2), ("station", "airport", 9),
    ("harbour", "station", 7), ("market", "museum", 3), ("museum", "airport", 5),
])

# 1. hand it to gs.run directly: the source is a node name, and the result arrays are in
#    the order of city.nodes, so zip gives them their names back
r = gs.run("sssp", city, source="harbour")
dist = dict(zip(city.nodes, r.fields["dist"].tolist()))
print("distances from the harbour:", dist)
assert dist == nx.single_source_dijkstra_path_length(city, "harbour")

# 2. convert once, run many times; node names are kept in node_labels
g = gs.Graph.from_networkx(city)
print(g, "labels:", g.node_labels)
comp = gs.run("cc", g).fields["comp"]
print("components:", dict(zip(g.node_labels, comp.tolist())))

# 3. and back: weights and names survive the round trip
back = g.to_networkx()
assert nx.utils.edges_equal(back.edges, city.edges)
assert all(back[u][v]["weight"] == w for u, v, w in city.edges(data="weight"))
print("round trip:", nx.is_isomorphic(back, city), back.number_of_edges(), "edges")

# scipy.sparse matrices work the same way (entry (i, j) is the edge i -> j)
matrix = nx.to_scipy_sparse_array(city, nodelist=list(city.nodes))
depth = gs.run("bfs", matrix, source=0).fields["depth"]
print("hops from the harbour:", dict(zip(city.nodes, depth.tolist())))
