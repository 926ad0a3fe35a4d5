"""Quick form of the teacher client benchmark: it runs and every answer comes back."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_teacher_benchmark_quick_form_reports_a_ratio() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests/benchmarks/bench_teacher.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "speed-up vs one at a time:" in proc.stdout
    assert proc.stdout.count("16/16 answers") == 3
