"""``curator mine commits`` as functions: pick the sources, resolve the labelers, and
run the miner in this process or on a Dask cluster. The command parses and prints;
tests call these directly. Progress goes to the reporter the caller passes."""

from __future__ import annotations

import csv
import time
from dataclasses import dataclass, field
from pathlib import Path

from engines.commits.cluster import DEFAULT_CHUNK, mine_on_cluster
from engines.commits.options import MineOptions
from engines.commits.pipeline import (
    BATCH_ROWS,
    Checkpoints,
    SourceSummary,
    all_checkpoints,
    finished_sources,
    mine_commits,
)
from engines.commits.repo_list import RepoListError, read_repo_list, select
from engines.commits.sources import clean_spelling, source_key, source_name
from engines.dask_cluster import ClusterError, dask_client
from engines.labelers.base import Labeler
from engines.labelers.registry import LabelerError, LabelerSpec, build_labeler, resolve_labeler
from engines.reporting import ClusterReporter, SourceReporter
from store import Store


class MiningError(Exception):
    """A run cannot start: a bad repository list, labeler or cluster."""


@dataclass(frozen=True)
class RepoSelection:
    """The repositories of a ``--repos-file`` that pass its filters, and what was said."""

    specs: list[str]
    listed: int
    dropped: dict[str, int]
    problems: list[str]


def from_repos_file(path: Path, min_stars: int | None, languages: frozenset[str]) -> RepoSelection:
    """The repositories of a list that pass the star and language filters; each bad line
    is a problem, skipped."""
    try:
        listing = read_repo_list(path)
    except RepoListError as exc:
        raise MiningError(str(exc)) from None
    except (csv.Error, ValueError) as exc:  # a stray carriage return, a NUL: a binary file
        raise MiningError(f"{path}: not a CSV list of repositories ({exc})") from None
    selection = select(listing.entries, min_stars, languages)
    return RepoSelection(
        [entry.spec for entry in selection.chosen],
        len(listing.entries),
        dict(sorted(selection.dropped.items())),
        list(listing.problems),
    )


def labeler_specs(store: Store, names: list[str]) -> list[LabelerSpec]:
    """The keyword labeler plus each named one, resolved once, without repeats."""
    chosen: list[LabelerSpec] = []
    for name in ["keyword@latest", *names]:
        try:
            spec = resolve_labeler(store, name)
        except (LabelerError, ValueError, OSError) as exc:
            raise MiningError(str(exc)) from None
        if spec.name not in {x.name for x in chosen}:
            chosen.append(spec)
    return chosen


def build_labelers(specs: list[LabelerSpec]) -> list[Labeler]:
    try:
        return [build_labeler(spec) for spec in specs]
    except (LabelerError, ValueError, OSError) as exc:
        raise MiningError(str(exc)) from None


@dataclass(frozen=True)
class Sources:
    """The sources a run mines, and what was left out: ``skipped`` listed sources an
    earlier run finished, ``repeated`` sources given again, each with the spelling
    that is mined, and ``stored_as`` sources given in another spelling of a source
    the store holds, each with the stored spelling that is mined (and resumed).
    ``checkpoints`` are the store's commit checkpoints, read once to choose the sources
    and handed to the run, which resumes from them."""

    specs: list[str]
    skipped: int = 0
    repeated: list[tuple[str, str]] = field(default_factory=list)
    stored_as: list[tuple[str, str]] = field(default_factory=list)
    checkpoints: Checkpoints | None = None


def sources_to_mine(
    store: Store, named: list[str], listed: list[str], options: MineOptions, refresh: bool
) -> Sources:
    """The named sources, then the listed ones, each once: ``repo``, ``./repo/`` and
    ``repo/.git`` are one source, and so are ``https://Host/a/b``, ``https://host/a/b/``
    and ``https://host/a/b.git`` (:func:`source_key`). A source the store already holds
    under another spelling is mined under that one, so its checkpoint resumes; a new
    one under its :func:`clean_spelling`. Listed sources an earlier run finished are
    left out unless ``refresh``."""
    checkpoints = all_checkpoints(store)
    stored = _stored_names(checkpoints)
    stored_as: list[tuple[str, str]] = []

    def spelling(spec: str) -> str:
        names = stored.get(source_key(spec), [])
        if not names:
            return clean_spelling(spec)
        name = source_name(spec) if source_name(spec) in names else names[0]
        if name != source_name(spec):
            stored_as.append((spec, name))
        return name

    first: dict[str, str] = {}  # source key -> the spelling mined
    repeated: list[tuple[str, str]] = []
    for spec in [*named, *listed]:
        key = source_key(spec)
        if key in first:
            repeated.append((spec, first[key]))
        else:
            first[key] = spelling(spec)
    specs = list(first.values())
    skipped = 0
    if listed and not refresh:
        listed_mined = {first[source_key(spec)] for spec in listed}
        named_mined = {first[source_key(spec)] for spec in named}
        done = finished_sources(store, sorted(listed_mined - named_mined), options, checkpoints)
        skipped = len(done)
        specs = [spec for spec in specs if spec not in done]
    return Sources(specs, skipped, repeated, stored_as, checkpoints)


def _stored_names(checkpoints: Checkpoints) -> dict[str, list[str]]:
    """The sources the store holds commit checkpoints for, by :func:`source_key`."""
    names: dict[str, list[str]] = {}
    for source in sorted(checkpoints):
        names.setdefault(source_key(source), []).append(source)
    return names


@dataclass(frozen=True)
class CommitRun:
    """Where and how one ``curator mine commits`` run mines."""

    specs: list[str]
    options: MineOptions
    labelers: list[LabelerSpec] = field(default_factory=list)
    clone_dir: Path | None = None
    batch_size: int = BATCH_ROWS
    workers: int | None = None  # a local Dask cluster of N processes
    scheduler: str | None = None  # an existing Dask cluster
    chunk: int = DEFAULT_CHUNK
    # the store's checkpoints, when choosing the sources read them (None: read per source)
    checkpoints: Checkpoints | None = None

    @property
    def on_cluster(self) -> bool:
        return self.workers is not None or bool(self.scheduler)


def run_in_process(
    store: Store,
    run: CommitRun,
    reporter: SourceReporter,
    into: list[SourceSummary] | None = None,
) -> tuple[list[SourceSummary], float]:
    """Mine in this process; returns the summaries and the seconds it took. ``into``
    gets each summary as its source starts (what an interrupted run saved)."""
    labelers = build_labelers(run.labelers)
    started = time.monotonic()
    summaries = mine_commits(
        store,
        run.specs,
        run.options,
        labelers,
        reporter,
        run.clone_dir,
        run.batch_size,
        run.checkpoints,
        into,
    )
    return summaries, time.monotonic() - started


def run_on_cluster(
    store: Store,
    run: CommitRun,
    reporter: ClusterReporter,
    into: list[SourceSummary] | None = None,
) -> tuple[list[SourceSummary], float]:
    """Mine on a Dask cluster; the time returned leaves out starting or joining it.
    ``into`` gets the summaries as the run starts (what an interrupted run saved)."""
    try:
        with dask_client(run.workers, run.scheduler) as client:
            started = time.monotonic()
            summaries = mine_on_cluster(
                store,
                run.specs,
                run.options,
                client,
                run.labelers,
                reporter,
                run.clone_dir,
                run.chunk,
                run.batch_size,
                run.checkpoints,
                into,
            )
            return summaries, time.monotonic() - started
    except ClusterError as exc:
        raise MiningError(str(exc)) from None
