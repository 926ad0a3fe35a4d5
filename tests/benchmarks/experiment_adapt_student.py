"""The student adapted with half of a new source's votes (issue 22's adapted protocol).

For each target set and each half of it (stratified, seed 0), the student learns from
the shared messages plus one half of the target's votes (message || diff) and is scored
on the other half under the keyword floor. Variants:

- ``shared``: the shared messages alone (out of the box; one model for every half);
- ``shared+half``: plus the half, every example weight 1 (what ``curator train`` does);
- ``shared+half x W``: the half's examples weighted W;
- ``half``: the half alone;
- ``team+half``: the shared messages, every other team set and the half.

The threshold is chosen, as ``curator train`` does, on a 15% stratified slice of the
training examples; ``thr(in-domain)`` reports the F1 when it is chosen on the slice's
target examples only. This needs a GPU to finish in minutes (about 20 trainings); the
texts are read from folders of ``items.jsonl`` + ``votes.jsonl`` (see
sample_data/cross_source*/README.md for how to rebuild them from local clones).

    python tests/benchmarks/experiment_adapt_student.py --shared DIR --set r3=DIR \
        --set hold=DIR --team cs=DIR --team more=DIR --out results.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from build_perf_prior import set_examples, shared_examples  # noqa: E402
from experiment_perf_prior import floored_probabilities, halves, scores  # noqa: E402

from engines.labelers.calibration import choose_threshold  # noqa: E402
from engines.labelers.keyword import packaged_terms  # noqa: E402
from engines.labelers.student.data import Example, stratified_holdout  # noqa: E402
from engines.labelers.student.infer import (  # noqa: E402
    pick_device,
)
from engines.labelers.student.train import TrainConfig, train_student  # noqa: E402


class Runner:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.terms = packaged_terms()
        self.device = pick_device(None)
        self.results: list[dict] = []

    def train(self, rows: list[Example], tag: str) -> tuple[Path, float, float | None]:
        """Train on ``rows``; return the model dir, the threshold on the slice and the
        threshold on the slice's non-shared examples (None when too few)."""
        config = TrainConfig(
            base=self.args.base, epochs=self.args.epochs, seed=self.args.seed, prior=self.args.prior
        )
        fit, dev = stratified_holdout(rows, config.holdout, config.seed)
        out = Path(self.args.work) / tag
        started = time.monotonic()
        result = train_student(config, fit, dev, out)
        probs, _ = floored_probabilities(out, dev, self.terms, self.device)
        labels = [e.label for e in dev]
        thr, _ = choose_threshold(probs, labels, "f1")
        own = [(p, y) for p, y, e in zip(probs, labels, dev, strict=True) if e.source != "shared"]
        thr_in = None
        if own and len({y for _, y in own}) == 2 and len(own) >= 10:
            thr_in, _ = choose_threshold([p for p, _ in own], [y for _, y in own], "f1")
        print(
            f"  trained {tag}: {len(fit)} examples, {result.epochs_run} epochs, "
            f"{time.monotonic() - started:.0f} s, threshold {thr:.3f} / {thr_in}",
            flush=True,
        )
        return out, thr, thr_in

    def score(self, model_dir: Path, rows: list[Example], thr: float, thr_in: float | None) -> dict:
        probs, flags = floored_probabilities(model_dir, rows, self.terms, self.device)
        truth = [e.label for e in rows]
        out = {
            "kw": scores(truth, flags),
            "model": scores(truth, [p >= thr for p in probs]),
            "threshold": round(thr, 3),
        }
        if thr_in is not None:
            out["model_thr_in"] = scores(truth, [p >= thr_in for p in probs])
        return out

    def record(self, **row) -> None:
        self.results.append(row)
        print(json.dumps(row), flush=True)
        Path(self.args.out).write_text(json.dumps(self.results, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, required=True)
    ap.add_argument("--set", action="append", default=[], help="NAME=DIR, a target set")
    ap.add_argument("--team", action="append", default=[], help="NAME=DIR, other team sets")
    ap.add_argument("--base", default=None)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--prior", default="none", help="perf or none (the runs in the docs: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--weights", default="4")
    ap.add_argument("--variants", default="shared,shared+half,weighted,half,team+half")
    ap.add_argument("--work", default="/tmp/adapt-models")
    ap.add_argument("--out", default="adapt.json")
    ap.add_argument("--limit", type=int, default=0, help="at most N per source (smoke)")
    args = ap.parse_args()
    runner = Runner(args)
    variants = set(args.variants.split(","))

    def cut(rows: list[Example]) -> list[Example]:
        return random.Random(0).sample(rows, args.limit) if 0 < args.limit < len(rows) else rows

    shared = cut(shared_examples(args.shared))
    targets = {n: cut(set_examples(Path(d), n)) for n, d in (s.split("=", 1) for s in args.set)}
    team = {n: cut(set_examples(Path(d), n)) for n, d in (s.split("=", 1) for s in args.team)}
    if "shared" in variants:
        base_model = runner.train(shared, "shared")
    for name, rows in targets.items():
        a, b = halves(rows)
        for fold, (learn, test) in enumerate(((a, b), (b, a))):
            where = {"target": name, "fold": fold, "learn": len(learn), "test": len(test)}
            if "shared" in variants:
                scores = runner.score(base_model[0], test, base_model[1], None)
                runner.record(variant="shared", **where, **scores)
            if "shared+half" in variants:
                m = runner.train(shared + learn, f"{name}-{fold}-plain")
                runner.record(
                    variant="shared+half", **where, **runner.score(m[0], test, m[1], m[2])
                )
            if "weighted" in variants:
                for w in (float(x) for x in args.weights.split(",")):
                    heavy = [
                        Example(e.text, e.label, e.target, e.source, message=e.message, weight=w)
                        for e in learn
                    ]
                    m = runner.train(shared + heavy, f"{name}-{fold}-w{w:g}")
                    runner.record(
                        variant=f"shared+half x{w:g}",
                        **where,
                        **runner.score(m[0], test, m[1], m[2]),
                    )
            if "half" in variants:
                m = runner.train(list(learn), f"{name}-{fold}-alone")
                runner.record(variant="half", **where, **runner.score(m[0], test, m[1], m[2]))
            if "team+half" in variants:
                others = [e for n, r in {**team, **targets}.items() if n != name for e in r]
                m = runner.train(shared + others + learn, f"{name}-{fold}-team")
                runner.record(variant="team+half", **where, **runner.score(m[0], test, m[1], m[2]))


if __name__ == "__main__":
    main()
