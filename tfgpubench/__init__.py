"""Tooling around the asv suite: diagnostics, stacks of versions, reports, self-checks."""

__version__ = "0.1.0"
