"""Curator's test suite.

Rich fixes a console's width from COLUMNS when the console is built. pytest-xdist starts
its workers with COLUMNS=80, and some tests run the CLI in-process with a COLUMNS of
their own; whichever came first would freeze the width of the shared consoles for every
later test of that process. So they are built here, before any test runs and with no
COLUMNS, and read each test's COLUMNS when they print, as in a serial run.
"""

import os

os.environ.pop("COLUMNS", None)

import curator.console  # noqa: F401
