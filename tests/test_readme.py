"""The README's snippets run as written: every Python block, and the commands of Run.

Commands run from a scratch folder that links to examples/, so files they write land there.
"""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import gswitch as gs
from gswitch.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _blocks(lang: str, sections: tuple[str, ...] | None = None) -> list[str]:
    """Fenced blocks of one language, optionally only under the given ``##`` sections."""
    out = []
    parts = re.split(r"(?m)^## ", README)
    for part in parts:
        title = part.splitlines()[0].strip() if part else ""
        if sections is not None and title not in sections:
            continue
        out += re.findall(rf"```{lang}\n(.*?)```", part, flags=re.S)
    return out


PYTHON = _blocks("python")
COMMANDS = [line for block in _blocks("bash", ("Run",))
            for line in block.replace("\\\n", " ").splitlines() if line.startswith("gswitch ")]


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_readme_keeps_two_setup_commands():
    """Set up shows exactly the install and the test command."""
    setup = _blocks("bash", ("Set up",))
    assert [b.strip() for b in setup] == ['python -m pip install -e ".[test]"\npython -m pytest']


@pytest.mark.parametrize("code", PYTHON, ids=[f"python{i}" for i in range(len(PYTHON))])
def test_python_snippet(scratch, code):
    """Each Python snippet runs on its own in a fresh interpreter."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=scratch)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.parametrize("command", COMMANDS)
def test_run_section_command(scratch, capsys, command):
    """Each command of the Run section succeeds (a GPU command says, in one line, no GPU)."""
    argv = shlex.split(command.split("  #")[0])[1:]
    rc = main(argv)
    captured = capsys.readouterr()
    if "--backend" in argv and argv[argv.index("--backend") + 1] == "gpu" \
            and not gs.gpu_available():
        assert rc == 2 and len(captured.err.strip().splitlines()) == 1
        assert "--backend cpu" in captured.err
        return
    assert rc == 0, captured.err
    assert captured.out.strip()


def test_run_section_covers_the_sample_data():
    """The Run section uses the shipped sample files, each of them."""
    used = " ".join(COMMANDS)
    for name in ("sample.gr", "sample.mtx", "sample.txt", "sample.graph", "sample.npz",
                 "sparse_ids.txt"):
        assert f"examples/data/{name}" in used
        assert (ROOT / "examples" / "data" / name).exists()
