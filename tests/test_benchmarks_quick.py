"""The benchmarks' short forms: they run, and their results cross-check the miner.

Full runs: ``make bench``. No timing is asserted here, only what the runs compute.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.benchmarks import bench_mining
from tests.conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]


def test_mining_benchmark_agrees_with_a_plain_pydriller_filter() -> None:
    result = bench_mining.run(150, multi_file_share=0.7)
    # the plain PyDriller loop applying the same rules keeps the same commits
    assert result["stored_by_curator"] == result["kept_by_plain_filter"]
    assert result["stored_by_curator"] > 0
    rates = result["commits_per_s"]
    assert isinstance(rates, dict) and all(rate > 0 for rate in rates.values())


def test_real_history_mode_compares_both_parsers_and_the_floor(tmp_path: Path) -> None:
    from tests.benchmarks.synthetic_repo import build_repository

    repo = build_repository(tmp_path / "repo", 60, multi_file_share=0.5)
    result = bench_mining.run_real(repo, since=None)
    seconds = result["seconds"]
    assert isinstance(seconds, dict)
    assert set(seconds) == {"numstat-floor", "curator", "curator-lizard", "pydriller"}
    assert all(value > 0 for value in seconds.values())
    stored = result["stored"]
    assert isinstance(stored, dict) and stored["curator"] > 0
    # both parsers keep the same commits, and the plain loop (no dedup here) agrees
    assert result["only_tree_sitter"] == [] and result["only_lizard"] == []
    assert stored["curator"] == stored["curator-lizard"] == stored["pydriller"]
    agreement = result["agreement"]
    assert isinstance(agreement, dict) and agreement["survivors"] >= stored["curator"]
    assert agreement["share"] == 1.0 and agreement["disagreements"] == []
    assert result["commits"] == 61


@pytest.mark.skipif(
    not (SHARED_DATA / "perf-commit-messages").is_dir(),
    reason=f"labeled commit messages not found at {SHARED_DATA / 'perf-commit-messages'}",
)
@pytest.mark.parametrize(
    ("extra", "version"), [([], "keyword@5"), (["--version", "1"], "keyword@1")]
)
def test_keyword_benchmark_quick_form_reports_a_ratio(extra: list[str], version: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests/benchmarks/bench_keyword.py"), "--quick", *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"benchmark ({version}," in proc.stdout
    assert "speed-up vs same-output naive" in proc.stdout
    # the fast path and the naive per-term loop must label every message alike
    agreement = next(ln for ln in proc.stdout.splitlines() if "agreement with naive" in ln)
    labels = agreement.split("labels ")[1].split(",")[0]
    agreed, total = labels.split("/")
    assert agreed == total


def test_cluster_benchmark_stores_the_same_rows_on_one_and_two_workers() -> None:
    from tests.benchmarks import bench_cluster

    result = bench_cluster.run(repos=3, commits=40, multi_file_share=0.6, chunk=15)
    runs = result["runs"]
    assert isinstance(runs, dict) and set(runs) == {"in-process", "1-worker", "2-worker"}
    # run() itself asserts that every run examined and stored the same commits
    assert result["stored"] > 0 and result["commits"] == 3 * 41
    assert all(r["commits_per_s"] > 0 for r in runs.values())
    assert all(r["ratio_vs_in_process"] > 0 for name, r in runs.items() if name != "in-process")
