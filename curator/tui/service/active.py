"""Active learning in the app: re-rank a set's queue on the slow lane while the
annotator keeps voting on the quick one (``curator.active_learning``)."""

from __future__ import annotations

from curator.active_learning import Rerank, rerank_queue, reranks
from curator.tui.service.lanes import ServiceBase
from store.sets import SetRow


class ActiveLearningService(ServiceBase):
    """Re-ranking as the votes come in."""

    def rerank_every(self, set_row: SetRow) -> int:
        """Votes between re-ranks of this set (0: it keeps its order)."""
        return reranks(set_row)

    def rerank(self, set_row: SetRow, after_position: int) -> Rerank | None:
        """Refit the in-loop model and re-rank the items after ``after_position``."""
        return self._slow(lambda s: rerank_queue(s, set_row, after_position))
