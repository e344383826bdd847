"""PageRank's step count against the calibrated power-iteration peer's, on the CPU.

Where gswitch's PageRank call is slower than the cuSPARSE power iteration
(``bench_selector_tuned.py --alg pagerank``: the Zipf bipartite graphs), this tells a
step count that differs from a cost per step that does. For each graph: the float64
reference (a power iteration to 1e-12), the peer's calibrated tolerance with its steps
and L1 error (:func:`bench_formulations.calibrate_tolerance`, the same rule the GPU
peer uses), and gswitch's default PageRank on the CPU engine with its steps and L1 error.
No GPU is needed; the steps are the GPU engine's too (the same iteration, step for step).

Usage::

    python benchmarks/experiments/pagerank_steps_cpu.py
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import time

import numpy as np
import scipy.sparse as sp

import gswitch as gs


def main() -> None:
    import bench_formulations as bf

    graphs = [
        ("bipartite-1M-1.1", lambda: bf.bipartite_zipf(1 << 20, 1 << 23, exponent=1.1,
                                                       seed=38)),
        ("uniform-1M-16",
         lambda: gs.generators.uniform_random(1 << 20, 1 << 24, seed=28).symmetrize()),
    ]
    for name, make in graphs:
        g = make()
        at, d = bf.transition_transpose(np, sp, g.indptr.astype(np.int64), g.indices,
                                        np.float64)
        ref, its, _ok = bf.power_iteration(np, at, d, bf.REF_TOLERANCE, max_iter=10000)
        tol, err, n_it = bf.calibrate_tolerance(np, at, d, ref)
        t = time.perf_counter()
        r = gs.run("pagerank", g, backend="cpu")
        wall = time.perf_counter() - t
        l1 = bf.l1_error(np, r.fields["rank"], ref)
        deg = np.diff(g.indptr)
        print(f"{name}: reference {its} steps; peer tolerance {tol:.3g}, {n_it} steps, L1 "
              f"{err:.3g}; gswitch {r.iterations} steps, L1 {l1:.3g} ({wall:.1f} s on the "
              f"CPU); largest degree {deg.max()}", flush=True)


if __name__ == "__main__":
    main()
