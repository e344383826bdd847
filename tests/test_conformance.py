"""Every registered strategy passes the conformance checks third-party plugins use."""

import pytest

from gswitch.plugins import AXES, get_registry
from gswitch.strategy import Categorical, Strategy, WorklistStrategy
from gswitch.testing.conformance import strategy_problems

REGISTERED = [cls for axis in AXES for cls in get_registry().strategies[axis].values()]


@pytest.mark.parametrize("cls", REGISTERED, ids=[f"{c.axis}.{c.name}" for c in REGISTERED])
def test_registered_strategy_conforms(cls):
    """A built-in strategy meets the whole contract."""
    assert strategy_problems(cls) == []


def test_nonconforming_strategy_is_caught():
    """A strategy missing its docstring, fragment and valid defaults is reported."""

    class Bad(WorklistStrategy):
        name = "Bad Name"
        params = {"x": Categorical((1, 2), 3)}

    problems = strategy_problems(Bad)
    text = "\n".join(problems)
    assert "lower_snake_case" in text
    assert "docstring" in text
    assert "default is invalid" in text
    assert "gs_wl_push" in text


def test_buffered_worklist_without_its_hooks_is_caught(tmp_path, monkeypatch):
    """A worklist that buffers pushes (GS_WL_BUFFERED) but defines no flush is reported."""

    class Buffered(WorklistStrategy):
        """Buffers pushes in shared memory, after Pai and Pingali (OOPSLA 2016); wins
        when whole blocks push."""

        name = "buffered"

    src = ("#define GS_WL_BUFFERED 1\nvoid gs_wl_push(); void gs_wl_size(); "
           "void gs_wl_item(); void gs_wl_begin();\n")
    monkeypatch.setattr(Buffered, "cuda_source", classmethod(lambda cls: src))
    problems = strategy_problems(Buffered)
    assert problems == ["CUDA fragment defines GS_WL_BUFFERED but not gs_wl_flush"]


def test_wrong_base_is_caught():
    """A class claiming an axis without its base class is reported."""

    class Odd(Strategy):
        """Thing from Someone et al. 2020 that wins whenever it is used on any graph at all."""

        axis = "launch"
        name = "odd"
        backends = ("cpu",)

    assert any("LaunchStrategy" in p for p in strategy_problems(Odd))


def test_a_declared_refusal_check_does_not_make_is_caught(monkeypatch):
    """held_params and pushes_only keep configurations out of the tuner's search, so a
    strategy whose check() accepts what they declare refused is reported."""
    reg = get_registry()
    priority = reg.strategies["driving"]["priority"]
    spec = reg.algorithm("core_number", "peel_buckets")
    assert priority.held_params(spec) == {"width_scale": 1.0}
    monkeypatch.setattr(priority, "check", lambda self, *args: None)
    assert any("held_params() holds width_scale at 1.0 for core_number[peel_buckets]" in p
               for p in strategy_problems(priority))
    asynchronous = reg.strategies["driving"]["async"]
    assert asynchronous({}).pushes_only()
    monkeypatch.setattr(asynchronous, "check", lambda self, *args: None)
    assert any("pushes_only()" in p for p in strategy_problems(asynchronous))


GPU_STRATEGIES = [c for c in REGISTERED if "gpu" in c.backends]


@pytest.fixture(scope="module")
def compiled_fragments(nvcc):
    """Each GPU strategy composed into a real module and compiled, in parallel."""
    from concurrent.futures import ThreadPoolExecutor

    from gswitch.testing.conformance import compile_problems

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = pool.map(lambda c: compile_problems(c, nvcc=nvcc), GPU_STRATEGIES)
        return dict(zip(GPU_STRATEGIES, results))


@pytest.mark.compile
@pytest.mark.parametrize("cls", GPU_STRATEGIES, ids=[f"{c.axis}.{c.name}" for c in GPU_STRATEGIES])
def test_fragment_compiles_through_the_pipeline(cls, compiled_fragments):
    """The strategy's fragment compiles inside a real composed module."""
    assert compiled_fragments[cls] == []
