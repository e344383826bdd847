"""The GPU sweep's spatial configurations, one line per failing (configuration, graph).

``tests/test_gpu_sweep.py`` runs each drawn configuration on every sweep graph in one
test and stops at the first wrong answer; this runs the spatial ones (BFS and SSSP) on
every graph and prints each failure with its configuration, so a fault can be narrowed
down in one device command. Run on a GPU machine after ``benchmarks/device_env.sh``:

    python benchmarks/experiments/sweep_spatial_check.py
"""

from __future__ import annotations

import time

import gswitch as gs
from gswitch.plugins import get_registry
from gswitch.runner import check_combination
from gswitch.testing.reference import compare, reference
from gswitch.testing.zoo import SWEEP_NAMES, sweep_configs, sweep_graph

OUTPUT = {"bfs": "depth", "sssp": "dist"}


def main() -> None:
    t0 = time.perf_counter()
    graphs = {name: sweep_graph(name) for name in SWEEP_NAMES}  # (graph, source)
    for alg, field in OUTPUT.items():
        spec = get_registry().algorithm(alg)
        for cfg in sweep_configs(spec):
            if cfg["driving"] != "spatial":
                continue
            for name, (g, source) in graphs.items():
                if check_combination(spec, g, cfg, "gpu"):
                    continue  # refused for this graph, as the sweep expects
                try:
                    r = gs.run(alg, g, source=source, backend="gpu", config=cfg)
                    problem = compare(alg, r.fields[field], reference(alg, g, source=source))
                except gs.GswitchError as exc:
                    problem = f"{type(exc).__name__}: {exc}"
                if problem:
                    print(f"FAIL {alg} on {name}: {problem[:300]}\n  config {dict(cfg)}",
                          flush=True)
        print(f"{alg} done after {time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
