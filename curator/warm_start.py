"""Warm starts: train a student from a registered student's weights instead of the
packaged base, mixing in a replay sample of what that student learned from.

:func:`resolve_start` resolves ``student@N`` / ``@latest`` / ``@current`` through the
registry; :func:`prepare_warm_start` points the training config at that model's
directory and adds ``replay`` x
len(new) of its saved replay examples (seeded; those from the run's dev/eval
repositories are left out, so no held-out repository leaks in through the old data).
A model without a replay file warm-starts without replay, and the note says so.

:func:`stage_learning_curve` records a learning curve in a staged model directory
(``learning_curve.json`` and the student's meta) before it is registered.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engines.labelers.student import FAMILY as STUDENT
from engines.labelers.student import META_FILE, Example, TrainConfig
from engines.labelers.student.replay import read_replay, replay_sample
from store import Store
from store.models import ModelRow, get_model
from store.sets import get_set, set_item_ids, sources_in_sets

CURVE_FILE = "learning_curve.json"


@dataclass(frozen=True)
class WarmStart:
    """Where training starts (``model``, its directory) and what it learns from."""

    model: str
    path: str
    config: TrainConfig
    examples: list[Example]
    counts: dict[str, Any]
    note: str | None = None


def resolve_start(store: Store, name: str) -> ModelRow:
    """The registered student ``name`` points to; ValueError in one line otherwise."""
    # Imported here: the registry's module pulls in the labelers.
    from engines.labelers.registry import LabelerError, resolve_model

    if name.rpartition("@")[0] != STUDENT:
        raise ValueError(
            f"--from-model takes a student (student@N, @latest, @current), not {name!r}"
        )
    try:
        return resolve_model(store, name)
    except LabelerError as exc:
        raise ValueError(f"--from-model {name}: {exc}") from None


def held_out_sources(store: Store, set_names: Iterable[str | None]) -> set[str]:
    """Repositories of the items of the named sets (dev, eval)."""
    rows = [get_set(store, name) for name in set_names if name]
    return sources_in_sets(store, [row.id for row in rows if row is not None])


def learned_sets(store: Store, start: ModelRow) -> list[str]:
    """The vote sets ``start`` learned from, with those of the students it was itself
    warm-started from (its weights carry what they learned), oldest first."""
    chain: list[str] = []
    row: ModelRow | None = start
    seen: set[str] = set()
    while row is not None and row.name not in seen:
        seen.add(row.name)
        votes = row.params.get("votes")
        if isinstance(votes, list):
            chain[:0] = [str(v) for v in votes if str(v) not in chain]
        parent = row.params.get("warm_start")
        row = get_model(store, parent) if isinstance(parent, str) else None
    return chain


def learned_held_out(
    store: Store, model: ModelRow, held: Iterable[tuple[str, str | None]]
) -> str | None:
    """``student@2 learned from the votes of gt, which hold 40 of the 50 items of --eval
    ev`` when ``model`` (or a student it was warm-started from) learned from items of a
    held-out set (``(flag, set name)`` pairs); None when it learned from none. The sets
    are read as they are now: an item added to a learned set since counts too."""
    learned = [row for name in learned_sets(store, model) if (row := get_set(store, name))]
    if not learned:
        return None
    seen = {i for row in learned for i in set_item_ids(store, row.id)}
    for flag, name in held:
        row = get_set(store, name) if name else None
        if row is None:
            continue
        ids = set(set_item_ids(store, row.id))
        if shared := len(ids & seen):
            sets = ", ".join(r.name for r in learned)
            return (
                f"{model.name} learned from the votes of {sets}, which hold {shared:,} of the"
                f" {len(ids):,} items of {flag} {name}"
            )
    return None


def start_leak(store: Store, start: ModelRow, held: Iterable[tuple[str, str | None]]) -> str | None:
    """One line when ``start`` (or a student it was warm-started from) learned from
    items of a held-out set (``(flag, set name)`` pairs such as ``("--eval", "gt")``):
    a model started from it is scored on what its weights already saw, and the scores
    there overstate. None when it did not."""
    found = learned_held_out(store, start, held)
    if found is None:
        return None
    return f"{found}: scores there overstate (start from a student that did not learn from them)"


def warm_config(config: TrainConfig, start: ModelRow) -> TrainConfig:
    """``config`` reading its weights from ``start``'s directory."""
    if config.base is not None:
        raise ValueError("--from-model and --base both name the starting weights: give one")
    if config.layers is not None:
        raise ValueError("--layers cannot shrink a warm start: the model keeps its layers")
    assert start.path is not None
    return replace(config, base=str(Path(start.path).resolve()))


def prepare_warm_start(
    start: ModelRow,
    ratio: float,
    config: TrainConfig,
    examples: Sequence[Example],
    banned_sources: set[str],
) -> WarmStart:
    """The config warm-started from ``start`` (resolved by :func:`resolve_start`) and the
    new examples with their replay share."""
    warm = warm_config(config, start)
    mixed, counts, note = with_replay(start, examples, ratio, config.seed, banned_sources)
    return WarmStart(start.name, warm.resolved_base(), warm, mixed, counts, note)


def with_replay(
    start: ModelRow,
    examples: Sequence[Example],
    ratio: float,
    seed: int,
    banned_sources: set[str],
) -> tuple[list[Example], dict[str, Any], str | None]:
    """``examples`` plus ``ratio`` x len(examples) of ``start``'s replay sample."""
    assert start.path is not None
    replay = read_replay(start.path)
    if replay is None:
        note = f"{start.name} has no replay sample: warm start without replay"
        return list(examples), {"ratio": ratio, "available": 0, "mixed": 0}, note
    usable = [e for e in replay if not (e.source and e.source in banned_sources)]
    chosen = replay_sample(usable, len(examples), ratio, seed)
    counts = {"ratio": ratio, "available": len(replay), "mixed": len(chosen)}
    if len(usable) != len(replay):
        counts["dropped_for_overlap"] = len(replay) - len(usable)
    return [*examples, *chosen], counts, None


def stage_learning_curve(staging: Path, curve: dict[str, Any]) -> None:
    """Write ``learning_curve.json`` and add the curve to the student's meta, in a
    directory not yet registered (each file replaced atomically)."""
    _write_json(staging / CURVE_FILE, curve)
    meta_path = staging / META_FILE
    if meta_path.is_file():
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        meta["learning_curve"] = curve
        _write_json(meta_path, meta)


def _write_json(path: Path, value: Any) -> None:
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(json.dumps(value, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(temp, path)
