"""Mining on a real Dask LocalCluster over local repositories reached by file:// URLs:
the same rows as the in-process run, dedup across workers, labelers built once per
worker, a killed worker's repository redone without duplicates, runs stopped and
restarted, and the --repos-file filters through the CLI."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dask
import pytest
from distributed import Client, LocalCluster

from engines.commits.cluster import mine_on_cluster
from engines.commits.labeling import labeler_builds
from engines.commits.options import MineOptions
from engines.commits.pipeline import mine_commits
from engines.labelers import tfidf
from engines.labelers.keyword import KeywordLabeler
from engines.labelers.registry import LabelerSpec, build_labeler
from engines.reporting import SilentClusterReporter
from store import open_store
from tests import raw_sql
from tests.benchmarks.synthetic_repo import build_repository
from tests.dask_helpers import worker_running
from tests.gitrepo import GitRepo, py_module
from tests.test_mining_resume import build_history
from tests.test_train_cli import TINY

KEYWORD = LabelerSpec("keyword@5", "keyword", "5")
ROWS = {
    "items": "SELECT kind, key, path, language, dedup_hash FROM items ORDER BY key",
    "commits": "SELECT sha, branch, file, functions, code_before, code_after, model_input,"
    " function_md5, diff_hash FROM commits ORDER BY sha",
    "predictions": "SELECT i.key, p.labeler, p.label, p.score, p.details FROM predictions p"
    " JOIN items i ON i.id = p.item_id ORDER BY i.key, p.labeler",
    "duplicates": "SELECT key, matched_on FROM duplicates ORDER BY key, matched_on",
}


@dataclass(frozen=True)
class Repos:
    """``origin`` has commits that repeat a change (content duplicates); ``fork`` is a
    clone of it with commits of its own (the shared shas are duplicates across
    repositories); ``other`` is an unrelated synthetic history."""

    origin: Path
    fork: Path
    other: Path
    shared: frozenset[str]

    @property
    def urls(self) -> list[str]:
        return [f"file://{p}" for p in (self.origin, self.fork, self.other)]


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Repos:
    root = tmp_path_factory.mktemp("cluster-repos")
    origin = GitRepo(root / "origin")
    build_history(origin, 40)
    shared = frozenset(origin.git("rev-list", "--no-merges", "main").split())
    subprocess.run(
        ["git", "clone", "-q", str(origin.path), str(root / "fork")],
        check=True,
        capture_output=True,
    )
    fork = GitRepo(root / "fork")
    fork.ticks = 500
    for n in range(6):
        fork.commit(f"fork: speed up g{n}", {"n.py": py_module(*[f"y -= {n}"] * (n % 3 + 1))})
    other = build_repository(root / "other", 120, multi_file_share=0.5, seed=3, salt=3)
    return Repos(origin.path, fork.path, other, shared)


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


def snapshot(db: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(db)
    try:
        return {name: conn.execute(sql).fetchall() for name, sql in ROWS.items()}
    finally:
        conn.close()


def sources_by_key(db: Path) -> dict[str, str]:
    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute("SELECT key, source FROM items").fetchall())
    finally:
        conn.close()


def in_process(db: Path, specs: list[str], clone_dir: Path, **options: object) -> None:
    with open_store(db) as store:
        summaries = mine_commits(
            store, specs, MineOptions(**options), [KeywordLabeler()], clone_dir=clone_dir
        )
    assert not any(s.failed for s in summaries)


def assert_same_rows(got: Path, want: Path, repos: Repos) -> None:
    """Equal rows; only which repository holds a commit both share may differ (whichever
    finished its slice first is stored, the other is recorded as its duplicate)."""
    assert snapshot(got) == snapshot(want)
    got_sources, want_sources = sources_by_key(got), sources_by_key(want)
    assert got_sources.keys() == want_sources.keys()
    for key, source in want_sources.items():
        if key not in repos.shared:
            assert got_sources[key] == source, key


def test_the_cluster_stores_the_rows_of_the_in_process_run(
    tmp_path: Path, repos: Repos, client: Client
) -> None:
    want = tmp_path / "in-process.db"
    in_process(want, repos.urls, tmp_path / "cache-a")
    reporter = SilentClusterReporter()
    got = tmp_path / "cluster.db"
    with open_store(got) as store:
        summaries = mine_on_cluster(
            store,
            repos.urls,
            MineOptions(),
            client,
            [KEYWORD],
            reporter,
            clone_dir=tmp_path / "cache-b",
            chunk=15,  # several slices per repository, continued across tasks
        )
    assert [s.source for s in summaries] == repos.urls
    assert not any(s.failed for s in summaries)
    assert reporter.started is not None and reporter.started[:2] == (3, 2)
    assert sorted(reporter.finished) == sorted(repos.urls)
    assert_same_rows(got, want, repos)
    rows = snapshot(got)
    # dedup held across workers: every shared sha stored once, its copy a duplicate
    keys = [row[1] for row in rows["items"]]
    assert len(keys) == len(set(keys))
    sha_dups = {key for key, matched in rows["duplicates"] if matched == "sha"}
    assert sha_dups and sha_dups <= repos.shared
    assert any(matched == "function_md5" for _, matched in rows["duplicates"])
    assert sum(s.seen for s in summaries) == sum(s.seen for s in summaries if not s.failed) > 0


def test_an_unreadable_author_date_is_counted_and_named_on_the_cluster_too(
    tmp_path: Path, client: Client
) -> None:
    repo = GitRepo(tmp_path / "undated")
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    repo.commit("bad date", {"m.py": py_module("y += 1", "y += 5")})
    bad = repo.set_author_date(b"notadate +0000")
    repo.commit("later", {"m.py": py_module("y += 1", "y += 6")})
    reporter = SilentClusterReporter()
    with open_store(tmp_path / "cluster.db") as store:
        (summary,) = mine_on_cluster(store, [str(repo.path)], MineOptions(), client, [], reporter)
        dates = dict(raw_sql.query(store, "SELECT sha, author_date FROM commits"))
    assert (summary.stored, summary.undated) == (2, 1)
    assert dates[bad] is None and None not in {d for s, d in dates.items() if s != bad}
    (line,) = [p for p in reporter.problems if bad[:12] in p]
    assert "author date unreadable ('notadate +0000'" in line


def test_labelers_travel_to_the_workers_and_are_built_once_per_worker(
    tmp_path: Path, repos: Repos, client: Client
) -> None:
    texts = [f"{w} handler{i}" for i in range(40) for w in ("speed up", "fix typo in")]
    model = tfidf.fit("lr", texts, [int(i % 2 == 0) for i in range(len(texts))])
    tfidf.save(model, tmp_path / "tfidf", {"kind": "lr", "input_field": "message"})
    spec = LabelerSpec("tfidf-lr@7", "tfidf-lr", "7", str(tmp_path / "tfidf"))
    db = tmp_path / "labeled.db"
    with open_store(db) as store:
        mine_on_cluster(
            store,
            [repos.urls[2]],
            MineOptions(),
            client,
            [KEYWORD, spec],
            chunk=20,
            clone_dir=tmp_path / "cache",
        )
        stored = raw_sql.query(
            store,
            "SELECT c.message, p.label FROM predictions p JOIN commits c ON c.item_id = p.item_id"
            " WHERE p.labeler = 'tfidf-lr@7'",
        )
        items = raw_sql.scalar(store, "SELECT COUNT(*) FROM items")
    assert len(stored) == items > 20
    local = build_labeler(spec)
    assert [row[1] for row in stored] == [p.label for p in local.predict([r[0] for r in stored])]
    builds = client.run(labeler_builds)
    used = [counts for counts in builds.values() if "tfidf-lr@7" in counts]
    assert used and all(counts["tfidf-lr@7"] == 1 for counts in used)


def test_a_run_stopped_part_way_continues_and_then_skips_finished_repositories(
    tmp_path: Path, repos: Repos, client: Client
) -> None:
    want = tmp_path / "clean.db"
    in_process(want, repos.urls, tmp_path / "cache-a")
    got = tmp_path / "stopped.db"
    with open_store(got) as store:
        first = mine_on_cluster(
            store,
            repos.urls,
            MineOptions(limit=25),
            client,
            [KEYWORD],
            chunk=10,
            clone_dir=tmp_path / "cache-b",
        )
        assert [s.seen for s in first] == [25, 25, 25]
        assert not any(cp.counters["finished"] for cp in _checkpoints(store))
        second = mine_on_cluster(
            store,
            repos.urls,
            MineOptions(),
            client,
            [KEYWORD],
            chunk=10,
            clone_dir=tmp_path / "cache-b",
        )
        assert all(s.resumed_after for s in second)
        assert all(cp.counters["finished"] for cp in _checkpoints(store))
        from engines.commits.pipeline import finished_sources

        assert finished_sources(store, repos.urls, MineOptions()) == set(repos.urls)
        assert finished_sources(store, repos.urls, MineOptions(max_files=2)) == set()
    assert_same_rows(got, want, repos)


def _checkpoints(store):  # type: ignore[no-untyped-def]
    from store.commits import load_checkpoints

    return load_checkpoints(store, "commit")


def test_a_worker_killed_mid_repository_loses_nothing_and_doubles_nothing(
    tmp_path: Path, repos: Repos
) -> None:
    # one long history (every commit survives the cheap filter: seconds of work)
    long = build_repository(tmp_path / "long", 2000, multi_file_share=0.0, seed=9, salt=9)
    specs = [f"file://{long}", *repos.urls]
    want = tmp_path / "clean.db"
    in_process(want, specs, tmp_path / "cache-a")
    got = tmp_path / "killed.db"
    reporter = SilentClusterReporter()
    outcome: dict[str, object] = {}
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
        open_store(got) as store,
    ):

        def run() -> None:
            try:
                outcome["summaries"] = mine_on_cluster(
                    store,
                    specs,
                    MineOptions(),
                    client,
                    [KEYWORD],
                    reporter,
                    clone_dir=tmp_path / "cache-b",
                    chunk=10_000,
                )
            except BaseException as exc:  # surfaced by the assertion below
                outcome["error"] = exc

        driver = threading.Thread(target=run)
        driver.start()
        victim = worker_running(
            client, re.compile(r"^mine-commits-\w+-0-0$"), "the long repository's task"
        )
        time.sleep(0.05)  # into the long repository, well before its end
        pid = client.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)
        driver.join(timeout=300)
        assert not driver.is_alive()
    assert "error" not in outcome, outcome.get("error")
    summaries = outcome["summaries"]
    assert isinstance(summaries, list)
    assert victim in reporter.lost
    assert summaries[0].requeued >= 1 and not summaries[0].failed
    assert ("file://" + str(long), summaries[0].requeued) in reporter.requeues
    assert_same_rows(got, want, repos)


def test_the_cli_filters_a_repos_file_mines_on_workers_and_skips_what_it_finished(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    repos: Repos,
    client: Client,
) -> None:
    listing = tmp_path / "repos.csv"
    listing.write_text(
        "repo,stars,language\n"
        f"{repos.urls[0]},120,Python\n"
        f"{repos.urls[1]},4,Python\n"  # too few stars
        f"{repos.urls[2]},300,Java\n"  # not a chosen language
        "file:///nowhere,abc,Python\n"
    )
    args = ["mine", "commits", "--repos-file", str(listing), "--min-stars", "20", "--lang", "py"]
    first = cli(*args, "--workers", "2", "--task-commits", "12")
    assert first.exit_code == 0, first.stderr
    err = first.stderr
    assert f"{listing}:5: stars 'abc' is not a whole number" in err
    assert "3 repositories listed, 1 chosen (dropped by language 1, stars 1)" in err
    assert "cluster: 2 workers" in err
    db = tmp_path / "cli.db"
    assert set(sources_by_key(db).values()) == {repos.urls[0]}
    before = snapshot(db)
    assert before["items"]

    # the shared cluster's workers started before this test's $CURATOR_CACHE: say where
    joined = ["--scheduler", client.scheduler.address, "--clone-dir", str(tmp_path / "cache")]
    again = cli(*args, *joined)
    assert again.exit_code == 0, again.stderr
    assert "skipping 1 repository an earlier run finished" in again.stderr
    assert "nothing to mine" in again.stdout
    refreshed = cli(*args, *joined, "--refresh")
    assert refreshed.exit_code == 0, refreshed.stderr
    assert "seen 0, filtered 0, duplicates 0, stored 0" in refreshed.stdout
    assert snapshot(db) == before


def test_the_cli_names_a_bad_cluster_address_in_one_line(
    cli,  # type: ignore[no-untyped-def]
    repos: Repos,
) -> None:
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        result = cli("mine", "commits", repos.urls[0], "--scheduler", "tcp://127.0.0.1:9")
    assert result.exit_code == 1
    assert "error: cannot reach the Dask scheduler at tcp://127.0.0.1:9" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_student_pre_labels_on_the_workers_as_it_does_in_process(
    split,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    repos: Repos,
    client: Client,
) -> None:
    # a one-layer student: this is about where it labels, not how well
    one_layer = ("--layers", "1", "--max-steps", "2")
    trained = split("train", "--votes", "tr", "--dev", "gt-dev", *TINY, *one_layer, "--json")
    assert trained.exit_code == 0, trained.output
    mined = split(
        "mine",
        "commits",
        repos.urls[2],
        "--labeler",
        "student@latest",
        "--scheduler",
        client.scheduler.address,
        "--clone-dir",
        str(tmp_path / "cache"),
        "--task-commits",
        "40",
    )
    assert mined.exit_code == 0, mined.stderr
    conn = sqlite3.connect(tmp_path / "cli.db")
    try:
        stored = conn.execute(
            "SELECT c.model_input, p.label, p.score FROM predictions p"
            " JOIN commits c ON c.item_id = p.item_id WHERE p.labeler = 'student@1'"
            " ORDER BY c.item_id"
        ).fetchall()
        (commits,) = conn.execute(
            "SELECT COUNT(*) FROM commits WHERE repo = ?", (repos.urls[2],)
        ).fetchone()
        path = conn.execute("SELECT path FROM models WHERE name = 'student@1'").fetchone()[0]
    finally:
        conn.close()
    assert len(stored) == commits > 20
    local = build_labeler(LabelerSpec("student@1", "student", "1", path))
    expected = local.predict([row[0] for row in stored])
    assert [row[1] for row in stored] == [p.label for p in expected]
    assert [row[2] for row in stored] == pytest.approx([p.score for p in expected], abs=1e-4)
    builds = [counts for counts in client.run(labeler_builds).values() if "student@1" in counts]
    assert builds and all(counts["student@1"] == 1 for counts in builds)


def _sigint_ignored() -> bool:
    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_local_workers_leave_ctrl_c_to_the_run() -> None:
    from engines.dask_cluster import dask_client

    handler = signal.getsignal(signal.SIGINT)
    with dask_client(workers=1, dashboard_address=None) as client:
        # each worker would print a traceback of its own on the terminal's Ctrl-C
        assert set(client.run(_sigint_ignored).values()) == {True}
        assert signal.getsignal(signal.SIGINT) is handler  # the run still takes Ctrl-C
        assert client.submit(sum, [1, 2]).result(timeout=60) == 3
