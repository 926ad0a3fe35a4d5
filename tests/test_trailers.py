"""Messages read without their trailer block (engines.commits.trailers), from messages
as git writes them (``git commit --trailer``) and through the miner."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curator.cli import app
from engines.commits.representation import SEPARATOR, model_input
from engines.commits.trailers import without_trailers
from engines.labelers.diff_decision import message_part
from tests.gitrepo import GitRepo

KERNEL = (
    "mm: avoid a second walk of the page list\n\n"
    "The list is walked twice on every fault; walk it once.\n\n"
    "Signed-off-by: Jane Developer <jane@example.org>\n"
    "Reviewed-by: John Maintainer <john@example.com>\n"
    "Cc: stable@vger.kernel.org\n"
    "Link: https://lore.kernel.org/r/20201104123456.12345-1-jane@example.org\n"
    "Signed-off-by: John Maintainer <john@example.com>\n"
)


def test_a_sign_off_block_is_left_out() -> None:
    assert without_trailers(KERNEL) == (
        "mm: avoid a second walk of the page list\n\n"
        "The list is walked twice on every fault; walk it once."
    )


def test_several_trailer_paragraphs_and_folded_values_go_too() -> None:
    message = (
        "Speed up the tokenizer\n\n"
        "Co-authored-by: A <a@example.org>\n\n"
        "PiperOrigin-RevId: 612345678\n"
        "Change-Id: I0123456789abcdef\n"
        "Differential Revision: https://reviews.example.org/D42\n"
        "  (folded onto a second line)\n"
    )
    assert without_trailers(message) == "Speed up the tokenizer"


@pytest.mark.parametrize(
    "message",
    [
        "Only a subject",
        "Signed-off-by: a message that is nothing but a trailer",
        "Cache the parsed header\n\nNote: this makes parsing twice as fast",  # no metadata key
        "Cache the header\n\nSigned-off-by: A <a@example.org>\nand then the reason it is fast",
        "Fix #12\n\nFixes #12",  # no colon: prose, not a trailer
    ],
)
def test_a_last_paragraph_that_is_no_trailer_block_stays(message: str) -> None:
    assert without_trailers(message) == message


def test_git_writes_what_is_left_out(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("a.c", "int f(void) { return 1; }\n")
    repo.git("add", ".")
    repo.git(
        *("commit", "-q", "-s", "-m", "Inline f", "-m", "f is called in the hot loop."),
        *("--trailer", "Reviewed-by: R V <r@example.org>", "--trailer", "Change-Id: I42"),
    )
    message = repo.git("log", "-1", "--format=%B")
    assert "Signed-off-by: " in message and "Change-Id: I42" in message
    assert without_trailers(message) == "Inline f\n\nf is called in the hot loop."


def test_the_model_reads_the_message_without_its_trailers_and_the_rules_see_the_rest() -> None:
    text = model_input(KERNEL, "")
    assert text == without_trailers(KERNEL) + SEPARATOR
    with_diff = model_input(KERNEL, "@@ -1 +1 @@\n-a\n+b\n", path="mm/list.c")
    assert message_part(with_diff) == without_trailers(KERNEL)
    assert "Signed-off-by" not in with_diff


def test_a_mined_commit_with_sign_offs_is_read_without_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.commit("first", {"a.c": "int f(int n) {\n  return n * 2;\n}\n"})
    repo.write("a.c", "int f(int n) {\n  return n << 1;\n}\n")
    repo.git("commit", "-qa", "-s", "-m", "Shift instead of multiply")
    monkeypatch.setenv("CURATOR_DB", str(tmp_path / "c.db"))
    result = CliRunner().invoke(app, ["mine", "commits", str(repo.path)])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(tmp_path / "c.db") as db:
        message, read = db.execute(
            "SELECT message, model_input FROM commits WHERE message LIKE 'Shift%'"
        ).fetchone()
    assert "Signed-off-by: " in message  # stored as git wrote it
    assert read.startswith("Shift instead of multiply" + SEPARATOR + "diff --git a/a.c")
