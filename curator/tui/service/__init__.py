"""The one place the app's screens reach the store, the annotation layer and the
engines through: :class:`CurationService`, named and typed methods only.

Screens call these methods from Textual thread workers, never on the event loop. The
service holds two connections ("lanes", :mod:`.lanes`): the quick lane serves the item
on screen and votes, the slow lane serves counts and reports; training opens a
connection of its own, in a child process. Each concern lives in its own module:

- :mod:`.queue`: sets, the queue, items, votes, search
- :mod:`.reports`: conflicts, audit, agreement
- :mod:`.training`: teachers, training runs, models, promotions
- :mod:`.kernels`: stored kernels and their dynamic check
- :mod:`.search`: full-text search over the whole store or one set
- :mod:`.charts`: the charts screen's figures
- :mod:`.active`: re-ranking a set's queue as votes come in (active learning)
"""

from __future__ import annotations

from annotation.routing import ItemTaken
from curator.training_child import ChildFailed
from curator.tui.service.active import ActiveLearningService
from curator.tui.service.charts import ChartService
from curator.tui.service.kernels import KernelService
from curator.tui.service.queue import (
    ItemGone,
    QueueService,
    QueueState,
    SetOverview,
    categories_of,
    counts_in,
    labels_of,
)
from curator.tui.service.reports import ReportService
from curator.tui.service.search import SearchService
from curator.tui.service.training import Comparison, LearningCurve, TrainingService


class CurationService(
    QueueService,
    ReportService,
    TrainingService,
    KernelService,
    SearchService,
    ChartService,
    ActiveLearningService,
):
    """Sets, queues, votes, reports, training and kernel checks for one annotator on one
    database."""


__all__ = [
    "ChildFailed",
    "Comparison",
    "CurationService",
    "ItemGone",
    "ItemTaken",
    "LearningCurve",
    "QueueState",
    "SetOverview",
    "categories_of",
    "counts_in",
    "labels_of",
]
