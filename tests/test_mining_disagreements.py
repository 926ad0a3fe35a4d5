"""``scripts/mining_disagreements.py``: the listing of every tree-sitter/lizard disagreement."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "mining_disagreements.py"


def _result(tmp_path: Path) -> Path:
    result = {
        "repo": "/clones/widget",
        "head": "0123456789abcdef0123",
        "since": "2024-01-01",
        "until": None,
        "agreement": {
            "survivors": 10,
            "agreed": 8,
            "share": 0.8,
            "functions_agreed": 9,
            "functions_share": 0.9,
            "disagreements": [
                {
                    "sha": "bbbbbbbbbbbbbbbb",
                    "tree-sitter": ["Cache::get", "Cache::put", "TEST", "TEST"],
                    "lizard": ["Other::get", "Cache::put", "TEST"],
                    "kind": "qualifiers",
                },
                {
                    "sha": "aaaaaaaaaaaaaaaa",
                    "tree-sitter": ["a|b"],
                    "lizard": "no-function",
                    "kind": "lizard-finds-none",
                },
            ],
        },
    }
    path = tmp_path / "widget.json"
    path.write_text(json.dumps(result), encoding="utf-8")
    return path


def test_each_disagreement_is_a_row_with_the_names_only_one_side_gives(tmp_path: Path) -> None:
    out = tmp_path / "docs" / "disagreements.md"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(_result(tmp_path)), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert "## widget, since 2024-01-01, head `0123456789ab`" in text
    assert "names agree on 8 (80.0%)" in text
    assert "`lizard-finds-none` 1, `qualifiers` 1" in text
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    # sorted by kind; shared names left out; a count where one side names a function twice
    assert rows == [
        "| `aaaaaaaaaa` | `lizard-finds-none` | `a\\|b` | (no function) |",
        "| `bbbbbbbbbb` | `qualifiers` | `Cache::get`, `TEST` | `Other::get` |",
    ]


def test_a_file_that_is_not_a_result_is_named_and_the_others_are_still_written(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    out = tmp_path / "disagreements.md"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(broken), str(_result(tmp_path)), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and str(broken) in done.stderr
    assert "## widget" in out.read_text(encoding="utf-8")
