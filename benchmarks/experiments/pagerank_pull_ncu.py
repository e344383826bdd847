"""Two PageRank ``power_pull`` steps and one cuSPARSE SpMV on a graph of
``bench_selector_tuned.py``, between ``cudaProfilerStart``/``Stop`` so that
``ncu --profile-from-start off`` sees only them.

Usage: python pagerank_pull_ncu.py GRAPH 'JSON config'
"""

from __future__ import annotations

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import cupy as cp  # noqa: E402
import cupyx.scipy.sparse as cusp  # noqa: E402
import numpy as np  # noqa: E402
from bench_formulations import transition_transpose  # noqa: E402
from bench_selector_tuned import SPECS  # noqa: E402

import gswitch as gs  # noqa: E402


def main() -> None:
    g = dict(SPECS)[sys.argv[1]]()
    cfg = {"variant": "power_pull", **json.loads(sys.argv[2])}
    indptr = cp.asarray(g.indptr.astype(np.int32))
    indices = cp.asarray(g.indices.astype(np.int32))
    at, _ = transition_transpose(cp, cusp, indptr, indices, cp.float32)
    x = cp.full(g.n_nodes, 1.0 / g.n_nodes, dtype=cp.float32)
    y = at @ x
    gs.run("pagerank", g, backend="gpu", config=cfg, max_iterations=2)  # compile, warm
    cp.cuda.runtime.deviceSynchronize()
    cp.cuda.profiler.start()
    r = gs.run("pagerank", g, backend="gpu", config=cfg, max_iterations=2)
    y = at @ x
    cp.cuda.runtime.deviceSynchronize()
    cp.cuda.profiler.stop()
    print({k: r.stats.get(k) for k in ("iterations", "edges_processed", "device_time_s")},
          float(y.sum()))


if __name__ == "__main__":
    main()
