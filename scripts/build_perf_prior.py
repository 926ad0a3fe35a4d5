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

Beside the prior goes ``perf_prior.learned``, the digests of every message it learned
from, so a student starting from it leaves those votes out of its fine-tuning.
``--learned-only`` writes that list alone for a prior already in ``--out`` (from the same
``--shared`` and ``--set`` arguments it was built from).

``--out`` elsewhere and ``CURATOR_PERF_PRIOR=that folder`` make ``curator train`` start
from a prior of your own. ``--db DB --votes SET`` (repeatable) adds the settled
perf/non-perf labels of a set in a Curator database, each commit read as ``curator
train`` reads it (message || diff when it has a diff): the way to teach the prior a new
source's votes, which a fine-tune at the prior's small step barely moves (see
docs/label-quality-rounds.md, Round 17):

    python scripts/build_perf_prior.py --shared ../shared/data/perf-commit-messages \
        --set ... --db curator.db --votes ours --version 8 --out build/our-prior
    CURATOR_PERF_PRIOR=build/our-prior curator train --votes train --votes ours

``--seed`` more than once builds a uniform soup: one student per seed (each with its own
holdout and data order, all from one head initialisation), their weights averaged before
the cut. ``--jobs N`` trains N of them at once (worth it on a GPU), and ``--members DIR``
also writes each seed's own prior to ``DIR/seedN`` for comparison (docs/label-quality-rounds.md,
Round 21, measured a soup of four against single builds):

    python scripts/build_perf_prior.py --shared ... --set ... --seed 0 --seed 1 --seed 2 \
        --seed 3 --jobs 4 --members build/members --out build/soup

``--base mpnet`` builds the prior of all-mpnet-base-v2 (``pip install 'curator[mpnet]'``;
it applies to ``curator train --base mpnet``). ``--from-student DIR`` skips the training
and cuts the prior from a student already trained on the base (a registered model's
folder, e.g. one ``curator train --base mpnet --prior none --votes ...`` made):

    python scripts/build_perf_prior.py --base mpnet --from-student ~/.local/share/.../student@14 \
        --out build/mpnet-prior
    CURATOR_PERF_PRIOR=build/mpnet-prior curator train --votes train --base mpnet
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
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


def _example(label: str, message: str, with_diff: str | None, source: str) -> Example:
    """A labeled commit as the prior learns it: message || diff (``with_diff``) when it has
    a diff, its message alone kept for diff dropout; else the message."""
    y = int(label == "perf")
    text = with_diff if with_diff is not None else message
    kept = message if with_diff is not None else None
    return Example(text, y, float(y), source, message=kept)


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
        diff = item.get("diff") or ""
        with_diff = model_input(item["message"], diff, path=item.get("file")) if diff else None
        out.append(_example(vote["label"], item["message"], with_diff, source))
    return out


def store_examples(db: Path, name: str) -> list[Example]:
    """One example per settled perf/non-perf label of set ``name`` in the Curator database
    ``db`` (majority of its votes, as ``curator train`` settles them): message || diff for
    a commit with a diff, its message alone kept for diff dropout; else the message."""
    from annotation.sets import SetError, require_set
    from annotation.training_data import human_items
    from store.connection import StoreError, open_store
    from store.teaching import commit_texts, commits_with_diff

    try:
        store = open_store(db, create=False)
    except StoreError as exc:
        raise SystemExit(f"--db {exc}") from exc
    try:
        items = human_items(store, [require_set(store, name)])
        ids = [x.item_id for x in items]
        messages = commit_texts(store, ids, "message")
        inputs = commit_texts(store, ids, "model_input")
        with_diff = commits_with_diff(store, ids)
    except (SetError, ValueError) as exc:
        raise SystemExit(f"--votes {name}: {exc}") from exc
    finally:
        store.close()
    out = []
    for x in items:
        if x.item_id not in messages:
            continue
        text = inputs[x.item_id] if x.item_id in with_diff else None
        out.append(_example(x.label, messages[x.item_id], text, name))
    if not out:
        raise SystemExit(f"--votes {name}: no settled perf/non-perf labels of commits in {db}")
    return out


def learned_digests(examples: list[Example]) -> list[str]:
    """The digests of the messages of ``examples`` (the message alone, diff or not)."""
    from engines.labelers.student.learned import message_digest

    return [message_digest(e.message if e.message is not None else e.text) for e in examples]


@dataclass(frozen=True)
class Base:
    """The named base a prior is cut from, resolved to its model directory."""

    name: str
    directory: Path
    package: str
    package_version: str | None


def named_base(name: str) -> Base:
    """``minilm`` (the packaged default) or a named base of ``bases.NAMED``, unpacked into
    Curator's cache (the ``cache`` setting) if need be; SystemExit with one line when it
    is not installed."""
    from curator.settings import SettingsError, load_settings
    from engines.labelers.student.bases import NAMED, base_identity, resolve_base
    from engines.labelers.student.infer import default_base
    from engines.labelers.student.prior import DEFAULT_PACKAGE, base_version

    if name not in NAMED:
        raise SystemExit(f"--base {name}: use one of {', '.join(NAMED)}")
    spec = NAMED[name]
    if spec is None:
        return Base(name, Path(default_base()), DEFAULT_PACKAGE, base_version())
    try:
        directory = resolve_base(name, load_settings().cache, say=print)
    except (OSError, ValueError, SettingsError) as exc:
        raise SystemExit(f"--base {exc}") from exc
    assert directory is not None
    identity = base_identity(directory)
    return Base(name, Path(directory), spec.distributions[0], identity[1] if identity else None)


def build(
    shared: list[Example],
    sets: dict[str, list[Example]],
    out: Path,
    rank: int = DEFAULT_RANK,
    epochs: int = 3,
    seeds: tuple[int, ...] = (0,),
    version: int = 1,
    base: Base | None = None,
    jobs: int = 1,
    members: Path | None = None,
) -> dict:
    """Train one student per seed, average their weights when there are several (a
    uniform model soup), cut the change to ``rank`` and write the prior into ``out``;
    return its sidecar. ``jobs`` students train at once; ``members`` (a folder) also
    gets each seed's own prior, in ``seedN``, for comparison."""
    from safetensors.torch import load_file

    from engines.labelers.student.prior import low_rank_prior

    if not seeds:
        raise ValueError("at least one seed is needed")
    base = base or named_base("minilm")
    examples = _all_examples(shared, sets)
    directory = None if base.name == "minilm" else str(base.directory)
    learned_from = _learned_from(shared, sets)
    with_diff = sum(1 for e in examples if e.message is not None)
    learned = learned_digests(examples)
    started = time.monotonic()
    weights = load_file(str(base.directory / "model.safetensors"))
    # Soup members share the first seed's head initialisation, so that their classifiers
    # can be averaged.
    init_seed = seeds[0] if len(seeds) > 1 else None
    with tempfile.TemporaryDirectory() as tmp:
        tuned = {seed: Path(tmp) / f"seed{seed}" for seed in seeds}
        tasks = [(examples, directory, epochs, s, init_seed, tuned[s]) for s in seeds]
        runs = _train_all(tasks, jobs)
        states = {s: load_file(str(tuned[s] / "model.safetensors")) for s in seeds}
    for seed, state in states.items() if members is not None else ():
        factors = low_rank_prior(weights, state, rank)
        training = _training(runs[seed], seed, started)
        folder = members / f"seed{seed}"
        _write(base, factors, folder, rank, version, learned_from, with_diff, training, learned)
    tensors = low_rank_prior(weights, average_weights(list(states.values())), rank)
    if len(seeds) == 1:
        training = _training(runs[seeds[0]], seeds[0], started)
    else:
        training = {
            "soup": "uniform average of the members' weights before the cut",
            "members": [{"seed": s, **runs[s]} for s in seeds],
            "seconds": round(time.monotonic() - started, 1),
        }
    return _write(base, tensors, out, rank, version, learned_from, with_diff, training, learned)


def _training(run: dict, seed: int, started: float) -> dict:
    return {
        "epochs_run": run["epochs_run"],
        "best_dev_f1": run["best_dev_f1"],
        "seed": seed,
        "seconds": round(time.monotonic() - started, 1),
    }


def _train_one(task: tuple) -> tuple[int, dict]:
    """Fine-tune one soup member (a process of its own when ``--jobs`` is above 1)."""
    import torch

    from engines.labelers.student.data import stratified_holdout
    from engines.labelers.student.train import TrainConfig, TrainProgress, train_student

    examples, directory, epochs, seed, init_seed, out = task
    # TF32 matrix products: several times the float32 rate on a recent GPU, and the
    # build averages and cuts the weights anyway.
    torch.set_float32_matmul_precision("high")
    config = TrainConfig(
        epochs=epochs, seed=seed, init_seed=init_seed, prior="none", base=directory
    )
    fit, dev = stratified_holdout(examples, config.holdout, config.seed)

    def report(p: TrainProgress) -> None:
        if p.phase == "epoch" or (p.phase == "train" and p.step % 200 == 0):
            f1 = "" if p.dev_f1 is None else f", dev F1 {p.dev_f1:.3f}"
            where = f"epoch {p.epoch}/{p.epochs}, step {p.step}/{p.steps}"
            print(f"seed {seed}: {p.phase}, {where}{f1}", file=sys.stderr, flush=True)

    result = train_student(config, fit, dev, out, progress=report)
    return seed, {"epochs_run": result.epochs_run, "best_dev_f1": result.best_dev_f1}


def _train_all(tasks: list[tuple], jobs: int) -> dict[int, dict]:
    if jobs <= 1 or len(tasks) == 1:
        return dict(_train_one(task) for task in tasks)
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    # Each member gets its share of the cores, not a thread per core (eight members of
    # a thread per core each oversubscribed a 16-core GPU machine).
    before = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // jobs))
    try:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            return dict(pool.map(_train_one, tasks))
    finally:
        if before is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = before


def average_weights(states: list[dict]) -> dict:
    """The uniform soup of state dicts of one architecture: the mean of each floating
    tensor (others, such as position ids, are taken from the first)."""
    import torch

    soup = {}
    for key, first in states[0].items():
        if torch.is_floating_point(first):
            soup[key] = torch.stack([state[key].float() for state in states]).mean(0)
        else:
            soup[key] = first
    return soup


def _all_examples(shared: list[Example], sets: dict[str, list[Example]]) -> list[Example]:
    return shared + [e for rows in sets.values() for e in rows]


def _learned_from(shared: list[Example], sets: dict[str, list[Example]]) -> dict[str, int]:
    """What the sidecar records a prior learned from: how many examples of each input."""
    return {"shared_messages": len(shared), **{name: len(rows) for name, rows in sets.items()}}


def cut_from_student(student: Path, out: Path, base: Base, rank: int, version: int) -> dict:
    """The prior of a student already trained from ``base``: its change to the base's
    weights cut to ``rank``, with what its sidecar says it learned from."""
    from engines.labelers.student.bases import base_identity

    recorded = json.loads((student / "curator_student.json").read_text(encoding="utf-8"))
    config = recorded.get("config") or {}
    trained_from = config.get("base")
    if base.name == "minilm":
        fits = trained_from is None
    else:
        identity = base_identity(trained_from) if trained_from else None
        fits = identity is not None and identity == (base.name, base.package_version)
    if not fits:
        raise SystemExit(
            f"{student}: not trained from --base {base.name} (its base: {trained_from})"
        )
    tensors = _cut(base, student, rank)
    reads = recorded.get("input") or {}
    learned_from = {
        "student": student.name,
        "examples": (recorded.get("training") or {}).get("examples"),
    }
    with_diff = int(reads.get("examples_with_diff") or 0)
    training = {**(recorded.get("training") or {}), "seed": config.get("seed")}
    training.pop("history", None)
    return _write(base, tensors, out, rank, version, learned_from, with_diff, training)


def _cut(base: Base, tuned_dir: Path, rank: int) -> dict:
    from safetensors.torch import load_file

    from engines.labelers.student.prior import low_rank_prior

    weights = load_file(str(base.directory / "model.safetensors"))
    tuned = load_file(str(tuned_dir / "model.safetensors"))
    return low_rank_prior(weights, tuned, rank)


def _write(
    base: Base,
    tensors: dict,
    out: Path,
    rank: int,
    version: int,
    learned_from: dict,
    with_diff: int,
    training: dict,
    learned: list[str] | None = None,
) -> dict:
    from engines.labelers.student.prior import write_prior

    meta = {
        "version": version,
        "base": base.name,
        "base_package": base.package,
        "base_package_version": base.package_version,
        "rank": rank,
        "learned_from": learned_from,
        "examples_with_diff": with_diff,
        "training": training,
        "built": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": _head(),
    }
    write_prior(tensors, meta, out, learned)
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


def _sets(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, list[Example]]:
    """The examples of every ``--set NAME=FOLDER`` and every ``--votes SET`` of ``--db``."""
    sets = {}
    for spec in args.set:
        name, sep, folder = spec.partition("=")
        if not sep:
            parser.error(f"--set {spec!r}: use NAME=FOLDER")
        sets[name] = set_examples(Path(folder), name)
    if args.votes and args.db is None:
        parser.error("--votes needs the --db that holds the set")
    for name in args.votes:
        if name in sets:
            parser.error(f"--votes {name}: a --set has that name already")
        sets[name] = store_examples(args.db, name)
    return sets


def _learned_only(out: Path, shared: list[Example], sets: dict[str, list[Example]]) -> None:
    """Write the learned list of the prior in ``out``, checking the counts its sidecar
    recorded against the examples given."""
    from engines.labelers.student.learned import write_learned
    from engines.labelers.student.prior import PRIOR_FILE, PRIOR_META, learned_path

    meta = json.loads((out / PRIOR_META).read_text(encoding="utf-8"))
    recorded = meta.get("learned_from") or {}
    given = _learned_from(shared, sets)
    if recorded != given:
        raise SystemExit(f"{out / PRIOR_META}: learned from {recorded}, but given {given}")
    path = learned_path(out / PRIOR_FILE)
    digests = learned_digests(_all_examples(shared, sets))
    print(f"{path}: {write_learned(path, digests)} digests")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, help="perf-commit-messages folder")
    parser.add_argument("--base", default="minilm", help="the named base: minilm or mpnet")
    parser.add_argument(
        "--from-student", type=Path, help="cut from this trained student's folder (no training)"
    )
    parser.add_argument("--set", action="append", default=[], help="NAME=FOLDER (repeatable)")
    parser.add_argument("--db", type=Path, help="a Curator database to read --votes from")
    parser.add_argument(
        "--votes", action="append", default=[], help="a set of --db whose settled labels to learn"
    )
    parser.add_argument("--rank", type=int, default=DEFAULT_RANK)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument(
        "--seed",
        type=int,
        action="append",
        help="training seed (default 0); several seeds build a soup of their students",
    )
    parser.add_argument("--jobs", type=int, default=1, help="soup members trained at once")
    parser.add_argument("--members", type=Path, help="also write each member's prior here")
    parser.add_argument(
        "--version", type=int, default=1, help="the prior's version: perf-prior@VERSION"
    )
    parser.add_argument(
        "--learned-only",
        action="store_true",
        help="write only the learned digests of the prior already in --out",
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.version < 1:
        parser.error("--version must be at least 1")
    if args.learned_only:
        if args.shared is None:
            parser.error("--learned-only needs the --shared (and --set) it was built from")
        _learned_only(args.out, shared_examples(args.shared), _sets(parser, args))
        return
    base = named_base(args.base)
    if args.from_student is not None:
        meta = cut_from_student(args.from_student, args.out, base, args.rank, args.version)
        print(json.dumps(meta, indent=2))
        return
    if args.shared is None:
        parser.error("--shared is required unless --from-student is given")
    sets = _sets(parser, args)
    shared = shared_examples(args.shared)
    seeds = tuple(dict.fromkeys(args.seed or [0]))
    meta = build(
        shared,
        sets,
        args.out,
        args.rank,
        args.epochs,
        seeds,
        args.version,
        base,
        args.jobs,
        args.members,
    )
    print(json.dumps(meta, indent=2))


if __name__ == "__main__":
    main()
