"""The step modes the built-in driving strategies share (Nasre, Burtscher & Pingali)."""

from __future__ import annotations

from gswitch.strategy import StepMode

#: The worklist's items; activations pushed.
DATA = StepMode("data", items="worklist", pushes=True)
#: Every node; activations only counted.
TOPOLOGY = StepMode("topology", items="nodes", pushes=False)
#: Every node; activations pushed: the sweep that rebuilds a worklist when a hybrid
#: leaves topology mode.
TRANSITION = StepMode("transition", items="nodes", pushes=True)
