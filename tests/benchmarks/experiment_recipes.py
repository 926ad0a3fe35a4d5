"""Which training recipe carries the out-of-box student furthest, and how far votes do.

``recipes``: the out-of-box student (the shared messages alone, from the packaged perf
prior, threshold from the 15% slice with near ties, no early stopping, as ``curator
train --votes train`` runs it) under several recipes, one run per seed, each scored on
every ``--set`` and on ``test.jsonl`` reading the message (as ``curator predict`` feeds
it) and message || diff; plus the prior alone (no fine-tuning) and weight-space
ensembles of the tuned and the starting weights (WiSE-FT, Wortsman et al. 2022).

``votes``: for each ``--target``, students trained without the prior on the shared
messages and (a) every other set, (b) four fifths of the target (stratified folds),
(c) both, each fold's fifth scored by the model that did not learn it; the ceiling a
few hundred in-domain votes and every team vote reach with this encoder.

Every score stands on the keyword floor. A few minutes on one GPU, hours on two CPU
cores:

    python tests/benchmarks/experiment_recipes.py recipes \\
        --shared ../shared/data/perf-commit-messages \\
        --set r4=build/cross_source_round4 --set r5=... --out recipes.json
    python tests/benchmarks/experiment_recipes.py votes --shared ... --set ... \\
        --target r6 --out votes.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from build_perf_prior import set_examples, shared_examples  # noqa: E402

from engines.labelers.calibration import choose_threshold  # noqa: E402
from engines.labelers.keyword import find_matches, packaged_terms  # noqa: E402
from engines.labelers.student.data import Example, stratified_holdout  # noqa: E402
from engines.labelers.student.infer import (  # noqa: E402
    default_base,
    load_encoder,
    pick_device,
)
from engines.labelers.student.prior import (  # noqa: E402
    apply_prior,
    load_prior_tensors,
    packaged_prior,
)
from engines.labelers.student.train import TrainConfig, train_student  # noqa: E402
from tests.benchmarks.experiment_perf_prior import floored_by, message_of, scores  # noqa: E402

RECIPES: dict[str, dict[str, Any]] = {
    "2 epochs, lr 5e-5 (default)": {"epochs": 2},
    "1 epoch": {"epochs": 1},
    "3 epochs": {"epochs": 3},
    "2 epochs, lr 2e-5": {"epochs": 2, "lr": 2e-5},
    "2 epochs, no prior": {"epochs": 2, "prior": "none"},
}
WISE = {"2 epochs, lr 5e-5 (default)": (0.5, 0.7), "3 epochs": (0.5, 0.7)}


class Scorer:
    """Floored P(perf) of labeled rows and the F1 of each run, written as it goes."""

    def __init__(self, sets: dict[str, list[Example]], out: Path) -> None:
        self.sets, self.out = sets, out
        self.terms = packaged_terms()
        self.device = pick_device(None)
        self.rows: list[dict[str, Any]] = []

    def floored(
        self, model: Any, tokenizer: Any, rows: Sequence[Example], field: str
    ) -> list[float]:
        return floored_by(model, tokenizer, list(rows), self.terms, self.device, field)[0]

    def threshold(self, model: Any, tokenizer: Any, held: Sequence[Example], field: str) -> float:
        probs = self.floored(model, tokenizer, held, field)
        return choose_threshold(probs, [e.label for e in held], "f1", near_tie=0.01)[0]

    def record(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        print(json.dumps(row), flush=True)
        self.out.write_text(json.dumps(self.rows, indent=1))

    def score_all(
        self, tag: str, seed: int, model: Any, tokenizer: Any, held: list[Example]
    ) -> None:
        model.to(self.device).eval()
        threshold = self.threshold(model, tokenizer, held, "message")
        row: dict[str, Any] = {"recipe": tag, "seed": seed, "threshold": round(threshold, 3)}
        for name, rows in self.sets.items():
            truth = [e.label for e in rows]
            for field in ("message", "model_input"):
                if field == "model_input" and all(e.message is None for e in rows):
                    continue
                probs = self.floored(model, tokenizer, rows, field)
                row[f"{name}:{field}"] = scores(truth, [p >= threshold for p in probs])
        self.record(row)


def _state(model: Any) -> dict[str, Any]:
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


def _mixed(tuned: dict[str, Any], start: dict[str, Any], alpha: float) -> dict[str, Any]:
    return {
        k: (alpha * v.float() + (1 - alpha) * start[k].float()).to(v.dtype)
        if v.is_floating_point()
        else v
        for k, v in tuned.items()
    }


def recipes(shared: list[Example], scorer: Scorer, seeds: list[int], work: Path) -> None:
    for seed in seeds:
        fit, held = stratified_holdout(shared, TrainConfig().holdout, seed)
        tokenizer, start = load_encoder(default_base())
        info = packaged_prior()
        if info is None:
            raise SystemExit("no perf prior is packaged")
        apply_prior(start, load_prior_tensors(info.weights))
        start_state = _state(start)
        if seed == seeds[0]:
            scorer.score_all("the prior alone", seed, start, tokenizer, held)
        for tag, knobs in RECIPES.items():
            folder = work / f"{len(scorer.rows)}-s{seed}"
            train_student(TrainConfig(seed=seed, **knobs), fit, [], folder)
            tokenizer, model = load_encoder(folder)
            scorer.score_all(tag, seed, model, tokenizer, held)
            tuned = _state(model)
            for alpha in WISE.get(tag, ()):
                model.load_state_dict(_mixed(tuned, start_state, alpha))
                scorer.score_all(f"{tag}, WiSE {alpha}", seed, model, tokenizer, held)


def folds(rows: Sequence[Example], k: int, seed: int = 0) -> list[list[int]]:
    """``k`` stratified folds of row indices."""
    rng = random.Random(seed)
    out: list[list[int]] = [[] for _ in range(k)]
    for label in (0, 1):
        group = [i for i, e in enumerate(rows) if e.label == label]
        rng.shuffle(group)
        for j, i in enumerate(group):
            out[j % k].append(i)
    return out


def votes(
    shared: list[Example],
    sets: dict[str, list[Example]],
    targets: list[str],
    scorer: Scorer,
    work: Path,
) -> None:
    def fit_and_score(
        tag: str, train: list[Example], test: list[Example]
    ) -> tuple[float, list[float]]:
        config = TrainConfig(epochs=2, prior="none")
        fit, held = stratified_holdout(train, config.holdout, config.seed)
        train_student(config, fit, [], work / tag)
        tokenizer, model = load_encoder(work / tag)
        model.to(scorer.device).eval()
        threshold = scorer.threshold(model, tokenizer, held, "model_input")
        return threshold, scorer.floored(model, tokenizer, test, "model_input")

    for target in targets:
        rows = sets[target]
        truth = [e.label for e in rows]
        others = [e for name, group in sets.items() if name not in targets for e in group]
        rules = [bool(find_matches(message_of(e), scorer.terms)) for e in rows]
        base = {"target": target, "keyword": scores(truth, rules)}
        threshold, probs = fit_and_score(f"{target}-team", shared + others, rows)
        scorer.record(
            {
                **base,
                "votes": "shared + other sets",
                "model": scores(truth, [p >= threshold for p in probs]),
            }
        )
        for tag, extra in (
            ("shared + 4/5 of the target", []),
            ("shared + other sets + 4/5", others),
        ):
            calls = [False] * len(rows)
            for f, test_idx in enumerate(folds(rows, 5)):
                left = set(test_idx)
                learn = shared + extra + [e for i, e in enumerate(rows) if i not in left]
                threshold, probs = fit_and_score(
                    f"{target}-{len(scorer.rows)}-{f}", learn, [rows[i] for i in test_idx]
                )
                for i, p in zip(test_idx, probs, strict=True):
                    calls[i] = p >= threshold
            scorer.record({**base, "votes": tag, "model": scores(truth, calls)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("recipes", "votes"))
    parser.add_argument("--shared", type=Path, required=True, help="perf-commit-messages folder")
    parser.add_argument("--set", action="append", default=[], help="NAME=FOLDER (repeatable)")
    parser.add_argument("--target", action="append", default=[], help="votes: a set to reach")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--work", type=Path, default=Path("build/recipes-experiment"))
    parser.add_argument("--out", type=Path, default=Path("recipes-experiment.json"))
    args = parser.parse_args()
    shared = shared_examples(args.shared)
    sets = {n: set_examples(Path(f), n) for n, f in (s.split("=", 1) for s in args.set)}
    test = args.shared / "test.jsonl"
    if args.what == "recipes" and test.is_file():
        sets["test"] = [
            Example(r["commit_message"], int(r["target"] == 1), float(r["target"] == 1), "test")
            for r in map(json.loads, test.open(encoding="utf-8"))
        ]
    unknown = [t for t in args.target if t not in sets]
    if unknown:
        parser.error(f"--target {unknown[0]!r} is not a --set")
    scorer = Scorer(sets, args.out)
    if args.what == "recipes":
        recipes(shared, scorer, [int(s) for s in args.seeds.split(",")], args.work)
    else:
        votes(shared, sets, args.target, scorer, args.work)


if __name__ == "__main__":
    main()
