"""reStructuredText for the documentation pages that list what is installed.

The algorithm, strategy, command-line and networkx pages are written from the plugin
registry, the argument parser and the networkx backend's ``get_info()`` each time the
site is built, so they cannot drift from the code. This module needs no Sphinx: the
tests call its functions directly. Docstrings are not converted here; the generated text
names them with the ``gswitch-docstring`` directive, which the Sphinx extension
(``gswitch_sphinx``) renders with numpydoc.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import inspect
import re
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

#: The module that holds the networkx backend's ``get_info()``.
NX_INFO_MODULE = "gswitch.nxbackend._info"

# sentences that say when a strategy pays off or does not
_WINS = re.compile(r"\b(wins?|loses?|best (?:on|when|for)|pays off)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.;])\s+(?=[A-Z(`])")


# ------------------------------------------------------------------------- helpers
def heading(text: str, char: str) -> str:
    """An underlined section title."""
    return f"{text}\n{char * len(text)}\n"


def literal(value: Any) -> str:
    """``value`` as an inline literal (``None`` as a dash)."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        value = str(value).lower()
    text = str(value).replace("`", "'")
    return f"``{text}``"


def one_line(text: str) -> str:
    """Whitespace collapsed, so a docstring paragraph fits in a table cell."""
    return " ".join(str(text).split())


def list_table(header: Iterable[str], rows: Iterable[Iterable[str]],
               widths: Iterable[int] | None = None) -> str:
    """A ``list-table`` directive. A cell is inline markup; a cell of several lines
    (a bullet list) keeps its lines, each with its whitespace collapsed.
    """
    rows = [list(r) for r in rows]
    lines = [".. list-table::", "   :header-rows: 1"]
    if widths is not None:
        lines.append(f"   :widths: {' '.join(str(w) for w in widths)}")
    lines.append("")
    for row in [list(header)] + rows:
        for i, cell in enumerate(row):
            parts = [one_line(x) for x in str(cell).splitlines() if x.strip()] or ["—"]
            lines.append(f"   {'*' if i == 0 else ' '} - {parts[0]}")
            lines.extend(f"       {x}" for x in parts[1:])
    return "\n".join(lines) + "\n"


def docstring_directive(target: str) -> str:
    """The directive that renders the docstring ``target`` names (see ``gswitch_sphinx``)."""
    return f".. gswitch-docstring:: {target}\n"


def when_it_wins(doc: str) -> str:
    """The sentences of a strategy docstring that say when it wins (or loses), or ``""``."""
    text = one_line(doc)
    return " ".join(s.strip() for s in _SENTENCE.split(text) if _WINS.search(s))


def first_sentence(doc: str) -> str:
    """The summary of a docstring: its first paragraph up to the first full stop."""
    para = one_line((doc or "").strip().split("\n\n")[0])
    cut = para.find(". ")
    return para[: cut + 1] if cut >= 0 else para


def source_without_docstring(obj: Any) -> str:
    """The source of a class or function, decorators included, without its docstring
    (an algorithm's :class:`~gswitch.AlgorithmSpec` gives its class).
    """
    obj = getattr(obj, "cls", obj)
    source = textwrap.dedent(inspect.getsource(obj))
    lines = source.splitlines()
    node = ast.parse(source).body[0]
    body = getattr(node, "body", [])
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        first, last = body[0].lineno - 1, body[0].end_lineno
        if last < len(lines) and not lines[last].strip():
            last += 1  # and the blank line after it
        del lines[first:last]
    return "\n".join(lines) + "\n"


def _registry():
    from gswitch.plugins import get_registry

    return get_registry()


# ------------------------------------------------------------------------- strategies
def _space_row(key: str, space: Any) -> list[str]:
    from gswitch.strategy import Categorical, FloatRange, IntRange

    if isinstance(space, Categorical):
        kind, values = "categorical", ", ".join(literal(c) for c in space.choices)
    elif isinstance(space, IntRange):
        kind = "integer"
        values = f"{literal(space.low)} .. {literal(space.high)}"
        if space.step != 1:
            values += f", multiples of {space.step} from {space.low}"
    elif isinstance(space, FloatRange):
        kind, values = "float", f"{literal(space.low)} .. {literal(space.high)}"
    else:  # a space type this generator does not know yet: show what it has
        kind, values = type(space).__name__, literal(repr(space))
    if getattr(space, "log", False):
        values += " (log scale)"
    when = "recompiles" if getattr(space, "compile_time", False) else "no recompile (runtime)"
    return [literal(key), kind, values, literal(space.default), when]


def _params_table(axis: str, params: Mapping[str, Any], recompiles: bool = True) -> str:
    """A table of declared parameter spaces; ``recompiles`` adds whether a change
    recompiles (a strategy's declaration; the global keys' modules say it themselves).
    """
    rows = [_space_row(f"{axis}.{name}" if axis else name, space)
            for name, space in params.items()]
    if not recompiles:
        return list_table(["key", "type", "values", "default"], [r[:4] for r in rows],
                          widths=[25, 15, 45, 15])
    return list_table(["key", "type", "values", "default", "changing it"], rows,
                      widths=[25, 12, 33, 12, 18])


def _defaults_by_strategy(reg) -> dict[tuple[str, str], list[str]]:
    """Which algorithm formulations run each strategy when the config leaves it out."""
    out: dict[tuple[str, str], list[str]] = {}
    for family in reg.variants.values():
        for spec in family.values():
            for axis, strategy in spec.config_defaults.items():
                if "." not in axis:
                    out.setdefault((axis, str(strategy)), []).append(spec.label)
    return out


def strategies_page(reg=None) -> str:
    """The strategy catalogue: every registered strategy by axis, its docstring, when it
    wins, and its parameters with their ranges.
    """
    from gswitch import strategy as base
    from gswitch.config import DEFAULTS, GLOBAL_KEYS
    from gswitch.plugins import AXES

    reg = reg or _registry()
    bases = {"worklist": base.WorklistStrategy, "load_balance": base.LoadBalanceStrategy,
             "driving": base.DrivingStrategy, "direction": base.DirectionStrategy,
             "launch": base.LaunchStrategy}
    used_by = _defaults_by_strategy(reg)
    out = [".. This file is generated from the plugin registry; do not edit.\n"]
    out.append(heading("Overview", "-"))
    rows = []
    for axis in AXES:
        for name, cls in reg.strategies[axis].items():
            wins = when_it_wins(inspect.getdoc(cls) or "")
            rows.append([literal(axis), f":ref:`{name} <strategy-{axis}-{name}>`",
                         "/".join(cls.backends), first_sentence(cls.__doc__ or ""), wins])
    out.append(list_table(["axis", "strategy", "backends", "what it does", "when it wins"],
                          rows, widths=[10, 14, 8, 34, 34]))
    for axis in AXES:
        out.append(f".. _strategy-axis-{axis}:\n")
        out.append(heading(f"Axis ``{axis}``", "-"))
        contract = bases.get(axis)
        if contract is not None:
            out.append(f"{first_sentence(inspect.getdoc(contract) or '')} The contract is "
                       f":class:`gswitch.strategy.{contract.__name__}`. The default is "
                       f"{literal(DEFAULTS.get(axis))}.\n")
        for name, cls in reg.strategies[axis].items():
            out.append(f".. _strategy-{axis}-{name}:\n")
            out.append(heading(f"``{name}``", "~"))
            facts = [
                f"- **select:** ``--set {axis}={name}`` or ``config={{\"{axis}\": "
                f"\"{name}\"}}``",
                f"- **class:** ``{cls.__module__}.{cls.__qualname__}``",
                f"- **registered by:** ``{reg.sources.get((axis, name), '?')}``",
                f"- **backends:** {', '.join(cls.backends)}",
            ]
            if DEFAULTS.get(axis) == name:
                facts.append("- **the default** on its axis")
            if (axis, name) in used_by:
                facts.append("- **default of the formulations:** "
                             + ", ".join(literal(s) for s in used_by[(axis, name)]))
            out.append("\n".join(facts) + "\n")
            out.append(docstring_directive(f"strategy:{axis}:{name}"))
            wins = when_it_wins(inspect.getdoc(cls) or "")
            if wins:
                out.append(f"**When it wins:** {wins}\n")
            if cls.params:
                out.append("**Parameters** (searched by the tuner):\n")
                out.append(_params_table(axis, cls.params))
            else:
                out.append("**Parameters:** none.\n")
    out.append(".. _strategy-global-keys:\n")
    out.append(heading("Keys of no single strategy", "-"))
    out.append("Configuration keys that every configuration has, whichever strategies it "
               "names (:class:`gswitch.Config`).\n")
    out.append(_params_table("", GLOBAL_KEYS, recompiles=False))
    if reg.failures:
        out.append(heading("Plugins that failed to load", "-"))
        out.append("\n".join(f"- {literal(f)}" for f in reg.failures) + "\n")
    return "\n".join(out)


# ------------------------------------------------------------------------- algorithms
def variants_of(reg, name: str) -> list:
    """The formulations of algorithm ``name``, its default first."""
    family = reg.variants.get(name) or {reg.algorithms[name].variant: reg.algorithms[name]}
    return sorted(family.values(), key=lambda s: (not s.default_variant, s.variant))


def _init_text(value: Any) -> str:
    if callable(value):
        return "computed from the parameters"
    if isinstance(value, float) and value == float("inf"):
        return "``INF``"
    return literal(value)


def _fields_table(spec) -> str:
    rows = [[literal(n), literal(f.dtype), _init_text(f.init), _init_text(f.at_source),
             "yes" if f.output else "no", f.doc or ""]
            for n, f in spec.fields.items() if not n.endswith("__next")]
    return list_table(["field", "dtype", "initial value", "at the source", "output", "meaning"],
                      rows, widths=[14, 10, 18, 14, 8, 36])


def _algorithm_params_table(spec, names=None) -> str:
    """``spec``'s parameters (those in ``names`` only, when given) as a table."""
    rows = []
    for n, p in spec.params.items():
        if names is not None and n not in names:
            continue
        bounds = "" if p.low is None and p.high is None else \
            f"{literal(p.low)} .. {literal(p.high)}"
        rows.append([literal(n), literal(p.dtype), literal(p.default), bounds, p.doc])
    return list_table(["parameter", "dtype", "default", "bounds", "meaning"], rows,
                      widths=[16, 10, 12, 18, 44])


def _config_text(values: Mapping[str, Any]) -> str:
    """``key=value`` pairs as ``--set`` takes them (``true``, not ``True``)."""
    def shown(v: Any) -> str:
        return str(v).lower() if isinstance(v, bool) else str(v)

    return ", ".join(literal(f"{k}={shown(v)}") for k, v in values.items()) or "—"


def _operators_text(spec) -> str:
    """The traced operators of a formulation (and of each of its stages), as text."""
    from gswitch.algorithm import HostStep

    parts: list[str] = []
    if spec.direct is not None:
        from gswitch.algorithm import direct_name

        parts.append(f"start: {spec.start.kind}\nruns array code {direct_name(spec.direct)} "
                     "(no operators, no strategies)")
    for stage in spec.stages or ([] if spec.direct is not None else [spec]):
        if isinstance(stage, HostStep):
            doc = first_sentence(inspect.getdoc(stage.func) or "")
            parts.append(f"host step {stage.name}" + (f": {doc}" if doc else ""))
            continue
        head = f"stage {stage.stage_name}" if stage.stage_name else ""
        if stage.stage_config:
            head += " (always " + ", ".join(f"{k}={v}" for k, v in
                                            stage.stage_config.items()) + ")"
        lines = [head] if head else []
        lines.append(f"start: {stage.start.kind}")
        for op in (stage.node, stage.edge):
            if op is not None:
                lines.append(op.describe())
            if op is not None and op.first:
                lines.append(f"  (each active node expands only the first {op.first} "
                             "edges of its row)")
        if stage.node_after_edges:
            lines.append("(the node operator runs after the edge expansion of each step)")
        parts.append("\n".join(lines))
    body = "\n\n".join(parts)
    return ".. code-block:: text\n\n" + "\n".join(
        f"   {line}" if line else "" for line in body.splitlines()) + "\n"


def algorithms_page(reg=None) -> str:
    """Every registered algorithm: its formulations, reference, parameters, fields,
    defaults and traced operators.
    """
    reg = reg or _registry()
    out = [".. This file is generated from the plugin registry; do not edit.\n"]
    rows = []
    for name, spec in reg.algorithms.items():
        names = []
        for v in variants_of(reg, name):
            mark = " (default)" if v.default_variant else (
                f" (default on {', '.join(v.default_on)})" if v.default_on else "")
            names.append(f"{literal(v.variant)}{mark}")
        rows.append([f":ref:`{name} <algorithm-{name}>`", first_sentence(spec.doc),
                     ", ".join(names), literal(spec.reference)])
    out.append(list_table(["algorithm", "what it computes", "variants", "reference"], rows,
                          widths=[12, 38, 30, 20]))
    for name, spec in reg.algorithms.items():
        family = variants_of(reg, name)
        out.append(f".. _algorithm-{name}:\n")
        if len(family) == 1:  # one formulation: its section is the algorithm's
            out.append(f".. _algorithm-{name}-{family[0].variant}:\n")
        out.append(heading(f"``{name}``", "-"))
        facts = [
            f"- **run:** ``gswitch run {name} GRAPH`` or ``gswitch.run(\"{name}\", graph)``",
            f"- **reference:** {literal(spec.reference)}",
            f"- **start:** {literal(spec.start.kind)}",
            f"- **graph:** {'symmetrised first' if spec.symmetric else 'as given'}"
            + ("; weights must be non-negative" if spec.weights == "nonnegative" else ""),
            f"- **registered by:** ``{reg.sources.get(('algorithm', name, spec.variant), '?')}``",
        ]
        out.append("\n".join(facts) + "\n")
        if spec.params:
            out.append("**Parameters** (``--param NAME=VALUE``, ``params=`` in Python):\n")
            out.append(_algorithm_params_table(spec))
        out.append("**Fields:**\n")
        out.append(_fields_table(spec))
        if len(family) > 1:
            vrows = []
            for v in family:
                default = "yes" if v.default_variant else (
                    f"on {', '.join(v.default_on)}" if v.default_on else "")
                if v.default_variant and any(o.default_on for o in family):
                    others = {b for o in family for b in o.default_on}
                    default = f"yes, except on {', '.join(sorted(others))}"
                vrows.append([f":ref:`{v.variant} <algorithm-{name}-{v.variant}>`", default,
                              "none (array code)" if v.direct is not None else
                              "; ".join(f"{a}: {', '.join(s)}" for a, s in v.supports.items())
                              or "any", first_sentence(v.doc)])
            out.append("**Variants** (``--set variant=NAME``, ``config={\"variant\": NAME}``):\n")
            out.append(list_table(["variant", "default", "strategies it supports", "summary"],
                                  vrows, widths=[18, 14, 26, 42]))
        for v in family:
            if len(family) > 1:
                out.append(f".. _algorithm-{name}-{v.variant}:\n")
                out.append(heading(f"``{name}``, ``{v.variant}``", "~"))
            facts = []
            if v.config_defaults:
                facts.append(f"- **config defaults:** {_config_text(v.config_defaults)}")
            for backend, values in v.backend_defaults.items():
                facts.append(f"- **on {backend}:** {_config_text(values)}")
            if v.supports:
                facts.append("- **supports:** " + "; ".join(
                    f"{a} {', '.join(literal(s) for s in names)}"
                    for a, names in v.supports.items()) + " only")
            if facts:
                out.append("\n".join(facts) + "\n")
            own = set(v.params) - set(spec.params)
            if own:  # parameters only this formulation takes
                out.append(f"**Parameters of** ``{v.variant}``:\n")
                out.append(_algorithm_params_table(v, own))
            out.append(docstring_directive(f"algorithm:{name}:{v.variant}"))
            out.append("**Traced operators** (``gswitch algorithms --describe``):\n")
            out.append(_operators_text(v))
    return "\n".join(out)


# ------------------------------------------------------------------------- command line
def cli_page(parser: argparse.ArgumentParser | None = None, width: int = 88) -> str:
    """``--help`` of ``gswitch`` and each of its subcommands, at a fixed width."""
    if parser is None:
        from gswitch.cli import build_parser

        parser = build_parser()
    out = [".. This file is generated from gswitch.cli.build_parser(); do not edit.\n"]

    def help_text(p: argparse.ArgumentParser) -> str:
        p.formatter_class = functools.partial(argparse.HelpFormatter, width=width)
        return p.format_help()

    def block(text: str) -> str:
        return ".. code-block:: text\n\n" + "\n".join(
            f"   {line}" if line.strip() else "" for line in text.rstrip().splitlines()) + "\n"

    out.append(heading("``gswitch``", "-"))
    out.append(block(help_text(parser)))
    subs = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)),
                None)
    for name, sub in (subs.choices.items() if subs is not None else ()):
        out.append(f".. _cli-{name}:\n")
        out.append(heading(f"``gswitch {name}``", "-"))
        out.append(block(help_text(sub)))
    return "\n".join(out)


# ------------------------------------------------------------------------- networkx
def networkx_info() -> dict | None:
    """``get_info()`` of the networkx backend, or ``None`` when this build has none.

    Only a missing backend module counts as absent; a backend that is present but fails
    to import fails the build instead of documenting it away.
    """
    try:
        module = importlib.import_module(NX_INFO_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name and NX_INFO_MODULE.startswith(exc.name) and exc.name != "gswitch":
            return None
        raise
    return module.get_info()


def networkx_functions_page(info: Mapping[str, Any] | None) -> str:
    """The functions the networkx backend accelerates, from its ``backend_info`` dict.

    ``info`` is what ``get_info()`` returns (networkx's backend-info mapping:
    ``backend_name``, ``short_summary``, ``url``, and ``functions``: name ->
    ``{"additional_docs": str, "additional_parameters": {name: description}}``), or
    ``None`` when the backend is not installed in this build.
    """
    out = [".. This file is generated from gswitch's networkx backend info; do not edit.\n"]
    if info is None:
        out.append(".. note::\n\n   The networkx backend (``gswitch.nxbackend``) is not "
                   "installed in this build of gswitch, so there are no functions to list. "
                   "The rest of this page, graphs from networkx and results back, works "
                   "without it.\n")
        return "\n".join(out)
    name = info.get("backend_name", "gswitch")
    summary = one_line(info.get("short_summary", ""))
    out.append(f"Backend name: {literal(name)}." + (f" {summary}" if summary else "")
               + (f" <{info['url']}>" if info.get("url") else "") + "\n")
    functions: Mapping[str, Any] = info.get("functions") or {}
    if not functions:
        out.append("The backend lists no functions.\n")
        return "\n".join(out)
    out.append(f"Call these networkx functions with ``backend=\"{name}\"`` (or set "
               f"``nx.config.backend_priority``); {len(functions)} in all:\n")
    rows = []
    for fname in sorted(functions):
        entry = functions[fname] or {}
        params = entry.get("additional_parameters") or {}
        notes = one_line(entry.get("additional_docs") or "")
        if entry.get("url"):
            notes += f" (`source <{entry['url']}>`__)"
        rows.append([f"``{fname}``", notes, "\n".join(
            f"- {literal(p)}" + (f": {one_line(d)}" if d else "")
            for p, d in sorted(params.items()))])
    out.append(list_table(["function", "notes", "additional parameters"], rows,
                          widths=[25, 45, 30]))
    return "\n".join(out)


# ------------------------------------------------------------------------- writing
def generate() -> dict[str, str]:
    """Every generated file's name and text."""
    return {
        "algorithms.inc": algorithms_page(),
        "strategies.inc": strategies_page(),
        "cli.inc": cli_page(),
        "networkx_functions.inc": networkx_functions_page(networkx_info()),
    }


def write_pages(folder: str | Path) -> list[Path]:
    """Write the generated files into ``folder``; a file whose text is unchanged is not
    touched, so an incremental build rebuilds only what changed. Returns the paths written.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in generate().items():
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written
