"""The replay's bookkeeping, on the host (no GPU needed): which finished runs leave a
record (:meth:`Repeat.after <gswitch.engine.repeat.Repeat.after>`), when a record still
applies (:meth:`Repeat.usable <gswitch.engine.repeat.Repeat.usable>`), and the step-0
state the engine keeps on a plan per start-set size
(:meth:`GpuEngine.initial_state <gswitch.engine.gpu.GpuEngine.initial_state>`). The
device arrays and blocks are stand-ins; the GPU suite (``tests/test_gpu_repeat.py``)
checks replayed answers against references.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from gswitch.codegen import generate_source, state_dtype
from gswitch.config import Config
from gswitch.engine.gpu import GpuEngine
from gswitch.engine.plan import _Plan
from gswitch.engine.repeat import Repeat
from gswitch.generators import uniform_random
from gswitch.plugins import get_registry


def _array(ptr: int, nbytes: int = 64) -> SimpleNamespace:
    return SimpleNamespace(data=SimpleNamespace(ptr=ptr), nbytes=nbytes)


def _plan(config: dict) -> tuple[_Plan, int]:
    """A BFS plan over stand-ins for the resident graph's arrays and the module."""
    graph = uniform_random(500, 2000, seed=3)
    spec = get_registry().algorithm("bfs")
    cfg = Config(config)
    gen = generate_source(spec, cfg, weighted=False)
    res = SimpleNamespace(graph=graph, row=_array(0x1000), col=_array(0x2000),
                          weights=None, in_degree=_array(0x4000),
                          reverse_arrays=lambda: (_array(0x6000), _array(0x7000), None))
    module = SimpleNamespace(get_global=lambda name: SimpleNamespace(ptr=0x5000))
    return _Plan(state_dtype(list(gen.members)), res, spec, cfg, gen, module), graph.n_nodes


def test_step_zero_state_is_kept_per_start_set_size():
    # the temporal hybrid starts topology-driven past its threshold, data-driven below
    plan, n = _plan({"driving": "temporal", "launch": "persistent"})
    driving, direction = plan.strategies["driving"], plan.strategies["direction"]
    sizes = [1, 3, n // 2, n, 1]
    got = [GpuEngine.initial_state(plan, c, n) for c in sizes]
    want = [(plan.mode_names.index(driving.initial_mode(c, n)),
             int(bool(direction.initial_pull(c, n)))) for c in sizes]
    assert got == want
    names = [plan.mode_names[mode] for mode, _pull in got]
    assert names[0] == "data" and names[3] == "topology", names
    assert set(plan.initial_states) == {1, 3, n // 2, n}
    for c in range(2, 200):  # at most 64 sizes kept
        GpuEngine.initial_state(plan, c, n)
    assert 0 < len(plan.initial_states) <= 64


class _Run:
    """A finished run's context, as :meth:`Repeat.after` reads it."""

    def __init__(self, plan: _Plan) -> None:
        self.strategies = {"launch": SimpleNamespace(repeat_kernel="gs_persistent_kernel")}
        self._first_read = [(1, 2, 512)]
        self.overflows = 0
        self.grid_used = 4
        self.capped = False
        self.done = True
        self.args = dict(plan.args)
        self.progress = None
        self.deadline_s = None
        self._labels = None
        self.core = SimpleNamespace(cap=64)
        self.core_host = SimpleNamespace(cap=64)
        self.buffers = {}
        pool = {}
        for i, (axis, name, key, _dt, _size, _zero, member) in enumerate(plan.buffers):
            arr = _array(0x10000 * (i + 1), nbytes=128 * (i + 1))
            self.buffers[(axis, name)] = pool[key] = arr
            plan.bind(member, arr.data.ptr)
        self.res = SimpleNamespace(pool=pool, _core=self.core)

    def _function_ptr(self, name: str) -> int:
        return 0xF00


def _recorded(plan: _Plan) -> tuple[Repeat, _Run, SimpleNamespace]:
    run = _Run(plan)
    res = run.res
    rec = Repeat.after(run, plan)
    assert rec is not None
    return rec, run, res


def test_a_sound_run_is_recorded_and_lets_go_of_its_resident():
    plan, _n = _plan({"launch": "persistent", "worklist": "bitmap"})
    rec, run, res = _recorded(plan)
    assert run.res is None  # no cycle through the resident's records
    assert rec.fptr == 0xF00 and rec.grid == 4 and rec.ctx is run
    assert [key for key, _arr in rec.pool] == [b[2] for b in plan.buffers]
    zeroed = [run.buffers[(b[0], b[1])] for b in plan.buffers if b[5]]
    assert zeroed and rec.zero == [(a.data.ptr, a.nbytes) for a in zeroed]


@pytest.mark.parametrize("change", [
    {"overflows": 1}, {"capped": True}, {"done": False}, {"grid_used": None},
    {"_first_read": None}, {"progress": print}, {"deadline_s": 1.0}, {"_labels": []},
])
def test_runs_a_replay_could_not_redo_leave_no_record(change):
    plan, _n = _plan({"launch": "persistent"})
    run = _Run(plan)
    for k, v in change.items():
        setattr(run, k, v)
    assert Repeat.after(run, plan) is None


def test_other_launches_a_changed_argument_or_a_replaced_buffer_leave_no_record():
    plan, _n = _plan({"launch": "persistent"})
    run = _Run(plan)
    run.strategies["launch"] = SimpleNamespace(repeat_kernel=None)  # a host loop
    assert Repeat.after(run, plan) is None
    run = _Run(plan)
    key = next(iter(run.args))
    run.args[key] = run.args[key] + 1  # a seeding grew a queue's capacity
    assert Repeat.after(run, plan) is None
    run = _Run(plan)
    axis, name, key, *_rest = plan.buffers[0]
    run.res.pool[key] = _array(0xBAD)  # the pool's array replaced during the run
    assert Repeat.after(run, plan) is None


def test_a_record_applies_while_its_blocks_and_buffers_are_the_residents():
    plan, _n = _plan({"launch": "persistent"})
    rec, run, res = _recorded(plan)
    engine = SimpleNamespace(_core_host=run.core_host)
    assert rec.usable(engine, res, 0) and rec.usable(engine, res, 64)
    assert not rec.usable(engine, res, 65)  # more start ids than the block holds
    assert not rec.usable(SimpleNamespace(_core_host=SimpleNamespace(cap=64)), res, 1)
    grown = SimpleNamespace(pool=res.pool, _core=SimpleNamespace(cap=1 << 20))
    assert not rec.usable(engine, grown, 1)  # the core block was replaced
    key = rec.pool[0][0]
    swapped = SimpleNamespace(pool={**res.pool, key: _array(0xBAD)}, _core=res._core)
    assert not rec.usable(engine, swapped, 1)
    assert np.all([res.pool[k] is a for k, a in rec.pool])


def test_a_grown_core_block_drops_the_records_that_hold_the_old_one():
    from gswitch.engine.memory import _Resident

    res = _Resident(np, uniform_random(100, 300, seed=1))  # NumPy stands in for CuPy
    first = res.core(0, 400)
    res.repeats["a"] = object()
    assert res.core(10, 400) is first and res.repeats  # it fits: the records stay
    grown = res.core(1000, 400)  # more start ids than it holds
    assert grown is not first and not res.repeats
    res.repeats["b"] = object()
    assert res.core(0, 4000) is not grown and not res.repeats  # more field bytes


def test_a_grown_host_block_or_a_replaced_buffer_drops_the_records():
    from gswitch.engine.context import LaunchContext
    from gswitch.engine.memory import _CoreBlock

    dropped = []
    residents = [SimpleNamespace(forget_runs=lambda i=i: dropped.append(i)) for i in range(3)]

    def alloc(words):
        return np.zeros(words, dtype=np.uint32)

    engine = SimpleNamespace(_core_host=_CoreBlock.new(alloc, 64, 256), _pinned_words=alloc,
                             _graphs=dict(enumerate(residents)))
    same = GpuEngine.core_host(engine, 10, 256)
    assert same is engine._core_host and dropped == []  # the first block holds it
    grown = GpuEngine.core_host(engine, 500, 256)
    assert grown is engine._core_host and dropped == [0, 1, 2]
    # a buffer replaced during a run (a worklist's growth) drops its resident's records
    res = SimpleNamespace(pool={}, forget_runs=lambda: dropped.append("res"))
    ctx = SimpleNamespace(buffers={}, res=res, _put=lambda member, ptr: None,
                          write_state=lambda: None)
    new = _array(0xABC)
    LaunchContext.replace_buffer(ctx, "worklist", "q0", new)
    assert res.pool[("buf", "worklist", "q0")] is new and dropped[-1] == "res"
