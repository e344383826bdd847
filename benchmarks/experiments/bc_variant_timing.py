"""gs.run("betweenness") by formulation on one graph: the default (batched) against
per_source, 64 sampled sources, each after a warm-up call (one GPU or the CPU)."""

import argparse
import time

import numpy as np

import gswitch as gs
from gswitch.generators import parse_generator_spec

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("--generate", default="rmat:18")
ap.add_argument("--backend", default="gpu")
ap.add_argument("--k", type=int, default=64)
args = ap.parse_args()
g = parse_generator_spec(args.generate)
sources = np.random.default_rng(1).choice(g.n_nodes, args.k, replace=False)
out = {}
for config in (None, {"variant": "per_source"}):
    gs.run("betweenness", g, backend=args.backend, sources=sources[:2], config=config)
    t = time.perf_counter()
    r = gs.run("betweenness", g, backend=args.backend, sources=sources, config=config)
    out[r.stats["variant"]] = (time.perf_counter() - t, r.fields["betweenness"])
    print(f"{args.generate} {args.backend} {r.stats['variant']}: "
          f"{out[r.stats['variant']][0] * 1e3:.1f} ms, iterations {r.stats['iterations']}")
a, b = out["batched"][1], out["per_source"][1]
print("max relative difference", float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)))))
