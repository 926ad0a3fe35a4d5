"""Heuristic supervision (``heuristics@N``): regex labeling functions and the label model
that combines their votes.

This package is the front door; the work lives in its modules:

* :mod:`engines.labelers.heuristics.functions`: the labeling functions and their votes;
* :mod:`engines.labelers.heuristics.label_model`: the Dawid-Skene label model (shipped
  fitted in ``heuristics_model.json``) and :class:`HeuristicLabeler`;
* :mod:`engines.labelers.heuristics.fit`: ``python -m engines.labelers.heuristics.fit``
  refits the model on unlabeled messages.
"""

from __future__ import annotations

from engines.labelers.heuristics.functions import (
    LABELING_FUNCTIONS,
    LabelingFunction,
    fired,
    majority_vote,
)
from engines.labelers.heuristics.label_model import (
    DEGENERATE,
    MODEL_FILE,
    HeuristicLabeler,
    LabelModel,
    fit_label_model,
    load_model,
)

__all__ = [
    "DEGENERATE",
    "LABELING_FUNCTIONS",
    "MODEL_FILE",
    "HeuristicLabeler",
    "LabelModel",
    "LabelingFunction",
    "fired",
    "fit_label_model",
    "load_model",
    "majority_vote",
]
