"""Curator: build trustworthy ground-truth datasets of code from the terminal.

This package is the composition root: the typer CLI and (later) the Textual app.
"""

__version__ = "0.1.0"
