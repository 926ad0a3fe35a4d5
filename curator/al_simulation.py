"""Active learning with a simulated annotator: F1 on an eval set against the number of
votes, for three ways of ordering the queue (``curator simulate active-learning`` and
``tests/benchmarks/bench_active_learning.py``).

The pool (a set's settled items, or a labeled JSONL/CSV file) becomes one set in a
throwaway store per order and seed; the simulated annotator votes each item's true
label, K at a time, taking the queue in order:

- ``rerank``: the app's loop: after every K votes, :func:`curator.active_learning.
  rerank_queue` refits the in-loop model on the votes so far and re-ranks the queue
  (here the whole pool), most uncertain first;
- ``fixed``: ordered once by the uncertainty of the in-loop model fitted on the seed
  votes (what ``set create --prefer uncertain`` does with a labeler), never re-ranked;
- ``random``: the pool in a seeded random order.

All three start from the same random seed votes (holding both labels). After every K
votes (the last step shorter, so a curve ends at the votes asked for, or at the pool's
size) the in-loop model is fitted on all votes and scored on the eval items (F1 of the
positive label); a curve is the mean over the seeds. :func:`store_result` keeps the
result in the ``simulations`` table, where the Train screen and ``curator chart
active-learning`` find it.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotation.adjudication import final_labels
from annotation.importing import _text
from annotation.labeled_import import TEXT_FIELDS
from annotation.labels import POSITIVE_LABEL, SKIP
from annotation.record_files import read_records
from annotation.sets import require_set
from curator.active_learning import TEXT_FIELD, rerank_queue, training_labels
from engines.labelers.inloop import InLoopModel, fit_inloop
from store import Store, open_store
from store.items import ImportedItem, insert_imported_items
from store.reranking import unvoted_after
from store.sets import NewSet, create_set
from store.simulations import SimulationRow, latest_simulation, record_simulation
from store.teaching import commit_texts
from store.votes import VoteRow, append_votes

KIND = "active-learning"
STRATEGIES = ("rerank", "fixed", "random")
SEED_VOTES = 10

Labeled = tuple[str, str]
"""(text, label)"""
Progress = Callable[[str, int, int], None]
"""``progress(what, done, total)`` after each run of one order and seed."""


class SimulationError(ValueError):
    """A simulation that cannot run as asked (no such set, a bad file, too few labels)."""


@dataclass(frozen=True)
class SimulationRequest:
    """What to simulate: the pool and eval items, the positive label, how many votes in
    all, K (votes between re-ranks and between scores), seeds and seed votes."""

    pool: list[Labeled]
    test: list[Labeled]
    positive: str = POSITIVE_LABEL["commit"]
    votes: int = 400
    every: int = 20
    seeds: int = 3
    seed_votes: int = SEED_VOTES
    names: tuple[str, str] = ("", "")
    """How the user named the pool and the eval (a set or a file), for messages."""


@dataclass(frozen=True)
class SimulationResult:
    """F1 per number of votes for each order (mean over seeds), and the mean seconds a
    re-rank took (``rerank`` only)."""

    curves: dict[str, list[tuple[int, float]]]
    rerank_s: float | None
    seconds: float

    def as_json(self) -> dict[str, Any]:
        return {
            "curves": {k: [[n, f1] for n, f1 in v] for k, v in self.curves.items()},
            "mean_rerank_s": self.rerank_s,
            "seconds": self.seconds,
        }


# --------------------------------------------------------------------------- inputs


def labeled_from_set(store: Store, name: str) -> list[Labeled]:
    """A commit set's settled items (majority rule, skips left out) as (model input,
    label)."""
    try:
        set_row = require_set(store, name)
    except ValueError as exc:
        raise SimulationError(str(exc)) from exc
    if set_row.kind != "commit":
        raise SimulationError(f"set {name!r} holds {set_row.kind} items: simulate on commits")
    labels = {i: lab for i, lab in final_labels(store, set_row).items() if lab != SKIP}
    texts = commit_texts(store, list(labels), TEXT_FIELD)
    return [(texts[i], labels[i]) for i in labels if texts.get(i)]


def labeled_from_file(
    path: Path,
    label_field: str,
    mapping: dict[str, str],
    text_field: str | None = None,
    skipped: list[str] | None = None,
) -> list[Labeled]:
    """(text, label) per row of a JSONL or CSV file (PerfCurator's ``train.jsonl`` with
    ``--label-field target --map 1=perf,0=non-perf``). A bad row is named (``FILE:LINE:
    why``) in ``skipped`` and left out; without ``skipped`` the first one is the error.
    A file that cannot be read at all, or where no row has the label field, is always an
    error."""
    columns = (label_field,) if path.suffix.lower() in (".csv", ".tsv") else ()
    records, errors = read_records(path, columns)
    if errors and (skipped is None or not records):
        raise SimulationError(errors[0])
    problems = list(errors)
    names = [text_field] if text_field else list(TEXT_FIELDS)
    if records and not any((_text(record, label_field) or "").strip() for _, record in records):
        raise SimulationError(
            f"{path}: no row has a value in the label field {label_field!r}:"
            " name the file's label field with --label-field"
        )
    found = []
    for number, record in records:
        text = next((record[n] for n in names if isinstance(record.get(n), str)), None)
        raw = (_text(record, label_field) or "").strip()
        if text is None or not text.strip():
            problems.append(f"{path}:{number}: missing the text ({' or '.join(names)})")
        elif not raw:
            problems.append(f"{path}:{number}: missing the label field {label_field!r}")
        elif mapping and raw not in mapping:
            problems.append(f"{path}:{number}: label {raw!r} is not in --map")
        else:
            found.append((text, mapping.get(raw, raw)))
    if problems and skipped is None:
        raise SimulationError(problems[0])
    if skipped is not None:
        skipped.extend(problems)
    return found


def check(request: SimulationRequest) -> None:
    """Refuse what cannot give a curve, in one line."""
    pool_name, eval_name = (f" {n}" if n else "" for n in request.names)
    for what, rows in ((f"pool{pool_name}", request.pool), (f"eval{eval_name}", request.test)):
        labels = {label for _, label in rows}
        if request.positive not in labels or labels == {request.positive}:
            raise SimulationError(
                f"the {what} needs settled items of {request.positive!r} and of another"
                f" label ({len(rows)} items, labels: {', '.join(sorted(labels)) or 'none'})"
            )
    if request.every < 1 or request.seeds < 1 or request.seed_votes < 2:
        raise SimulationError("--every and --seeds must be at least 1, --seed-votes 2")
    if request.votes <= request.seed_votes:
        raise SimulationError(
            f"--votes {request.votes} must exceed --seed-votes {request.seed_votes}: the"
            " first votes are the random seed votes, and the orders differ only after them"
        )
    if len(request.pool) <= request.seed_votes:
        raise SimulationError(
            f"the pool{pool_name} has {len(request.pool)} items: more than --seed-votes"
            f" ({request.seed_votes}) are needed"
        )


# --------------------------------------------------------------------------- running


def positive_f1(model: InLoopModel | None, test: Sequence[Labeled], positive: str) -> float:
    """F1 of the positive label on ``test`` at P >= 0.5 (0 without a model)."""
    if model is None:
        return 0.0
    predicted = [p >= 0.5 for p in model.p_positive([t for t, _ in test])]
    truth = [label == positive for _, label in test]
    tp = sum(p and t for p, t in zip(predicted, truth, strict=True))
    fp = sum(p and not t for p, t in zip(predicted, truth, strict=True))
    fn = sum(t and not p for p, t in zip(predicted, truth, strict=True))
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def seed_order(pool: Sequence[Labeled], positive: str, k: int, seed: int) -> list[int]:
    """The pool's indexes in a seeded random order whose first ``k`` (the seed votes)
    hold the positive label and another one."""
    order = list(range(len(pool)))
    random.Random(seed).shuffle(order)
    for want in (True, False):
        if not any((pool[i][1] == positive) is want for i in order[:k]):
            j = next(j for j in range(k, len(order)) if (pool[order[j]][1] == positive) is want)
            order[k - 1 - (not want)], order[j] = order[j], order[k - 1 - (not want)]
    return order


def run_strategy(
    strategy: str, request: SimulationRequest, seed: int, folder: Path
) -> tuple[list[tuple[int, float]], list[float]]:
    """One order's curve for one seed, in a store of its own under ``folder``, and the
    seconds each re-rank took."""
    pool, k, positive = request.pool, request.seed_votes, request.positive
    order = seed_order(pool, positive, k, seed)
    seed_items, rest = order[:k], order[k:]
    with open_store(folder / f"{strategy}-{seed}.db") as store:
        stored = insert_imported_items(
            store,
            [
                ImportedItem(
                    "commit", f"p{i}", "pool", None, None, {"message": t, TEXT_FIELD: t}, {}
                )
                for i, (t, _) in enumerate(pool)
            ],
        )
        ids = [item_id for _, item_id in stored]
        truth = {ids[i]: pool[i][1] for i in range(len(pool))}
        texts = {ids[i]: pool[i][0] for i in range(len(pool))}
        if strategy == "fixed":
            seeded = fit_inloop(
                [pool[i][0] for i in seed_items], [pool[i][1] for i in seed_items], positive
            )
            assert seeded is not None  # the seed votes hold both labels
            unsure = seeded.uncertainty([pool[i][0] for i in rest])
            rest = [i for _, i in sorted(zip(unsure, rest, strict=True), key=lambda p: -p[0])]
        labels = sorted({label for _, label in pool}, key=lambda lab: lab != positive)
        set_row = create_set(
            store,
            NewSet(
                name="pool", kind="commit", labels=labels, params={"rerank_every": request.every}
            ),
            [ids[i] for i in seed_items + rest],
        )
        append_votes(
            store, [VoteRow(ids[i], "sim", pool[i][1], set_id=set_row.id) for i in seed_items]
        )

        def score() -> float:
            voted = training_labels(store, set_row)
            model = fit_inloop([texts[i] for i in voted], list(voted.values()), positive)
            return positive_f1(model, request.test, positive)

        curve, seconds, done = [(k, score())], [], k
        target = min(request.votes, len(pool))
        while done < target:
            if strategy == "rerank":
                result = rerank_queue(store, set_row, -1, window=len(pool))
                if result is not None:
                    seconds.append(result.seconds)
            batch = unvoted_after(store, set_row.id, -1, min(request.every, target - done))
            if not batch:
                break
            append_votes(store, [VoteRow(i, "sim", truth[i], set_id=set_row.id) for _, i in batch])
            done += len(batch)
            curve.append((done, score()))
    return curve, seconds


def simulate(request: SimulationRequest, progress: Progress | None = None) -> SimulationResult:
    """Every order with every seed; curves averaged over seeds. Raises
    :class:`SimulationError` on a request that cannot give a curve."""
    check(request)
    started = time.perf_counter()
    curves: dict[str, list[tuple[int, float]]] = {}
    seconds: list[float] = []
    total, done = len(STRATEGIES) * request.seeds, 0
    with tempfile.TemporaryDirectory(prefix="curator-al-") as tmp:
        for strategy in STRATEGIES:
            runs = []
            for seed in range(request.seeds):
                curve, took = run_strategy(strategy, request, seed, Path(tmp))
                runs.append(curve)
                seconds += took
                done += 1
                if progress is not None:
                    progress(f"{strategy} seed {seed + 1}/{request.seeds}", done, total)
            curves[strategy] = [
                (runs[0][j][0], round(statistics.mean(r[j][1] for r in runs), 3))
                for j in range(len(runs[0]))
            ]
    return SimulationResult(
        curves,
        round(statistics.mean(seconds), 3) if seconds else None,
        round(time.perf_counter() - started, 1),
    )


# --------------------------------------------------------------------------- storing


def store_result(
    store: Store, pool: str, eval_name: str, request: SimulationRequest, result: SimulationResult
) -> SimulationRow:
    """Keep the result in the ``simulations`` table (kind ``active-learning``)."""
    params = {
        "votes": request.votes,
        "every": request.every,
        "seeds": request.seeds,
        "seed_votes": request.seed_votes,
        "positive": request.positive,
        "pool_items": len(request.pool),
        "eval_items": len(request.test),
    }
    return record_simulation(store, KIND, pool, eval_name, params, result.as_json())


def stored_curves(row: SimulationRow) -> dict[str, list[tuple[int, float]]]:
    """The curves of a stored simulation, order by order; what cannot be read is left
    out."""
    raw = row.result.get("curves")
    found: dict[str, list[tuple[int, float]]] = {}
    if not isinstance(raw, dict):
        return found
    for strategy, points in raw.items():
        try:
            found[str(strategy)] = [(int(n), float(f1)) for n, f1 in points]
        except (TypeError, ValueError):
            continue
    return found


def latest_curves(store: Store) -> SimulationRow | None:
    """The newest stored active-learning simulation, if any."""
    return latest_simulation(store, KIND)
