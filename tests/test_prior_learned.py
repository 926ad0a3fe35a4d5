"""What a perf prior learned: the digests it ships, and ``curator train`` leaving those
examples out of a student's fine-tuning (``--prior-examples skip``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from engines.labelers.student.learned import (
    DIGEST_CHARS,
    message_digest,
    read_learned,
    write_learned,
)
from engines.labelers.student.prior import (
    ENV_FOLDER,
    base_version,
    packaged_prior,
    prior_learned,
    write_prior,
)
from engines.labelers.student.train import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "annotation" / "items.jsonl"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
TINY = ("--epochs", "1", "--max-length", "64", "--batch", "8", "--lr", "1e-4", "--max-steps", "2")
HEAD = {"classifier.bias.value": torch.tensor([1.5, -1.5])}


def _messages() -> list[str]:
    return [json.loads(line)["message"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def _own_prior(folder: Path, learned: list[str] | None) -> None:
    meta = {"version": 7, "rank": 4, "base_package_version": base_version()}
    write_prior(HEAD, meta, folder, learned)


def test_a_digest_ignores_how_the_message_is_wrapped_but_not_its_words() -> None:
    one = message_digest("Avoid the copy\n\nin the hot loop\n")
    assert one == message_digest("  Avoid the copy in the hot loop")
    assert one != message_digest("Avoid the copy in the cold loop")
    assert len(one) == DIGEST_CHARS and int(one, 16) >= 0


def test_learned_digests_round_trip_and_a_bad_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "perf_prior.learned"
    digests = [message_digest(m) for m in ("a", "b", "a")]
    assert write_learned(path, digests) == 2
    assert read_learned(path) == frozenset(digests)
    path.write_text(f"{digests[0]}\nnot-a-digest\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}:2: 'not-a-digest' is not"):
        read_learned(path)


def test_the_packaged_prior_lists_what_it_learned_from() -> None:
    info = packaged_prior()
    assert info is not None and info.learned.is_file()
    digests = read_learned(info.learned)
    total = sum(info.meta["learned_from"].values())
    # Some messages repeat across projects ("Fix typo"), so there are fewer digests.
    assert 0.95 * total < len(digests) <= total
    assert prior_learned(TrainConfig()) == digests
    assert prior_learned(TrainConfig(prior="none")) == frozenset()


def test_a_student_leaves_out_the_votes_its_prior_learned(
    split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    messages = _messages()
    folder = tmp_path / "prior"
    _own_prior(folder, [message_digest(m) for m in messages[::2]])
    monkeypatch.setenv(ENV_FOLDER, str(folder))
    trained = split("train", "--votes", "tr", *TINY, "--json")  # skip is the default
    assert trained.exit_code == 0, trained.output
    counts = json.loads(trained.stdout)["counts"]
    skipped = counts["prior_learned"]["skipped"]
    kept = counts["prior_learned"]["kept"]
    assert skipped > 0 and kept > 0 and counts["train_total"] == kept
    assert sum(counts["train"].values()) == kept

    again = split("train", "--votes", "tr", "--prior-examples", "train", *TINY)
    assert again.exit_code == 0, again.output
    assert f"training examples: {skipped + kept} " in ANSI.sub("", again.output)
    assert "left out" not in again.output


def test_a_student_whose_every_vote_the_prior_learned_is_the_prior_as_it_is(
    split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "prior"
    _own_prior(folder, [message_digest(m) for m in _messages()])
    monkeypatch.setenv(ENV_FOLDER, str(folder))
    trained = split("train", "--votes", "tr", "--prior-examples", "skip", *TINY, "--json")
    assert trained.exit_code == 0, trained.output
    info = json.loads(trained.stdout)
    assert info["counts"]["prior_learned"]["kept"] == 0
    assert info["metrics"]["training"]["epochs_run"] == 0
    weights = load_file(str(Path(info["path"]) / "model.safetensors"))
    assert weights["classifier.bias"].tolist() == [1.5, -1.5]
    shown = " ".join(ANSI.sub("", split("models", "show", info["model"]).output).split())
    assert "nothing new to fine-tune on, so the model is the prior as it is" in shown
    predicted = split("predict", "gt-eval", "--labeler", info["model"])
    assert predicted.exit_code == 0, predicted.output


def test_a_broken_learned_list_fails_the_training_in_one_line(
    split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "prior"
    _own_prior(folder, [])
    (folder / "perf_prior.learned").write_text("zz\n", encoding="utf-8")
    monkeypatch.setenv(ENV_FOLDER, str(folder))
    broken = split("train", "--votes", "tr", "--prior-examples", "skip", *TINY)
    text = ANSI.sub("", broken.output)
    assert broken.exit_code == 1 and f"{folder / 'perf_prior.learned'}:1:" in text
    assert "Traceback" not in text
    bad = split("train", "--votes", "tr", "--prior-examples", "some")
    assert bad.exit_code == 2
    assert "--prior-examples must be one of skip, train" in ANSI.sub("", bad.output)


def test_the_build_script_lists_what_an_existing_prior_learned(tmp_path: Path) -> None:
    import subprocess
    import sys

    shared = tmp_path / "shared"
    shared.mkdir()
    lines = {
        "train.jsonl": [("Avoid a copy in the parser loop", 1), ("Fix typo", 0)],
        "extra.jsonl": [("Cache the compiled regex", 1)],
    }
    for name, rows in lines.items():
        text = "".join(json.dumps({"commit_message": m, "target": t}) + "\n" for m, t in rows)
        (shared / name).write_text(text, encoding="utf-8")
    team = tmp_path / "team"
    team.mkdir()
    item = {"id": "a@1", "message": "Reuse the buffer\n", "diff": "@@ -1 +1 @@\n-x\n+y\n"}
    (team / "items.jsonl").write_text(json.dumps(item) + "\n", encoding="utf-8")
    vote = {"item": "a@1", "label": "perf"}
    (team / "votes.jsonl").write_text(json.dumps(vote) + "\n", encoding="utf-8")
    out = tmp_path / "prior"
    meta = {"version": 3, "learned_from": {"shared_messages": 3, "team": 1}}
    write_prior(HEAD, meta, out)
    script = [sys.executable, str(ROOT / "scripts" / "build_perf_prior.py"), "--learned-only"]
    args = [*script, "--shared", str(shared), "--set", f"team={team}", "--out", str(out)]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    want = {message_digest(m) for m in ("Avoid a copy in the parser loop", "Fix typo")}
    want |= {message_digest("Cache the compiled regex"), message_digest("Reuse the buffer")}
    assert read_learned(out / "perf_prior.learned") == want

    # A prior built from other examples is refused, and its list left as it was.
    wrong = subprocess.run([*args[:-4], "--out", str(out)], capture_output=True, text=True)
    assert wrong.returncode == 1 and "learned from" in wrong.stderr
    assert read_learned(out / "perf_prior.learned") == want


def test_the_build_script_learns_a_set_of_a_curator_database(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``--db DB --votes SET``: the set's settled labels, each commit read as ``curator
    train`` reads it; a set that is not there, or --votes without --db, fails in one line."""
    import subprocess
    import sys

    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "train.jsonl").write_text(
        json.dumps({"commit_message": "Fix typo", "target": 0}) + "\n", encoding="utf-8"
    )
    (shared / "extra.jsonl").write_text("", encoding="utf-8")
    items = [
        {"id": "a@1", "message": "Reuse the buffer\n", "diff": "@@ -1 +1 @@\n-x\n+y\n"},
        {"id": "a@2", "message": "Update the changelog\n", "diff": ""},
        {"id": "a@3", "message": "Tidy the docs\n", "diff": ""},
    ]
    source = tmp_path / "items.jsonl"
    source.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    votes = tmp_path / "votes.jsonl"
    rows = [("a@1", "perf"), ("a@2", "non-perf")]  # a@3 has no vote: not settled
    votes.write_text(
        "".join(json.dumps({"item": i, "label": lb, "annotator": "ann"}) + "\n" for i, lb in rows),
        encoding="utf-8",
    )
    settle = ("--labels", "perf,non-perf", "--votes-per-item", "1", "--no-prelabel")
    assert cli("import", "items", str(source), "--set", "ours", *settle).exit_code == 0
    assert cli("import", "votes", str(votes)).exit_code == 0
    db = tmp_path / "cli.db"
    out = tmp_path / "prior"
    write_prior(HEAD, {"version": 8, "learned_from": {"shared_messages": 1, "ours": 2}}, out)
    script = [sys.executable, str(ROOT / "scripts" / "build_perf_prior.py"), "--learned-only"]
    args = [*script, "--shared", str(shared), "--out", str(out)]
    done = subprocess.run(
        [*args, "--db", str(db), "--votes", "ours"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    want = {message_digest(m) for m in ("Fix typo", "Reuse the buffer", "Update the changelog")}
    assert read_learned(out / "perf_prior.learned") == want

    missing = subprocess.run(
        [*args, "--db", str(db), "--votes", "theirs"], capture_output=True, text=True
    )
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines() == [
        "--votes theirs: no set named 'theirs' (`curator set list` shows them)"
    ]
    alone = subprocess.run([*args, "--votes", "ours"], capture_output=True, text=True)
    assert alone.returncode == 2 and "--votes needs the --db that holds the set" in alone.stderr


def test_a_student_from_the_prior_takes_a_smaller_step_unless_told(split) -> None:  # type: ignore[no-untyped-def]
    steps = ("--epochs", "1", "--max-length", "32", "--batch", "8", "--max-steps", "1")
    taken = {}
    for flags in ((), ("--prior", "none"), ("--lr", "3e-5")):
        trained = split("train", "--votes", "tr", *steps, *flags, "--json")
        assert trained.exit_code == 0, trained.output
        info = json.loads(trained.stdout)
        meta = json.loads((Path(info["path"]) / "curator_student.json").read_text())
        assert meta["config"]["lr"] == info["metrics"]["training"]["lr"]
        taken[flags] = meta["config"]["lr"]
    assert taken == {(): 1e-5, ("--prior", "none"): 5e-5, ("--lr", "3e-5"): 3e-5}
    shown = split("models", "show", "student@1", "--json")
    assert json.loads(shown.stdout)["training"]["lr"] == 1e-5
