"""A real full disk: ``python -m tests.disk_full SPEC.json`` in a user and mount namespace
(``unshare -Urm``) mounts a small tmpfs; for each scenario it copies a database onto it,
fills the rest but ``free`` bytes, runs the command in this process (it hits ENOSPC on
the real write path: SQLite's, the release writer's), frees the space, checks the
database with ``PRAGMA integrity_check``, runs the command again, and copies the
database back out. It prints what happened as JSON, per scenario.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def namespaces_allowed() -> bool:
    done = subprocess.run(["unshare", "-Urm", "true"], capture_output=True, check=False)
    return done.returncode == 0


def _fill(folder: Path, free: int) -> Path:
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError:
            pass
    os.truncate(filler, max(0, filler.stat().st_size - free))
    return filler


def _integrity(db: Path) -> str:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def _run(command: list[str], db: Path) -> dict[str, object]:
    """The command, in this process (one start-up for both runs), as `curator` runs it."""
    from typer.testing import CliRunner

    from curator.cli import app

    done = CliRunner().invoke(app, command, env={"CURATOR_DB": str(db), "COLUMNS": "300"})
    crashed = done.exception is not None and not isinstance(done.exception, SystemExit)
    stderr = done.stderr + (f"Traceback: {done.exception!r}" if crashed else "")
    return {"rc": done.exit_code, "stderr": stderr, "stdout": done.stdout}


def scenario(mount: Path, step: dict[str, Any]) -> dict[str, object]:
    """One command on a copy of ``step["db"]`` with ``step["free"]`` bytes left, then
    again once the space is freed."""
    for leftover in mount.iterdir():
        if leftover.is_dir():
            shutil.rmtree(leftover)
        else:
            leftover.unlink()
    db = mount / "curator.db"
    shutil.copy(step["db"], db)
    command = [part.replace("{disk}", str(mount)) for part in step["command"]]
    filler = _fill(mount, step["free"])
    report: dict[str, object] = {"full": _run(command, db)}
    report["leftovers"] = sorted(
        p.relative_to(mount).as_posix() for p in mount.rglob("*") if p.name != "filler"
    )
    filler.unlink()  # space freed; the database is checked before anything else runs
    report["integrity_when_full"] = _integrity(db)
    report["rerun"] = _run(command, db)
    report["integrity_after"] = _integrity(db)
    shutil.copy(db, step["out"])
    if Path(f"{db}-wal").exists():
        shutil.copy(f"{db}-wal", step["out"] + "-wal")
    return report


def main(spec_path: str) -> None:
    """Every scenario of the spec on one tmpfs, one after the other (one start-up)."""
    spec = json.loads(Path(spec_path).read_text())
    mount = Path(spec["mount"])
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={spec['size']}", "none", str(mount)], check=True
    )
    reports = {name: scenario(mount, step) for name, step in spec["scenarios"].items()}
    print(json.dumps(reports))


if __name__ == "__main__":
    main(sys.argv[1])
