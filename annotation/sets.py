"""Creating sets: seeded samples, balanced draws, repository-disjoint exclusions and splits.

Each set records the parameters it was drawn with, and :func:`redraw` repeats a draw
from them, so a set can be re-derived (and checked) from its stored description.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from annotation.labels import DEFAULT_LABELS, POSITIVE_LABEL, SKIP, taxonomy_slugs
from annotation.sampling import (
    KEYWORD_LABELER,
    SamplingError,
    balanced_strata,
    group_strata,
    labelers_for,
    sample_strata,
    strata_fields,
    stratum_source,
    uncertain_strata,
    uncertainty,
)
from annotation.splits import split_sources
from store import Store
from store.models import current_model
from store.sets import (
    OVERLAPS,
    Candidate,
    NewSet,
    SetRow,
    candidates,
    create_set,
    get_set,
    item_languages,
    labeler_versions,
    latest_predictions,
    pool_groups,
    same_name,
)

PREFERENCES = ("uncertain",)


class SetError(ValueError):
    """A set that cannot be created or found as asked."""


@dataclass(frozen=True)
class DrawSpec:
    """How to draw a set's items; stored with the set as its ``params``."""

    kind: str
    sample: int | None = None
    stratify: list[str] = field(default_factory=list)
    seed: int = 0
    exclude_repos_of: list[str] = field(default_factory=list)
    balanced: str | None = None
    within: str | None = None
    languages: list[str] = field(default_factory=list)
    prefer: str | None = None
    labeler: str | None = None
    # each stratum (or --balanced) labeler asked for -> the version the draw read
    pinned: dict[str, str] = field(default_factory=dict)

    def labelers(self) -> list[str]:
        """The labelers whose predictions the draw reads: its strata's and --balanced's."""
        return labelers_for(self.stratify) + ([self.balanced] if self.balanced else [])

    def params(self) -> dict[str, Any]:
        extra: dict[str, Any] = (
            {"prefer": self.prefer, "labeler": self.labeler} if self.prefer else {}
        )
        if self.pinned:
            extra["strata_labelers"] = dict(self.pinned)
        return {
            **extra,
            "kind": self.kind,
            "sample": self.sample,
            "stratify": self.stratify,
            "seed": self.seed,
            "exclude_repos_of": self.exclude_repos_of,
            "balanced": self.balanced,
            "within": self.within,
            "languages": self.languages,
        }

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> DrawSpec:
        return cls(
            kind=params["kind"],
            sample=params.get("sample"),
            stratify=list(params.get("stratify") or []),
            seed=int(params.get("seed") or 0),
            exclude_repos_of=list(params.get("exclude_repos_of") or []),
            balanced=params.get("balanced"),
            within=params.get("within"),
            languages=list(params.get("languages") or []),
            prefer=params.get("prefer"),
            labeler=params.get("labeler"),
            pinned=dict(params.get("strata_labelers") or {}),
        )


def set_hint(store: Store, name: str) -> str:
    """What to say after "no set named NAME": the set it most likely meant, or where the
    names are listed."""
    other = same_name(store, name)
    return f"did you mean {other!r}?" if other else "`curator set list` shows them"


def require_set(store: Store, name: str) -> SetRow:
    found = get_set(store, name)
    if found is None:
        raise SetError(f"no set named {name!r} ({set_hint(store, name)})")
    return found


def _pool_scope(store: Store, spec: DrawSpec) -> tuple[int | None, list[int]]:
    """The set a draw is confined to (if any) and the sets whose repositories it leaves
    out, after checking that they exist, hold the draw's kind, and that every language
    asked for is one the kind's items are in."""
    inside = require_set(store, spec.within) if spec.within else None
    excluded_sets = [require_set(store, name) for name in spec.exclude_repos_of]
    if spec.languages:
        known = item_languages(store, spec.kind)
        unknown = [x for x in spec.languages if x.lower() not in {k.lower() for k in known}]
        if unknown:
            raise SetError(
                f"--language {', '.join(unknown)}: no {spec.kind} item is in it"
                f" (languages: {', '.join(known) or 'none'})"
            )
    for other in [inside, *excluded_sets] if inside else excluded_sets:
        if other.kind != spec.kind:
            raise SetError(f"set {other.name!r} holds {other.kind} items, not {spec.kind}")
    return (inside.id if inside else None), [s.id for s in excluded_sets]


def _pool_groups(store: Store, spec: DrawSpec) -> list[tuple[tuple[Any, ...], list[int]]]:
    """The items a draw picks from (the kind's items, or a set's members, minus every
    item from a repository used by the excluded sets) grouped by their values of each
    stratum's source and then the --balanced labeler's label (if asked), with no object
    per item: ``(values, item ids in item order)``."""
    within, excluded = _pool_scope(store, spec)
    groups = grouped_pool(
        store,
        spec.kind,
        [*spec.stratify, *([f"pred:{spec.balanced}"] if spec.balanced else [])],
        spec.labelers(),
        spec.pinned,
        within_set=within,
        languages=spec.languages,
        without_sources_of=excluded,
    )
    refuse_unpredicted_strata(groups, spec.stratify)
    return groups


def grouped_pool(
    store: Store,
    kind: str,
    fields: Sequence[str],
    labelers: Sequence[str],
    pinned: Mapping[str, str] | None,
    **filters: Any,
) -> list[tuple[tuple[Any, ...], list[int]]]:
    """The pool's item ids grouped by SQLite by the value of each of ``fields`` (strata
    and ``pred:LABELER`` columns), with no object per item: ``(values, item ids in item
    order)``. A labeler's value is its latest label as :func:`stratum_candidates` files
    it under the name asked for (``pinned`` versions first); ``labelers`` lists every
    labeler the fields read. ``filters`` go to :func:`store.sets.pool_groups`."""
    for name in fields:
        stratum_source(name)  # an unknown stratum is refused before the pool is read
    reads = _label_sources(_resolved(store, labelers, pinned))
    columns: list[str | tuple[str, ...]] = []
    for name in fields:
        source, _ = stratum_source(name)
        columns.append(reads[source[0]] if isinstance(source, tuple) else source)
    return pool_groups(store, kind, columns, **filters)


def refuse_unpredicted_strata(
    groups: Sequence[tuple[tuple[Any, ...], Sequence[int]]], fields: Sequence[str]
) -> None:
    """Refuse a ``pred:LABELER`` stratum whose labeler predicted none of the grouped
    pool's items (whose first values are ``fields``'): every item would fall in the
    stratum ``none`` (a mistyped labeler drew an unstratified set)."""
    for at, name in enumerate(fields):
        if name.startswith("pred:") and groups and all(v[at] is None for v, _ in groups):
            _refuse_unpredicted(name, sum(len(ids) for _, ids in groups))


def _resolved(
    store: Store, labelers: Sequence[str], pinned: Mapping[str, str] | None
) -> dict[str, str]:
    """Each labeler asked for -> the stored name it reads: the one ``pinned`` gives (the
    version a set was drawn with), else the one it resolves to now."""
    return {name: (pinned or {}).get(name) or _resolve_for_strata(store, name) for name in labelers}


def _label_sources(resolved: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Each labeler name -> the stored labelers whose latest label
    :func:`stratum_candidates` files under that name for an item: the first of them that
    predicted the item (renames are applied in the order asked, as it applies them)."""
    sources = {stored: (stored,) for stored in resolved.values()}
    for asked, stored in resolved.items():
        if asked != stored:
            sources[asked] = sources[stored] + sources.get(asked, ())
    return sources


def stratum_candidates(
    store: Store,
    kind: str,
    labelers: Sequence[str],
    within_set: int | None = None,
    languages: Sequence[str] = (),
    pinned: Mapping[str, str] | None = None,
    unvoted_only: bool = False,
) -> list[Candidate]:
    """:func:`store.sets.candidates` with each labeler's predictions filed under the name
    asked for (``keyword@latest``, ``pred:student@current``'s ``student@current``). A
    name in ``pinned`` reads the version given there (the one an audit was drawn with),
    not the one it resolves to now."""
    resolved = _resolved(store, labelers, pinned)
    found = candidates(
        store,
        kind,
        sorted(set(resolved.values())),
        within_set=within_set,
        languages=languages,
        unvoted_only=unvoted_only,
    )
    renamed = {asked: stored for asked, stored in resolved.items() if asked != stored}
    for candidate in found:
        for asked, stored in renamed.items():
            if stored in candidate.predictions:
                candidate.predictions[asked] = candidate.predictions[stored]
    return found


def _refuse_unpredicted(name: str, items: int) -> None:
    raise SamplingError(
        f"stratum {name!r}: {name[len('pred:') :]} predicted none of the {items} items to"
        " draw from (`curator stats` lists the labelers)"
    )


def resolve_strata(store: Store, labelers: Sequence[str]) -> dict[str, str]:
    """Each stratum labeler asked for -> the name its predictions are stored under now."""
    return {name: _resolve_for_strata(store, name) for name in labelers}


def _resolve_for_strata(store: Store, name: str) -> str:
    """A stratum's labeler as stored; ``keyword@latest`` with no keyword predictions
    stays as it is (every item then falls in the stratum ``none``)."""
    if name == KEYWORD_LABELER:
        versions = labeler_versions(store, "keyword")
        return versions[-1] if versions else name
    return resolve_latest(store, name)


def resolve_latest(store: Store, name: str) -> str:
    """``name@latest`` -> the newest stored version of that labeler; ``name@current`` -> the
    model last promoted in that family (``curator models promote``); other names as given."""
    if name.endswith("@current"):
        family = name[: -len("@current")]
        promoted = current_model(store, family)
        if promoted is None:
            raise SetError(
                f"no {family} has been promoted yet, so {name} names nothing:"
                f" `curator models promote {family}@N`"
            )
        return promoted.name
    if not name.endswith("@latest"):
        return name
    versions = labeler_versions(store, name[: -len("@latest")])
    if not versions:
        raise SetError(f"no predictions from any version of {name[: -len('@latest')]!r}")
    return versions[-1]


def check_preference(spec: DrawSpec) -> None:
    """Refuse a ``prefer`` that cannot be honoured (unknown, no labeler, with --balanced)."""
    if spec.prefer is None:
        return
    if spec.prefer not in PREFERENCES:
        raise SetError(f"--prefer {spec.prefer!r}: use {' or '.join(PREFERENCES)}")
    if not spec.labeler:
        raise SetError(f"--prefer {spec.prefer} needs --labeler NAME (e.g. student@latest)")
    if spec.balanced:
        raise SetError("--prefer and --balanced cannot be combined: pick one way to draw")


def _left_out(store: Store, spec: DrawSpec, size: int) -> str:
    """Why a pool is smaller than asked, when --exclude-repos-of took items out of it."""
    if not spec.exclude_repos_of:
        return ""
    within, _ = _pool_scope(store, spec)
    whole = sum(
        len(ids)
        for _, ids in pool_groups(store, spec.kind, within_set=within, languages=spec.languages)
    )
    if whole <= size:
        return ""
    sets = " --exclude-repos-of ".join(spec.exclude_repos_of)
    return (
        f": --exclude-repos-of {sets} leaves out {whole - size} of {whole}, every item from"
        f" a repository {'that set uses' if len(spec.exclude_repos_of) == 1 else 'those sets use'}"
    )


def draw(store: Store, spec: DrawSpec) -> tuple[list[int], dict[str, int]]:
    """Item ids in set order and the allocation per stratum."""
    check_preference(spec)
    groups = _pool_groups(store, spec)
    size = sum(len(ids) for _, ids in groups)
    rng = random.Random(spec.seed)
    n = size if spec.sample is None else spec.sample
    if spec.sample is not None and spec.sample > size:
        raise SamplingError(
            f"asked for {spec.sample} items but only {size} qualify{_left_out(store, spec, size)}"
        )
    if spec.prefer:
        labeler = spec.labeler or ""
        scores = latest_predictions(store, resolve_latest(store, labeler))
        predicted = [(values, [i for i in ids if i in scores]) for values, ids in groups]
        scored = sum(len(ids) for _, ids in predicted)
        if not scored:
            raise SamplingError(f"{labeler} has predicted none of the {size} pool items")
        if spec.sample is not None and spec.sample > scored:
            raise SamplingError(
                f"asked for {spec.sample} items but {labeler} predicted only {scored}"
                f" of the {size} that qualify"
            )
        binary = {label for label, _ in scores.values()} <= set(DEFAULT_LABELS[spec.kind])
        unsure = {i: uncertainty(score, binary) for i, (_, score) in scores.items()}
        strata = group_strata([g for g in predicted if g[1]], spec.stratify)
        return uncertain_strata(strata, spec.sample or scored, unsure, rng)
    if spec.balanced:
        positive = POSITIVE_LABEL[spec.kind]
        pos = [g for g in groups if g[0][-1] == positive]
        neg = [g for g in groups if g[0][-1] not in (None, positive)]
        return balanced_strata(
            group_strata(pos, spec.stratify),
            group_strata(neg, spec.stratify),
            n,
            spec.balanced,
            positive,
            rng,
            size,
        )
    return sample_strata(group_strata(groups, spec.stratify), n, rng)


def redraw(store: Store, name: str) -> list[int]:
    """Repeat a set's recorded draw; equals its members while the pool is unchanged."""
    found = require_set(store, name)
    if "draw" not in found.params:
        raise SetError(f"set {name!r} was not drawn by sampling (it was {found.purpose})")
    return draw(store, DrawSpec.from_params(found.params["draw"]))[0]


def default_categories(kind: str) -> list[str]:
    return taxonomy_slugs() if kind == "commit" else []


def create_sampled_set(
    store: Store,
    name: str,
    spec: DrawSpec,
    labels: Sequence[str] | None = None,
    blind: bool = True,
    votes_per_item: int = 2,
    purpose: str = "ground-truth",
    description: str = "",
    overlap: str = "routed",
) -> tuple[SetRow, dict[str, int]]:
    if get_set(store, name) is not None:
        raise SetError(f"a set named {name!r} already exists")
    spec = replace(spec, stratify=strata_fields(spec.stratify))
    # Record the versions actually read, so a redraw reads the same predictions after a
    # newer version of a labeler (keyword@latest, student@current) has predicted.
    if spec.prefer and spec.labeler:
        spec = replace(spec, labeler=resolve_latest(store, spec.labeler))
    spec = replace(spec, pinned=resolve_strata(store, spec.labelers()))
    item_ids, allocation = draw(store, spec)
    if not item_ids:
        raise SamplingError(
            f"no {spec.kind} item qualifies: the set would be empty (`curator stats` shows"
            " what the store holds)"
        )
    row = create_set(
        store,
        NewSet(
            name=name,
            kind=spec.kind,
            labels=list(labels or DEFAULT_LABELS[spec.kind]),
            categories=default_categories(spec.kind),
            params={"draw": spec.params(), "allocation": allocation},
            blind=blind,
            purpose=purpose,
            votes_per_item=votes_per_item,
            description=description,
            overlap=overlap,
        ),
        item_ids,
    )
    return row, allocation


@dataclass(frozen=True)
class SetEdit:
    """What ``curator set edit`` changes; None leaves a setting as it is."""

    votes_per_item: int | None = None
    blind: bool | None = None
    labels: list[str] | None = None
    overlap: str | None = None


def edit_set(store: Store, name: str, edit: SetEdit) -> SetRow:
    """Change a set's settings. A new number of votes per item or new labels restate
    every member (settled items may reopen, or pending ones settle) in the same
    transaction; labels may grow but not lose one that a live vote in the set uses (a
    vote labelled with another set's label is not one of its votes)."""
    from store.routing import gold_labels, rebuild_set
    from store.sets import update_set
    from store.votes import live_votes_in_set

    if edit.overlap is not None and edit.overlap not in OVERLAPS:
        raise SetError(f"--overlap {edit.overlap!r}: use {' or '.join(OVERLAPS)}")
    # checked under the write lock: a vote with a label being dropped may land meanwhile
    with store.transaction():
        found = require_set(store, name)
        if edit.labels is not None:
            used = {v.label for v in live_votes_in_set(store, found.id)} - {SKIP}
            dropped = sorted(used - set(edit.labels))
            if dropped:
                raise SetError(
                    f"set {name!r} has votes labelled {', '.join(dropped)}: keep those labels"
                )
            expected = sorted(gold_labels(store, found.id) - set(edit.labels))
            if expected:
                raise SetError(
                    f"set {name!r} has gold items whose known answer is"
                    f" {', '.join(expected)}: keep those labels"
                )
        update_set(
            store,
            found.id,
            votes_per_item=edit.votes_per_item,
            blind=edit.blind,
            labels=edit.labels,
            overlap=edit.overlap,
        )
        if (edit.votes_per_item not in (None, found.votes_per_item)) or (
            edit.labels is not None and edit.labels != found.labels
        ):
            rebuild_set(store, found.id)
    return require_set(store, name)


NO_REPOSITORY = "import:"  # the source of an imported item that named no repository


def without_repository(store: Store, kind: str, within: str | None = None) -> int:
    """Items of a split's pool that came with no repository: a repository-disjoint split
    keeps each file's such items together, in one part."""
    return sum(
        len(ids) for (source, *_), ids in _pool_groups(store, _by_repository(kind, within))
        if source.startswith(NO_REPOSITORY)
    )  # fmt: skip


def _by_repository(kind: str, within: str | None) -> DrawSpec:
    """A split's pool, read grouped by repository (``store.sets.pool_groups``)."""
    return DrawSpec(kind=kind, within=within, stratify=["repo"])


def _empty_parts(kind: str, empty: list[str], by_source: Mapping[str, Sequence[int]]) -> str:
    """Why a split would leave parts empty: repositories go whole to one part."""
    sizes = sorted((len(ids) for ids in by_source.values()), reverse=True)
    shown = ", ".join(str(n) for n in sizes[:6]) + (", ..." if len(sizes) > 6 else "")
    count = f"{len(sizes)} repositor{'y' if len(sizes) == 1 else 'ies'}"
    loose = sum(len(ids) for source, ids in by_source.items() if source.startswith(NO_REPOSITORY))
    unnamed = (
        f"; {loose} items have no repository (imported without 'repo') and stay together"
        " with their file's"
        if loose
        else ""
    )
    names = ", ".join(repr(part) for part in empty)
    return (
        f"part{'s' if len(empty) > 1 else ''} {names} would be empty: the {kind} items come"
        f" from {count} ({shown} item{'' if sizes == [1] else 's'}), each kept whole in one"
        f" part{unnamed}; give fewer"
        " parts, or weights nearer the repositories' sizes"
    )


def create_split(
    store: Store,
    kind: str,
    parts: Sequence[tuple[str, float]],
    seed: int,
    within: str | None = None,
    labels: Sequence[str] | None = None,
    blind: bool = True,
    votes_per_item: int | None = None,
) -> list[SetRow]:
    """One set per part, repositories disjoint between them, created in one transaction.
    Labels and votes per item not given are the split set's (``within``), else the
    kind's labels and 2."""
    source = require_set(store, within) if within else None
    labels = labels or (source.labels if source is not None else DEFAULT_LABELS[kind])
    if votes_per_item is None:
        votes_per_item = source.votes_per_item if source is not None else 2
    for part, _ in parts:
        if get_set(store, part) is not None:
            raise SetError(f"a set named {part!r} already exists")
    groups = _pool_groups(store, _by_repository(kind, within))
    if not groups:
        where = f" in set {within!r}" if within else ""
        raise SetError(f"no {kind} item{where} to split: every part would be empty")
    by_source = {source: ids for (source, *_), ids in groups}
    assigned = split_sources(by_source, parts, seed)
    empty = [part for part, _ in parts if not assigned[part]]
    if empty:
        raise SetError(_empty_parts(kind, empty, by_source))
    created = []
    with store.transaction():
        for part, share in parts:
            ids = assigned[part]
            random.Random(f"{seed}:{part}").shuffle(ids)
            created.append(
                create_set(
                    store,
                    NewSet(
                        name=part,
                        kind=kind,
                        labels=list(labels),
                        categories=default_categories(kind),
                        params={
                            "split": {
                                "parts": [[p, s] for p, s in parts],
                                "part": part,
                                "share": share,
                                "seed": seed,
                                "within": within,
                                "by": "repository",
                            }
                        },
                        blind=blind,
                        votes_per_item=votes_per_item,
                    ),
                    ids,
                )
            )
    return created
