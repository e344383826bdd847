"""Run a benchmark script against a staged tree (``stage_ab.sh``) instead of the
installed one, for same-run A/Bs on a machine where gswitch is an editable install.

The editable install's import hook would otherwise find the working tree whatever
``PYTHONPATH`` says; it is dropped, and the staged tree goes first on ``sys.path``.

Usage::

    source benchmarks/experiments/stage_ab.sh
    python benchmarks/experiments/ab_tree.py /tmp/st-old benchmarks/bench_msf.py [ARGS...]
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path


def main() -> None:
    tree, script, *args = sys.argv[1:]
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path[:0] = [str(Path(tree).resolve()), str(Path(script).resolve().parent)]
    import gswitch

    assert Path(gswitch.__file__).resolve().is_relative_to(Path(tree).resolve()), \
        gswitch.__file__
    sys.argv = [script, *args]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
