"""Reports computed over one set from the store: agreement and labeler evaluation."""

from __future__ import annotations

from collections import defaultdict

from annotation.adjudication import final_labels
from annotation.agreement import AgreementReport, agreement_report
from annotation.audit import resolve_labeler
from annotation.evaluation import Evaluation, evaluate, evaluate_groups
from annotation.labels import SKIP
from annotation.sets import SetError
from store import Store
from store.items import item_summaries
from store.sets import SetRow, set_size
from store.trends import latest_scores_in_set
from store.votes import ANNOTATOR, live_votes_in_set


def set_ratings(
    store: Store, set_row: SetRow
) -> tuple[dict[int, dict[str, str]], dict[int, dict[str, str]]]:
    """Annotators' live labels and top-level categories per item, skips left out."""
    labels: dict[int, dict[str, str]] = defaultdict(dict)
    categories: dict[int, dict[str, str]] = defaultdict(dict)
    for vote in live_votes_in_set(store, set_row.id, ANNOTATOR):
        if vote.label == SKIP:
            continue
        labels[vote.item_id][vote.annotator] = vote.label
        if vote.category:
            categories[vote.item_id][vote.annotator] = vote.category.split("/")[0]
    return dict(labels), dict(categories)


def agreement_for_set(store: Store, set_row: SetRow) -> AgreementReport:
    labels, categories = set_ratings(store, set_row)
    return agreement_report(labels, set_size(store, set_row.id), set_row.labels, categories)


GROUP_FIELDS = {"repo": "source", "source": "source", "language": "language"}
"""What ``curator eval --by`` can group items by, and the item column each one reads."""


def evaluate_on_set(
    store: Store, set_row: SetRow, labeler: str, rule: str = "majority"
) -> Evaluation:
    """Score a labeler's latest predictions against the set's final labels."""
    name, truth, predicted = _scored(store, set_row, labeler, rule)
    return evaluate(name, truth, predicted, set_row.labels)


def evaluate_on_set_by(
    store: Store, set_row: SetRow, labeler: str, by: str, rule: str = "majority"
) -> tuple[Evaluation, dict[str, Evaluation]]:
    """:func:`evaluate_on_set`, and the same per repository (``by="repo"``) or language,
    from one read of the labels and predictions."""
    column = GROUP_FIELDS.get(by)
    if column is None:
        raise SetError(f"cannot group by {by!r}: use repo or language")
    name, truth, predicted = _scored(store, set_row, labeler, rule)
    group_of = {i: str(row[column] or "") for i, row in item_summaries(store, list(truth)).items()}
    return (
        evaluate(name, truth, predicted, set_row.labels),
        evaluate_groups(name, truth, predicted, set_row.labels, group_of),
    )


def _scored(
    store: Store, set_row: SetRow, labeler: str, rule: str
) -> tuple[str, dict[int, str], dict[int, str]]:
    """The labeler's stored name, the set's final labels, and its predictions of them."""
    name = resolve_labeler(store, labeler)
    truth = final_labels(store, set_row, rule)
    scores = latest_scores_in_set(store, set_row.id, name)  # the set's members only
    return name, truth, {i: scores[i][0] for i in truth if i in scores}
