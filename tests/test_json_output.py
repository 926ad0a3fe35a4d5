"""``--json`` on the commands that write to the store: ``mine commits``, ``mine kernels``,
``import votes``, ``import release``, ``audit draw`` and ``models promote``. Each prints one
JSON document on stdout, holding what its human output says, and nothing else there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from store import open_store
from store.models import register_model
from tests.conftest import ROOT
from tests.gitrepo import GitRepo, py_module

SAMPLE = ROOT / "sample_data" / "annotation"
KERNELS = ROOT / "sample_data" / "kernels"


def _json(result: Any, code: int = 0) -> Any:
    """The one JSON document on stdout (json.loads refuses anything around it)."""
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def test_mine_commits_json(cli, repo: GitRepo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    repo.commit("Use a shift for the doubling", {"m.py": py_module("y += 1", "y <<= 1")})
    repo.commit("docs", {"README.md": "hello\n"})
    repo.commit("Cache the lookup", {"m.py": py_module("y *= 3", "y <<= 1")})
    missing = tmp_path / "missing"
    data = _json(cli("mine", "commits", str(repo.path), str(missing), "--json"), code=1)
    mined, lost = data["sources"]
    assert (mined["source"], mined["branch"], mined["failed"]) == (str(repo.path), "main", None)
    assert (mined["seen"], mined["stored"], mined["duplicates"]) == (4, 2, 0)
    assert mined["filtered"] == {"language": 1, "too-many-functions": 1}
    assert (lost["source"], lost["failed"]) == (str(missing), "not-found")
    assert (data["seen"], data["stored"], data["filtered"]) == (4, 2, mined["filtered"])
    assert data["failed"] == {"not-found": 1}
    assert len(data["errors"]) == 1 and data["errors"][0].startswith(f"{missing}: ")
    assert "\n" not in data["errors"][0]

    again = _json(cli("mine", "commits", str(repo.path), "--json"))
    assert (again["seen"], again["stored"], again["errors"]) == (0, 0, [])


def test_mine_kernels_json(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "kernels"
    folder.mkdir()
    for name in ("saxpy.cl", "too_few_instructions.cl"):
        (folder / name).write_bytes((KERNELS / name).read_bytes())
    data = _json(cli("mine", "kernels", str(folder), "--json"))
    (source,) = data["sources"]
    assert source["source"] == str(folder) and source["files"] == 2
    assert source["failed"] is False and source["unreadable"] == 0
    assert data["refused"] == {"too-few-instructions": 1}
    assert (data["kernels"], data["stored"], data["duplicates"]) == (
        2,
        2,
        0,
    )  # refused ones stay, with a verdict
    assert source["stored"] == 2 and data["files"] == 2
    assert data["errors"] == []


def test_import_votes_json(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt").exit_code == 0
    bad = tmp_path / "bad.csv"
    bad.write_text("item,annotator,label\nex-001,erin,fast\n")
    data = _json(cli("import", "votes", str(SAMPLE / "votes.csv"), str(bad), "--json"), code=1)
    good, failed = data
    assert good["file"] == str(SAMPLE / "votes.csv") and good["imported"] is True
    assert good["votes"] > 0 and good["annotators"] == sorted(good["annotators"])
    assert len(good["annotators"]) >= 2 and good["errors"] == []
    assert (failed["file"], failed["imported"], failed["votes"]) == (str(bad), False, 0)
    assert len(failed["errors"]) == 1 and "bad.csv:2" in failed["errors"][0]

    again = _json(cli("import", "votes", str(SAMPLE / "votes.csv"), "--json"))
    assert again[0]["unchanged"] == good["votes"]


def test_import_release_json(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt").exit_code == 0
    assert cli("import", "votes", str(SAMPLE / "votes.csv")).exit_code == 0
    exported = _json(cli("export", "v1", "--out", str(tmp_path / "rel"), "--json"))
    release = tmp_path / "rel" / "v1"
    other = tmp_path / "other.db"
    data = _json(cli("import", "release", str(release), "--db", str(other), "--json"))
    assert (data["release"], data["version"], data["imported"]) == (str(release), "v1", True)
    commits = exported["counts"]["by_kind"]["commit"]
    assert data["records"]["commit"]["stored"] == commits > 0
    assert data["records"]["commit"]["known"] == data["records"]["commit"]["duplicate"] == 0
    assert data["votes"] > 0 and data["errors"] == []

    (release / "manifest.json").write_text("{oops")
    refused = _json(cli("import", "release", str(release), "--db", str(other), "--json"), 1)
    assert refused["imported"] is False and refused["errors"]
    assert all("\n" not in line for line in refused["errors"])


def test_audit_draw_json(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt").exit_code == 0
    data = _json(
        cli(
            "audit", "draw", "audit-kw", "--from-labeler", "keyword@5", "--positive",
            "--stratify", "language", "--seed", "2", "--json",
        )
    )  # fmt: skip
    assert (data["set"], data["labeler"], data["label"]) == ("audit-kw", "keyword@5", "perf")
    assert 0 < data["items"] <= data["population"]
    assert sum(data["allocation"].values()) == data["items"]
    assert (data["confidence"], data["margin"]) == (0.95, 0.05)


def test_models_promote_json(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with open_store(tmp_path / "cli.db") as store:
        for n in (1, 2):
            staged = tmp_path / f"staged{n}"
            staged.mkdir()
            register_model(store, "student", "base", {}, {}, staged)
    first = _json(cli("models", "promote", "student@1", "--by", "ann", "--json"))
    assert (first["model"], first["promoted"], first["previous"]) == ("student@1", True, None)
    assert first["promoted_by"] == "ann" and first["family"] == "student"
    second = _json(
        cli("models", "promote", "student@latest", "--by", "bo", "--note", "better", "--json")
    )
    assert (second["model"], second["previous"], second["note"]) == (
        "student@2",
        "student@1",
        "better",
    )
    same = _json(cli("models", "promote", "student@2", "--json"))
    assert (same["model"], same["promoted"]) == ("student@2", False)
