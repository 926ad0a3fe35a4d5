"""Two annotators label the same set at once, each in their own process: no vote lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from store import open_store
from tests import raw_sql
from tests.tui_store import ROOT, curator


def test_two_annotators_in_two_processes_lose_no_votes(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    curator(db, "import", "items", str(ROOT / "sample_data/annotation/items.jsonl"), "--set", "gt")
    n = 15
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.tui_voter", str(db), "gt", who, str(n)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in ("ann", "ben")
    ]
    voted = {}
    for who, proc in zip(("ann", "ben"), procs, strict=True):
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-2000:]
        voted[who] = [int(x) for x in out.split()]
    with open_store(db) as s:
        for who in ("ann", "ben"):
            stored = [
                r[0]
                for r in raw_sql.query(
                    s,
                    "SELECT item_id FROM live_votes WHERE annotator = ? AND label = 'perf'"
                    " ORDER BY item_id",
                    (who,),
                )
            ]
            assert len(voted[who]) == n
            assert stored == sorted(voted[who])
        assert raw_sql.scalar(s, "SELECT COUNT(*) FROM votes WHERE origin = 'tui'") == 2 * n
