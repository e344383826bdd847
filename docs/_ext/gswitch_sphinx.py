"""Sphinx extension of gswitch's documentation.

On ``builder-inited`` it writes the generated pages (:mod:`gswitch_docgen`: algorithms,
strategies, command line, networkx functions) into ``generated/`` next to ``conf.py``,
before Sphinx reads any source. It adds the directive ``gswitch-docstring``, which
renders one docstring through numpydoc, as autodoc would, for objects that have no
import path of their own:

``.. gswitch-docstring:: strategy:AXIS:NAME``
    the docstring of a registered strategy class;
``.. gswitch-docstring:: algorithm:NAME:VARIANT``
    the docstring of a registered algorithm formulation (the decorated class);
``.. gswitch-docstring:: module.path.Object.attr``
    ``:as:`` gives the name shown in the signature line (``field.reduce_min``):
    the operator-language methods live on private proxy classes.

and ``gswitch-source``, with the same targets, which shows an object's source without
its docstring (an algorithm class as it is declared, decorator included).
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import gswitch_docgen
from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

GENERATED = "generated"


def _resolve(target: str):
    """``(object, what, qualified name, docstring)`` for a directive argument."""
    from gswitch.plugins import get_registry

    kind, _, rest = target.partition(":")
    if kind == "strategy":
        axis, _, name = rest.partition(":")
        cls = get_registry().strategy(axis, name)
        return cls, "class", f"{cls.__module__}.{cls.__qualname__}", inspect.getdoc(cls)
    if kind == "algorithm":
        name, _, variant = rest.partition(":")
        spec = get_registry().algorithm(name, variant or None)
        return spec.cls, "class", f"gswitch.algorithms.{name}.{spec.variant}", spec.doc
    module_name, attrs = target, []
    while True:  # the longest importable prefix, then attributes
        try:
            obj = importlib.import_module(module_name)
            break
        except ModuleNotFoundError:
            module_name, _, attr = module_name.rpartition(".")
            if not module_name:
                raise
            attrs.insert(0, attr)
    for attr in attrs:
        obj = getattr(obj, attr)
    what = "method" if len(attrs) > 1 and inspect.isfunction(obj) else "function"
    return obj, what, target, inspect.getdoc(obj)


def _signature(obj, shown: str) -> str:
    """``shown(args)`` without the bound first argument (``self``, the tracer)."""
    params = [p.replace(annotation=inspect.Parameter.empty)
              for p in list(inspect.signature(obj).parameters.values())[1:]]
    return f"{shown}{inspect.Signature(params)}"


class DocstringDirective(SphinxDirective):
    """Render a docstring through numpydoc and parse it in place."""

    required_arguments = 1
    option_spec = {"as": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        from numpydoc.numpydoc import mangle_docstrings

        target = self.arguments[0]
        try:
            obj, what, name, doc = _resolve(target)
        except Exception as exc:
            raise self.error(
                f"gswitch-docstring {target}: {type(exc).__name__}: {exc}") from exc
        lines = (doc or "").splitlines()
        mangle_docstrings(self.env.app, what, name, obj, None, lines)
        shown = self.options.get("as")
        if shown:
            lines = [f".. py:method:: {_signature(obj, shown)}", "   :no-index:", ""] + [
                f"   {line}" if line else "" for line in lines]
        container = nodes.container(classes=["gswitch-docstring"])
        source = f"<docstring of {name}>"
        self.state.nested_parse(StringList(lines, source=source), self.content_offset,
                                container)
        return container.children


class SourceDirective(SphinxDirective):
    """An object's source, decorators included, docstring left out."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        target = self.arguments[0]
        try:
            obj = _resolve(target)[0]
            text = gswitch_docgen.source_without_docstring(obj)
            path = inspect.getsourcefile(getattr(obj, "cls", obj))
        except Exception as exc:
            raise self.error(
                f"gswitch-source {target}: {type(exc).__name__}: {exc}") from exc
        if path:
            self.env.note_dependency(path)
        block = nodes.literal_block(text, text, language="python")
        self.set_source_info(block)
        return [block]


def _generate(app) -> None:
    gswitch_docgen.write_pages(Path(app.srcdir) / GENERATED)


def setup(app):
    app.setup_extension("numpydoc")
    app.add_directive("gswitch-docstring", DocstringDirective)
    app.add_directive("gswitch-source", SourceDirective)
    app.connect("builder-inited", _generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
