"""``p.bucket`` and ``priority_width``: operators read the bucket that driving ``priority``
processes, on both engines (the GPU cases carry the ``gpu`` marker), and what refuses
them.
"""

import numpy as np
import pytest

import gswitch as gs
import gswitch.expr as ex
from gswitch.codegen import generate_source, pull_form
from gswitch.config import Config
from gswitch.errors import AlgorithmError, InvalidConfig
from gswitch.generators import grid2d, rmat, uniform_random
from gswitch.testing.nvcc import compile_source

GPU = [pytest.mark.gpu,
       pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")]
#: keys 0 .. 6: node ``v`` waits in bucket ``v % 7``
KEYS = 7


@gs.algorithm(name="bucket_probe", priority=lambda n: n.id - n.id // KEYS * KEYS,
              priority_width=1.0)
class BucketProbe:
    """Records the bucket each node is processed in (test algorithm)."""

    seen = gs.NodeField("int32", init=-1, doc="p.bucket when the node was processed")
    filed = gs.NodeField("int32", init=0, output=False, doc="1 once filed by key")
    start = gs.all_nodes()

    @gs.node_op
    def visit(n, p):
        first = p.iteration.eq(0)
        # step 0 visits every node unfiled: push each once, so driving files it by key
        n.filed.reduce_add(gs.where(first, 1, 0), activate=True)
        n.seen = gs.where(first, n.seen, p.bucket)

    @gs.edge_op
    def idle(e):
        e.only_if(e.src.seen < -1)  # never: the probe sends nothing
        e.dst.filed.reduce_max(0)


def _probe(backend, **config):
    g = uniform_random(300, 900, seed=1)
    return gs.run(BucketProbe, g, backend=backend, config=config).fields["seen"]


@pytest.mark.parametrize("policy", ["near_far", "buckets"])
def test_priority_steps_read_their_bucket_on_the_cpu(policy):
    """Every node is processed in the bucket of its key (width 1: the key itself)."""
    seen = _probe("cpu", driving="priority", **{"driving.policy": policy})
    assert np.array_equal(seen, np.arange(seen.size) % KEYS)


def test_other_drivings_read_bucket_zero():
    seen = _probe("cpu", driving="data")
    assert np.array_equal(seen, np.zeros_like(seen))


def test_the_algorithm_width_replaces_the_graph_width():
    """A fixed width refuses a width_scale other than 1 (the buckets would merge keys)."""
    with pytest.raises(InvalidConfig, match="width_scale"):
        _probe("cpu", driving="priority", **{"driving.width_scale": 4.0})


def test_bucket_lowers_to_the_mode_word():
    """The CUDA reads the bucket from the step's mode word; only priority driving defines
    how, every other driving reads 0."""
    prio = generate_source(BucketProbe, Config({"driving": "priority"}), False).source
    data = generate_source(BucketProbe, Config({"driving": "data"}), False).source
    assert "GS_BUCKET(st.mode)" in prio and "#define GS_BUCKET(mode) ((int)" in prio
    assert "#define GS_PRIO_WIDTH 1.0" in prio
    assert "#define GS_BUCKET(mode) ((int)" not in data
    assert ex.format_expr(ex.Bucket() + 1) == "(bucket + 1)"


@pytest.mark.compile
@pytest.mark.parametrize("driving", ["priority", "data"])
def test_bucket_compiles(driving, nvcc):
    gen = generate_source(BucketProbe, Config({"driving": driving}), False)
    ok, out = compile_source(gen.source, nvcc=nvcc)
    assert ok, out[-3000:]


def test_pull_refuses_an_operator_that_reads_the_bucket():
    @gs.algorithm(name="bucket_pull")
    class BucketPull:
        d = gs.NodeField("int32", init=0)
        start = gs.all_nodes()

        @gs.edge_op
        def hop(e, p):
            e.dst.d.reduce_max(e.src.d + p.bucket)

    assert "p.bucket" in pull_form(BucketPull)


def test_declaration_errors():
    with pytest.raises(AlgorithmError, match="priority may not read p.bucket"):
        @gs.algorithm(name="bad_key", priority=lambda n, p: n.d + p.bucket)
        class BadKey:
            d = gs.NodeField("int32", init=0)
            start = gs.all_nodes()

            @gs.edge_op
            def hop(e):
                e.dst.d.reduce_max(e.src.d)

    for width, match in [(0.0, "positive"), ("wide", "a number")]:
        with pytest.raises(AlgorithmError, match=match):
            gs.algorithm(name="bad_width", priority=lambda n: n.d,
                         priority_width=width)(type("W", (), {
                             "d": gs.NodeField("int32", init=0), "start": gs.all_nodes(),
                             "hop": gs.edge_op(lambda e: e.dst.d.reduce_max(e.src.d))}))
    with pytest.raises(AlgorithmError, match="needs a priority key"):
        gs.algorithm(name="no_key", priority_width=1.0)(type("W", (), {
            "d": gs.NodeField("int32", init=0), "start": gs.all_nodes(),
            "hop": gs.edge_op(lambda e: e.dst.d.reduce_max(e.src.d))}))


@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
@pytest.mark.parametrize("policy", ["near_far", "buckets"])
@GPU[0]
@GPU[1]
def test_priority_steps_read_their_bucket_on_the_gpu(launch, policy):
    seen = _probe("gpu", driving="priority", launch=launch, **{"driving.policy": policy})
    assert np.array_equal(seen, np.arange(seen.size) % KEYS)
    assert np.array_equal(_probe("gpu", driving="data", launch=launch), np.zeros_like(seen))


@GPU[0]
@GPU[1]
@pytest.mark.parametrize("policy", ["near_far", "buckets"])
@pytest.mark.parametrize("load_balance", ["thread", "twc", "virtual_warp", "edge_balanced"])
@pytest.mark.parametrize("launch", ["host_loop", "persistent", "cuda_graph"])
def test_bucketed_peeling_on_the_gpu_matches_networkx(policy, load_balance, launch):
    """core_number[peel_buckets] on the device under every launch and policy."""
    from gswitch.testing.reference import compare, reference

    for g in (rmat(11, 8, seed=4).remove_self_loops(), grid2d(40, 30)):
        cfg = {"variant": "peel_buckets", "driving": "priority", "driving.policy": policy,
               "load_balance": load_balance, "launch": launch}
        got = gs.run("core_number", g, backend="gpu", config=cfg).fields["core"]
        assert compare("core_number", got, reference("core_number", g)) is None
