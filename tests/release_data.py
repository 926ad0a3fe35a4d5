"""Stores for the release tests: synthetic commits over several repositories with
keyword-style predictions, a voted ground-truth set and an audit set."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from annotation.audit import draw_audit
from store import Store
from store.bulk import bulk_insert_commits
from store.records import CommitRow, PredictionRow
from store.sets import NewSet, create_set
from store.votes import ADJUDICATOR, VoteRow, append_votes
from tests import raw_sql

LABELER = "keyword@1"
LANGUAGES = ("python", "cpp", "java")


def commit_rows(n: int, repos: int = 6, diff_lines: int = 3, start: int = 0) -> Iterator[CommitRow]:
    """``n`` distinct commits spread unevenly over ``repos`` repositories."""
    for i in range(start, start + n):
        repo = f"https://example.org/org{i % repos}/project-{(i * i) % repos}"
        sha = hashlib.sha1(f"commit {i}".encode()).hexdigest()
        perf = i % 3 == 0
        message = f"{'Speed up' if perf else 'Fix typo in'} module {i}\n\nDetails for {i}."
        diff = "".join(f"-old line {i}.{k}\n+new line {i}.{k}\n" for k in range(diff_lines))
        yield CommitRow(
            source=repo,
            sha=sha,
            branch="main",
            author_date=f"2025-01-{1 + i % 28:02d}T12:00:00+00:00",
            message=message,
            diff=diff,
            file=f"src/m{i}.py",
            files=[f"src/m{i}.py"],
            language=LANGUAGES[i % len(LANGUAGES)],
            functions=[f"f{i}"] if i % 2 else [],
            code_before=f"def f{i}(): return {i}",
            code_after=f"def f{i}(): return {i + 1}",
            added=diff_lines,
            deleted=diff_lines,
            model_input=f"{message}\n{diff}",
            function_md5=hashlib.md5(f"fn {i}".encode()).hexdigest() if i % 2 else None,
            diff_hash=hashlib.sha256(diff.encode()).hexdigest(),
            provenance={"repo": repo, "sha": sha, "stars": 10 * (i % 7)},
            predictions=[
                PredictionRow(LABELER, "perf" if perf else "non-perf", 0.5 + (i % 5) / 10)
            ],
        )


def annotated_store(store: Store, n: int = 60) -> None:
    """``n`` commits; a ground-truth set of the first 12 (by id) voted by three people,
    with one tie settled by an adjudicator and one left in conflict; an audit of the
    labeler's positives judged by one person."""
    bulk_insert_commits(store, commit_rows(n))
    ids = [r[0] for r in raw_sql.query(store, "SELECT id FROM items ORDER BY id LIMIT 12")]
    gt = create_set(
        store,
        NewSet("gt", "commit", ["perf", "non-perf"], votes_per_item=2, overlap="all"),
        ids,
    )
    votes: list[VoteRow] = []
    for pos, item in enumerate(ids):
        truth = "perf" if pos % 2 == 0 else "non-perf"
        other = "non-perf" if truth == "perf" else "perf"
        category = "inefficient-io" if truth == "perf" else None
        votes.append(VoteRow(item, "alice", truth, category, set_id=gt.id))
        if pos == 10:  # a tie, settled by the adjudicator
            votes.append(VoteRow(item, "bob", other, set_id=gt.id))
            votes.append(VoteRow(item, "dana", truth, role=ADJUDICATOR, set_id=gt.id))
        elif pos == 11:  # a tie nobody settled
            votes.append(VoteRow(item, "bob", other, set_id=gt.id))
        else:
            votes.append(VoteRow(item, "bob", truth, category, set_id=gt.id))
            if pos % 4 == 1:
                votes.append(VoteRow(item, "carol", other, set_id=gt.id))
            elif pos == 2:  # a skip beside two agreeing votes: still unanimous
                votes.append(VoteRow(item, "carol", "skip", set_id=gt.id))
    append_votes(store, votes)
    audit = draw_audit(store, "audit-1", LABELER, size=6).set_row
    members = [
        r[0]
        for r in raw_sql.query(
            store, "SELECT item_id FROM set_items WHERE set_id = ? ORDER BY position", (audit.id,)
        )
    ]
    append_votes(
        store,
        [
            VoteRow(item, "erin", "perf" if k < 5 else "non-perf", set_id=audit.id)
            for k, item in enumerate(members)
        ],
    )
