"""The replay sample a student keeps beside its weights, against forgetting.

Every trained student saves a seeded sample of its training examples (at most
:data:`MAX_REPLAY`: text, label, target, origin and repository) as gzipped JSON lines in
its directory. A later warm start from that student (``curator train --from-model``)
mixes some of them with the new examples, so adapting to a new source does not erase
what the student knew. The texts are the store's own data, kept beside the model.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import uuid
from collections.abc import Sequence
from pathlib import Path

from engines.labelers.student.data import Example

REPLAY_FILE = "replay.jsonl.gz"
MAX_REPLAY = 2000


def write_replay(
    out_dir: Path, examples: Sequence[Example], seed: int = 0, limit: int = MAX_REPLAY
) -> int:
    """Save a seeded sample of ``examples`` (all of them when at most ``limit``) to
    ``out_dir/replay.jsonl.gz``, atomically; returns how many were saved."""
    chosen = list(examples)
    if len(chosen) > limit:
        chosen = random.Random(seed).sample(chosen, limit)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / REPLAY_FILE
    temp = out_dir / f".{REPLAY_FILE}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with gzip.open(temp, "wt", encoding="utf-8") as fh:
            for e in chosen:
                row = {
                    "text": e.text,
                    "label": e.label,
                    "target": e.target,
                    "origin": e.origin,
                    "source": e.source,
                    "message": e.message,
                    "weight": e.weight,
                }
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        os.replace(temp, target)
    finally:
        if temp.exists():
            temp.unlink()
    return len(chosen)


def read_replay(model_dir: str | Path) -> list[Example] | None:
    """A student's replay sample, or None when it has none (trained before replay was
    saved, or the file was removed)."""
    path = Path(model_dir) / REPLAY_FILE
    if not path.is_file():
        return None
    examples = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            row = json.loads(line)
            label = int(row["label"])
            examples.append(
                Example(
                    str(row["text"]),
                    label,
                    float(row.get("target", label)),
                    str(row.get("source") or ""),
                    None,
                    str(row.get("origin") or "replay"),
                    row.get("message"),
                    float(row.get("weight", 1.0)),
                )
            )
    return examples


def replay_sample(
    replay: Sequence[Example], new_count: int, ratio: float, seed: int
) -> list[Example]:
    """``ratio`` x ``new_count`` of the replay examples (all when fewer), seeded."""
    if ratio < 0:
        raise ValueError(f"replay ratio must be 0 or more, not {ratio}")
    wanted = min(len(replay), round(ratio * new_count))
    if wanted <= 0:
        return []
    return random.Random(seed).sample(list(replay), wanted)
