"""Kept for the modules not yet moved to ``curator.presentation.text``, where the safe
text functions live; import from there."""

from curator.presentation.text import labelled, one_line, plain, strip_controls

__all__ = ["labelled", "one_line", "plain", "strip_controls"]
