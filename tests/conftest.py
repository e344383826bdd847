import os

import pytest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Keep every cache and tuning store of a test inside its tmp_path."""
    monkeypatch.setenv("GSWITCH_CACHE_DIR", str(tmp_path / "gswitch-cache"))
    monkeypatch.setenv("CUPY_CACHE_DIR", os.environ.get("CUPY_CACHE_DIR", str(tmp_path / "cupy")))


@pytest.fixture
def super_steps(monkeypatch):
    """Run every CPU relaxation through the super-step loop (not its shortest-path
    closure), so the strategies under test do their steps.
    """
    monkeypatch.setenv("GSWITCH_CPU_STEPS", "1")


@pytest.fixture(scope="session")
def nvcc():
    """The nvcc to compile generated CUDA with; skips (with how to get one) without it."""
    from gswitch.testing.nvcc import find_nvcc

    found = find_nvcc()
    if found is None:
        pytest.skip("nvcc not found: install the CUDA toolkit (CI installs it in .ci/run)")
    return found


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "cases(argname, factory, ids=None): parametrize ``argname`` with "
        "``factory()``, enumerated only when the test can run (conftest.py)")


def _why_not_run(metafunc) -> str | None:
    """Why a test cannot run in this session (its markers deselected by ``-m``, or a
    ``gpu`` test without a GPU), or ``None``.
    """
    names = {m.name for m in metafunc.definition.iter_markers()}
    expr = metafunc.config.getoption("markexpr")
    if expr:
        try:
            from _pytest.mark.expression import Expression

            selected = Expression.compile(expr).evaluate(
                lambda name, **kwargs: not kwargs and name in names)
        except Exception:  # a pytest without this module: enumerate, pytest deselects
            selected = True
        if not selected:
            return f"deselected by -m {expr!r}"
    if "gpu" in names:
        import gswitch as gs

        if not gs.gpu_available():
            return "needs CuPy and an NVIDIA GPU"
    return None


def pytest_generate_tests(metafunc):
    """Parametrize a test marked ``cases``: its cases (all pairs of strategy options, many
    seconds to enumerate) are enumerated only where the test runs; elsewhere one case
    stands for them, skipped with the reason.
    """
    mark = metafunc.definition.get_closest_marker("cases")
    if mark is None:
        return
    argname, factory = mark.args
    reason = _why_not_run(metafunc)
    if reason is not None:
        metafunc.parametrize(argname, [pytest.param(None, id="not-enumerated",
                                                    marks=pytest.mark.skip(reason=reason))])
        return
    cases = list(factory())
    ids = mark.kwargs.get("ids")
    metafunc.parametrize(argname, cases, ids=[ids(c) for c in cases] if ids else None)
