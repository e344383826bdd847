"""A/B of the CPU engine's ``common_neighbours`` intrinsic restricted to an id range, as
the ``oriented`` triangle count calls it: two versions of ``cpu_intrinsics.py`` loaded
side by side, each called over the edges ``a < b`` of the degree-numbered graph
(RMAT-14 and road 230x230), best of five alternating calls, answers compared.

Usage::

    git show REV:gswitch/engine/cpu_intrinsics.py > /tmp/old.py
    python benchmarks/experiments/common_neighbours_ranges.py /tmp/old.py \
        gswitch/engine/cpu_intrinsics.py
"""

from __future__ import annotations

import sys
import time
import types

import numpy as np

from gswitch.generators import rmat, road
from gswitch.locality import renumbered


def _load(path: str, name: str) -> types.ModuleType:
    src = open(path, encoding="utf-8").read()
    src = src.replace("from ..graph import Graph", "from gswitch.graph import Graph")
    src = src.replace("from .cpu_derived import derived",
                      "from gswitch.engine.cpu_derived import derived")
    mod = types.ModuleType(name)
    exec(compile(src, path, "exec"), mod.__dict__)  # a file of this repository
    return mod


def main(old_path: str, new_path: str) -> None:
    old, new = _load(old_path, "old"), _load(new_path, "new")
    for name, g0 in [("road230", road(230, 230, seed=1)),
                     ("rmat14", rmat(14, 8, seed=1).symmetrize().simple())]:
        g = renumbered(g0, "degree")[0].with_sorted_rows()
        a, b = g.edges()
        a, b = a[a < b], b[a < b]
        for among in ("below", "between"):
            best = {"old": [], "new": []}
            for _ in range(5):
                for label, mod in (("old", old), ("new", new)):
                    t = time.perf_counter()
                    mod.common_neighbours(g, a, b, among)
                    best[label].append(time.perf_counter() - t)
            assert np.array_equal(old.common_neighbours(g, a, b, among),
                                  new.common_neighbours(g, a, b, among))
            print(name, among, {k: round(min(v) * 1e3, 1) for k, v in best.items()}, "ms")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
