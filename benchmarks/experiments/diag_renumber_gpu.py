"""Which GPU answers change when a graph is renumbered: each case on the original rmat
graph, on its rcm-renumbered copy (as its own graph), on that copy with sorted rows, and
through ``renumber=rcm``; with the default worklist and with a bitmap."""

import sys

import numpy as np

import gswitch as gs
from gswitch import locality
from gswitch.generators import rmat
from gswitch.plugins import get_registry
from gswitch.testing.reference import reference

sys.path.insert(0, "tests")
from test_renumber import _check  # noqa: E402

g = rmat(8, 6, seed=4).remove_self_loops().deduplicate()
h, perm, _ = locality.renumbered(g, "rcm")
hs = h.with_sorted_rows()
print("rows sorted: original", g.with_sorted_rows() is g, "renumbered", hs is h)
for name, variant in [("betweenness", "default"), ("label_propagation", "asynchronous"),
                      ("triangles", "merge"), ("maximal_independent_set", "default")]:
    spec = get_registry().algorithm(name, variant)
    out = spec.outputs[0]
    for wl in (None, "bitmap"):
        extra = {} if wl is None else {"worklist": wl}
        for label, graph, cfg in [("original", g, {}), ("renumbered", h, {}),
                                  ("renumbered sorted", hs, {}),
                                  ("renumber=rcm", g, {"renumber": "rcm"})]:
            try:
                r = gs.run(name, graph, backend="gpu",
                           config={"variant": variant, **cfg, **extra})
                ref = reference(name, graph)
                problem = _check(name, graph, r.fields[out], ref)
                cpu = gs.run(name, graph, backend="cpu",
                             config={"variant": variant, **cfg}).fields[out]
                same = np.allclose(np.asarray(cpu, float), np.asarray(r.fields[out], float))
                print(f"{name}/{variant} wl={wl} {label}: {problem} (== cpu: {same}) "
                      f"config {dict(r.config) if hasattr(r, 'config') else ''}"[:400])
            except Exception as exc:  # noqa: BLE001
                print(f"{name}/{variant} wl={wl} {label}: ERROR {type(exc).__name__}: {exc}"[:300])
