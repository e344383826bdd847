"""The CPU engine's compiled expressions: the same answers as NumPy's ufuncs, one plan per
tree, no graph kept alive, and compiling from several threads at once."""

import gc
import itertools
import operator
import threading
import weakref

import numpy as np
import pytest

import gswitch as gs
from gswitch.engine import cpu_plan
from gswitch.generators import rmat
from gswitch.plugins import get_registry

_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
        "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
        ">>": operator.rshift}
_VALUES = {"f": [0.0, -0.0, 1.5, -2.25, 3e38, np.inf, -np.inf, np.nan, 1e-45],
           "i": [0, 1, -1, 7, -8, 2**31 - 1, -2**31],
           "u": [0, 1, 7, 2**32 - 1, 31]}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint32",
                                   "uint64", "int8"])
def test_scalar_operators_give_what_the_ufuncs_give(dtype):
    """NumPy's scalar arithmetic on two scalars of one dtype, which plans use for
    scalar-only subtrees, gives the ufunc's value and type, bit for bit."""
    dt = np.dtype(dtype)
    with np.errstate(all="ignore"):
        for name, op in _OPS.items():
            if name == ("/" if dt.kind != "f" else "") or (
                    dt.kind == "f" and name in ("&", "|", "^", "<<", ">>")):
                continue
            for x, y in itertools.product(_VALUES[dt.kind], repeat=2):
                try:
                    a, b = dt.type(x), dt.type(y)
                except OverflowError:  # outside the dtype's range
                    continue
                if name in ("<<", ">>") and not 0 <= int(b) < 8 * dt.itemsize:
                    continue
                want, got = cpu_plan._BINARY[name](a, b, dtype=dt), op(a, b)
                assert type(got) is type(want)
                assert got.tobytes() == want.tobytes(), (name, x, y)


def test_a_tree_is_compiled_once():
    """Evaluating a tree again runs the closures compiled the first time."""
    spec = get_registry().algorithm("pagerank", "power_pull")
    e = spec.node.statements[0].value
    shared = frozenset()
    assert cpu_plan.root(e, shared) is cpu_plan.root(e, shared)


def test_integer_operators_skip_the_error_state():
    """Connected components' integer hooks cannot warn; PageRank's floats can."""
    hooks = get_registry().algorithm("cc", "hook_compress")
    power = get_registry().algorithm("pagerank", "power_pull")
    assert not cpu_plan.needs_quiet(hooks.edge.statements)
    assert not cpu_plan.needs_quiet(hooks.node.statements)
    assert cpu_plan.needs_quiet(power.node.statements)


@pytest.mark.parametrize("algorithm", ["cc", "pagerank", "bfs", "sssp"])
def test_no_cache_keeps_a_graph_alive(algorithm):
    """What the engine keeps between calls (plans, derived arrays) lets a dropped graph
    go."""
    g = rmat(8, 4, seed=1, weighted=True)
    kw = {"source": 0} if algorithm in ("bfs", "sssp") else {}
    gs.run(algorithm, g, backend="cpu", **kw)
    gs.run(algorithm, gs.Graph.from_edges([], [], n_nodes=1), backend="cpu", **kw)
    ref = weakref.ref(g)
    del g
    gc.collect()
    assert ref() is None


def test_threads_compiling_at_once_agree(monkeypatch):
    """Threads that find no plan compile their own at the same time and get the
    answer of a run in one thread."""
    graphs = [rmat(9, 6, seed=s) for s in range(6)]
    want = [gs.run("pagerank", g, backend="cpu").fields["rank"] for g in graphs]
    monkeypatch.setattr(cpu_plan, "_PLANS", {})
    monkeypatch.setattr(cpu_plan, "_ROOTS", {})
    got: list = [None] * len(graphs)
    start = threading.Barrier(len(graphs))

    def work(i: int) -> None:
        start.wait()
        got[i] = gs.run("pagerank", graphs[i], backend="cpu").fields["rank"]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(graphs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for w, g in zip(want, got):
        np.testing.assert_array_equal(w, g)
