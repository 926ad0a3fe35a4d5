"""What tests read from a CLI run: the one ``error:`` line a refused command prints."""

from __future__ import annotations


def one_error(result, code: int = 1) -> str:  # type: ignore[no-untyped-def]
    """The single ``error:`` line of a command that exited with ``code``, no traceback."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, result.output
    return lines[0]
