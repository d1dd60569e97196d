# Sphinx configuration of tessera's documentation (docs/). Built and checked by `tests/run`
# (suite docs): sphinx-build -W (warnings are errors) for the HTML and for the doctests, then the
# built site opened in headless Chromium (tests/docs/check_site.py).
#
# The pages are Markdown (MyST); the Python reference comes from the package's numpy-style
# docstrings (autodoc + numpydoc), so `tessera` must be importable: tests/run puts the module it
# built on PYTHONPATH. The C and C++ reference comes from the public headers' doc comments through
# Doxygen's XML (docs/Doxyfile) and Breathe; TESSERA_DOXYGEN_XML names that XML directory.
import os
import sys

try:
    import tessera
except ImportError as e:  # a clear message instead of autodoc's warnings on every page
    sys.exit(f"docs/conf.py: cannot import tessera ({e}); put the built module on PYTHONPATH "
             "(tests/run --suite docs does)")

project = "tessera"
author = "the tessera authors"
copyright = "2026, the tessera authors"
version = release = tessera.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "numpydoc",
    "breathe",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_screenshots"]  # _screenshots: the check's screenshots, kept for the record
myst_heading_anchors = 3  # links to a page's sections: page.md#a-section

# The Python reference: numpydoc renders the docstrings' sections (Parameters, Returns, Raises,
# Examples); the pages list each class's members themselves.
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the signatures and docstrings say the types (numpy's style)

# The doctests: the ```{doctest} blocks of the pages and the Examples of the docstrings, run
# against the built module with numpy's print options of the docstrings.
doctest_global_setup = "import numpy as np\nimport tessera\n"
doctest_default_flags = (__import__("doctest").ELLIPSIS | __import__("doctest").NORMALIZE_WHITESPACE
                         | __import__("doctest").DONT_ACCEPT_TRUE_FOR_1)

# The C and C++ reference: the headers' comments (Doxygen XML).
breathe_projects = {"tessera": os.environ.get("TESSERA_DOXYGEN_XML", "_build/doxygen/xml")}
breathe_default_project = "tessera"
breathe_domain_by_extension = {"h": "c", "hpp": "cpp"}

html_theme = "alabaster"
html_title = f"tessera {release}"
html_theme_options = {
    "description": "numpy.tile and its family at the memory's speed",
    "fixed_sidebar": True,
    "page_width": "1180px",
    "sidebar_width": "230px",
}
