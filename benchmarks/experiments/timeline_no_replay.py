"""``call_timeline.py`` with the engine's replay of repeated runs turned off: every call
takes the usual path (set up, drive, results), for an A/B of the replay in one tree.

Usage::

    python benchmarks/experiments/timeline_no_replay.py [call_timeline.py's arguments]
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from gswitch.engine import repeat  # noqa: E402

repeat.Repeat.after = classmethod(lambda cls, ctx, plan: None)  # nothing is recorded

import call_timeline  # noqa: E402

if __name__ == "__main__":
    call_timeline.main()
