"""The engine's NVRTC options: an NVRTC that refuses one (an older toolkit) gets the base
options, once and for the rest of the process; a compile error in the source is never
retried. The GPU check (the device's NVRTC takes them all) is in
``test_gpu_first_call.py``."""

from types import SimpleNamespace

import pytest

from gswitch.engine import gpu


class FakeCupy:
    """``cupy.RawModule`` that refuses the options in ``refuse`` the way NVRTC does, and
    fails on a source holding ``bad``."""

    def __init__(self, refuse: set[str]) -> None:
        self.refuse = refuse
        self.tried: list[tuple[str, ...]] = []
        outer = self

        class RawModule:
            def __init__(self, code: str, options: tuple[str, ...]) -> None:
                outer.tried.append(options)
                self.code, self.options = code, options

            def get_function(self, name: str) -> str:
                if any(o in outer.refuse for o in self.options):
                    raise RuntimeError(getattr(outer, "refusal", "NVRTC_ERROR_INVALID_OPTION"))
                if "bad" in self.code:
                    raise RuntimeError("NVRTC_ERROR_COMPILATION (6)\nerror: identifier bad")
                return name

        self.RawModule = RawModule


def engine_with(fake: FakeCupy) -> gpu.GpuEngine:
    eng = object.__new__(gpu.GpuEngine)
    eng.cp = fake
    eng._modules = {}
    return eng


def gen(code: str = "ok") -> SimpleNamespace:
    return SimpleNamespace(source=code, kernels=["k1", "k2"], key=code, description="test")


@pytest.fixture(autouse=True)
def options(monkeypatch):
    monkeypatch.setattr(gpu, "NVRTC_OPTIONS", gpu.NVRTC_OPTIONS)


def test_the_engine_asks_for_its_fast_options_first():
    fake = FakeCupy(set())
    mod = engine_with(fake).module(gen())
    assert mod.options == gpu.NVRTC_OPTIONS
    assert "-minimal" in gpu.NVRTC_OPTIONS and "--split-compile=0" in gpu.NVRTC_OPTIONS
    assert fake.tried == [gpu.NVRTC_OPTIONS]


@pytest.mark.parametrize("refused", ["-minimal", "--split-compile=0"])
def test_a_refused_option_falls_back_once_for_the_process(refused):
    fake = FakeCupy({refused})
    eng = engine_with(fake)
    first = eng.module(gen("one"))
    assert first.options == gpu.BASE_NVRTC_OPTIONS
    assert gpu.NVRTC_OPTIONS == gpu.BASE_NVRTC_OPTIONS  # remembered
    second = eng.module(gen("two"))
    assert second.options == gpu.BASE_NVRTC_OPTIONS
    assert len(fake.tried) == 3  # the refused try, then one each


@pytest.mark.parametrize("message", [
    "NVRTC_ERROR_INVALID_OPTION (5)", "nvrtc: error: unknown option '-minimal'", "boom"])
def test_any_refusal_wording_falls_back(monkeypatch, message):
    """Where the options fail and the base ones compile, the options were at fault,
    whatever NVRTC said."""
    fake = FakeCupy({"-minimal"})
    monkeypatch.setattr(FakeCupy, "refusal", message, raising=False)
    assert engine_with(fake).module(gen()).options == gpu.BASE_NVRTC_OPTIONS


def test_a_source_error_is_reported_and_keeps_the_options():
    """Both option sets fail: the source's error is raised, and the next module still
    asks for the fast options."""
    fake = FakeCupy(set())
    with pytest.raises(gpu.KernelCompileError,
                       match="CUDA compile failed for test: error: identifier bad"):
        engine_with(fake).module(gen("bad"))
    assert fake.tried == [gpu.NVRTC_OPTIONS, gpu.BASE_NVRTC_OPTIONS]
    assert gpu.NVRTC_OPTIONS != gpu.BASE_NVRTC_OPTIONS
