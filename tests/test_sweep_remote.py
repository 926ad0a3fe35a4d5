"""Hostile but realistic use of the remote area: ``mine commits`` given a repository
twice, a branch it lacks, or a folder of repositories; the teacher client against a
misbehaving server; the Dask scale-out with bad or dying schedulers."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from distributed import Client, LocalCluster

from curator.mining import CommitRun, MiningError, run_in_process, run_on_cluster
from curator.prediction import (
    PredictSummary,
    items_to_predict,
    predict_items,
    predict_items_on_cluster,
)
from engines.commits.cluster import mine_on_cluster
from engines.commits.options import MineOptions
from engines.dask_cluster import ClusterError, dask_client
from engines.labelers.base import input_fields
from engines.labelers.registry import LabelerSpec, load_labeler, resolve_labeler
from engines.labelers.teacher import Teacher, TeacherConfig, client
from engines.labelers.teacher.client import Failure, Reply
from engines.reporting import SilentClusterReporter, SilentReporter
from store import open_store
from store.bulk import bulk_insert_commits
from store.labeling_inputs import commit_item_ids
from store.predictions import predicted_item_ids
from tests.gitrepo import GitRepo, py_module
from tests.synthetic_commits import minimal_commit
from tests.teacher_server import HUGE_BYTES, MOVED_TO, FakeLLM
from tests.test_mining_resume import build_history


def test_a_repository_given_twice_is_mined_once_with_one_warning(
    cli, repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    repo.commit("one", {"m.py": py_module("y += 1", "y += 3")})
    monkeypatch.chdir(repo.path.parent)
    result = cli("mine", "commits", str(repo.path), "./repo/", str(repo.path), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [s["source"] for s in report["sources"]] == [str(repo.path)]
    assert report["stored"] == 1
    warnings = [line for line in result.stderr.splitlines() if "skipped" in line]
    assert len(warnings) == 2
    assert "./repo/" in warnings[0] and str(repo.path) in warnings[0]


def test_a_missing_branch_is_named_in_the_summary(cli, repo: GitRepo) -> None:  # type: ignore[no-untyped-def]
    repo.commit("init", {"m.py": py_module("y += 1")})
    result = cli("mine", "commits", str(repo.path), "--branch", "nope")
    assert result.exit_code == 1
    row = next(line for line in result.stdout.splitlines() if "failed" in line)
    assert "nope" in row and "no-branch" in row
    as_json = json.loads(
        cli("mine", "commits", str(repo.path), "--branch", "nope", "--json").stdout
    )
    assert as_json["failed"] == {"no-branch": 1}
    assert as_json["sources"][0]["branch"] == "nope"


def test_a_folder_of_bare_repositories_gets_a_hint(cli, repo: GitRepo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo.commit("init", {"m.py": py_module("y += 1")})
    mirror = tmp_path / "mirror"
    for name in ("a+one", "b+two"):
        (mirror / name).mkdir(parents=True)
        repo.git("clone", "-q", "--bare", str(repo.path), str(mirror / name / "repo"))
    result = cli("mine", "commits", str(mirror / "a+one"))
    assert result.exit_code == 1
    line = next(ln for ln in result.stderr.splitlines() if "not a git repository" in ln)
    assert f"holds the repository {mirror / 'a+one' / 'repo'}" in line
    result = cli("mine", "commits", str(mirror))
    line = next(ln for ln in result.stderr.splitlines() if "not a git repository" in ln)
    assert "holds 2 repositories" in line and "--repos-file" in line
    plain = tmp_path / "plain"
    plain.mkdir()
    result = cli("mine", "commits", str(plain))
    assert f"{plain}: not a git repository" + os.linesep in result.stderr


def test_a_server_trickling_its_answer_times_out_within_the_timeout() -> None:
    # each byte comes quickly, so only a deadline on the whole answer stops the wait
    with (
        FakeLLM() as llm,
        Teacher(TeacherConfig(endpoint=llm.url, model="m", timeout=0.5, retries=0)) as teacher,
    ):
        result = teacher.ask("TRICKLE: speed up startup")
        assert isinstance(result, Failure) and result.reason == "timeout"
        assert isinstance(teacher.ask("speed up startup"), Reply)


def test_a_runaway_answer_is_refused_not_read_into_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(client, "MAX_RESPONSE_BYTES", HUGE_BYTES // 10)
    with FakeLLM() as llm, Teacher(TeacherConfig(endpoint=llm.url, model="m")) as teacher:
        result = teacher.ask("HUGE reply")
        assert isinstance(result, Failure) and result.reason == "too-large"
        assert result.attempts == 1  # a reply problem: not retried
        assert isinstance(teacher.ask("speed up startup"), Reply)


def test_a_redirect_names_where_the_server_moved() -> None:
    with FakeLLM() as llm, Teacher(TeacherConfig(endpoint=llm.url, model="m")) as teacher:
        result = teacher.ask("MOVED: speed up startup")
    assert isinstance(result, Failure) and result.reason == "http-301"
    assert MOVED_TO in result.detail and result.attempts == 1


def test_an_endpoint_without_a_scheme_says_what_to_write(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("teach", "--unlabeled", "--model", "m", "--endpoint", "localhost:11434")
    assert result.exit_code != 0
    assert "http://localhost:11434" in result.output


@pytest.mark.parametrize(
    ("address", "said"),
    [
        ("tcp://127.0.0.1:1", "connection refused"),
        ("tcp://nohost.invalid:8786", "host 'nohost.invalid' not found"),
        ("tcp://127.0.0.1:99999", "not a scheduler address: write tcp://HOST:PORT"),
        ("tcp://", "not a scheduler address"),
        ("http://127.0.0.1:8787", "is a web address (the dashboard's?)"),
    ],
)
def test_a_bad_scheduler_address_is_said_at_once(address: str, said: str) -> None:
    with pytest.raises(ClusterError) as caught, dask_client(scheduler=address):
        pass
    assert said in str(caught.value) and "\n" not in str(caught.value)


SCHEDULER = """
import logging, time
from distributed import LocalCluster
if __name__ == "__main__":
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.CRITICAL)
    print(cluster.scheduler_address, flush=True)
    while True:
        time.sleep(1)
"""


@contextmanager
def scheduler_process() -> Iterator[tuple[str, Callable[[], None]]]:
    """A LocalCluster of one worker in a process group of its own: its address, and a
    function that kills the whole group (scheduler and worker) at once."""
    cluster = subprocess.Popen(
        [sys.executable, "-c", SCHEDULER], stdout=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip

    def kill() -> None:
        if cluster.poll() is None:
            os.killpg(cluster.pid, signal.SIGKILL)
            cluster.wait()

    try:
        assert cluster.stdout is not None
        yield cluster.stdout.readline().strip(), kill
    finally:
        kill()


class KillsTheScheduler(SilentClusterReporter):
    """Kills the cluster once the first slice is stored."""

    def __init__(self, kill: Callable[[], None]) -> None:
        super().__init__()
        self.kill = kill

    def advance(self, source: str, count: int) -> None:
        self.kill()


def _commits(db: Path) -> tuple[set[str], int]:
    conn = sqlite3.connect(db)
    try:
        shas = {r[0] for r in conn.execute("SELECT sha FROM commits")}
        (counters,) = conn.execute("SELECT counters FROM checkpoints").fetchone()
    finally:
        conn.close()
    return shas, json.loads(counters)["stored"]


def test_a_scheduler_that_dies_mid_run_loses_nothing_and_a_rerun_finishes(
    tmp_path: Path, repo: GitRepo
) -> None:
    build_history(repo, 40)
    url, clones = f"file://{repo.path}", tmp_path / "clones"
    keyword = [LabelerSpec("keyword@5", "keyword", "5")]
    with open_store(tmp_path / "want.db") as store:
        run_in_process(store, CommitRun([url], MineOptions(), keyword, clones), SilentReporter())
    want, _ = _commits(tmp_path / "want.db")
    with scheduler_process() as (address, kill):
        run = CommitRun([url], MineOptions(), keyword, clones, scheduler=address, chunk=5)
        with open_store(tmp_path / "got.db") as store, pytest.raises(MiningError) as caught:
            run_on_cluster(store, run, KillsTheScheduler(kill))
    assert f"lost the Dask scheduler at {address}" in str(caught.value)
    got, stored = _commits(tmp_path / "got.db")
    assert got and got < want and len(got) == stored  # the checkpoint matches the rows
    again = CommitRun([url], MineOptions(), keyword, clones, workers=1, chunk=5)
    with open_store(tmp_path / "got.db") as store:
        (summary,) = run_on_cluster(store, again, SilentClusterReporter())[0]
    assert summary.failed is None
    assert _commits(tmp_path / "got.db")[0] == want


def test_predicting_on_a_scheduler_that_dies_keeps_each_written_chunk(tmp_path: Path) -> None:
    with open_store(tmp_path / "p.db") as store:
        bulk_insert_commits(store, (minimal_commit(i, f"speed up f{i}") for i in range(40)))
        labeler = load_labeler(store, "keyword@latest")
        spec = resolve_labeler(store, "keyword@latest")
        todo, _ = items_to_predict(store, labeler, commit_item_ids(store))
        summary = PredictSummary(labeler.name, len(todo), 0)
        with (
            scheduler_process() as (address, kill),
            pytest.raises(ClusterError) as caught,
            dask_client(scheduler=address) as client,
        ):
            predict_items_on_cluster(
                store, spec, input_fields(labeler), todo, summary, client,
                advance=lambda n: kill(), chunk=4,
            )  # fmt: skip
        assert f"lost the Dask scheduler at {address}" in str(caught.value)
        kept = sum(summary.labels.values())
        assert 0 < kept < len(todo)
        assert len(predicted_item_ids(store, labeler.name, todo)) == kept
        todo, done = items_to_predict(store, labeler, commit_item_ids(store))
        assert done == kept
        predict_items(store, labeler, todo, PredictSummary(labeler.name, len(todo) + done, done))
        assert len(predicted_item_ids(store, labeler.name, commit_item_ids(store))) == 40


class StartsAWorker(SilentClusterReporter):
    """Starts the cluster's first worker once the run has said it has none."""

    def __init__(self, cluster: LocalCluster) -> None:
        super().__init__()
        self.cluster = cluster

    def problem(self, text: str) -> None:
        super().problem(text)
        if "no workers" in text:
            self.cluster.scale(1)


def test_a_scheduler_without_workers_is_said_then_the_run_waits_for_one(
    tmp_path: Path, repo: GitRepo
) -> None:
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    repo.commit("one", {"m.py": py_module("y += 1", "y += 3")})
    with (
        LocalCluster(n_workers=0, threads_per_worker=1, processes=True, dashboard_address=":0")
        as cluster,
        Client(cluster) as client,
        open_store(tmp_path / "c.db") as store,
    ):  # fmt: skip
        reporter = StartsAWorker(cluster)
        (summary,) = mine_on_cluster(
            store, [f"file://{repo.path}"], MineOptions(), client, reporter=reporter,
            clone_dir=tmp_path / "clones",
        )  # fmt: skip
    assert reporter.problems[0].startswith("the Dask scheduler has no workers")
    assert summary.failed is None and summary.stored == 1


def test_an_empty_scheduler_address_is_refused_by_predict_and_mine(cli) -> None:  # type: ignore[no-untyped-def]
    for args in (
        ("predict", "--labeler", "keyword@latest", "--scheduler", ""),
        ("mine", "commits", ".", "--scheduler", " "),
    ):
        result = cli(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "address is empty" in result.output
        assert len(result.output.strip().splitlines()) == 1
