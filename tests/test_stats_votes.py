"""``curator stats`` counts the votes in force, not every row of the vote history."""

from __future__ import annotations

import json
from pathlib import Path


def test_stats_tells_live_votes_from_the_history(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = tmp_path / "items.jsonl"
    rows.write_text(
        "".join(json.dumps({"id": f"c{i}", "message": f"change {i}"}) + "\n" for i in range(3))
    )
    assert cli("import", "items", str(rows), "--set", "s").exit_code == 0
    for args in (
        ("vote", "c0", "perf", "--annotator", "ann"),
        ("vote", "c1", "perf", "--annotator", "ann"),
        ("vote", "c1", "non-perf", "--annotator", "ann"),  # replaces the one before
        ("vote", "c2", "perf", "--annotator", "ann"),
        ("undo", "--annotator", "ann"),  # takes back c2's
    ):
        assert cli(*args).exit_code == 0, args
    shown = cli("stats")
    assert "2 live votes (5 recorded, undone and replaced ones too)" in " ".join(
        shown.stdout.split()
    )
    counts = json.loads(cli("stats", "--json").stdout)
    assert (counts["live_votes"], counts["votes"]) == (2, 5)
