"""GPU suite for staged algorithms: stages keep their fields on the device, a host step's
start set chosen on the device seeds every worklist, and cc[afforest] and a user's
two-stage algorithm agree with the reference under every launch mode."""

import itertools

import numpy as np
import pytest

import gswitch as gs
from gswitch.testing.reference import reference
from gswitch.testing.staged_algorithms import DoubleSweep, SweepTheRest
from gswitch.testing.zoo import SWEEP, zoo_graph

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU"),
]

LAUNCH_WORKLIST = list(itertools.product(("host_loop", "persistent", "cuda_graph"),
                                         ("atomic", "warp_aggregated", "bitmap")))


def _cfg(launch, worklist, **extra):
    cfg = {"launch": launch, "worklist": worklist, **extra}
    if launch == "cuda_graph" and worklist != "bitmap":
        cfg["worklist.dedup"] = True
    return cfg


@pytest.mark.parametrize("launch,worklist", LAUNCH_WORKLIST)
def test_afforest_on_the_gpu_matches_scipy(launch, worklist):
    """Sweep graphs (a hub of 10^5 edges, many small components, a long path into a
    clique, 10^5 isolated nodes): the components' smallest ids."""
    for name in ("sweep_rmat", "sweep_sparse", "sweep_broom", "sweep_isolated", "sweep_road"):
        g = SWEEP[name][0]()
        r = gs.run("cc", g, backend="gpu",
                   config=_cfg(launch, worklist, variant="afforest"))
        assert np.array_equal(r.fields["comp"], reference("cc", g)), name


@pytest.mark.parametrize("launch,worklist", LAUNCH_WORKLIST)
def test_user_staged_algorithm_agrees_with_the_cpu(launch, worklist):
    """A host step's chosen start set and rewritten field reach the next GPU stage."""
    for name in ("road", "rmat", "path", "disconnected"):
        g = zoo_graph(name)
        cpu = gs.run(DoubleSweep, g, source=0, backend="cpu")
        gpu = gs.run(DoubleSweep, g, source=0, backend="gpu", config=_cfg(launch, worklist))
        for f in ("there", "back"):
            assert np.array_equal(cpu.fields[f], gpu.fields[f]), (name, f)


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_a_host_step_that_stops_ends_the_gpu_run(launch):
    """``{"stop": True}`` ends the run on the device as on the CPU: the same stages run
    and the same fields come back, where the first sweep reaches every node and where
    it does not."""
    for name in ("road", "disconnected", "single"):
        g = zoo_graph(name)
        cpu = gs.run(SweepTheRest, g, source=0, backend="cpu")
        gpu = gs.run(SweepTheRest, g, source=0, backend="gpu",
                     config=_cfg(launch, "bitmap"))
        assert [s["stage"] for s in gpu.stats["stages"]] == \
            [s["stage"] for s in cpu.stats["stages"]], name
        for k in ("there", "rest", "reached_all"):
            assert np.array_equal(gpu.fields[k], cpu.fields[k]), (name, k)


def test_afforest_fields_stay_on_the_device_between_stages():
    """arrays='cupy' returns device arrays; the stages report their own steps."""
    import cupy

    g = SWEEP["sweep_rmat"][0]()
    r = gs.run("cc", g, backend="gpu", config={"variant": "afforest"}, arrays="cupy")
    assert isinstance(r.fields["comp"], cupy.ndarray)
    assert [s["stage"] for s in r.stats["stages"]] == ["sample", "find_largest", "finish",
                                                       "flatten"]
    assert np.array_equal(r.fields["comp"].get(), reference("cc", g))


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_buffered_field_on_the_gpu_equals_the_cpu(launch):
    """The Jacobi walk count (a buffered int64 field, swapped by the node operator after
    the edges) is exact on the device under every launch."""
    from gswitch.testing.staged_algorithms import Walks

    cfg = {"launch": launch, **({"worklist": "bitmap"} if launch == "cuda_graph" else {})}
    for name in ("road", "rmat", "self_loops", "duplicates"):
        g = zoo_graph(name)
        cpu = gs.run(Walks, g, source=0, backend="cpu", steps=5)
        gpu = gs.run(Walks, g, source=0, backend="gpu", config=cfg, steps=5)
        assert np.array_equal(cpu.fields["count"], gpu.fields["count"]), name


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_step_totals_on_the_gpu_equal_the_cpu(launch):
    """Two step totals summed on the device and read by the next step (three rotating
    slots in the control block, zeroed before a run): the CPU's numbers under every
    launch, twice in a row on one engine (a run never sees the last one's sums)."""
    from gswitch.testing.staged_algorithms import StepSums

    cfg = {"launch": launch, **({"worklist": "bitmap"} if launch == "cuda_graph" else {})}
    for name in ("road", "self_loops", "duplicates"):
        g = zoo_graph(name)
        cpu = gs.run(StepSums, g, backend="cpu", steps=7)
        for _ in range(2):
            gpu = gs.run(StepSums, g, backend="gpu", config=cfg, steps=7)
            assert gpu.stats["iterations"] == 7
            assert np.array_equal(cpu.fields["a"], gpu.fields["a"]), name
            assert np.array_equal(cpu.fields["b"], gpu.fields["b"]), name


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_power_pull_on_the_gpu_takes_the_cpu_steps(launch):
    """The dangling rank's step total on the device: the CPU's step count within one and
    the reference ranks, on a graph where most rank would otherwise leak."""
    from gswitch.generators import rmat

    g = rmat(12, 8, seed=3)
    cfg = {"variant": "power_pull", "launch": launch,
           **({"worklist": "bitmap"} if launch == "cuda_graph" else {})}
    cpu = gs.run("pagerank", g, backend="cpu", config=cfg, tolerance=1e-7)
    gpu = gs.run("pagerank", g, backend="gpu", config=cfg, tolerance=1e-7)
    assert abs(cpu.stats["iterations"] - gpu.stats["iterations"]) <= 1
    assert cpu.stats["iterations"] < 30
    assert np.abs(cpu.fields["rank"] - gpu.fields["rank"]).sum() < 1e-5


@pytest.mark.parametrize("lb", ["thread", "twc", "virtual_warp"])
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_edge_limit_on_the_gpu_equals_the_cpu(lb, launch):
    """edge_op(first="k") under every load balancer (twc bins by the limited degree, so
    a hub of the RMAT graph takes the thread path) and launch: the CPU's depths."""
    from gswitch.testing.staged_algorithms import FirstEdgesDepth

    cfg = {"launch": launch, "load_balance": lb,
           **({"worklist": "bitmap"} if launch == "cuda_graph" else {})}
    for name in ("rmat", "road", "duplicates"):
        g = zoo_graph(name)
        for k in (1, 3):
            cpu = gs.run(FirstEdgesDepth, g, source=0, backend="cpu", k=k)
            gpu = gs.run(FirstEdgesDepth, g, source=0, backend="gpu", config=cfg, k=k)
            assert np.array_equal(cpu.fields["depth"], gpu.fields["depth"]), (name, k)
