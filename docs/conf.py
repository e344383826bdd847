"""Sphinx configuration of gswitch's documentation site.

Build with ``python -m sphinx -W --keep-going -b html docs docs/_build/html`` after
``python -m pip install -e ".[docs]"``. The pages that list algorithms, strategies, the
command line and the networkx backend's functions are written into ``generated/`` from
the installed plugins when the build starts (``_ext/gswitch_sphinx.py``).
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import gswitch  # noqa: E402

project = "gswitch"
author = "gswitch developers"
copyright = "gswitch developers"
release = gswitch.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.viewcode",
    "numpydoc",
    "gswitch_sphinx",
]

root_doc = "index"
exclude_patterns = ["_build", "generated/*.inc"]
templates_path = []
html_theme = "alabaster"
html_static_path = []
html_title = f"gswitch {release}"
html_theme_options = {
    "description": "Irregular graph algorithms on GPUs, with execution strategies chosen "
                   "per graph",
    "fixed_sidebar": True,
}

autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc Parameters sections say the types

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()
