"""An interrupted ``curator teach`` keeps every answer it got; the rerun asks the rest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from store import open_store
from tests import raw_sql
from tests.conftest import ROOT
from tests.teacher_server import FakeLLM

ITEMS = 60


def _stored(db: Path) -> set[str]:
    with open_store(db) as store:
        rows = raw_sql.query(
            store,
            "SELECT i.key FROM predictions AS p JOIN items AS i ON i.id = p.item_id"
            " WHERE p.labeler = 'teacher:m'",
        )
    return {r[0] for r in rows}


def test_ctrl_c_keeps_answers_and_the_rerun_asks_only_the_rest(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(
            json.dumps({"id": f"k{i:02d}", "repo": "r", "message": f"item k{i:02d}"}) + "\n"
            for i in range(ITEMS)
        )
    )
    assert cli("import", "items", str(items), "--set", "pool").exit_code == 0
    db = tmp_path / "cli.db"
    with FakeLLM() as llm:
        # the first 25 requests are answered, later ones wait: the run cannot finish
        # before the interrupt however slowly this (loaded) machine goes
        llm.hold_after = 25
        proc = subprocess.Popen(
            [sys.executable, "-m", "curator", "teach", "pool", "--model", "m", "--endpoint",
             llm.url, "--concurrency", "1", "--db", str(db)],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "COLUMNS": "200"},
            # a child inherits an ignored SIGINT, and a test worker may have one ignored:
            # the command must see Ctrl-C as a user's shell delivers it
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while len(llm.requests) <= 25 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # 25 answers went out (20 of them written), the 26th waits
        proc.send_signal(signal.SIGINT)
        try:
            output, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            output = proc.communicate()[0]
            raise AssertionError(f"still running a minute after Ctrl-C:\n{output}") from None
        finally:
            llm.released.set()
        assert proc.returncode == 130, output
        assert "run again to resume" in output
        first = _stored(db)
        assert 20 <= len(first) <= 25

        before = len(llm.requests)
        result = cli("teach", "pool", "--model", "m", "--endpoint", llm.url, "--json")
        assert result.exit_code == 0, result.output
        asked_again = {t.split("item ")[1].split()[0] for t in llm.texts()[before:]}
    everything = {f"k{i:02d}" for i in range(ITEMS)}
    assert asked_again == everything - first
    assert _stored(db) == everything
