"""What the models read of the commits an import brings, with a count of the diffs they
must read without a file path (hunks alone, no ``file`` or ``path`` on the row)."""

from __future__ import annotations

from curator.presentation.cli_output import warn
from engines.commits.diff_layout import names_no_file
from engines.commits.representation import model_input


class ImportReading:
    """``engines.commits.representation.model_input`` for one imported file, counting
    the rows whose diff names no file; :meth:`warning` tells the user, once per file."""

    def __init__(self) -> None:
        self.pathless = 0

    def __call__(self, message: str, diff: str, *, path: str | None = None) -> str:
        if names_no_file(diff, path):
            self.pathless += 1
        return model_input(message, diff, path=path)

    def tell(self, source: str) -> None:
        """Print :meth:`warning` as a ``warning:`` line, if there is one."""
        line = self.warning(source)
        if line is not None:
            warn(line)

    def warning(self, source: str) -> str | None:
        """One line when some diff named no file, saying what it costs and the fix."""
        if not self.pathless:
            return None
        return (
            f"{source}: {self.pathless} diffs are hunks with no file named (no 'diff --git'"
            " or '---'/'+++' header, no 'file' or 'path' field): the models read them"
            " without the path they lean on (0.04-0.05 lower perf F1 on the team's rounds"
            " 21 and 22); give each row its 'file'"
        )
