"""One BFS on the clique chain with a spatial configuration, its second call between
``cudaProfilerStart``/``Stop`` so that ``ncu --profile-from-start off`` sees only it.

Usage: python spatial_chain_ncu.py CLIQUES 'JSON config'
"""

from __future__ import annotations

import json
import sys

import cupy as cp

import gswitch as gs
from gswitch.generators import clique_chain


def main() -> None:
    cliques, cfg = int(sys.argv[1]), json.loads(sys.argv[2])
    g = clique_chain(cliques, 32, weighted=True, seed=1)
    gs.run("bfs", g, backend="gpu", config=cfg, source=0)  # compile, warm
    cp.cuda.runtime.deviceSynchronize()
    cp.cuda.profiler.start()
    r = gs.run("bfs", g, backend="gpu", config=cfg, source=0)
    cp.cuda.runtime.deviceSynchronize()
    cp.cuda.profiler.stop()
    print({k: r.stats[k] for k in ("iterations", "edges_processed", "device_time_s")})


if __name__ == "__main__":
    main()
