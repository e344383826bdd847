"""The CPU engine's triangle counts, ``merge`` (its default) and ``oriented`` (the GPU's
default), against ``networkx.triangles`` on RMAT-14 and road 230x230 (about 100k
undirected edges each). Every call is on a fresh copy of the graph (a first call), the
median of three; every answer is checked against the reference first.

Usage::

    python benchmarks/experiments/triangles_oriented_cpu.py

Run it under two trees in turn for an A/B (``PYTHONPATH`` or ``git stash``).
"""

from __future__ import annotations

import statistics
import time

import networkx as nx

import gswitch as gs
from gswitch.generators import rmat, road
from gswitch.testing.reference import compare, reference


def main() -> None:
    for name, g in [("rmat14", rmat(14, 8, seed=1).symmetrize().simple()),
                    ("road230", road(230, 230, seed=1))]:
        want = reference("triangles", g)
        ms = {}
        for variant in ("merge", "oriented"):
            times = []
            for _ in range(3):
                fresh = gs.Graph(g.indptr.copy(), g.indices.copy(), None, directed=g.directed)
                t = time.perf_counter()
                r = gs.run("triangles", fresh, backend="cpu", config={"variant": variant})
                times.append(time.perf_counter() - t)
                assert compare("triangles", r.fields["triangles"], want) is None
            ms[variant] = statistics.median(times) * 1e3
        src, dst = g.edges()
        G = nx.Graph()
        G.add_nodes_from(range(g.n_nodes))
        G.add_edges_from(zip(src.tolist(), dst.tolist()))
        t = time.perf_counter()
        nx.triangles(G)
        nx_ms = (time.perf_counter() - t) * 1e3
        print(f"{name}: merge {ms['merge']:.1f} ms, oriented {ms['oriented']:.1f} ms, "
              f"networkx {nx_ms:.1f} ms; oriented / networkx {ms['oriented'] / nx_ms:.2f}")


if __name__ == "__main__":
    main()
