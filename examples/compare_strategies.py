"""Compare strategy configurations on one graph and plot their run times.

Runs BFS under several driving and direction strategies (and, on a GPU, load balancers and
launch modes), takes the median of a few runs, prints a table, and draws a bar chart
when matplotlib is installed (``pip install "gswitch[plot]"``).

    python examples/compare_strategies.py [--graph FILE | --generate SPEC] [--out DIR]
"""

import argparse
import statistics
import tempfile
from pathlib import Path

import gswitch as gs
from gswitch.generators import parse_generator_spec

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--graph", help="graph file (default: a generated road network)")
ap.add_argument("--generate", default="road:200x200", help="generator spec, e.g. rmat:14")
ap.add_argument("--repeats", type=int, default=3)
ap.add_argument("--out", help="folder for times.png (default: a temporary folder)")
args = ap.parse_args()

graph = gs.load_graph(args.graph) if args.graph else parse_generator_spec(args.generate)
backend = "gpu" if gs.gpu_available() else "cpu"
configs = {
    "data / push": {"driving": "data", "direction": "push"},
    "topology / push": {"driving": "topology", "direction": "push"},
    "temporal / push": {"driving": "temporal", "driving.threshold": 0.05},
    "data / pull": {"driving": "data", "direction": "pull"},
    "data / direction-optimizing": {"driving": "data", "direction": "direction_optimizing"},
}
if backend == "gpu":
    configs["virtual_warp:32 / persistent"] = {"load_balance": "virtual_warp",
                                               "load_balance.size": 32,
                                               "launch": "persistent"}

times: dict[str, float] = {}
for label, config in configs.items():
    gs.run("bfs", graph, source=0, backend=backend, config=config)  # warm-up (and compile)
    runs = [gs.run("bfs", graph, source=0, backend=backend, config=config)
            for _ in range(args.repeats)]
    times[label] = statistics.median(r.stats["time_s"] for r in runs)
    print(f"{label:32} {times[label] * 1e3:9.2f} ms  {runs[0].iterations:5d} steps")

best = min(times, key=times.get)
print(f"fastest on {graph.name} ({graph.n_nodes:,} nodes, {backend}): {best}")

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print('matplotlib is not installed; pip install "gswitch[plot]" for the chart')
else:
    out = Path(args.out or tempfile.mkdtemp(prefix="gswitch-compare-"))
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    labels = list(times)
    ax.barh(labels, [times[k] * 1e3 for k in labels])
    ax.set_xlabel("median time (ms)")
    ax.set_title(f"BFS on {graph.name}, {backend} backend")
    fig.tight_layout()
    fig.savefig(out / "times.png", dpi=100)
    print(f"chart: {out / 'times.png'}")
