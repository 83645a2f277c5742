"""Sphinx configuration of the grpodyn site (``python -m sphinx -W -b html docs docs/_build/html``).

Sphinx with the furo theme, MyST-NB for Markdown pages and executed notebooks, autodoc with
numpydoc for the API and sphinx-argparse for the command line. The pages that carry results
(derivations, exported functions, command outputs) are rendered at build time by the extensions
in ``docs/_ext`` from the code itself, so they cannot drift from it.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "grpodyn"
author = "the grpodyn developers"
copyright = "the grpodyn developers, MIT licence"  # noqa: A001 (Sphinx's name)

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinxarg.ext",
    "grpodyn_pages",
]

source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = [
    "_build", "Thumbs.db", ".DS_Store",
    # moving to studies/: the studies page renders studies/*/README.md
    "findings.md", "forecast_benchmark.md",
]

html_theme = "furo"
html_title = "grpodyn"

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# Notebooks: executed while the site builds (every notebook in notebooks/, none skipped); the
# cache keeps a rebuild from re-running an unchanged notebook.
nb_execution_mode = "cache"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True

autodoc_typehints = "none"  # numpydoc renders the types of the docstrings
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
