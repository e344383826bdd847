"""Work-efficient formulations: every ``variant`` of CC, SSSP and PageRank against its peers.

Measures, for each (algorithm, graph), gswitch's default configuration (``{}``), each
formulation selected with the ``variant`` config key (``{"variant": v}``, default
strategies otherwise) and any extra configurations from ``--configs``, next to peers
written here and run in the same process, with every answer checked.

GPU part (``--backend gpu``), graphs at ``--scale`` S (default 22): RMAT-S (edge factor
16, directed; symmetrised for CC), uniform random 2^S with edge factor 16, a road-like
grid of side 2048 * 2^((S-22)/2) (``generators.road``: integer weights, 10% of the grid
edges dropped), a star with 2^(S-2) leaves and a bipartite user-item graph of 2^(S-2)
nodes and about 2^(S+2) undirected edges whose item (hub) side has Zipf-distributed
degrees (:func:`bipartite_zipf`; hubs of 1e5 to 1e6 edges at S=22): the default
``--graphs``, the shipped selector's training corpus. More kinds, for a wider corpus
(``configs/selector_corpus.md``; seeds 41 to 46, which no evaluation graph uses):

- ``rmat_low`` / ``rmat_high``: RMAT-S, edge factor 16, at a flatter (a=0.45, b=c=0.22)
  and a steeper (a=0.65, b=c=0.15) skew, directed like ``rmat``;
- ``uniform_sparse``: uniform random 2^S, edge factor 2 (directed, mean degree 2);
- ``grid``: the plain 4-neighbour grid (``generators.grid2d``) of the road grid's side;
- ``chain``: ``generators.clique_chain`` of 32-node cliques, 2^S nodes (about 2^(S-4)
  BFS levels: keep S small, the CuPy peers take about a millisecond a level);
- ``metis``: ``mdual`` (a finite-element mesh: 258,569 nodes, 1.03M stored edges) from
  Debian's ``libmetis-doc`` (:mod:`gswitch.testing.datasets`), with weights hashed from
  each edge's ends; one size, no scale. It is read from the package's install or the
  dataset cache (``$GSWITCH_DATA_DIR/metis``, set by ``--data-dir DIR``) and never
  downloaded here: on a machine without a network the caller carries the three
  ``.graph`` files as ``DIR/metis/``.

``--graphs KIND:SCALE`` gives one kind its own scale (``--graphs rmat_low:19,grid:19,
metis``); a kind named alone takes ``--scale``. Each graph's name
(:func:`graph_name`: ``rmat-19-16-lowskew``, ``grid-724x724``, ``clique-chain-1024x32``,
``metis-mdual``, ...) says its kind and size (:func:`parse_graph_name`), so
``train_selector.py`` can rebuild it. Peers, in CuPy:

- PageRank: power iteration with a cuSPARSE SpMV of the transposed, out-degree-normalised
  adjacency in float32 and in float64 (alpha 0.85, dangling mass spread uniformly, stop
  when the L1 change falls below a tolerance); each peer's tolerance is the largest of a
  ladder whose L1 error to a float64 reference (the same iteration run to 1e-12) is at
  most 1e-6. gswitch runs with ``tolerance=`` each ``--pr-tolerance`` value and its L1
  error to the same reference is reported;
- CC: FastSV (hooking and shortcutting) on the symmetrised graph; the peer's labels, the
  smallest id of each component, must equal scipy's canonical labels, and gswitch's
  labels must equal the peer's;
- SSSP: a frontier Bellman-Ford (relaxation with an ``atomicMin`` on float bits) and
  scipy Dijkstra on the host; distances agree to rtol 1e-5;
- BFS: the plain-CuPy frontier BFS of ``bench_engine.py``.

CPU part (``--backend cpu``): a road-like 512x512 grid; CC against scipy
``connected_components``, SSSP against scipy Dijkstra, PageRank against a scipy SpMV power
iteration (what ``networkx.pagerank`` runs), float64, its tolerance chosen as above, and
the same iteration stopped at each ``--pr-tolerance`` value (``-same-tol``), which the
PageRank rows of that tolerance are compared with. The peers call BLAS (a dot product a
step): on a small shared host, ``OPENBLAS_NUM_THREADS=1`` keeps its threads from
spinning against other processes.

Times: ``wall_ms`` is the median over ``--repeats`` calls (after one warm-up) from the
call to the returned result (gswitch returns host arrays; on the GPU each verified
configuration is timed again with ``arrays="cupy"``, its answer left on the device as the
GPU peers leave theirs: ``wall_device_result_ms`` and ``ratio_to_peer_device_result``,
checked too); ``device_time_ms`` is the
median of the engine's own ``stats["device_time_s"]`` (GPU) or ``stats["time_s"]`` (CPU).
A GPU peer's time runs from device-resident inputs to a device-resident answer, with a
``synchronize``; building its matrix or edge list is setup, reported apart. Host peers
(Dijkstra) run ``--host-repeats`` times without warm-up. A variant that does not exist
(yet) gives a row with its error and the run goes on. Per (algorithm, graph, params) the
summary says whether the default configuration is within 2x of the best one timed.

Usage::

    python benchmarks/bench_formulations.py --backend gpu [--scale 22] [--repeats 5]
        [--graphs rmat,uniform,road,star,bipartite|KIND:SCALE,...] [--data-dir DIR]
        [--algs pagerank,cc,sssp,bfs]
        [--variants cc=label_propagation,hook_compress,afforest
                    sssp=bellman_ford,delta_stepping pagerank=residual_push,power_pull]
        [--configs extra.json [more.json ...]] [--pr-tolerance 1e-7 ...] [--out-prefix run]
    python benchmarks/bench_formulations.py --backend cpu [--grid 512]
    python benchmarks/bench_formulations.py --backend cpu --quick   # tiny sizes
    python benchmarks/bench_formulations.py --self-check            # peers, with NumPy

``--configs`` names JSON files mapping algorithm -> list of config dicts (several files:
their lists merged, each configuration once). ``--variants
cc=`` times no CC variant. Writes ``benchmarks/results/<prefix>_formulations_<backend>.json``
(and a copy under ``$OUT`` when set) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
from _common import median_time, require_gpu
from bench_engine import cupy_frontier_bfs

import gswitch as gs
from gswitch.generators import (
    WEIGHT_HIGH,
    WEIGHT_LOW,
    clique_chain,
    grid2d,
    rmat,
    road,
    star,
    uniform_random,
)
from gswitch.testing.reference import compare, reference

ALGS = ("pagerank", "cc", "sssp", "bfs")
#: The shipped model's training kinds, and the default ``--graphs``.
GRAPHS = ("rmat", "uniform", "road", "star", "bipartite")
#: Kinds added for a wider training corpus (``configs/selector_corpus.md``).
CORPUS_GRAPHS = ("rmat_low", "rmat_high", "uniform_sparse", "grid", "chain", "metis")
#: Every kind ``--graphs`` takes.
KINDS = GRAPHS + CORPUS_GRAPHS
#: Smallest scale of a GPU-part graph (a chain needs one whole clique).
MIN_SCALE = 5
#: ``chain``: cliques of 2^5 = 32 nodes.
CHAIN_LOG2_CLIQUE = 5
#: ``metis``: the largest of Debian libmetis-doc's example graphs.
METIS_GRAPH = "mdual"
FIELD = {"bfs": "depth", "sssp": "dist", "cc": "comp", "pagerank": "rank"}
DEFAULT_VARIANTS = {"cc": ["label_propagation", "hook_compress", "afforest"],
                    "sssp": ["bellman_ford", "delta_stepping"],
                    "pagerank": ["residual_push", "power_pull"]}
ALPHA = 0.85
PEER_L1_TARGET = 1e-6
REF_TOLERANCE = 1e-12
TOLERANCE_LADDER = (1e-6, 3e-7, 1e-7, 3e-8, 1e-8, 3e-9, 1e-9, 3e-10, 1e-10)
RESULTS = Path(__file__).resolve().parent / "results"


# ------------------------------------------------------------------ graphs

def bipartite_zipf(n_nodes: int = 1 << 20, n_edges: int = 1 << 24, *, hub_share: float = 1 / 16,
                   exponent: float = 0.95, seed: int = 4, weighted: bool = False) -> gs.Graph:
    """Undirected user-item graph whose item (hub) side has Zipf-distributed degrees.

    Items are nodes ``0 .. n_items-1`` (``n_items = hub_share * n_nodes``, item 0 the
    largest hub), users the rest. Item ``i`` (1-based rank) draws ``n_edges * i^-exponent /
    sum_j j^-exponent`` users uniformly with replacement; repeated (item, user) pairs are
    dropped, so a hub never exceeds the number of users and the graph has a little fewer
    than ``n_edges`` undirected edges. At the defaults the top hubs keep 1e5 to 6e5 users.
    """
    rng = np.random.default_rng(seed)
    n_items = max(1, int(n_nodes * hub_share))
    share = np.arange(1, n_items + 1, dtype=np.float64) ** -exponent
    degree = np.maximum(1, np.floor(share / share.sum() * n_edges)).astype(np.int64)
    item = np.repeat(np.arange(n_items, dtype=np.int64), degree)
    user = rng.integers(n_items, n_nodes, size=item.size)
    key = np.sort(item * n_nodes + user)  # np.unique: the same, slower on NumPy 2
    key = key[np.concatenate(([True], key[1:] != key[:-1]))]
    src, dst = (key // n_nodes).astype(np.int32), (key % n_nodes).astype(np.int32)
    weights = (rng.integers(WEIGHT_LOW, WEIGHT_HIGH, size=src.size).astype(np.float32)
               if weighted else None)
    return gs.Graph.from_edges(src, dst, weights, n_nodes=n_nodes, directed=False,
                               name=f"bipartite-zipf-{n_nodes}")


def hashed_weights(g: gs.Graph, seed: int) -> gs.Graph:
    """``g`` with integer weights in [1, 64) (kept where it has some): a hash of the
    edge's two ends, so both directions of an undirected edge weigh the same."""
    if g.weighted:
        return g
    src, dst = g.edges()
    lo = np.minimum(src, dst).astype(np.uint64)
    hi = np.maximum(src, dst).astype(np.uint64)
    h = (lo * np.uint64(0x9E3779B97F4A7C15) ^ hi * np.uint64(0xC2B2AE3D27D4EB4F)
         ^ np.uint64(seed)) >> np.uint64(40)
    w = (WEIGHT_LOW + h % np.uint64(WEIGHT_HIGH - WEIGHT_LOW)).astype(np.float32)
    return g.with_weights(w)


def _side(scale: int) -> int:
    """Side of the square grids: 2048 at scale 22, sqrt(2)x per scale."""
    return max(8, round(2048 * 2 ** ((scale - 22) / 2)))


def graph_name(kind: str, scale: int) -> str:
    """The name :func:`gpu_graph` gives ``kind`` at ``scale``: the key of its rows, and of
    the training graph in the selector's model (:func:`parse_graph_name` reads it back).
    """
    if scale < MIN_SCALE:
        raise ValueError(f"graph scale must be >= {MIN_SCALE}, got {scale}")
    side, clique = _side(scale), 1 << CHAIN_LOG2_CLIQUE
    names = {"rmat": f"rmat-{scale}-16", "uniform": f"uniform-{1 << scale}-{16 << scale}",
             "road": f"road-{side}x{side}", "star": f"star-{(1 << (scale - 2)) + 1}",
             "bipartite": f"bipartite-zipf-{1 << (scale - 2)}",
             "rmat_low": f"rmat-{scale}-16-lowskew", "rmat_high": f"rmat-{scale}-16-highskew",
             "uniform_sparse": f"uniform-{1 << scale}-{2 << scale}",
             "grid": f"grid-{side}x{side}",
             "chain": f"clique-chain-{(1 << scale) // clique}x{clique}",
             "metis": f"metis-{METIS_GRAPH}"}
    if kind not in names:
        raise ValueError(f"unknown graph kind {kind!r}; choose one of {', '.join(KINDS)}")
    return names[kind]


def parse_graph_name(name: str) -> tuple[str, int] | None:
    """``(kind, scale)`` of a :func:`gpu_graph` name, or ``None`` for a name none of the
    kinds gives at scales :data:`MIN_SCALE` to 30 (``metis`` has one size: its scale is
    :data:`MIN_SCALE` and means nothing).
    """
    for kind in KINDS:
        for scale in range(MIN_SCALE, 31):
            if graph_name(kind, scale) == name:
                return kind, scale
    return None


def gpu_graph(kind: str, scale: int, weighted: bool) -> gs.Graph:
    """One GPU-part graph at ``scale`` (22: the full sizes of the module docstring),
    named by :func:`graph_name`. ``weighted``: integer weights in [1, 64), which the
    road grid always has.
    """
    if kind == "rmat":
        g = rmat(scale, 16, seed=1, weighted=weighted)
    elif kind == "uniform":
        g = uniform_random(1 << scale, 16 << scale, seed=2, weighted=weighted)
    elif kind == "road":
        g = road(_side(scale), _side(scale), seed=3)
    elif kind == "star":
        g = star((1 << (scale - 2)) + 1, weighted=weighted, seed=5)
    elif kind == "bipartite":
        g = bipartite_zipf(1 << (scale - 2), 1 << (scale + 2), weighted=weighted)
    elif kind == "rmat_low":
        g = rmat(scale, 16, 0.45, 0.22, 0.22, seed=41, weighted=weighted)
    elif kind == "rmat_high":
        g = rmat(scale, 16, 0.65, 0.15, 0.15, seed=42, weighted=weighted)
    elif kind == "uniform_sparse":
        g = uniform_random(1 << scale, 2 << scale, seed=43, weighted=weighted)
    elif kind == "grid":
        g = grid2d(_side(scale), _side(scale), weighted=weighted, seed=44)
    elif kind == "chain":
        clique = 1 << CHAIN_LOG2_CLIQUE
        g = clique_chain((1 << scale) // clique, clique, weighted=weighted, seed=45)
    elif kind == "metis":
        g = metis_graph()
        g = hashed_weights(g, seed=46) if weighted else g
    else:
        raise ValueError(f"unknown graph kind {kind!r}; choose one of {', '.join(KINDS)}")
    g.name = graph_name(kind, scale)
    return g


def metis_graph() -> gs.Graph:
    """:data:`METIS_GRAPH` from Debian's ``libmetis-doc``, installed or in the dataset
    cache (``$GSWITCH_DATA_DIR/metis``, which ``--data-dir`` sets); never downloaded here,
    so a machine without a network fails at once with what to carry.
    """
    from gswitch.io import load_graph
    from gswitch.testing.datasets import DatasetUnavailable, metis_graph_path

    try:
        path = metis_graph_path(METIS_GRAPH, download=False)
    except DatasetUnavailable as exc:
        raise SystemExit(
            f"bench_formulations: graph kind metis: {exc}. Fetch the graphs where there is "
            "a network (python -c 'from gswitch.testing.datasets import metis_graph_dir; "
            "print(metis_graph_dir())'), carry that folder as DIR/metis and pass "
            "--data-dir DIR") from None
    return load_graph(path)


def graph_for(alg: str, base: gs.Graph, weighted: gs.Graph | None) -> gs.Graph:
    """The graph an algorithm runs on: symmetrised for CC, weighted for SSSP."""
    if alg == "cc":
        return base.symmetrize() if base.directed else base
    if alg == "sssp":
        return weighted if weighted is not None else base
    return base


def source_of(alg: str, g: gs.Graph) -> int | None:
    """BFS and SSSP start at the node of largest out-degree; CC and PageRank take none."""
    return int(np.argmax(g.out_degree)) if alg in ("bfs", "sssp") else None


# ------------------------------------------------------------------ peers (NumPy or CuPy)

_KERNELS: dict = {}
_SCATTER_MIN = r"""
extern "C" __global__ void scatter_min_i32(int* target, const int* idx, const int* val,
                                           long long m) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i < m) atomicMin(target + idx[i], val[i]);
}
"""


def scatter_min(xp, target, idx, vals) -> None:
    """``target[idx] = min(target[idx], vals)`` with repeats; on CuPy an ``atomicMin`` on the
    int32 bits, valid for int32 and for non-negative float32 (their bits order alike).
    """
    if xp is np:
        np.minimum.at(target, idx, vals)
        return
    if idx.size == 0:
        return
    if "smin" not in _KERNELS:
        _KERNELS["smin"] = xp.RawKernel(_SCATTER_MIN, "scatter_min_i32")
    assert target.dtype in (xp.int32, xp.float32) and target.flags.c_contiguous
    idx = xp.ascontiguousarray(idx, dtype=xp.int32)
    vals = xp.ascontiguousarray(vals, dtype=target.dtype)
    m = idx.size
    _KERNELS["smin"](((m + 255) // 256,), (256,),
                     (target.view(xp.int32), idx, vals.view(xp.int32), np.int64(m)))


def fastsv(xp, src, dst, n: int):
    """FastSV connected components (Zhang, Azad, Hu 2020) on a symmetric edge list.

    Stochastic hooking, aggressive hooking and shortcutting until the grandparents stop
    changing; the labels are then each component's smallest node id.
    """
    f = xp.arange(n, dtype=xp.int32)
    gf = f.copy()
    while True:
        mngf = gf.copy()
        scatter_min(xp, mngf, src, gf[dst])   # min grandparent over the neighbours
        scatter_min(xp, f, f.copy(), mngf)    # stochastic hooking: f[f[u]] min= mngf[u]
        xp.minimum(f, mngf, out=f)            # aggressive hooking
        xp.minimum(f, gf, out=f)              # shortcutting
        new_gf = f[f]
        if bool((new_gf == gf).all()):
            return new_gf
        gf = new_gf


def expand_frontier(xp, indptr, frontier):
    """Positions in ``frontier`` and edge ids of all edges leaving it (``None``: no edge)."""
    starts = indptr[frontier]
    degs = indptr[frontier + 1] - starts
    incl = xp.cumsum(degs)
    total = int(incl[-1])
    if total == 0:
        return None, None
    pos = xp.arange(total, dtype=incl.dtype)
    owner = xp.searchsorted(incl, pos, side="right")
    return owner, starts[owner] + pos - (incl[owner] - degs[owner])


def frontier_sssp(xp, indptr, indices, weights, source: int):
    """Frontier Bellman-Ford: relax the edges of the nodes improved in the last round."""
    dist = xp.full(indptr.size - 1, np.inf, dtype=xp.float32)
    dist[source] = 0.0
    frontier = xp.asarray([source], dtype=xp.int64)
    while frontier.size:
        owner, eid = expand_frontier(xp, indptr, frontier)
        if eid is None:
            break
        nbr = indices[eid]
        cand = dist[frontier[owner]] + weights[eid]
        better = cand < dist[nbr]
        nbr, cand = nbr[better], cand[better]
        old = dist[nbr]
        scatter_min(xp, dist, nbr, cand)
        frontier = xp.unique(nbr[dist[nbr] < old]).astype(xp.int64)
    return dist


def transition_transpose(xp, spmod, indptr, indices, dtype):
    """``A^T`` of the out-degree-normalised adjacency (parallel edges count) and the
    dangling indicator, for ``spmod`` = scipy.sparse or cupyx.scipy.sparse.
    """
    n = indptr.size - 1
    out = xp.diff(indptr)
    inv = (1.0 / xp.maximum(out, 1)).astype(dtype)
    row = xp.searchsorted(indptr[1:], xp.arange(indices.size), side="right")
    a = spmod.csr_matrix((inv[row], indices, indptr), shape=(n, n))
    return a.T.tocsr(), (out == 0).astype(dtype)


def power_iteration(xp, at, dangling, tol: float, max_iter: int = 1000):
    """PageRank by power iteration (networkx's definition); stops when the L1 change
    between two iterates is below ``tol``. Returns the vector, iterations, converged.
    """
    n = at.shape[0]
    x = xp.full(n, 1.0 / n, dtype=at.dtype)
    for it in range(1, max_iter + 1):
        y = at @ x
        y += xp.dot(dangling, x) / n
        y *= ALPHA
        y += (1.0 - ALPHA) / n
        change = float(xp.abs(y - x).sum())
        x = y
        if change < tol:
            return x, it, True
    return x, max_iter, False


def l1_error(xp, x, ref) -> float:
    return float(xp.abs(x.astype(xp.float64) - ref).sum())


def calibrate_tolerance(xp, at, dangling, ref):
    """Largest ladder tolerance whose answer is within ``PEER_L1_TARGET`` of ``ref``."""
    tol, err, its = TOLERANCE_LADDER[-1], float("inf"), 0
    for tol in TOLERANCE_LADDER:
        x, its, _ = power_iteration(xp, at, dangling, tol, max_iter=500)
        err = l1_error(xp, x, ref)
        if err <= PEER_L1_TARGET:
            break
    return tol, err, its


# ------------------------------------------------------------------ timing

def _gpu_sync() -> None:
    import cupy as cp

    cp.cuda.Device().synchronize()


def time_peer(fn, repeats: int, sync, warmup: int = 1) -> tuple[float, object]:
    """Median wall seconds of ``fn`` (synchronised by ``sync``) and its last answer."""
    box = []

    def call():
        box.append(fn())
        sync()

    med, _ = median_time(call, max(1, repeats), warmup=warmup)
    return med, box[-1]


def peer_row(name: str, where: str, wall_s: float | None, err: str | None, **extra) -> dict:
    return {"name": name, "device": where, "wall_ms": None if wall_s is None else wall_s * 1e3,
            "verified": err is None, "error": err, **extra}


def time_gswitch(alg, g, source, backend, cfg, params, repeats, arrays="numpy"):
    """gswitch's median wall and engine seconds over ``repeats`` calls after a warm-up
    (``arrays="cupy"``: the results stay on the device, as the GPU peers' do).
    """
    results = []
    wall, _ = median_time(lambda: results.append(gs.run(alg, g, source=source, backend=backend,
                                                         config=cfg, arrays=arrays, **params)),
                          repeats)
    key = "device_time_s" if backend == "gpu" else "time_s"
    engine = [r.stats.get(key) for r in results[1:] if r.stats.get(key) is not None]
    return wall, (statistics.median(engine) if engine else None), results[-1]


# ------------------------------------------------------------------ GPU peers

def _device_csr(g: gs.Graph):
    import cupy as cp

    return (cp.asarray(g.indptr.astype(np.int32)), cp.asarray(g.indices.astype(np.int32)),
            None if g.weights is None else cp.asarray(g.weights.astype(np.float32)))


def gpu_peers_pagerank(g, args):
    """Float64 GPU reference and the calibrated float32/float64 cuSPARSE power iterations."""
    import cupy as cp
    import cupyx.scipy.sparse as cusp

    indptr, indices, _ = _device_csr(g)
    at64, d64 = transition_transpose(cp, cusp, indptr, indices, cp.float64)
    ref, its, ok = power_iteration(cp, at64, d64, REF_TOLERANCE, max_iter=10000)
    peers = []
    for dtype in (cp.float32, cp.float64):
        t = time.perf_counter()
        at, d = transition_transpose(cp, cusp, indptr, indices, dtype)
        _gpu_sync()
        setup = time.perf_counter() - t
        tol, err, n_it = calibrate_tolerance(cp, at, d, ref)
        wall, _ = time_peer(lambda at=at, d=d, tol=tol: power_iteration(cp, at, d, tol, 500),
                            args.repeats, _gpu_sync)
        bad = None if err <= PEER_L1_TARGET else f"L1 error {err:.3g} > {PEER_L1_TARGET}"
        peers.append(peer_row(f"cusparse-power-{np.dtype(dtype).name}", "gpu", wall, bad,
                              tolerance=tol, l1_error=err, iterations=n_it,
                              setup_ms=setup * 1e3))
    host_ref = cp.asnumpy(ref)
    del at64, d64, ref
    return peers, {"rank": host_ref, "reference_iterations": its, "reference_converged": ok}


def gpu_peers_cc(g, args):
    import cupy as cp

    ref = reference("cc", g)
    src = cp.asarray(np.repeat(np.arange(g.n_nodes, dtype=np.int32), np.diff(g.indptr)))
    dst = cp.asarray(g.indices.astype(np.int32))
    wall, labels = time_peer(lambda: fastsv(cp, src, dst, g.n_nodes), args.repeats, _gpu_sync)
    labels = cp.asnumpy(labels)
    bad = None if np.array_equal(labels, ref) else compare("cc", labels, ref) or \
        "labels are not the smallest id of their component"
    return [peer_row("fastsv-cupy", "gpu", wall, bad)], {"comp": ref, "peer_labels": labels}


def host_dijkstra(g, source, repeats):
    """Timed scipy Dijkstra (parallel edges: the shortest counts) and its distances."""
    a = g.deduplicate("min").to_scipy()
    wall, dist = time_peer(lambda: csgraph.dijkstra(a, indices=source), repeats,
                           lambda: None, warmup=0)
    return peer_row("scipy-dijkstra", "host", wall, None), dist


def gpu_peers_sssp(g, source, args):
    import cupy as cp

    host, ref = host_dijkstra(g, source, args.host_repeats)
    indptr, indices, weights = _device_csr(g)
    indptr = indptr.astype(cp.int64)
    wall, dist = time_peer(lambda: frontier_sssp(cp, indptr, indices, weights, source),
                           args.repeats, _gpu_sync)
    bf = peer_row("bellman-ford-cupy", "gpu", wall, compare("sssp", cp.asnumpy(dist), ref))
    return [bf, host], {"dist": ref}


def gpu_peers_bfs(g, source, args):
    import cupy as cp

    ref = reference("bfs", g, source=source)
    indptr, indices, _ = _device_csr(g)
    wall, depth = time_peer(lambda: cupy_frontier_bfs(indptr, indices, source), args.repeats,
                            _gpu_sync)
    return [peer_row("frontier-bfs-cupy", "gpu", wall,
                     compare("bfs", cp.asnumpy(depth).astype(np.int64), ref))], {"depth": ref}


def gpu_peers(alg, g, source, args):
    """Peer rows of one (algorithm, graph) and the reference answers gswitch is checked by."""
    if alg == "pagerank":
        return gpu_peers_pagerank(g, args)
    if alg == "cc":
        return gpu_peers_cc(g, args)
    if alg == "sssp":
        return gpu_peers_sssp(g, source, args)
    return gpu_peers_bfs(g, source, args)


# ------------------------------------------------------------------ CPU peers

def cpu_peers(alg, g, source, args):
    """Host peers (scipy) of the CPU part, and the reference answers."""
    if alg == "sssp":
        peer, ref = host_dijkstra(g, source, args.repeats)
        return [peer], {"dist": ref}
    if alg == "cc":
        a = g.to_scipy()
        wall, (_, labels) = time_peer(lambda: csgraph.connected_components(a, directed=False),
                                      args.repeats, lambda: None)
        ref = reference("cc", g)
        return [peer_row("scipy-connected_components", "host", wall, None)], {"comp": ref}
    at, d = transition_transpose(np, sp, g.indptr.astype(np.int64), g.indices, np.float64)
    ref, its, ok = power_iteration(np, at, d, REF_TOLERANCE, max_iter=10000)
    tol, err, n_it = calibrate_tolerance(np, at, d, ref)
    wall, _ = time_peer(lambda: power_iteration(np, at, d, tol, 500), args.repeats,
                        lambda: None)
    bad = None if err <= PEER_L1_TARGET else f"L1 error {err:.3g} > {PEER_L1_TARGET}"
    peers = [peer_row("scipy-spmv-power-float64", "host", wall, bad, tolerance=tol,
                      l1_error=err, iterations=n_it)]
    for t in args.pr_tolerance:  # the same loop stopped where gswitch's rows stop
        wall, (x, n_it, _) = time_peer(lambda t=t: power_iteration(np, at, d, t, 10000),
                                       args.repeats, lambda: None)
        err = l1_error(np, x, ref)
        bad = None if err <= PEER_L1_TARGET else f"L1 error {err:.3g} > {PEER_L1_TARGET}"
        peers.append(peer_row("scipy-spmv-power-float64-same-tol", "host", wall, bad,
                              tolerance=t, l1_error=err, iterations=n_it, same_tolerance=True))
    return peers, {"rank": ref, "reference_iterations": its, "reference_converged": ok}


# ------------------------------------------------------------------ checking and rows

def check(alg: str, got: np.ndarray, refs: dict) -> tuple[str | None, float | None]:
    """Error string (``None``: verified) and, for PageRank, the L1 error to the reference."""
    if alg == "pagerank":
        err = l1_error(np, got, refs["rank"])
        return compare("pagerank", got, refs["rank"]), err
    if alg == "cc":
        bad = compare("cc", got, refs["comp"])
        if bad is None and not np.array_equal(got, refs["peer_labels"] if "peer_labels" in refs
                                              else refs["comp"]):
            bad = "labels differ from the peer's canonical labels"
        return bad, None
    return compare(alg, np.asarray(got), refs[FIELD[alg]]), None


def config_list(alg: str, variants: dict, extra: dict) -> list[tuple[str, dict]]:
    out = [("default", {})]
    out += [(f"variant={v}", {"variant": v}) for v in variants.get(alg, [])]
    out += [("extra:" + json.dumps(c, sort_keys=True), dict(c)) for c in extra.get(alg, [])]
    return out


def param_list(alg: str, args) -> list[dict]:
    return [{"tolerance": t} for t in args.pr_tolerance] if alg == "pagerank" else [{}]


def primary_peer(peers: list[dict], where: str, params: dict | None = None) -> dict | None:
    """The verified peer running where gswitch runs (``gpu`` or ``host``) that stops at
    the row's own ``tolerance`` (``same_tolerance`` peers), else the fastest one.
    """
    ok = [p for p in peers if p["verified"] and p["device"] == where and p["wall_ms"]]
    same = [p for p in ok if p.get("same_tolerance")
            and p["tolerance"] == (params or {}).get("tolerance")]
    ok = same or [p for p in ok if not p.get("same_tolerance")]
    return min(ok, key=lambda p: p["wall_ms"]) if ok else None


def measure_row(alg, g, source, label, cfg, params, refs, peers, args) -> dict:
    from gswitch.selector import graph_features

    row = {"graph": g.name, "n_nodes": g.n_nodes, "n_edges": g.n_edges, "algorithm": alg,
           "features": graph_features(g),  # what train_selector.py learns from
           "label": label, "config": cfg, "params": params, "device_time_ms": None,
           "wall_ms": None, "iterations": None, "verified": False, "error": None,
           "l1_error": None}
    try:
        wall, engine, r = time_gswitch(alg, g, source, args.backend, cfg, params, args.repeats)
    except Exception as exc:  # an unknown variant, a refused combination, a device error
        row["error"] = f"{type(exc).__name__}: {exc}"
    else:
        bad, l1 = check(alg, r.fields[FIELD[alg]], refs)
        row.update(wall_ms=wall * 1e3, device_time_ms=None if engine is None else engine * 1e3,
                   iterations=r.iterations, verified=bad is None, error=bad, l1_error=l1)
        if args.backend == "gpu" and row["verified"]:
            # the GPU peers leave their answer on the device: so does this call, and its
            # answer is checked too
            wall_dev, _e, rd = time_gswitch(alg, g, source, "gpu", cfg, params, args.repeats,
                                            arrays="cupy")
            bad_dev, _l1 = check(alg, rd.fields[FIELD[alg]].get(), refs)
            row["wall_device_result_ms"] = wall_dev * 1e3 if bad_dev is None else None
    best = primary_peer(peers, "gpu" if args.backend == "gpu" else "host", params)
    row.update(peer=best and best["name"], peer_wall_ms=best and best["wall_ms"],
               ratio_to_peer=(row["wall_ms"] / best["wall_ms"]
                              if best and row["wall_ms"] else None), peers=peers)
    if best and row.get("wall_device_result_ms"):
        # both sides end to end, both answers left on the device
        row["ratio_to_peer_device_result"] = row["wall_device_result_ms"] / best["wall_ms"]
    print_row(row)
    return row


def run_case(alg, g, source, args, peers_fn) -> list[dict]:
    """All configurations of one (algorithm, graph) after its peers."""
    print(f"-- {alg} on {g.name}: n={g.n_nodes:,} m={g.n_edges:,}", flush=True)
    try:
        peers, refs = peers_fn(alg, g, source, args)
    except Exception as exc:
        print(f"   peers failed: {type(exc).__name__}: {exc}", flush=True)
        peers, refs = [peer_row("peers", "n/a", None, f"{type(exc).__name__}: {exc}")], None
    for p in peers:
        wall = "-" if p["wall_ms"] is None else f"{p['wall_ms']:.3f}"
        print(f"   peer {p['name']:28s} {wall:>10s} ms  verified={p['verified']}"
              + (f"  tol={p['tolerance']:.0e} L1={p['l1_error']:.2e}" if "tolerance" in p
                 else "") + (f"  ({p['error']})" if p["error"] else ""), flush=True)
    rows = []
    for params in param_list(alg, args):
        for label, cfg in config_list(alg, args.variants, args.extra):
            if refs is None:
                rows.append({"graph": g.name, "algorithm": alg, "label": label, "config": cfg,
                             "params": params, "verified": False, "peers": peers,
                             "error": "no reference: the peers failed"})
                continue
            rows.append(measure_row(alg, g, source, label, cfg, params, refs, peers, args))
    return rows


def print_row(row: dict) -> None:
    def ms(v):
        return "-" if v is None else f"{v:.3f}"

    ratio = "-" if row.get("ratio_to_peer") is None else f"{row['ratio_to_peer']:.2f}x"
    params = " ".join(f"{k}={v:g}" for k, v in row["params"].items())
    err = f"  {row['error'][:90]}" if row["error"] else ""
    l1 = f" L1={row['l1_error']:.2e}" if row.get("l1_error") is not None else ""
    on_dev = row.get("ratio_to_peer_device_result")
    on_dev = "" if on_dev is None else (f"  wall(cupy) {row['wall_device_result_ms']:.3f} "
                                        f"{on_dev:.2f}x")
    print(f"   {row['label'][:34]:34s} {params:16s} dev {ms(row['device_time_ms']):>10s} "
          f"wall {ms(row['wall_ms']):>10s}  peer {ms(row.get('peer_wall_ms')):>10s} "
          f"{ratio:>7s}  ok={row['verified']}{l1}{on_dev}{err}", flush=True)


def summarise(rows: list[dict]) -> list[dict]:
    """Per (algorithm, graph, params): is the default within 2x of the best config timed?"""
    groups: dict = {}
    for r in rows:
        key = (r["algorithm"], r["graph"], json.dumps(r["params"], sort_keys=True))
        groups.setdefault(key, []).append(r)
    out = []
    for (alg, graph, params), rs in groups.items():
        good = [r for r in rs if r["verified"] and r.get("wall_ms")]
        default = next((r for r in good if r["label"] == "default"), None)
        entry = {"algorithm": alg, "graph": graph, "params": json.loads(params),
                 "configs_timed": len(good), "default_wall_ms": None, "best_label": None,
                 "best_wall_ms": None, "default_over_best": None, "within_2x": None}
        if good:
            best = min(good, key=lambda r: r["wall_ms"])
            entry.update(best_label=best["label"], best_wall_ms=best["wall_ms"])
            if default:
                ratio = default["wall_ms"] / best["wall_ms"]
                entry.update(default_wall_ms=default["wall_ms"], default_over_best=ratio,
                             within_2x=ratio <= 2.0)
        out.append(entry)
    return out


def print_summary(summary: list[dict]) -> None:
    print("\ndefault within 2x of the best config (wall, verified configs only):")
    for s in summary:
        ratio = "-" if s["default_over_best"] is None else f"{s['default_over_best']:.2f}x"
        params = json.dumps(s["params"]) if s["params"] else ""
        print(f"  {s['algorithm']:9s} {s['graph'][:24]:24s} {params:20s} best "
              f"{str(s['best_label'])[:34]:34s} default/best {ratio:>7s} "
              f"within_2x={s['within_2x']}")


# ------------------------------------------------------------------ parts

def gpu_part(args) -> list[dict]:
    require_gpu("bench_formulations.py")
    rows = []
    for kind, scale in args.graphs:
        print(f"\n== {kind} (scale {scale})", flush=True)
        base = gpu_graph(kind, scale, weighted=False)
        weighted = (gpu_graph(kind, scale, weighted=True)
                    if "sssp" in args.algs and not base.weighted else None)
        for alg in args.algs:
            g = graph_for(alg, base, weighted)
            rows += run_case(alg, g, source_of(alg, g), args, gpu_peers)
        del base, weighted
    return rows


def cpu_part(args) -> list[dict]:
    g = road(args.grid, args.grid, seed=3)
    rows = []
    for alg in [a for a in args.algs if a != "bfs"]:
        rows += run_case(alg, g, source_of(alg, g), args, cpu_peers)
    return rows


def environment(backend: str) -> dict:
    from gswitch._version import __version__

    env = {"machine": platform.node(), "platform": platform.platform(),
           "python": platform.python_version(), "numpy": np.__version__,
           "scipy": scipy.__version__, "gswitch": __version__, "argv": sys.argv[1:]}
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              cwd=RESULTS.parent, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, cwd=RESULTS.parent).stdout
        env["git"] = head + ("+dirty" if dirty.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        env["git"] = None
    if backend == "gpu":
        import cupy as cp

        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        env.update(gpu=props["name"].decode(), cupy=cp.__version__,
                   cuda_runtime=cp.cuda.runtime.runtimeGetVersion(),
                   cuda_driver=cp.cuda.runtime.driverGetVersion())
    return env


def write_results(args, rows: list[dict], summary: list[dict]) -> list[Path]:
    data = {"benchmark": "formulations", "backend": args.backend,
            "environment": environment(args.backend), "settings": settings(args),
            "rows": rows, "default_within_2x": summary}
    text = json.dumps(data, indent=2, default=str)
    name = f"{args.out_prefix}_formulations_{args.backend}.json"
    paths = [RESULTS / name] + ([Path(os.environ["OUT"]) / name] if os.environ.get("OUT") else [])
    for p in paths:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return paths


def settings(args) -> dict:
    keep = ("backend", "scale", "grid", "repeats", "host_repeats", "algs", "variants",
            "extra", "pr_tolerance", "quick")
    return {**{k: getattr(args, k) for k in keep},
            "graphs": [f"{kind}:{scale}" for kind, scale in args.graphs],
            "configs": [str(p) for p in args.configs]}


# ------------------------------------------------------------------ self-check

def self_check() -> None:
    """The peers' array code with NumPy on small graphs, against scipy; raises on a mismatch."""
    b = bipartite_zipf(1 << 12, 1 << 16, seed=4)
    deg = b.out_degree
    n_items = (1 << 12) // 16
    assert deg[:n_items].sum() == b.n_edges // 2 == deg[n_items:].sum(), "not bipartite"
    assert np.all(np.diff(deg[:8]) <= 0) or deg[0] == deg.max(), "item 0 is not the hub"
    print(f"bipartite: n={b.n_nodes} stored edges={b.n_edges} hub degrees {deg[:4].tolist()}")
    g = uniform_random(3000, 2500, seed=7).symmetrize()
    src = np.repeat(np.arange(g.n_nodes, dtype=np.int32), np.diff(g.indptr))
    labels = fastsv(np, src, g.indices.astype(np.int32), g.n_nodes)
    assert np.array_equal(labels, reference("cc", g)), "FastSV labels"
    r = road(40, 40, seed=3)
    s = source_of("sssp", r)
    dist = frontier_sssp(np, r.indptr.astype(np.int64), r.indices, r.weights, s)
    assert compare("sssp", dist, reference("sssp", r, source=s)) is None, "Bellman-Ford"
    rm = rmat(10, 8, seed=1)
    at, d = transition_transpose(np, sp, rm.indptr.astype(np.int64), rm.indices, np.float64)
    ref, _, _ = power_iteration(np, at, d, REF_TOLERANCE, 10000)
    assert l1_error(np, ref, reference("pagerank", rm)) < 1e-9, "power iteration"
    at32, d32 = transition_transpose(np, sp, rm.indptr.astype(np.int64), rm.indices, np.float32)
    tol, err, its = calibrate_tolerance(np, at32, d32, ref)
    assert err <= PEER_L1_TARGET, "float32 power iteration"
    print(f"fastsv, frontier Bellman-Ford, power iteration (float32 tol {tol:.0e}, L1 "
          f"{err:.2e}, {its} iterations): ok")


# ------------------------------------------------------------------ main

def parse_variants(items: list[str] | None) -> dict[str, list[str]]:
    out = {k: list(v) for k, v in DEFAULT_VARIANTS.items()}
    for item in items or []:
        alg, sep, names = item.partition("=")
        if not sep or alg not in ALGS:
            raise argparse.ArgumentTypeError(f"--variants takes ALG=V1,V2 with ALG in {ALGS}")
        out[alg] = [v for v in names.split(",") if v]
    return out


def parse_graphs(text: str, scale: int) -> list[tuple[str, int]]:
    """``--graphs``: ``KIND[:SCALE],...`` as ``(kind, scale)`` pairs, ``scale`` where a
    kind names none (``metis`` has one size and takes no scale).
    """
    out = []
    for item in (x for x in text.split(",") if x):
        kind, sep, own = item.partition(":")
        if kind not in KINDS:
            raise argparse.ArgumentTypeError(
                f"--graphs: unknown kind {kind!r}; choose from {', '.join(KINDS)}")
        if sep and (not own.isdigit() or kind == "metis"):
            raise argparse.ArgumentTypeError(
                f"--graphs takes KIND or KIND:SCALE (an integer; metis takes none), got {item!r}")
        s = int(own) if sep else scale
        if not MIN_SCALE <= s <= 30:
            raise argparse.ArgumentTypeError(
                f"--graphs: the scale of {kind} must be in {MIN_SCALE}..30, got {s}")
        out.append((kind, s))
    return out


def read_configs(paths: list[Path]) -> dict[str, list[dict]]:
    """``--configs``: the files' candidate lists merged per algorithm, in order, a
    configuration named by two files kept once.
    """
    out: dict[str, list[dict]] = {}
    for path in paths:
        for alg, configs in json.loads(path.read_text()).items():
            have = out.setdefault(alg, [])
            have += [c for c in configs if c not in have]
    return out


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=("gpu", "cpu"), default="gpu")
    ap.add_argument("--scale", type=int, default=22, help="GPU graph scale (22: full size)")
    ap.add_argument("--grid", type=int, default=512, help="CPU part: road grid side")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, 2 repeats")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--host-repeats", type=int, default=1, help="GPU part: scipy Dijkstra runs")
    ap.add_argument("--graphs", default=",".join(GRAPHS),
                    help="GPU part: KIND[:SCALE],... (a kind without a scale takes --scale) "
                    "with KIND one of " + ",".join(KINDS))
    ap.add_argument("--data-dir", type=Path,
                    help="the dataset cache holding metis/{4elt,copter2,mdual}.graph "
                    "(sets GSWITCH_DATA_DIR; the metis kind is never downloaded here)")
    ap.add_argument("--algs", default=",".join(ALGS), help="subset of " + ",".join(ALGS))
    ap.add_argument("--variants", nargs="*", metavar="ALG=V1,V2",
                    help="variants to time per algorithm (default: all named in the issue)")
    ap.add_argument("--configs", type=Path, nargs="+", default=[],
                    help="JSON files: algorithm -> list of config dicts (merged)")
    ap.add_argument("--pr-tolerance", type=float, nargs="+", default=[1e-7],
                    help="gswitch PageRank tolerance= values")
    ap.add_argument("--out-prefix", default="run")
    ap.add_argument("--self-check", action="store_true",
                    help="check the peers' array code with NumPy and exit")
    args = ap.parse_args(argv)
    try:
        args.variants = parse_variants(args.variants)
    except argparse.ArgumentTypeError as exc:
        ap.error(str(exc))
    args.extra = read_configs(args.configs)
    args.algs = [x for x in args.algs.split(",") if x]
    if not set(args.algs) <= set(ALGS):
        ap.error(f"--algs: subset of {ALGS}")
    try:
        args.graphs = parse_graphs(args.graphs, args.scale)
    except argparse.ArgumentTypeError as exc:
        ap.error(str(exc))
    if args.quick:
        args.scale, args.grid, args.repeats = min(args.scale, 10), min(args.grid, 48), 2
        args.graphs = [(kind, min(scale, 10)) for kind, scale in args.graphs]
    if args.data_dir is not None:
        os.environ["GSWITCH_DATA_DIR"] = str(args.data_dir.resolve())
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.self_check:
        self_check()
        return
    rows = gpu_part(args) if args.backend == "gpu" else cpu_part(args)
    summary = summarise(rows)
    print_summary(summary)
    for p in write_results(args, rows, summary):
        print(f"wrote {p}")


if __name__ == "__main__":
    main()
