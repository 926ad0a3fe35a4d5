"""A team at the command line: what `curator set create`, `next` and `vote` say when a
pool runs short or a held item fills up, and that the annotator then moves on."""

from __future__ import annotations

import json
from pathlib import Path


def items_file(tmp_path: Path, n: int = 6) -> Path:
    path = tmp_path / "items.jsonl"
    rows = [
        {"id": f"c{i}", "message": f"change {i}", "repo": f"https://example.org/r{i % 2}"}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_draw_emptied_by_exclude_repos_of_says_so(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("import", "items", str(items_file(tmp_path)), "--set", "pool").exit_code == 0
    made = cli("set", "create", "dev", "--sample", "4", "--stratify", "repo", "--seed", "1")
    assert made.exit_code == 0, made.output
    refused = cli("set", "create", "eval", "--sample", "2", "--exclude-repos-of", "dev")
    assert refused.exit_code == 1
    assert refused.output.strip() == (
        "error: asked for 2 items but only 0 qualify: --exclude-repos-of dev leaves out 6 of"
        " 6, every item from a repository that set uses"
    )


def test_next_moves_on_from_an_item_filled_while_held(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = items_file(tmp_path, 2)
    made = cli("import", "items", str(path), "--set", "work", "--votes-per-item", "1")
    assert made.exit_code == 0, made.output
    first = json.loads(cli("next", "work", "-a", "ann", "--json").stdout)["item"]["key"]
    assert cli("vote", first, "perf", "-a", "ben").exit_code == 0  # past routing
    late = cli("vote", first, "perf", "--set", "work", "-a", "ann")
    assert late.exit_code == 1
    assert "filled up while you held it" in late.output
    second = json.loads(cli("next", "work", "-a", "ann", "--json").stdout)["item"]["key"]
    assert second != first
    held = cli("next", "work", "-a", "ann", "--release")
    assert held.stdout.strip() == "released 1 claim"


def test_a_split_that_would_leave_a_part_empty_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("import", "items", str(items_file(tmp_path)), "--set", "pool").exit_code == 0
    refused = cli("set", "split", "--into", "a:40,b:40,c:20")
    assert refused.exit_code == 1
    assert refused.output.strip() == (
        "error: part 'c' would be empty: the commit items come from 2 repositories (3, 3"
        " items), each kept whole in one part; give fewer parts, or weights nearer the"
        " repositories' sizes"
    )
    listed = json.loads(cli("set", "list", "--json").output)
    assert [s["name"] for s in listed] == ["pool"]  # nothing of the split was made
    assert cli("set", "split", "--into", "a:50,b:50").exit_code == 0


def test_a_release_split_with_an_empty_part_says_so(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("import", "items", str(items_file(tmp_path)), "--set", "pool").exit_code == 0
    made = cli("export", "v1", "--out", str(tmp_path / "rel"), "--split", "repo:80/10/10")
    assert made.exit_code == 0, made.output
    warnings = [line for line in made.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: --split repo:80/10/10: the commit parts dev, test hold no records: each"
        " repository goes whole to one part, and too few repositories hold commit records"
        " to fill every part"
    ]
    assert (tmp_path / "rel" / "v1" / "commit.test.jsonl").read_text() == ""
