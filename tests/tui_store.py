"""A small store for the app's tests: the sample ground-truth set with three annotators'
votes, an audit of the keyword labeler, an open (non-blind) set, one mined OpenCL
kernel and one mined IR module, all made through the real commands."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from curator.cli import app

ROOT = Path(__file__).resolve().parents[1]
ANNOTATION = ROOT / "sample_data" / "annotation"


def curator(db: Path, *args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--db", str(db)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def build(db: Path, with_engines: bool = True) -> Path:
    curator(db, "import", "items", str(ANNOTATION / "items.jsonl"), "--set", "gt-sample")
    curator(db, "import", "votes", str(ANNOTATION / "votes.csv"))
    # Every item already has its two votes: a third annotator labels them all only when
    # the set is not routed (an agreement study).
    curator(db, "set", "edit", "gt-sample", "--overlap", "all")
    inbox = db.parent / "inbox.jsonl"
    inbox.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"inbox-{i}",
                    "repo": f"https://example.org/inbox/repo{i % 3}",
                    "sha": f"{i:040x}",
                    "language": "python",
                    "file": f"src/m{i}.py",
                    "message": f"Speed up lookup {i} with a cache to avoid slow scans",
                    "diff": f"@@ -1 +1 @@\n-scan({i})\n+cached({i})\n",
                }
            )
            + "\n"
            for i in range(8)
        )
    )
    curator(db, "import", "items", str(inbox), "--set", "inbox")
    curator(db, "audit", "draw", "audit-sample", "--from-labeler", "keyword@5", "--positive")
    curator(
        db,
        "set",
        "create",
        "open-sample",
        "--kind",
        "commit",
        "--sample",
        "6",
        "--seed",
        "3",
        "--open",
        "--overlap",
        "all",
    )
    if with_engines:
        # Copies beside the database, outside any git repository, so what is recorded
        # as provenance depends on where the store is built, not on this checkout.
        inputs = db.parent / "inputs"
        shutil.rmtree(inputs, ignore_errors=True)
        shutil.copytree(ROOT / "sample_data/ir/mathlib", inputs / "mathlib")
        (inputs / "kernels").mkdir()
        shutil.copy(ROOT / "sample_data/kernels/saxpy.cl", inputs / "kernels")
        curator(db, "mine", "ir", str(inputs / "mathlib/prebuilt/clamp.ll"))
        curator(db, "mine", "kernels", str(inputs / "kernels/saxpy.cl"))
    return db


def copy_of(template: Path, target: Path) -> Path:
    """A private copy of a built store (the WAL is checkpointed into the main file)."""
    shutil.copy(template, target)
    return target
