"""A sampled draw reads its pool grouped by SQLite, with no object per item, and gives
the same members, in the same order, as the draw that built a ``Candidate`` (with its
predictions) for every pool item did: checked against fixed members recorded from that
code, and against a plain item-by-item re-implementation of it, for 30 seeds and each
combination of options (strata of every kind, --from-set, --exclude-repos-of,
--language, --balanced, --prefer uncertain, labeler versions pinned or not)."""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from annotation.sampling import SamplingError, strata_fields
from annotation.sets import DrawSpec, SetError, create_sampled_set, draw, redraw, resolve_strata
from store import Store, open_store
from store.commits import insert_predictions
from store.items import ImportedItem, insert_imported_items
from store.records import PredictionRow
from store.sets import Candidate, NewSet, create_set, labeler_versions, set_item_ids
from tests import raw_sql

LANGUAGES = ("python", "java", "cpp", None, "Go")
SEEDS = range(30)


def _item(i: int) -> ImportedItem:
    return ImportedItem(
        kind="commit",
        key=f"c{i:04d}",
        source=f"import:file{i % 2}" if i % 23 == 0 else f"repo-{i % 12}",
        language="" if i % 17 == 0 else LANGUAGES[i % len(LANGUAGES)],
        path=None,
        payload={"message": f"commit {i}", "model_input": f"commit {i}"},
        provenance={} if i % 7 == 0 else {"stars": (i * 53) % 20000},
    )


def build_varied(store: Store, n: int = 360) -> None:
    """Commits of several languages (one unknown, one empty), repositories and star
    counts, predicted by two keyword versions (some items twice, the later label
    counting), two student versions with scores, and a three-label rule set; a set
    ``dev`` (its repositories excluded by some draws) and a set ``pool`` (drawn within)."""
    ids = [item_id for _, item_id in insert_imported_items(store, [_item(i) for i in range(n)])]
    for i, item_id in enumerate(ids):
        rows = []
        if i % 2:
            rows.append(PredictionRow("keyword@1", "perf" if i % 3 == 0 else "non-perf", None))
        if i % 4 != 1:
            rows.append(PredictionRow("keyword@2", "perf" if i % 5 == 0 else "non-perf", None))
        if i % 3 != 2:
            score = ((i * 41) % 97) / 96
            rows.append(PredictionRow("student@1", "perf" if score > 0.5 else "non-perf", score))
        if i % 5 != 4:
            score = ((i * 37) % 101) / 100
            rows.append(PredictionRow("student@2", "perf" if score > 0.5 else "non-perf", score))
        if i % 6 != 5:
            rows.append(PredictionRow("rules@1", ("perf", "non-perf", "unsure")[i % 3], None))
        insert_predictions(store, item_id, rows)
    for i, item_id in enumerate(ids):
        if i % 9 == 0:  # a second, later verdict: the latest one counts
            second = "non-perf" if i % 5 == 0 else "perf"
            insert_predictions(store, item_id, [PredictionRow("keyword@2", second, None)])
    labels = ["perf", "non-perf"]
    create_set(store, NewSet(name="dev", kind="commit", labels=labels), ids[:60:10])
    pool = [item_id for i, item_id in enumerate(ids) if i % 3 != 0]
    create_set(store, NewSet(name="pool", kind="commit", labels=labels), pool[::-1])


COMBOS: dict[str, dict[str, Any]] = {
    "plain": {},
    "all items": {"sample": None, "stratify": ["language", "keyword"]},
    "language": {"stratify": ["language"]},
    "language,keyword": {"stratify": ["language", "keyword"]},
    "repo": {"stratify": ["repo"]},
    "source,stars": {"stratify": ["source", "stars"]},
    "stars,pred:student@latest": {"stratify": ["stars", "pred:student@latest"]},
    "keyword,pred:rules@1": {"stratify": ["keyword", "pred:rules@1"]},
    "keyword twice, unpinned": {"stratify": ["keyword", "pred:keyword@latest"], "raw": True},
    "keyword pinned to keyword@1": {
        "stratify": ["language", "pred:keyword@latest"],
        "pinned": {"keyword@latest": "keyword@1"},
    },
    "from-set": {"within": "pool", "stratify": ["language", "keyword"]},
    "exclude-repos-of": {"exclude_repos_of": ["dev"], "stratify": ["keyword", "repo"]},
    "language filter": {"languages": ["PYTHON", "java"], "stratify": ["pred:student@1"]},
    "balanced": {"balanced": "keyword@latest", "sample": 30},
    "balanced, strata": {
        "balanced": "rules@1",
        "stratify": ["language", "pred:keyword@latest"],
        "sample": 30,
    },
    "balanced, strata, from-set": {
        "balanced": "keyword@latest",
        "stratify": ["repo"],
        "within": "pool",
        "sample": 20,
    },
    "balanced, exclude": {
        "balanced": "student@2",
        "stratify": ["pred:student@2"],
        "exclude_repos_of": ["dev"],
        "sample": 20,
    },
    "prefer uncertain": {"prefer": "uncertain", "labeler": "student@latest"},
    "prefer uncertain, strata, from-set, exclude": {
        "prefer": "uncertain",
        "labeler": "student@1",
        "stratify": ["language", "keyword"],
        "within": "pool",
        "exclude_repos_of": ["dev"],
    },
    "too many": {"sample": 10_000, "stratify": ["language"]},
    "unpredicted stratum": {"stratify": ["language", "pred:nobody@1"], "raw": True},
}


def spec_of(store: Store, combo: dict[str, Any], seed: int) -> DrawSpec:
    """The spec ``curator set create`` would draw with (strata once, labelers pinned),
    or, with ``raw``, the one given (a stored draw's, read back)."""
    options = {k: v for k, v in combo.items() if k not in ("raw", "pinned")}
    spec = DrawSpec(kind="commit", seed=seed, **{"sample": 40, **options})
    if combo.get("raw"):
        return spec
    spec = replace(spec, stratify=strata_fields(spec.stratify))
    pinned = combo.get("pinned") or resolve_strata(store, spec.labelers())
    return replace(spec, pinned=pinned)


def outcome(store: Store, spec: DrawSpec) -> dict[str, Any]:
    try:
        members, allocation = draw(store, spec)
    except (SamplingError, SetError) as exc:
        return {"error": str(exc)}
    return {"members": members, "allocation": allocation}


def all_outcomes(store: Store) -> dict[str, list[dict[str, Any]]]:
    return {
        name: [outcome(store, spec_of(store, combo, seed)) for seed in SEEDS]
        for name, combo in COMBOS.items()
    }


def digest(found: dict[str, list[dict[str, Any]]]) -> str:
    return hashlib.sha256(json.dumps(found, sort_keys=True).encode()).hexdigest()


# Recorded from the draw that built a Candidate per pool item (commit 8217a39), on
# build_varied's store: every combination above, seeds 0-29.
RECORDED_DIGEST = "4580f1dc7da16575c58b3232c7960cabdf88d7823a3afa6fc4b5139ef3ecfa8c"
RECORDED = {  # a few of them in full: (combination, seed) -> members
    ("language,keyword", 3): (
        "261 314 309 18 29 321 97 357 285 59 264 135 33 350 343 325 352 308 3 277 299 303 "
        "162 338 182 1 230 132 195 171 75 226 323 111 166 71 186 196 112 305"
    ),
    ("balanced, strata", 3): (
        "52 274 122 284 113 273 251 347 217 337 350 307 235 75 38 139 115 8 343 313 130 "
        "201 121 346 305 46 314 269 22 332"
    ),
    ("prefer uncertain, strata, from-set, exclude", 3): (
        "14 182 260 350 92 104 338 272 170 26 2 194 248 80 116 326 284 158 38 206 236 68 "
        "128 296 314 50 218 224 56 140 302 134 62 230 212 44 152 320 290 164"
    ),
    ("keyword pinned to keyword@1", 3): (
        "229 31 226 257 354 358 22 272 325 255 242 320 336 173 96 205 55 299 140 153 8 52 "
        "224 191 97 133 157 323 211 199 219 357 21 182 268 284 258 95 280 36"
    ),
}


@pytest.fixture(scope="module")
def varied(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with open_store(tmp_path_factory.mktemp("draw") / "varied.db") as store:
        build_varied(store)
        yield store


@pytest.fixture(scope="module")
def outcomes(varied: Store) -> dict[str, list[dict[str, Any]]]:
    return all_outcomes(varied)


def test_the_draws_are_the_ones_recorded_before_the_change(
    outcomes: dict[str, list[dict[str, Any]]],
) -> None:
    for (name, seed), members in RECORDED.items():
        assert outcomes[name][seed].get("members") == [int(x) for x in members.split()]
    assert digest(outcomes) == RECORDED_DIGEST


# --- a plain re-implementation: a Candidate per item, as the draw was written before ---


def _versions(store: Store, family: str) -> list[str]:
    names = [
        str(r[0])
        for r in raw_sql.query(store, "SELECT DISTINCT labeler FROM predictions")
        if str(r[0]).startswith(family + "@")
    ]
    tails = [(n.rsplit("@", 1)[1], n) for n in names]
    return [n for _, n in sorted((int(t) if t.isdecimal() else -1, n) for t, n in tails)]


def _resolve(store: Store, name: str) -> str:
    if name.endswith("@latest"):
        found = _versions(store, name[: -len("@latest")])
        return found[-1] if found else name
    return name


_MEMBERS = (
    "SELECT i.id, i.source FROM items AS i JOIN set_items AS si ON si.item_id = i.id"
    " JOIN sets AS s ON s.id = si.set_id WHERE s.name = ?"
)


def _pool(store: Store, spec: DrawSpec) -> list[Candidate]:
    resolved = {n: spec.pinned.get(n) or _resolve(store, n) for n in spec.labelers()}
    latest: dict[str, dict[int, str]] = defaultdict(dict)
    for r in raw_sql.query(store, "SELECT item_id, labeler, label FROM predictions ORDER BY id"):
        latest[r[1]][r[0]] = r[2]
    within = None
    if spec.within:
        within = {r[0] for r in raw_sql.query(store, _MEMBERS, (spec.within,))}
    banned = {
        r[1] for name in spec.exclude_repos_of for r in raw_sql.query(store, _MEMBERS, (name,))
    }
    found = []
    rows = raw_sql.query(
        store, "SELECT id, key, source, language, provenance FROM items ORDER BY id"
    )
    for r in rows:
        if (within is not None and r[0] not in within) or r[2] in banned:
            continue
        if spec.languages and (r[3] or "").lower() not in {x.lower() for x in spec.languages}:
            continue
        stored = {name: latest[name][r[0]] for name in resolved.values() if r[0] in latest[name]}
        for asked, name in resolved.items():
            if asked != name and name in stored:
                stored[asked] = stored[name]
        stars = json.loads(r[4]).get("stars")
        found.append(Candidate(r[0], r[1], r[2], r[3], stars, stored))
    return found


def _stratum(c: Candidate, fields: list[str]) -> str:
    def one(name: str) -> str:
        if name == "language":
            return c.language or "unknown"
        if name in ("repo", "source"):
            return c.source
        if name == "stars":
            if c.stars is None:
                return "unknown"
            bounds = ((10, "0-9"), (100, "10-99"), (1000, "100-999"), (10000, "1k-9k"))
            return next((b for upper, b in bounds if c.stars < upper), "10k+")
        labeler = "keyword@latest" if name == "keyword" else name[len("pred:") :]
        return c.predictions.get(labeler, "none")

    return "|".join(one(f) for f in fields) if fields else "all"


def _allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    quota = {k: n * v // total for k, v in sizes.items()}
    rest = sorted(sizes, key=lambda k: (-(n * sizes[k] / total - quota[k]), k))
    for k in rest[: n - sum(quota.values())]:
        quota[k] += 1
    return quota


def _sample(
    items: list[Candidate], n: int, fields: list[str], rng: random.Random
) -> tuple[list[Candidate], dict[str, int]]:
    groups: dict[str, list[Candidate]] = defaultdict(list)
    for c in items:
        groups[_stratum(c, fields)].append(c)
    quota = _allocate({k: len(v) for k, v in groups.items()}, n)
    chosen = [c for k in sorted(groups) for c in rng.sample(groups[k], quota[k])]
    rng.shuffle(chosen)
    return chosen, {k: v for k, v in sorted(quota.items()) if v}


def reference_draw(store: Store, spec: DrawSpec) -> tuple[list[int], dict[str, int]]:
    items = _pool(store, spec)
    rng = random.Random(spec.seed)
    n = len(items) if spec.sample is None else spec.sample
    assert n <= len(items)
    if spec.prefer:
        latest = "SELECT item_id, score FROM predictions WHERE labeler = ? ORDER BY id"
        labeler = _resolve(store, spec.labeler or "")
        scores = {r[0]: r[1] for r in raw_sql.query(store, latest, (labeler,))}
        unsure = {i: 1.0 - 2.0 * abs(s - 0.5) for i, s in scores.items()}
        predicted = [c for c in items if c.item_id in scores]
        groups: dict[str, list[Candidate]] = defaultdict(list)
        for c in predicted:
            groups[_stratum(c, spec.stratify)].append(c)
        quota = _allocate({k: len(v) for k, v in groups.items()}, spec.sample or len(predicted))
        chosen = []
        for k in sorted(groups):
            members = list(groups[k])
            rng.shuffle(members)
            members.sort(key=lambda c: -unsure[c.item_id])
            chosen.extend(members[: quota[k]])
        rng.shuffle(chosen)
        chosen.sort(key=lambda c: -unsure[c.item_id])
        return [c.item_id for c in chosen], {k: v for k, v in sorted(quota.items()) if v}
    if spec.balanced:
        label = {c.item_id: c.predictions.get(spec.balanced) for c in items}
        pos = [c for c in items if label[c.item_id] == "perf"]
        neg = [c for c in items if label[c.item_id] not in (None, "perf")]
        a, alloc_a = _sample(pos, n // 2, spec.stratify, rng)
        b, alloc_b = _sample(neg, n - n // 2, spec.stratify, rng)
        both = a + b
        rng.shuffle(both)
        allocation = {f"perf|{k}": v for k, v in alloc_a.items()}
        allocation.update({f"not-perf|{k}": v for k, v in alloc_b.items()})
        return [c.item_id for c in both], allocation
    chosen, allocation = _sample(items, n, spec.stratify, rng)
    return [c.item_id for c in chosen], allocation


def test_each_draw_equals_an_item_by_item_draw(
    varied: Store, outcomes: dict[str, list[dict[str, Any]]]
) -> None:
    drawn = 0
    for name, combo in COMBOS.items():
        for seed in SEEDS:
            found = outcomes[name][seed]
            if "error" in found:
                continue
            members, allocation = reference_draw(varied, spec_of(varied, combo, seed))
            assert found == {"members": members, "allocation": allocation}, (name, seed)
            drawn += 1
    assert drawn >= 30 * (len(COMBOS) - 2)
    errors = {name: outcomes[name][0].get("error") for name in ("too many", "unpredicted stratum")}
    assert errors == {
        "too many": "asked for 10000 items but only 360 qualify",
        "unpredicted stratum": "stratum 'pred:nobody@1': nobody@1 predicted none of the 360"
        " items to draw from (`curator stats` lists the labelers)",
    }


def test_the_pool_is_read_in_a_bounded_number_of_statements_and_no_candidate(
    tmp_path: Path,
) -> None:
    """A draw's statements do not grow with the pool, and it builds no Candidate."""

    def statements_and_candidates(n: int) -> tuple[int, int]:
        with open_store(tmp_path / f"s{n}.db") as store:
            build_varied(store, n)
            spec = spec_of(store, COMBOS["balanced, strata, from-set"], seed=1)
            statements: list[str] = []
            raw_sql.connection(store).set_trace_callback(statements.append)
            built = 0
            init = Candidate.__init__.__code__

            def count(frame: FrameType, event: str, arg: object) -> None:
                nonlocal built
                if event == "call" and frame.f_code is init:
                    built += 1

            sys.setprofile(count)
            try:
                draw(store, spec)
            finally:
                sys.setprofile(None)
                raw_sql.connection(store).set_trace_callback(None)
            return len(statements), built

    small, large = statements_and_candidates(120), statements_and_candidates(600)
    assert small == large
    assert small[1] == 0 and small[0] <= 12


def test_a_created_set_is_redrawn_the_same(varied: Store) -> None:
    spec = DrawSpec(kind="commit", sample=25, stratify=["language", "keyword"], seed=11)
    row, _ = create_sampled_set(varied, "again", spec)
    assert redraw(varied, "again") == set_item_ids(varied, row.id)


def test_labeler_versions_are_the_names_in_the_labelers_range(store: Store) -> None:
    """Read one name at a time from the labeler index: the same names as reading every
    prediction of the range."""
    (item_id,) = [i for _, i in insert_imported_items(store, [_item(0)])]
    names = ["kw@2", "kw@10", "kw@1", "kw@x", "kw@", "kwz@1", "kw", "k@1", "kw@10"]
    insert_predictions(store, item_id, [PredictionRow(n, "perf", None) for n in names])
    assert labeler_versions(store, "kw") == ["kw@", "kw@x", "kw@1", "kw@2", "kw@10"]
    assert labeler_versions(store, "k") == ["k@1"]
    assert labeler_versions(store, "nobody") == []
