"""``curator teach`` end to end against a real HTTP server on 127.0.0.1 (both APIs)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from engines.labelers.teacher import Teacher, TeacherConfig, TeacherError
from engines.labelers.teacher.run import teach
from store import open_store
from store.items import ImportedItem, insert_imported_items
from store.votes import VoteRow, append_votes
from tests import raw_sql
from tests.annotation_data import Spec, add_items
from tests.teacher_server import FakeLLM


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server
    assert server.errors == [], server.errors  # the responder itself never broke


def _import(cli, tmp_path: Path, messages: dict[str, str], set_name: str = "pool") -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / f"{set_name}.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {"id": key, "repo": f"r/{key}", "message": msg, "diff": "@@ -1 +1 @@\n-a\n+b\n"}
            )
            + "\n"
            for key, msg in messages.items()
        )
    )
    result = cli("import", "items", str(path), "--set", set_name, "--no-prelabel")
    assert result.exit_code == 0, result.output


def _predictions(tmp_path: Path, labeler: str) -> dict[str, tuple[str, float, dict]]:
    with open_store(tmp_path / "cli.db") as store:
        rows = raw_sql.query(
            store,
            "SELECT i.key, p.label, p.score, p.details FROM predictions AS p"
            " JOIN items AS i ON i.id = p.item_id WHERE p.labeler = ?",
            (labeler,),
        )
    return {r[0]: (r[1], r[2], json.loads(r[3])) for r in rows}


def _teach(cli, llm: FakeLLM, *args: str):  # type: ignore[no-untyped-def]
    result = cli("teach", *args, "--endpoint", llm.url, "--backoff", "0", "--json")
    start = result.output.find("{\n")
    summary = json.loads(result.output[start:]) if start >= 0 else None
    return result, summary


@pytest.mark.parametrize("api", ["ollama", "openai"])
def test_labels_failures_and_resume(cli, tmp_path: Path, llm: FakeLLM, api: str) -> None:  # type: ignore[no-untyped-def]
    _import(
        cli,
        tmp_path,
        {
            "a": "Make the parser faster by caching tokens",
            "b": "Fix typo in README",
            "c": "FENCED: speed up the hash join",
            "d": "GARBLED commit",
            "e": "REFUSE this one",
            "f": "BADLABEL here",
        },
    )
    result, summary = _teach(cli, llm, "pool", "--model", "tiny:1b", "--api", api)
    assert result.exit_code == 0, result.output
    assert summary["stored"] == 3 and summary["asked"] == 6
    assert summary["failures"] == {"malformed": 1, "refusal": 1, "unknown-label": 1}
    garbled = next(f for f in summary["failed_items"] if f["reason"] == "malformed")
    assert garbled["raw"].startswith("Well, this looks like")
    assert {f["reason"] for f in summary["failed_items"]} == {
        "malformed",
        "refusal",
        "unknown-label",
    }
    path = "/api/chat" if api == "ollama" else "/v1/chat/completions"
    assert {p for p, _ in llm.requests} == {path}

    stored = _predictions(tmp_path, "teacher:tiny:1b")
    assert set(stored) == {"a", "b", "c"}
    assert stored["a"][:2] == ("perf", 0.92)
    assert stored["b"][:2] == ("non-perf", 0.70)
    assert stored["c"][0] == "perf"
    assert json.loads(stored["a"][2]["raw"]) == {"label": "Perf", "confidence": 92}
    assert "```json" in stored["c"][2]["raw"]
    assert stored["a"][2]["model"] == "tiny:1b" and stored["a"][2]["api"] == api

    # Second run: only the three failed items are asked again, and they fail again.
    before = len(llm.requests)
    _, again = _teach(cli, llm, "pool", "--model", "tiny:1b", "--api", api)
    assert again["already_predicted"] == 3 and again["asked"] == 3 and again["stored"] == 0
    asked_again = llm.texts()[before:]
    assert len(asked_again) == 3
    assert all(any(m in t for m in ("GARBLED", "REFUSE", "BADLABEL")) for t in asked_again)
    assert len(_predictions(tmp_path, "teacher:tiny:1b")) == 3


def test_retries_on_500_and_429_then_gives_up(cli, tmp_path: Path, llm: FakeLLM) -> None:  # type: ignore[no-untyped-def]
    _import(cli, tmp_path, {"a": "FLAKY faster loop", "b": "THROTTLED docs", "c": "ALWAYS500 x"})
    result, summary = _teach(cli, llm, "pool", "--model", "m", "--api", "openai", "--retries", "2")
    assert summary["stored"] == 2
    assert summary["failures"] == {"http-500": 1}
    counts = {
        key: n
        for text, n in llm.attempts.items()
        for key in ("FLAKY", "THROTTLED", "ALWAYS500")
        if key in text
    }
    assert counts == {"FLAKY": 3, "THROTTLED": 3, "ALWAYS500": 3}
    stored = _predictions(tmp_path, "teacher:m")
    assert stored["a"][0] == "perf" and stored["a"][2]["attempts"] == 3
    assert stored["b"][0] == "non-perf"
    assert result.exit_code == 0


def test_timeouts_fail_then_a_retry_answers(cli, tmp_path: Path, llm: FakeLLM) -> None:  # type: ignore[no-untyped-def]
    _import(cli, tmp_path, {"a": "SLOW: speed up startup"})
    result, summary = _teach(cli, llm, "pool", "--model", "m", "--timeout", "0.2", "--retries", "0")
    assert summary["failures"] == {"timeout": 1} and summary["stored"] == 0
    assert result.exit_code == 1  # everything asked failed
    _, summary = _teach(cli, llm, "pool", "--model", "m", "--timeout", "0.2", "--retries", "1")
    # The rerun's first attempt is the server's second: it answers at once.
    assert summary["stored"] == 1
    assert _predictions(tmp_path, "teacher:m")["a"][0] == "perf"


def test_requests_run_concurrently(cli, tmp_path: Path, llm: FakeLLM) -> None:  # type: ignore[no-untyped-def]
    # Each PAIRED request waits at a barrier for another one: only concurrency passes it.
    _import(cli, tmp_path, {"a": "PAIRED one faster", "b": "PAIRED two"})
    _, summary = _teach(cli, llm, "pool", "--model", "m", "--concurrency", "2")
    assert summary["stored"] == 2
    assert llm.max_inflight == 2


def test_concurrency_one_sends_one_request_at_a_time(cli, tmp_path: Path, llm: FakeLLM) -> None:  # type: ignore[no-untyped-def]
    _import(cli, tmp_path, {f"k{i}": f"commit {i} faster" for i in range(5)})
    _, summary = _teach(cli, llm, "pool", "--model", "m", "--concurrency", "1")
    assert summary["stored"] == 5
    assert llm.max_inflight == 1


def test_category_task_stores_a_separate_labeler(cli, tmp_path: Path, llm: FakeLLM) -> None:  # type: ignore[no-untyped-def]
    _import(cli, tmp_path, {"a": "Fix memory leak in pool", "b": "Skip work NOWHERE", "c": "loop"})
    _, summary = _teach(cli, llm, "pool", "--model", "m", "--task", "category")
    assert summary["labeler"] == "teacher-category:m"
    assert summary["failures"] == {"unknown-category": 1}
    stored = _predictions(tmp_path, "teacher-category:m")
    assert stored["a"][0] == "memory-inefficiency/memory-leak"
    assert stored["c"][0] == "inefficient-algorithm-data-structure/unnecessary-computations"
    assert stored["a"][1] == 0.75
    assert stored["a"][2]["reasoning"].startswith("The change")
    system = llm.requests[0][1]["messages"][0]["content"]
    assert "step by step" in system and "parallelization/missing-parallelism" in system
    assert _predictions(tmp_path, "teacher:m") == {}


def test_unlabeled_limit_skips_voted_and_answered_items(cli, tmp_path: Path, llm: FakeLLM) -> None:  # type: ignore[no-untyped-def]
    _import(cli, tmp_path, {f"k{i}": f"commit {i}" for i in range(5)})
    with open_store(tmp_path / "cli.db") as store:
        voted = raw_sql.scalar(store, "SELECT id FROM items WHERE key = 'k0'")
        append_votes(store, [VoteRow(int(voted), "ann", "perf")])  # type: ignore[arg-type]
    _, first = _teach(cli, llm, "--unlabeled", "--limit", "2", "--model", "m")
    _, second = _teach(cli, llm, "--unlabeled", "--limit", "2", "--model", "m")
    assert first["stored"] == 2 and second["stored"] == 2
    assert set(_predictions(tmp_path, "teacher:m")) == {"k1", "k2", "k3", "k4"}
    assert not any("commit 0" in t for t in llm.texts())


def test_max_tokens_cuts_the_text_the_teacher_sees(cli, tmp_path: Path, llm: FakeLLM) -> None:  # type: ignore[no-untyped-def]
    _import(cli, tmp_path, {"a": "one two three four five six seven eight"})
    _teach(cli, llm, "pool", "--model", "m", "--max-tokens", "3")
    (text,) = llm.texts()
    assert "one two three" in text and "four" not in text
    assert _predictions(tmp_path, "teacher:m")["a"][2]["max_tokens"] == 3


def test_usage_errors_and_a_dead_endpoint(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("teach", "--model", "m").exit_code == 2
    assert cli("teach", "pool", "--unlabeled", "--model", "m").exit_code == 2
    _import(cli, tmp_path, {"a": "faster"})
    assert cli("teach", "nosuch", "--model", "m").exit_code == 1
    assert cli("teach", "--unlabeled", "--model", "m", "--endpoint", "ftp://x").exit_code == 2
    for bad in ("http://[::1", "http://"):
        refused = cli("teach", "--unlabeled", "--model", "m", "--endpoint", bad)
        assert refused.exit_code == 2 and "unexpected" not in refused.output, refused.output
        assert f"endpoint {bad!r}" in refused.output
    with FakeLLM() as dead:
        url = dead.url
    result = cli(
        "teach", "pool", "--model", "m", "--endpoint", url, "--retries", "1", "--backoff", "0"
    )
    assert result.exit_code == 1
    assert "connection" in result.output
    assert "Teaching summary: teacher:m" in result.output
    assert "run the same command again" in result.output
    assert _predictions(tmp_path, "teacher:m") == {}


def test_a_run_whose_first_requests_all_fail_stops(cli, tmp_path: Path, llm: FakeLLM) -> None:  # type: ignore[no-untyped-def]
    _import(cli, tmp_path, {f"k{i}": f"commit {i}" for i in range(15)})
    result = cli(
        "teach", "pool", "--model", "m", "--endpoint", llm.url + "/nowhere", "--json",
    )  # fmt: skip
    assert result.exit_code == 1
    summary = json.loads(result.output[result.output.find("{\n") :])
    assert summary["asked"] == 10 and summary["failures"] == {"http-404": 10}
    assert "check --endpoint" in summary["stopped"]
    # Reply problems do not stop a run: the model answers, just not usefully.
    _import(cli, tmp_path, {f"g{i}": f"GARBLED {i}" for i in range(12)}, "garbled")
    _, garbled = _teach(cli, llm, "garbled", "--model", "m")
    assert garbled["asked"] == 12 and garbled["stopped"] is None


def test_items_without_commit_text_are_failures_not_requests(store, llm: FakeLLM) -> None:  # type: ignore[no-untyped-def]
    ids = add_items(store, [Spec("a"), Spec("b")])
    ((_, ir_id),) = insert_imported_items(
        store, [ImportedItem("ir", "mod-1", "repo", None, None, {})]
    )
    with Teacher(TeacherConfig(endpoint=llm.url, model="m")) as teacher:
        summary = teach(store, [ids["a"], ir_id, ids["b"], ids["a"]], teacher)
    assert summary.selected == 3 and summary.stored == 2
    assert summary.failures == {"not-a-commit": 1}
    assert len(llm.requests) == 2


def test_teacher_as_a_labeler_keeps_order_and_raises_on_a_failure(llm: FakeLLM) -> None:
    config = TeacherConfig(endpoint=llm.url, model="m", api="openai", concurrency=3)
    with Teacher(config) as teacher:
        texts = ["make it faster", "fix typo", "speed up io", "docs"]
        labels = [p.label for p in teacher.predict(texts)]
        assert labels == ["perf", "non-perf", "perf", "non-perf"]
        with pytest.raises(TeacherError, match="refusal"):
            teacher.predict(["fine", "REFUSE"])


def test_the_bar_of_a_run_that_gave_up_counts_the_items_labeled(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, llm: FakeLLM
) -> None:
    # it showed 15/15 (the bar jumped to the whole selection) with nothing labeled
    _import(cli, tmp_path, {f"k{i}": f"commit {i}" for i in range(15)})
    result = cli("teach", "pool", "--model", "m", "--endpoint", llm.url + "/nowhere")
    assert result.exit_code == 1
    (bar,) = [line for line in result.stderr.splitlines() if "answers/s" in line]
    assert bar.startswith("teacher:m: gave up, labeled") and " 0/15 " in bar, bar
    assert _predictions(tmp_path, "teacher:m") == {}
    # a run that goes to the end still fills its bar
    done = cli("teach", "pool", "--model", "m", "--endpoint", llm.url)
    assert done.exit_code == 0, done.output
    (bar,) = [line for line in done.stderr.splitlines() if "answers/s" in line]
    assert bar.startswith("teacher:m ") and " 15/15 " in bar, bar
