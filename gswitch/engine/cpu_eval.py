"""Expression evaluation for the CPU engine: a traced operator expression to NumPy arrays.

An :class:`Env` names, per node role (``src``, ``dst``, ``self``), the node ids an
expression runs over; the value of every node of the tree is then one array with one
element per id (or a scalar for constants and parameters). A role may stand for every
node of the graph in id order (``ALL``): loads then read the field itself, with no
gather and no copy (a topology-driven step's node operator, a fast path's per-node
values). Such a value may be the field array itself, so a caller that writes fields
before it has used the value must copy it first (see :func:`unaliased`). Trees are
compiled once into closures by :mod:`gswitch.engine.cpu_plan`; the Env itself is in
:mod:`gswitch.engine.cpu_env`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import expr as ex
from .cpu_env import ALL, Env
from .cpu_plan import LEAVES, node_index, quiet, root
from .cpu_plan import _trunc_div as _trunc_div  # noqa: F401 - tests check it here

__all__ = ["ALL", "Env", "evaluate", "broadcast", "kept_values", "node_index", "quiet",
           "shared_subexpressions", "unaliased"]

_NP = {d: np.dtype(d) for d in ex.DTYPES}


_SHARED: dict[tuple[Any, ...], frozenset[ex.Expr]] = {}


def shared_subexpressions(statements: list[Any]) -> frozenset[ex.Expr]:
    """The compound expressions that more than one place of ``statements`` uses (a
    traced ``new = ...`` that two statements read): an :class:`Env` given them evaluates
    each once until a field it reads is written.
    """
    key = tuple(statements)
    if key not in _SHARED:
        uses: dict[ex.Expr, int] = {}

        def visit(e: ex.Expr) -> None:
            uses[e] = uses.get(e, 0) + 1
            if uses[e] == 1:
                for c in e.children():
                    visit(c)

        for st in statements:
            for root in (st.value, getattr(st, "at", None), getattr(st, "activate_above", None)):
                if root is not None:
                    visit(root)
        _SHARED[key] = frozenset(e for e, k in uses.items()
                                 if k > 1 and not isinstance(e, LEAVES))
    return _SHARED[key]


def kept_values(statements: list[Any], shared: frozenset[ex.Expr]) -> tuple[ex.Expr, ...]:
    """The expressions whose values an :class:`Env` evaluating ``statements`` among the
    ``shared`` subexpressions may keep in ``memo``: those and every label frequency.
    """
    found = dict.fromkeys(shared)
    for st in statements:
        for root_expr in (st.value, getattr(st, "at", None),
                          getattr(st, "activate_above", None)):
            if root_expr is not None:
                found.update((x, None) for x in ex.walk(root_expr)
                             if isinstance(x, ex.LabelFrequency))
    return tuple(found)


def evaluate(e: ex.Expr, env: Env) -> Any:
    """Evaluate an expression tree to a NumPy array (or scalar) of ``e.dtype``.

    The result may be shared, not copied (a field itself for a load over ``ALL``, the
    kept value of a shared subexpression): nothing may write to it. The tree is compiled
    once (:mod:`gswitch.engine.cpu_plan`) and the compiled form reused.
    """
    return root(e, env.shared)(env)


def broadcast(v: Any, length: int, dtype: str) -> np.ndarray:
    """``v`` as a ``length`` array of ``dtype`` (a scalar repeated)."""
    dt = _NP[dtype]
    if isinstance(v, np.ndarray) and v.ndim:
        return v if v.dtype == dt else v.astype(dt)
    arr = np.empty(length, dtype=dt)  # np.full costs three times as much on few nodes
    arr.fill(np.asarray(v).astype(dt, copy=False))
    return arr


def unaliased(v: np.ndarray, fields: dict[str, np.ndarray]) -> np.ndarray:
    """``v``, copied where it is (a view of) a field that a reduction may write while it
    still reads ``v``.
    """
    if any(np.may_share_memory(v, f) for f in fields.values()):
        return v.copy()
    return v
