"""Charts for the app: a chart's figures for one set (``curator.charts``) on the slow lane."""

from __future__ import annotations

from annotation.sets import SetError
from curator.charts import Chart, ChartError, build_chart
from curator.tui.service.lanes import ServiceBase
from store import Store
from store.models import current_model, latest_model
from store.sets import SetRow
from store.trends import labelers_in_set

APP_CHARTS = ("labels", "agreement", "threshold", "audit", "learning")


def _labeler_for(store: Store, set_row: SetRow) -> str | None:
    """The labeler the threshold chart shows: the promoted student, else the newest
    registered one, else the first labeler, each only where it has predicted items of
    the set (a student trained elsewhere would hide the labelers that have)."""
    names = labelers_in_set(store, set_row.id)
    for found in (current_model(store, "student"), latest_model(store, "student")):
        if found is not None and found.name in names:
            return found.name
    return names[0] if names else None


class ChartService(ServiceBase):
    """The charts screen's figures."""

    def chart(self, name: str, set_row: SetRow) -> Chart | str:
        """The chart, or why it cannot be drawn (one line)."""

        def work(store: Store) -> Chart | str:
            if name == "audit" and set_row.purpose != "audit":
                return f"{set_row.name} is not an audit set: the audit chart needs one"
            labeler = _labeler_for(store, set_row) if name == "threshold" else None
            if name == "threshold" and labeler is None:
                return f"no labeler has predicted the items of {set_row.name}"
            try:
                return build_chart(store, name, set_row.name, labeler)
            except (ChartError, SetError) as exc:
                return str(exc)

        return self._slow(work)
