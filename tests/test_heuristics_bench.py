"""Quick form of the heuristic labeler benchmark: it runs and reports a ratio and scores."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_heuristics_benchmark_quick_form_reports_a_ratio() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests/benchmarks/bench_heuristics.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "ratio vs keyword@1:" in proc.stdout
    score_lines = [line for line in proc.stdout.splitlines() if "F1" in line]
    assert len(score_lines) == 3
