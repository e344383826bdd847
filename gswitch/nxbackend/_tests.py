"""networkx tests whose answers from gswitch are valid but differ from networkx's.

Each entry names one test (``path::name`` suffix of its node id) and why it differs;
:func:`mark_known_differences` marks exactly those as expected failures.
"""

from __future__ import annotations

from typing import Any

__all__ = ["KNOWN_DIFFERENCES", "mark_known_differences"]

#: test node id suffix -> why gswitch's answer differs (and is still right).
KNOWN_DIFFERENCES: dict[str, str] = {
    "test_strongly_connected.py::TestStronglyConnected::test_condensation_mapping_and_members":
        "the test expects the largest strong component to be yielded first, as networkx's "
        "depth-first search happens to close it on this graph; gswitch yields the same "
        "components by their first node in graph order (networkx documents no order), so "
        "condensation() numbers them differently",
}


def mark_known_differences(items: list[Any]) -> None:
    """Add an ``xfail`` marker with its reason to each test of :data:`KNOWN_DIFFERENCES`."""
    import pytest

    for item in items:
        for suffix, reason in KNOWN_DIFFERENCES.items():
            if item.nodeid.endswith(suffix):
                item.add_marker(pytest.mark.xfail(reason=f"gswitch: {reason}", strict=True))
