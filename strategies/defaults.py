"""The default configuration: good on most graphs, measured on the device."""

from __future__ import annotations

from gswitch import hookimpl


@hookimpl
def gswitch_default_config():
    return {
        "worklist": "warp_aggregated",
        "load_balance": "virtual_warp",
        "driving": "data",
        "direction": "push",
        "launch": "host_loop",
    }
