"""What a new user of ``curator train`` and ``curator models`` meets on real data: votes
that have not settled yet (one vote where the set asks for two), a model whose folder
was deleted from under the registry, and the training counts ``models show`` prints."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

from annotation.training_data import unsettled_text
from store import open_store
from store.models import list_models
from store.sets import get_set, set_item_ids
from tests.cli_helpers import one_error as _error

ANSI = re.compile(r"\x1b\[[0-9;]*m")

ITEMS = [
    {"id": "one-1", "repo": "https://example.org/a/x", "message": "speed up the hot loop"},
    {"id": "one-2", "repo": "https://example.org/a/x", "message": "fix a typo in the docs"},
    {"id": "one-3", "repo": "https://example.org/a/x", "message": "cache the parsed config"},
]


def _one_vote_each(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Set ``one`` (two votes per item, the default) where each item has one vote."""
    items = tmp_path / "one.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in ITEMS))
    made = cli("import", "items", str(items), "--set", "one", "--votes-per-item", "2")
    assert made.exit_code == 0, made.output
    for item, label in zip(("one-1", "one-2", "one-3"), ("perf", "non-perf", "perf"), strict=True):
        assert cli("vote", item, label, "--annotator", "ann").exit_code == 0


def test_votes_waiting_for_a_second_vote_say_so_and_how_to_settle_them(  # type: ignore[no-untyped-def]
    split, tmp_path: Path
) -> None:
    # was: "0 items with a settled perf/non-perf label (skips and ties count as none)",
    # which sends the user looking for skips and ties that are not there
    _one_vote_each(split, tmp_path)
    line = _error(split("train", "--kind", "tfidf-lr", "--votes", "one"))
    assert "3 wait for more votes (it needs 2 per item" in line
    assert "curator set edit one --votes-per-item 1" in line
    # the same set as --eval: the refusal says why it has no final labels
    line = _error(split("train", "--kind", "tfidf-lr", "--votes", "tr", "--eval", "one"))
    assert "set 'one' has no settled perf/non-perf labels yet: 3 wait for more votes" in line
    # once the set settles on one vote, training goes ahead
    assert split("set", "edit", "one", "--votes-per-item", "1").exit_code == 0
    with open_store(tmp_path / "cli.db") as store:
        row = get_set(store, "one")
        assert row is not None and unsettled_text(store, row) is None


def test_a_conflict_is_named_with_the_command_that_settles_it(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _one_vote_each(split, tmp_path)
    for item, label in zip(
        ("one-1", "one-2", "one-3"), ("non-perf", "perf", "non-perf"), strict=True
    ):
        assert split("vote", item, label, "--annotator", "bob").exit_code == 0
    line = _error(split("train", "--kind", "tfidf-lr", "--votes", "one"))
    assert "3 are conflicts (`curator adjudicate one`)" in line
    assert "wait for more votes" not in line


def test_models_show_prints_the_training_counts_as_words_not_a_dict(split) -> None:  # type: ignore[no-untyped-def]
    # a set named twice is read once (was: "from votes of tr, tr")
    trained = split("train", "--kind", "tfidf-lr", "--votes", "tr", "--votes", "tr", "--json")
    assert trained.exit_code == 0, trained.output
    counts = json.loads(trained.stdout)["counts"]
    assert counts["human"]["sets"] == ["tr"]
    assert json.loads(trained.stdout)["notes"] == []  # was: absent, the warnings on stderr only
    text = ANSI.sub("", split("models", "show", "tfidf-lr@1").stdout)
    line = next(x for x in text.splitlines() if "trained on" in x)
    # was: "trained on 30 examples {'human:non-perf': 14, 'human:perf': 16}"
    assert "{" not in line and "'" not in line, line
    shares = ", ".join(f"{k} {v:,}" for k, v in sorted(counts["train"].items()))
    assert f"trained on {counts['train_total']:,} examples ({shares}) from votes of tr" in line


def test_models_list_says_which_models_lost_their_folder(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for _ in range(2):
        made = split("train", "--kind", "tfidf-lr", "--votes", "tr", "--json")
        assert made.exit_code == 0, made.output
    listed = json.loads(split("models", "list", "--json").stdout)
    gone = Path(listed[0]["path"])
    shutil.rmtree(gone)
    listed = json.loads(split("models", "list", "--json").stdout)
    assert [(m["name"], m["missing"]) for m in listed] == [
        ("tfidf-lr@1", True),
        ("tfidf-lr@2", False),
    ]
    shown = split("models", "list")
    assert shown.exit_code == 0, shown.output
    warned = [x for x in ANSI.sub("", shown.stderr).splitlines() if x.startswith("warning: ")]
    # was: listed like any other, until predict or promote refused it
    assert warned == [
        f"warning: tfidf-lr@1: its directory {str(gone)!r} is missing: it cannot predict, be"
        " promoted or be warm-started from (its stored predictions still score)"
    ]
    assert "tfidf-lr@2" not in "".join(warned)


def test_a_warm_start_that_learned_the_eval_items_says_its_scores_overstate(  # type: ignore[no-untyped-def]
    split, tmp_path: Path
) -> None:
    # was: no word; a curve's n=0 point and every warm-started run scored on items the
    # starting weights had learned, and looked better than they are
    from curator.training import TrainRequest, run_training
    from engines.labelers.student import TrainConfig

    tiny = TrainConfig(epochs=1, batch_size=8, max_length=32, lr=1e-3, layers=1, max_steps=1)
    frozen = TrainConfig(epochs=1, batch_size=8, max_length=32, lr=1e-12, max_steps=1)
    with open_store(tmp_path / "cli.db") as store:
        everything = run_training(store, TrainRequest(vote_sets=("gt-sample",), config=tiny))
        clean = run_training(store, TrainRequest(vote_sets=("tr",), config=tiny))
        assert everything.model is not None and clean.model is not None
        eval_items = len(set_item_ids(store, get_set(store, "gt-eval").id))  # type: ignore[union-attr]

        def warm(start: str) -> list[str]:
            request = TrainRequest(
                vote_sets=("tr",), eval_set="gt-eval", config=frozen, from_model=start
            )
            outcome = run_training(store, request)
            assert outcome.model is not None
            return [n for n in outcome.notes if "overstate" in n]

        assert warm(everything.model.name) == [
            f"{everything.model.name} learned from the votes of gt-sample, which hold"
            f" {eval_items} of the {eval_items} items of --eval gt-eval: scores there overstate"
            " (start from a student that did not learn from them)"
        ]
        assert warm(clean.model.name) == []
        # a student warm-started from the leaky one carries what it learned
        chained = list_models(store, "student")[-2].name  # warm-started from `everything`
        assert warm(chained) != [] and "gt-sample" in warm(chained)[0]


def test_an_ensemble_member_that_learned_the_dev_items_is_refused(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # was: the combiner was chosen by CV on answers the member had memorised (a real
    # store: tfidf-lr CV F1 0.930 on its own training set, stack chosen, dev F1 0.958,
    # eval F1 0.657)
    leaky = split("train", "--kind", "tfidf-lr", "--votes", "gt-sample", "--json")
    assert leaky.exit_code == 0, leaky.output
    members = ("--members", "keyword@5,heuristics@1,tfidf-lr@1")
    line = _error(split("train", "--kind", "ensemble", "--dev", "gt-dev", *members))
    with open_store(tmp_path / "cli.db") as store:
        dev = len(set_item_ids(store, get_set(store, "gt-dev").id))  # type: ignore[union-attr]
    assert line == (
        f"error: member tfidf-lr@1 learned from the votes of gt-sample, which hold {dev} of"
        f" the {dev} items of --dev gt-dev: the combiner would trust what it memorised; give"
        " --members without it, or a --dev set it did not learn from"
    )
    with open_store(tmp_path / "cli.db") as store:
        assert list_models(store, "ensemble") == []
    # a member that learned from the eval items only: trained, with a warning
    split("train", "--kind", "tfidf-lr", "--votes", "tr", "--votes", "gt-eval")
    members = ("--members", "keyword@5,heuristics@1,tfidf-lr@2")
    made = split("train", "--kind", "ensemble", "--dev", "gt-dev", "--eval", "gt-eval", *members)
    assert made.exit_code == 0, made.output
    assert "member tfidf-lr@2 learned from the votes of tr, gt-eval, which hold" in made.stdout
    assert "the ensemble's scores there overstate" in made.stdout


def test_an_eval_set_the_perf_prior_learned_says_its_scores_overstate(  # type: ignore[no-untyped-def]
    split, tmp_path: Path
) -> None:
    # was: a student scored on messages its packaged prior had learned (a real store:
    # --eval on the shared messages, F1 0.880) said nothing about it
    from curator.training import TrainRequest, run_training
    from engines.labelers.student import TrainConfig
    from engines.labelers.student.learned import message_digest
    from engines.labelers.student.prior import prior_learned
    from tests.conftest import ROOT

    tiny = TrainConfig(epochs=1, batch_size=8, max_length=32, lr=1e-3, layers=1, max_steps=1)
    digests = prior_learned(tiny)
    sample = ROOT / "sample_data" / "annotation" / "items.jsonl"
    rows = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines()]
    seen = [r for r in rows if message_digest(r["message"]) in digests]
    assert seen, "the sample data holds no message the packaged prior learned"
    items = tmp_path / "seen.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in seen))
    assert split("import", "items", str(items), "--set", "seen").exit_code == 0
    with open_store(tmp_path / "cli.db") as store:

        def notes(config: TrainConfig = tiny) -> list[str]:
            request = TrainRequest(
                vote_sets=("tr",), eval_set="seen", same_repos=True, config=config
            )
            outcome = run_training(store, request)
            assert outcome.model is not None
            return [n for n in outcome.notes if "perf prior" in n]

        assert notes() == [
            f"the perf prior this student starts from learned the messages of {len(seen)} of"
            f" the {len(seen)} settled items of --eval seen: scores there overstate (--prior"
            " none starts without it)"
        ]
        assert notes(replace(tiny, prior="none")) == []
