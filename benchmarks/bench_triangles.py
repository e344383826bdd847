"""Triangle counting against its peers, every answer checked.

- CPU engine (first call on a fresh graph object, then a repeated call) against
  ``networkx.triangles`` on the same simple undirected graph;
- GPU (when CuPy sees one): the variants (``merge``, ``search``, ``oriented``; pick
  with ``--variants``) against a plain-CuPy SpGEMM count, ``((A @ A) .* A).sum() / 6``
  with cupyx.scipy.sparse, in the same run (issue target on RMAT-20: faster than that
  peer). The product is formed a block of rows at a time: whole, its entry offsets
  pass cuSPARSE's int32 range on RMAT-20 and the answer came back wrong.

Usage: python benchmarks/bench_triangles.py [--scale 15] [--edge-factor 8]
    [--gpu-scale 20] [--repeats 3] [--variants merge,search,oriented]
Writes triangles[_TAG].json to $OUT (or ./bench-results).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from _common import write_json

import gswitch as gs
from gswitch.generators import rmat


def _time(fn, repeats: int) -> float:
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def cpu_rows(scale: int, ef: int, repeats: int) -> list[dict]:
    import networkx as nx

    g = rmat(scale, ef, seed=1)
    simple = g.symmetrize().simple()
    h = nx.Graph(simple.to_networkx())
    t = time.perf_counter()
    ref = nx.triangles(h)
    nx_s = time.perf_counter() - t
    want = np.array([ref[v] for v in range(g.n_nodes)])
    t = time.perf_counter()
    r = gs.run("triangles", rmat(scale, ef, seed=1), backend="cpu")  # a fresh graph object
    first_s = time.perf_counter() - t
    assert np.array_equal(r.fields["triangles"], want)
    again_s = _time(lambda: gs.run("triangles", g, backend="cpu"), repeats)
    return [{"backend": "cpu", "graph": f"rmat:{scale}:{ef}", "edges": simple.n_edges,
             "triangles": int(want.sum()) // 3, "gswitch_first_s": first_s,
             "gswitch_repeat_s": again_s, "networkx_s": nx_s,
             "ratio_first_to_networkx": first_s / nx_s}]


def _rows(xp, indptr, first: int):
    """The row of every entry of a CSR matrix with offsets ``indptr``, from ``first``."""
    at = xp.arange(int(indptr[-1]), dtype=xp.int64)
    return xp.searchsorted(xp.asarray(indptr, dtype=xp.int64), at, side="right") - 1 + first


def gpu_rows(scale: int, ef: int, repeats: int,
             variants: tuple[str, ...] = ("merge", "search", "oriented")) -> list[dict]:
    import cupy as cp
    import cupyx.scipy.sparse as csp

    g = rmat(scale, ef, seed=1)
    simple = g.symmetrize().simple()
    a = csp.csr_matrix((cp.ones(simple.n_edges, dtype=cp.float32),
                        cp.asarray(simple.indices), cp.asarray(simple.indptr)),
                       shape=(simple.n_nodes,) * 2)

    n = simple.n_nodes
    indptr = cp.asarray(simple.indptr, dtype=cp.int64)
    a_rows = _rows(cp, indptr, 0)
    a_keys = a_rows * n + cp.asarray(simple.indices, dtype=cp.int64)
    # A @ A has up to sum over edges (i, j) of deg(j) entries (2e10 on RMAT-20), past
    # cuSPARSE's int32 offsets (an unblocked product came back wrong, 0 at the hub):
    # the product is formed a block of rows at a time, each under 2**28 such products
    flops = np.cumsum(simple.to_scipy() @ np.diff(simple.indptr).astype(np.float64))
    cuts = np.unique(np.r_[0, np.searchsorted(flops, np.arange(1, flops[-1] // 2**28 + 2)
                                              * 2.0**28), n])
    cuts = cuts[cuts <= n]

    def peer():
        # (A @ A) .* A, a block of rows at a time: the product's entries at A's nonzeros
        # count common neighbours (exact in float32 below 2**24); they are looked up by
        # (row, column) key in the product's sorted rows, and each row's sum (each
        # triangle twice per node) is added in float64
        per_node = cp.zeros(n, dtype=cp.float64)
        for r0, r1 in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            p = a[r0:r1] @ a
            p.sort_indices()
            p_rows = _rows(cp, p.indptr, r0)
            p_keys = p_rows * n + p.indices.astype(cp.int64)
            e0, e1 = int(simple.indptr[r0]), int(simple.indptr[r1])
            keys = a_keys[e0:e1]
            if p_keys.size == 0 or keys.size == 0:
                continue
            at = cp.minimum(cp.searchsorted(p_keys, keys), p_keys.size - 1)
            common = cp.where(p_keys[at] == keys, p.data[at], 0).astype(cp.float64)
            per_node += cp.bincount(a_rows[e0:e1], weights=common, minlength=n)
        per_node = cp.rint(per_node).astype(cp.int64) // 2
        cp.cuda.Device().synchronize()
        return per_node

    want = peer().get()
    total = int(want.sum()) // 3
    # an independent check of the peer and of gswitch: scipy counts the edges among the
    # neighbours of node 0 and of 200 random nodes
    host = simple.to_scipy().tocsr()
    sample = np.unique(np.r_[0, np.random.default_rng(1).integers(0, simple.n_nodes, 200)])
    exact = {}
    for v in sample.tolist():
        nb = host.indices[host.indptr[v]:host.indptr[v + 1]]
        nb = nb[nb != v]
        exact[v] = host[nb][:, nb].nnz // 2
    off = [v for v, c in exact.items() if want[v] != c]
    assert not off, f"the SpGEMM peer is off at node {off[0]}: {want[off[0]]} != {exact[off[0]]}"
    peer_s = _time(peer, repeats)
    rows = []
    for variant in variants:
        cfg = {"variant": variant}
        r = gs.run("triangles", g, backend="gpu", config=cfg)
        got = np.asarray(r.fields["triangles"], dtype=np.int64)
        bad = np.flatnonzero(got != want)
        assert not bad.size, (f"{variant}: {bad.size} nodes differ from the SpGEMM count, "
                              f"e.g. node {bad[0]}: {got[bad[0]]} != {want[bad[0]]}")
        call_s = _time(lambda cfg=cfg: gs.run("triangles", g, backend="gpu", config=cfg),
                       repeats)
        rows.append({"backend": "gpu", "variant": variant, "graph": f"rmat:{scale}:{ef}",
                     "edges": simple.n_edges, "triangles": total, "gswitch_call_s": call_s,
                     "device_s": r.stats.get("device_time_s"), "cupy_spgemm_s": peer_s,
                     "ratio_to_peer": call_s / peer_s})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=15)
    ap.add_argument("--edge-factor", type=int, default=8)
    ap.add_argument("--gpu-scale", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tag", default="")
    ap.add_argument("--variants", default="merge,search,oriented")
    args = ap.parse_args()
    rows = cpu_rows(args.scale, args.edge_factor, args.repeats)
    if gs.gpu_available():
        rows += gpu_rows(args.gpu_scale, args.edge_factor, args.repeats,
                         tuple(args.variants.split(",")))
    else:
        print("no usable GPU: CPU rows only")
    for row in rows:
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()})
    print("wrote", write_json(f"triangles{'_' + args.tag if args.tag else ''}", {"rows": rows}))


if __name__ == "__main__":
    main()
