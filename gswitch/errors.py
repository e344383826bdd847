"""Typed exceptions. Every error gswitch raises on bad input derives from :class:`GswitchError`.

Messages follow one rule: say what is wrong, the offending value, and how to fix it.
"""

from __future__ import annotations

__all__ = [
    "GswitchError",
    "GraphFormatError",
    "InvalidGraph",
    "InvalidConfig",
    "InvalidInput",
    "AlgorithmError",
    "PluginError",
    "KernelCompileError",
    "DeviceError",
    "DeadlineExceeded",
]


class GswitchError(Exception):
    """Base class of every error gswitch raises deliberately."""


class GraphFormatError(GswitchError):
    """A graph file is missing, unreadable or malformed."""


class InvalidGraph(GswitchError):
    """Graph arrays are inconsistent (ids out of range, bad offsets, bad weights)."""


class InvalidConfig(GswitchError):
    """A strategy configuration is unknown, malformed or an invalid combination."""


class InvalidInput(GswitchError):
    """A run argument (source node, parameter value) is out of range."""


class AlgorithmError(GswitchError):
    """An algorithm definition cannot be traced or is used on an unsuitable graph."""


class PluginError(GswitchError):
    """A plugin failed to import or register, or registered a duplicate name."""


class KernelCompileError(GswitchError):
    """Generated CUDA source failed to compile."""


class DeviceError(GswitchError):
    """No usable GPU, or the GPU cannot hold the problem."""


class DeadlineExceeded(GswitchError):
    """A run passed its deadline and was stopped between steps (or on the device clock).

    Attributes
    ----------
    elapsed_s : float
        Seconds the run had taken when it was stopped.
    iterations : int
        Super-steps completed before the stop.
    """

    def __init__(self, message: str, elapsed_s: float = 0.0, iterations: int = 0) -> None:
        super().__init__(message)
        self.elapsed_s = elapsed_s
        self.iterations = iterations
