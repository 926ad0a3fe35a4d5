"""The work of ``curator search``, ``set create --from-search`` and the app's search: an
FTS5 query over the store, narrowed by kind, set, one labeler's label, or disagreement
between two sources of labels (labelers, annotators, or the final label).

A source of labels is named the same way everywhere: ``final`` (the settled label of the
sets an item is in), a labeler (``keyword@1``, ``student@latest``, ``student@current``)
or an annotator's name (their live vote).
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.adjudication import final_labels
from annotation.labels import DEFAULT_LABELS, SKIP
from annotation.sets import SetError, default_categories, resolve_latest, set_hint
from store import Store
from store.predictions import has_predictions
from store.search import (
    FIELDS,
    RANK_WINDOW,
    SOURCES,
    Found,
    NoWordsError,
    Scope,
    SearchSyntaxError,
    scoped_items,
    search,
)
from store.search import annotator_labels as _annotator_labels
from store.sets import NewSet, SetRow, all_sets, create_set, get_set, latest_predictions
from store.trends import latest_scores_in_set

FINAL = "final"
SET_LIMIT = 100_000
"""The most items ``set create --from-search`` takes from one query."""
SHOWN_QUERY = 80
"""The most characters of a query an error repeats, so the reason after it shows."""


class SearchError(ValueError):
    """A search that cannot run as asked: bad FTS5 syntax, a query of no word, an unknown
    set, labeler or label."""


@dataclass(frozen=True)
class SearchRequest:
    """One search: ``query`` in FTS5 syntax (empty: every item the filters keep)."""

    query: str
    kind: str | None = None
    set_name: str | None = None
    label: str | None = None
    labeler: str | None = None
    disagree: tuple[str, str] | None = None
    limit: int = 20
    note_reader: str | None = None  # see store.search.Scope; not part of a set's recipe

    def params(self) -> dict[str, object]:
        """How a set drawn from this search was drawn (stored with the set)."""
        return {
            "query": self.query,
            "kind": self.kind,
            "within": self.set_name,
            "label": self.label,
            "labeler": self.labeler,
            "disagree": list(self.disagree) if self.disagree else None,
            "limit": self.limit,
        }


def parse_pair(text: str) -> tuple[str, str]:
    """``A,B`` -> ``(A, B)``: two different, non-empty names."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise SearchError(f"--disagree {text!r}: name two sources, e.g. keyword@1,final")
    return parts[0], parts[1]


def labels_of(store: Store, who: str, set_row: SetRow | None = None) -> dict[int, str]:
    """Item id -> label from one source: ``final``, a labeler or an annotator."""
    if who == FINAL:
        sets = [set_row] if set_row else all_sets(store)
        found: dict[int, str] = {}
        for s in sets:
            found.update(final_labels(store, s))
        if not found:
            where = f"in set {set_row.name!r}" if set_row else "in any set"
            raise SearchError(
                f"no item {where} has a final label yet (an item settles when its votes"
                " agree or an adjudicator decides)"
            )
        return found
    try:
        name = resolve_latest(store, who)
    except SetError as exc:
        raise SearchError(str(exc)) from exc
    if set_row is not None and has_predictions(store, name):
        # the set's members only: one index lookup each, not the labeler's whole output
        scores = latest_scores_in_set(store, set_row.id, name)
        return {item_id: label for item_id, (label, _, _) in scores.items()}
    predicted = latest_predictions(store, name)
    if predicted:
        return {item_id: label for item_id, (label, _) in predicted.items()}
    # an adjudicator's decision is their vote too, and on an item they also voted on as
    # an annotator, the one in force
    voted = {
        i: label
        for role in ("annotator", "adjudicator")
        for i, label in _annotator_labels(store, who, role).items()
        if label != SKIP
    }
    if voted:
        return voted
    raise SearchError(f"{who!r} is neither a labeler with predictions nor an annotator with votes")


def _known_labels(store: Store, found: dict[int, str]) -> set[str]:
    """Every label a source could give: the ones it gave, and any kind's or set's."""
    known = set(found.values()) | {label for labels in DEFAULT_LABELS.values() for label in labels}
    return known | {label for s in all_sets(store) for label in s.labels}


def _allowed_ids(store: Store, request: SearchRequest, set_row: SetRow | None) -> list[int] | None:
    keep: set[int] | None = None
    if request.label is not None:
        if request.labeler is None:
            raise SearchError("--label needs --labeler: whose label to match")
        found = labels_of(store, request.labeler, set_row)
        keep = {i for i, label in found.items() if label == request.label}
        if not keep and request.label not in _known_labels(store, found):
            given = ", ".join(sorted(set(found.values())))
            raise SearchError(
                f"{request.labeler!r} gave no item the label {request.label!r}"
                f" (its labels: {given})"
            )
    if request.disagree is not None:
        a = labels_of(store, request.disagree[0], set_row)
        b = labels_of(store, request.disagree[1], set_row)
        differ = {i for i, label in a.items() if i in b and b[i] != label}
        keep = differ if keep is None else keep & differ
    return None if keep is None else sorted(keep)


def run_search(store: Store, request: SearchRequest) -> Found:
    """The items a request finds, best match first (item id order without a query);
    bm25 ranks at least the newest ``RANK_WINDOW`` matches of each index, or ``limit``."""
    if request.labeler is not None and request.label is None:
        raise SearchError("--labeler needs --label: which of its labels to match")
    set_row = None
    if request.set_name:
        set_row = get_set(store, request.set_name)
        if set_row is None:
            raise SearchError(
                f"no set named {request.set_name!r} ({set_hint(store, request.set_name)})"
            )
        if request.kind is not None and set_row.kind != request.kind:
            raise SearchError(
                f"set {set_row.name!r} holds {set_row.kind} items: --kind {request.kind}"
                " would find none there"
            )
    ids = _allowed_ids(store, request, set_row)
    scope = Scope(request.kind, set_row.id if set_row else None, ids, request.note_reader)
    if ids is not None and not ids:
        return Found([])
    if not request.query.strip():
        if ids is None and set_row is None:
            raise SearchError("give a query, or a filter (--set, --label, --disagree) to list")
        return Found(scoped_items(store, scope, request.limit))
    try:
        return search(store, request.query, scope, request.limit, max(RANK_WINDOW, request.limit))
    except SearchSyntaxError as exc:
        raise SearchError(_syntax_problem(request.query, str(exc), request.kind)) from exc
    except NoWordsError as exc:
        raise SearchError(
            f"query {_shown(request.query)}: none of its terms holds a letter or digit, and"
            " the index holds only words (letters and digits; punctuation, symbols and _"
            " separate them), so it can match nothing"
        ) from exc


def _shown(query: str) -> str:
    """The query quoted for an error message, cut to ``SHOWN_QUERY`` characters."""
    if len(query) <= SHOWN_QUERY:
        return repr(query)
    return repr(query[: SHOWN_QUERY - 1] + "…") + f" ({len(query):,} characters)"


def _syntax_problem(query: str, reason: str, kind: str | None = None) -> str:
    """One line: the query, why FTS5 refused it, and how to match it as written."""
    if reason.startswith("unknown special query"):  # FTS5's words for a leading '*'
        reason = "'*' must follow a word (a prefix query is word*)"
    elif "parser stack overflow" in reason:
        reason += " (parentheses nested too deeply)"
    elif reason.startswith("no such column"):
        column = reason.split(":", 1)[-1].strip()
        kinds = {src.kind for src in SOURCES if column in src.columns}
        if kind is not None and column in FIELDS and kind not in kinds and None not in kinds:
            owners = "/".join(sorted(map(str, kinds)))
            reason = f"column {column!r} holds {owners} text: --kind {kind} has none"
        elif column in FIELDS:  # a real column, beside one of another index
            groups = " | ".join(", ".join(src.columns) for src in SOURCES)
            reason = (
                f"column {column!r} is not in the same index as the query's other columns:"
                f" each index is searched on its own ({groups}), so one query filters on"
                " columns of one of them"
            )
        else:
            reason += f" (columns: {', '.join(FIELDS)})"
    # code (std::vector, a->b, x.y()) reads as FTS5 syntax; a phrase matches it as written
    if len(query) <= SHOWN_QUERY:
        phrase = '"' + query.replace('"', '""') + '"'
        how = f"to match it as written, quote it: {phrase}"
    else:
        how = 'to match it as written, put it in double quotes (doubling each " inside)'
    return f"query {_shown(query)}: {reason}; {how}"


def create_set_from_search(
    store: Store,
    name: str,
    request: SearchRequest,
    labels: list[str] | None = None,
    blind: bool = True,
    votes_per_item: int = 2,
    overlap: str = "routed",
) -> SetRow:
    """A new set of the items a search finds, in rank order; its ``params`` record the
    search so it can be repeated."""
    kind = request.kind or "commit"
    if get_set(store, name) is not None:
        raise SearchError(f"a set named {name!r} already exists")
    hits = run_search(store, SearchRequest(**{**request.__dict__, "kind": kind})).hits
    if not hits:
        raise SearchError(f"no {kind} item matches {_shown(request.query)}: the set would be empty")
    return create_set(
        store,
        NewSet(
            name=name,
            kind=kind,
            labels=list(labels or DEFAULT_LABELS[kind]),
            categories=default_categories(kind),
            params={"search": request.params() | {"kind": kind}},
            blind=blind,
            votes_per_item=votes_per_item,
            overlap=overlap,
        ),
        [h.item_id for h in hits],
    )
