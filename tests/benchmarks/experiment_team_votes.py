"""How far votes of other projects carry a TF-IDF labeler to a project nobody voted on.

Reads one or more folders written by ``scripts/cross_source_texts.py`` (``items.jsonl`` +
``votes.jsonl``: hand-labeled commits with their diffs) and answers two questions with
Curator's own training code (``engines.labelers.tfidf``, the rule floor and the threshold
choice of ``curator train``):

* ``by-repository``: every repository in turn is left out; a model learns from the
  other repositories' votes (and, with ``--shared``, the shared messages, which carry no
  diff), its threshold is chosen on repository-grouped out-of-fold scores as ``curator
  train`` chooses it, and it labels the left-out repository. Reports perf F1 over all
  commits, per folder and per repository, beside the keyword rules.
* ``curve``: F1 on the ``--eval`` repositories of models trained on the first n votes
  (seeded shuffle) of the other repositories: how many team votes the model needs.

Usage::

    python tests/benchmarks/experiment_team_votes.py --cross build/cross_source \
        --cross build/cross_source_more --cross build/cross_source_round2 \
        [--features fields|text] [--shared] [--choose all|with-diff] \
        [--curve 100,200,400,800 --eval FasterXML/jackson-core,python-pillow/Pillow]

Slow: one leave-one-out pass over 31 repositories fits about 190 models (5-15 minutes on
2 cores with fields, about three times that with text). Nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engines.commits.representation import model_input  # noqa: E402
from engines.labelers import tfidf  # noqa: E402
from engines.labelers.calibration import decide, enough_to_choose  # noqa: E402
from engines.labelers.keyword import packaged_terms  # noqa: E402
from engines.labelers.rule_floor import floor_block, floor_flags, floored  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "perf-commit-messages"


@dataclass(frozen=True)
class Vote:
    text: str  # message || diff, or the bare message for a shared one
    message: str | None  # the message alone, for a vote with a diff
    label: int
    repo: str
    origin: str  # the folder's name, or "shared"


def read_folder(folder: Path) -> list[Vote]:
    items = {}
    for line in (folder / "items.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        items[item["id"]] = item
    out = []
    for line in (folder / "votes.jsonl").read_text(encoding="utf-8").splitlines():
        vote = json.loads(line)
        item = items[vote["item"]]
        text = model_input(item["message"], item.get("diff") or "")
        out.append(
            Vote(text, item["message"], int(vote["label"] == "perf"), item["repo"], folder.name)
        )
    return out


def read_shared() -> list[Vote]:
    out = []
    for name in ("train.jsonl", "extra.jsonl"):
        for line in (SHARED / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("target") in (0, 1):
                out.append(
                    Vote(row["commit_message"], None, int(row["target"]), "shared", "shared")
                )
    return out


def f1(truth: Sequence[int], guess: Sequence[bool]) -> float:
    tp = sum(1 for t, g in zip(truth, guess, strict=True) if t and g)
    wrong = sum(1 for t, g in zip(truth, guess, strict=True) if bool(t) != g)
    return 2 * tp / (2 * tp + wrong) if tp or wrong else 0.0


class Trainer:
    """``curator train --kind tfidf-lr`` on a list of votes, as far as the threshold."""

    def __init__(self, features: str, choose: str) -> None:
        self.features = features
        self.choose = choose
        self.floor = floor_block("keyword")
        version = packaged_terms().version
        self.flag = version if features == "fields" else None

    def fit(self, votes: Sequence[Vote]) -> tuple[object, float]:
        texts = [v.text for v in votes]
        labels = [v.label for v in votes]
        alternates = [v.message for v in votes]
        groups = [v.repo for v in votes]
        oof = tfidf.out_of_fold(
            "lr", texts, labels, groups, 5, 0, alternates, self.features, self.flag
        )
        flags = floor_flags(texts, self.floor) or []
        oof = floored(oof, flags)
        keep = list(range(len(votes)))
        if self.choose == "with-diff":
            diff = [i for i, v in enumerate(votes) if v.message is not None]
            if len(diff) < len(votes) and enough_to_choose([labels[i] for i in diff]):
                keep = diff
        decision = decide(
            [oof[i] for i in keep], [labels[i] for i in keep], "f1", "oof", [flags[i] for i in keep]
        )
        fit_texts, fit_labels, _ = tfidf.with_alternates(texts, labels, alternates)
        model = tfidf.fit("lr", fit_texts, fit_labels, 0, None, self.features, self.flag)
        return model, float(decision["threshold"])

    def label(self, model: object, threshold: float, votes: Sequence[Vote]) -> list[bool]:
        texts = [v.text for v in votes]
        probs = floored(tfidf.positive_scores(model, texts), floor_flags(texts, self.floor) or [])
        return [p >= threshold for p in probs]


def rules(votes: Sequence[Vote]) -> list[bool]:
    return list(floor_flags([v.text for v in votes], floor_block("keyword")) or [])


def by_repository(trainer: Trainer, votes: list[Vote], shared: list[Vote]) -> None:
    started = time.time()
    guess: dict[int, bool] = {}
    for repo in sorted({v.repo for v in votes}):
        inside = [i for i, v in enumerate(votes) if v.repo == repo]
        others = [v for v in votes if v.repo != repo] + shared
        model, threshold = trainer.fit(others)
        for i, g in zip(
            inside, trainer.label(model, threshold, [votes[i] for i in inside]), strict=True
        ):
            guess[i] = g
    truth = [v.label for v in votes]
    model_guess = [guess[i] for i in range(len(votes))]
    rule_guess = rules(votes)
    print(
        f"each repository left out ({len(votes)} votes,"
        f" {len({v.repo for v in votes})} repositories,"
        f" {time.time() - started:.0f} s): model F1 {f1(truth, model_guess):.3f},"
        f" rules {f1(truth, rule_guess):.3f}"
    )
    for group in sorted({v.origin for v in votes}):
        idx = [i for i, v in enumerate(votes) if v.origin == group]
        print(
            f"  {group}: model {f1([truth[i] for i in idx], [model_guess[i] for i in idx]):.3f},"
            f" rules {f1([truth[i] for i in idx], [rule_guess[i] for i in idx]):.3f} ({len(idx)})"
        )
    cells = []
    for repo in sorted({v.repo for v in votes}):
        idx = [i for i, v in enumerate(votes) if v.repo == repo]
        t = [truth[i] for i in idx]
        cells.append(
            f"{repo.split('/')[-1]} {f1(t, [model_guess[i] for i in idx]):.2f}"
            f"/{f1(t, [rule_guess[i] for i in idx]):.2f}"
        )
    print("  per repository (model/rules): " + ", ".join(cells))


def curve(
    trainer: Trainer,
    votes: list[Vote],
    shared: list[Vote],
    sizes: list[int],
    eval_repos: set[str],
    seeds: int,
) -> None:
    held = [v for v in votes if v.repo in eval_repos]
    pool = [v for v in votes if v.repo not in eval_repos]
    truth = [v.label for v in held]
    print(
        f"curve: {len(pool)} votes of {len({v.repo for v in pool})} repositories, scored on"
        f" {len(held)} commits of {', '.join(sorted(eval_repos))};"
        f" rules {f1(truth, rules(held)):.3f}"
    )
    for n in sizes:
        scores = []
        for seed in range(seeds):
            order = list(pool)
            random.Random(seed).shuffle(order)
            model, threshold = trainer.fit(order[: min(n, len(pool))] + shared)
            scores.append(f1(truth, trainer.label(model, threshold, held)))
        mean = sum(scores) / len(scores)
        spread = ", ".join(f"{s:.3f}" for s in scores)
        print(f"  n={min(n, len(pool))}: F1 {mean:.3f} ({spread})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cross", type=Path, action="append", required=True)
    parser.add_argument("--features", choices=tfidf.FEATURES, default="fields")
    parser.add_argument("--shared", action="store_true", help="add the shared messages")
    parser.add_argument(
        "--choose",
        choices=("all", "with-diff"),
        default="all",
        help="choose the threshold on all votes (as curator train does) or on those with a diff",
    )
    parser.add_argument("--curve", help="sizes, e.g. 100,200,400,800 (needs --eval)")
    parser.add_argument("--eval", help="repositories the curve is scored on, comma-separated")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--skip-by-repository", action="store_true")
    args = parser.parse_args(argv)
    votes = [v for folder in args.cross for v in read_folder(folder)]
    shared = read_shared() if args.shared else []
    trainer = Trainer(args.features, args.choose)
    print(
        f"features {args.features}, threshold chosen on {args.choose}, shared messages"
        f" {len(shared)}, keyword list version {packaged_terms().version}"
    )
    if not args.skip_by_repository:
        by_repository(trainer, votes, shared)
    if args.curve:
        if not args.eval:
            parser.error("--curve needs --eval")
        sizes = [int(x) for x in args.curve.split(",")]
        curve(trainer, votes, shared, sizes, set(args.eval.split(",")), args.seeds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
