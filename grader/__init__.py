"""The grader: grades a tiny_autograd submission (see README.md, docs/ARCHITECTURE.md)."""

__version__ = "0.1.0"  # the one place; pyproject.toml and every results file read it
