"""How much the perf prior is worth on a set it never learned from.

For each target set, a prior is built (scripts/build_perf_prior.py) from the shared
messages and every *other* set, then:

- ``oob``: the out-of-box student, trained on the shared messages alone from that prior
  (what ``curator train --votes train --epochs 2`` does with the packaged prior), one run
  per seed, scored on the whole target set;
- ``plain``: the same without the prior (``--prior none``);
- with ``--halves``, the adapted protocol of issue 22: the target split in two halves
  (stratified, seed 0); the student learns from the shared messages and one half, from
  the prior (``adapted``) or without it (``adapted-plain``), and is scored on the other.

Every score stands on the keyword floor; the threshold is chosen on a 15% slice of the
training examples, as ``curator train`` does, and a model reads the target's commits as
``curator predict`` would feed them: the message alone when it learned from messages
only, else message || diff. (The runs in docs/label-quality-rounds.md before 2026-11-26 18:00 UTC
scored every model on message || diff; ``--field model_input`` repeats that.) About 30
trainings: minutes on a GPU, hours on two CPU cores.

    python tests/benchmarks/experiment_perf_prior.py --shared ../shared/data/perf-commit-messages \\
        --set cross_source=build/cs --set holdout=build/holdout ... --target holdout --out r.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from build_perf_prior import build, set_examples, shared_examples  # noqa: E402

from engines.labelers.calibration import choose_threshold  # noqa: E402
from engines.labelers.keyword import find_matches, packaged_terms  # noqa: E402
from engines.labelers.student.data import Example, stratified_holdout  # noqa: E402
from engines.labelers.student.infer import (  # noqa: E402
    load_encoder,
    pick_device,
    positive_probabilities,
)
from engines.labelers.student.prior import ENV_FOLDER  # noqa: E402
from engines.labelers.student.train import (  # noqa: E402
    TrainConfig,
    resolved_field,
    train_student,
)


def scores(truth: list[int], calls: list[bool]) -> dict[str, float]:
    tp = sum(t and c for t, c in zip(truth, calls, strict=True))
    fp = sum((not t) and c for t, c in zip(truth, calls, strict=True))
    fn = sum(t and not c for t, c in zip(truth, calls, strict=True))
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"p": round(p, 3), "r": round(r, 3), "f1": round(2 * p * r / (p + r), 3) if p + r else 0}


def halves(rows: list[Example], seed: int = 0) -> tuple[list[Example], list[Example]]:
    rng = random.Random(seed)
    a: list[Example] = []
    b: list[Example] = []
    for label in (0, 1):
        group = [e for e in rows if e.label == label]
        rng.shuffle(group)
        a += group[: len(group) // 2]
        b += group[len(group) // 2 :]
    return a, b


def message_of(e: Example) -> str:
    """The commit's message: ``message`` when the text carries a diff, else the text."""
    return e.message if e.message is not None else e.text


def floored_probabilities(
    model_dir: Path, rows: list[Example], terms: Any, device: Any, field: str = "model_input"
) -> tuple[list[float], list[bool]]:
    """P(perf) of ``rows`` under the keyword floor, and where the floor fired; each read as
    ``field`` says (``message``: the message alone, as ``curator predict`` feeds a model
    that learned from messages only)."""
    tokenizer, model = load_encoder(model_dir)
    model.to(device)
    return floored_by(model, tokenizer, rows, terms, device, field)


def floored_by(
    model: Any, tokenizer: Any, rows: list[Example], terms: Any, device: Any, field: str
) -> tuple[list[float], list[bool]]:
    """:func:`floored_probabilities` of a model already loaded on ``device``."""
    texts = [message_of(e) if field == "message" else e.text for e in rows]
    probs = positive_probabilities(model, tokenizer, texts, 128, 256, device)
    flags = [bool(find_matches(message_of(e), terms)) for e in rows]
    return [1.0 if f else p for p, f in zip(probs, flags, strict=True)], flags


class Experiment:
    def __init__(
        self, work: Path, out: Path, epochs: int, field: str | None, early_stop: bool
    ) -> None:
        self.field, self.early_stop = field, early_stop
        self.terms = packaged_terms()
        self.device = pick_device(None)
        self.work, self.out, self.epochs = work, out, epochs
        self.rows: list[dict] = []

    def run(
        self, tag: str, train: list[Example], prior: str, seed: int, test: list[Example], **where
    ) -> None:
        config = TrainConfig(epochs=self.epochs, seed=seed, prior=prior)
        fit, held = stratified_holdout(train, config.holdout, config.seed)
        model_dir = self.work / f"{tag}-s{seed}"
        result = train_student(config, fit, held if self.early_stop else [], model_dir)
        held_probs, _ = floored_probabilities(model_dir, held, self.terms, self.device)
        threshold, _ = choose_threshold(held_probs, [e.label for e in held], "f1")
        field = self.field or resolved_field(config, result)
        probs, flags = floored_probabilities(model_dir, test, self.terms, self.device, field)
        truth = [e.label for e in test]
        row = {
            "variant": tag,
            "seed": seed,
            **where,
            "prior_applied": result.prior is not None,
            "threshold": round(threshold, 3),
            "field": field,
            "keyword": scores(truth, flags),
            "model": scores(truth, [p >= threshold for p in probs]),
        }
        self.rows.append(row)
        print(json.dumps(row), flush=True)
        self.out.write_text(json.dumps(self.rows, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, required=True)
    parser.add_argument("--set", action="append", default=[], help="NAME=FOLDER (repeatable)")
    parser.add_argument("--target", action="append", default=[], help="a set to leave out")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--halves", action="store_true")
    parser.add_argument("--field", choices=("message", "model_input"), default=None)
    parser.add_argument(
        "--early-stop", action="store_true", help="stop on the 15%% slice (the GPU runs did)"
    )
    parser.add_argument(
        "--one-prior", action="store_true", help="one prior built without every target"
    )
    parser.add_argument("--work", type=Path, default=Path("build/prior-experiment"))
    parser.add_argument("--out", type=Path, default=Path("prior-experiment.json"))
    args = parser.parse_args()
    shared = shared_examples(args.shared)
    sets = {n: set_examples(Path(f), n) for n, f in (s.split("=", 1) for s in args.set)}
    seeds = [int(s) for s in args.seeds.split(",")]
    experiment = Experiment(args.work, args.out, args.epochs, args.field, args.early_stop)
    for target in args.target:
        left_out = set(args.target) if args.one_prior else {target}
        folder = args.work / f"prior-without-{'-'.join(sorted(left_out))}"
        if not (folder / "perf_prior.safetensors").is_file():
            build(shared, {n: rows for n, rows in sets.items() if n not in left_out}, folder)
        os.environ[ENV_FOLDER] = str(folder)
        test = sets[target]
        for seed in seeds:
            experiment.run("oob", shared, "perf", seed, test, target=target)
            experiment.run("plain", shared, "none", seed, test, target=target)
        if args.halves:
            one, other = halves(test)
            for fold, (learn, rest) in enumerate(((one, other), (other, one))):
                where = {"target": target, "fold": fold}
                experiment.run("adapted", shared + learn, "perf", seeds[0], rest, **where)
                experiment.run("adapted-plain", shared + learn, "none", seeds[0], rest, **where)
        os.environ.pop(ENV_FOLDER)


if __name__ == "__main__":
    main()
