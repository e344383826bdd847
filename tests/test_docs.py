"""The documentation's generated pages list everything the registry holds.

The generators in ``docs/_ext/gswitch_docgen.py`` need no Sphinx: these tests call them
directly (the Sphinx build itself runs in ``.ci/run``).
"""

import argparse
import importlib
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from gswitch.plugins import AXES, get_registry

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def docgen():
    path = ROOT / "docs" / "_ext" / "gswitch_docgen.py"
    spec = importlib.util.spec_from_file_location("gswitch_docgen", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gswitch_docgen"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("gswitch_docgen", None)


@pytest.fixture(scope="module")
def strategies_text(docgen):
    return docgen.strategies_page()


@pytest.fixture(scope="module")
def algorithms_text(docgen):
    return docgen.algorithms_page()


def test_strategy_page_lists_every_strategy(strategies_text):
    reg = get_registry()
    for axis in AXES:
        assert f".. _strategy-axis-{axis}:" in strategies_text
        for name in reg.strategies[axis]:
            assert f".. _strategy-{axis}-{name}:" in strategies_text, (axis, name)
            assert f".. gswitch-docstring:: strategy:{axis}:{name}\n" in strategies_text


def test_strategy_page_lists_every_parameter_with_its_range(strategies_text):
    reg = get_registry()
    for axis in AXES:
        for name, cls in reg.strategies[axis].items():
            section = strategies_text.split(f".. _strategy-{axis}-{name}:", 1)[1]
            section = section.split(".. _strategy-", 1)[0]
            for pname, space in cls.params.items():
                assert f"``{axis}.{pname}``" in section, (axis, name, pname)
                if hasattr(space, "low"):
                    assert f"``{space.low}`` .. ``{space.high}``" in section
                else:
                    for choice in space.choices:
                        shown = str(choice).lower() if isinstance(choice, bool) else choice
                        assert f"``{shown}``" in section


def test_strategy_overview_names_when_it_wins(docgen):
    assert docgen.when_it_wins("Simple. Wins on road graphs; loses on hubs. Costs memory.") \
        == "Wins on road graphs; loses on hubs."
    assert docgen.when_it_wins("No verdict here.") == ""


def test_algorithm_page_lists_every_algorithm_and_variant(algorithms_text):
    reg = get_registry()
    for name, spec in reg.algorithms.items():
        assert f".. _algorithm-{name}:" in algorithms_text
        assert spec.reference in algorithms_text
        for variant, v in reg.variants[name].items():
            assert f".. _algorithm-{name}-{variant}:" in algorithms_text, (name, variant)
            assert f".. gswitch-docstring:: algorithm:{name}:{variant}\n" in algorithms_text
            for pname in v.params:
                assert f"``{pname}``" in algorithms_text


def test_default_variants_are_marked(algorithms_text):
    reg = get_registry()
    for name, spec in reg.algorithms.items():
        if len(reg.variants[name]) > 1:
            assert f"``{spec.variant}`` (default)" in algorithms_text


def test_generated_pages_are_valid_rst_tables(strategies_text, algorithms_text):
    # every list-table row has as many cells as its header
    for text in (strategies_text, algorithms_text):
        for table in text.split(".. list-table::")[1:]:
            body = table.split("\n\n", 2)[1]
            rows = re.split(r"^   \* ", body, flags=re.M)[1:]
            counts = {len(re.findall(r"^(?:   \* |     )- ", "   * " + r, flags=re.M))
                      for r in rows}
            assert len(counts) == 1, table[:300]


def test_cli_page_has_every_subcommand(docgen):
    from gswitch.cli import build_parser

    parser = build_parser()
    text = docgen.cli_page(parser)
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name in subs.choices:
        assert f".. _cli-{name}:" in text
    for command in ("tune", "report", "explain", "run"):
        assert f"``gswitch {command}``" in text


def test_networkx_page_without_backend(docgen):
    text = docgen.networkx_functions_page(None)
    assert "not installed in this build" in text
    assert "list-table" not in text


def test_networkx_page_renders_backend_info(docgen):
    info = {"backend_name": "gswitch", "short_summary": "GPU graph algorithms.",
            "functions": {
                "pagerank": {"additional_docs": "Runs on the GPU.",
                             "additional_parameters": {"config : dict, optional": "Strategies."}},
                "bfs_edges": {"additional_docs": "", "additional_parameters": {}},
            }}
    text = docgen.networkx_functions_page(info)
    assert "``bfs_edges``" in text and "``pagerank``" in text
    assert "Runs on the GPU." in text
    assert "``config : dict, optional``: Strategies." in text
    assert 'backend="gswitch"' in text
    assert text.index("``bfs_edges``") < text.index("``pagerank``")


def test_networkx_info_matches_the_backend_module(docgen):
    """Absent backend: None; present: exactly what its get_info() returns."""
    try:
        module = importlib.import_module(docgen.NX_INFO_MODULE)
    except ModuleNotFoundError:
        assert docgen.networkx_info() is None
    else:
        assert docgen.networkx_info() == module.get_info()


def test_source_without_docstring(docgen):
    reg = get_registry()
    text = docgen.source_without_docstring(reg.algorithm("cc", "hook_compress"))
    assert text.startswith("@gs.algorithm(")
    assert "class HookCompress:" in text and "def hook(e):" in text
    assert "References" not in text


def test_write_pages_touches_only_changed_files(docgen, tmp_path):
    written = docgen.write_pages(tmp_path)
    assert sorted(p.name for p in written) == sorted(docgen.generate())
    assert docgen.write_pages(tmp_path) == []
