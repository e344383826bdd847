"""A short, fixed run of the differential sweep of the networkx backend against networkx
(``tests/nx_sweep.py``): every function the backend lists, on small random graphs of
every networkx class, with arguments at their edges, and after the graphs change.

A longer run, on graphs of up to 130 nodes::

    python tests/nx_sweep.py --graphs 1000 --seed 7 --explicit
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import nx_sweep  # noqa: E402

from gswitch.nxbackend._info import FUNCTIONS  # noqa: E402


def _report(mismatches):
    return "\n".join(f"[{m['mode']}] {m['function']}: {m['why']}\n  {m['graph']}\n  "
                     f"{m['reproducer'][:600]}" for m in mismatches[:5])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_every_function_answers_as_networkx_on_random_graphs():
    """Every call answers as networkx does, refuses as it refuses, and falls back to
    networkx's very answer where gswitch declines."""
    out = nx_sweep.sweep(120, seed=0, explicit=True, max_nodes=40)
    assert not out["mismatches"], _report(out["mismatches"])
    assert set(out["calls"]) == set(FUNCTIONS)
    assert all(out["gswitch_ran"].get(name, 0) > 0 for name in FUNCTIONS)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_answers_follow_the_graph_after_it_changes():
    """A call after the graph (or the graph a view shows) changed answers for the
    changed graph."""
    out = nx_sweep.mutation_sweep(400, seed=1, max_nodes=25)
    assert not out["mismatches"], _report(out["mismatches"])
