"""Sphinx configuration of the documentation site (docs/).

Build it with ``pip install ".[docs]"`` and
``python -m sphinx -W --keep-going -b html docs docs/_build/html``
(``-W``: warnings are errors, as in CI); open docs/_build/html/index.html.
The pages are Markdown (MyST); the API reference is autodoc's, from the
docstrings of the installed package.  Every code block of every page runs
as a test: tests/test_docs.py.
"""
import dispatcher

project = "c10-dispatcher"
author = "the c10-dispatcher authors"
copyright = "2026, the c10-dispatcher authors"
release = dispatcher.__version__
version = release

extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3

# The docstrings are reStructuredText; signatures come from the code (the
# compiled engine's from Cython's embedsignature).
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}

html_theme = "alabaster"
html_title = f"dispatcher {release}"
html_static_path: list[str] = []
