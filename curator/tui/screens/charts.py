"""Charts of one set: labels per annotator and labeler, agreement per week, the audit's
precision as votes arrive, a labeler's precision and recall against its threshold, and
the student's learning curve. Drawn by textual-plotext at the screen's size (imported
when this screen is first opened, not when the app starts); figures come from a worker."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Static

from curator.charts import Chart, draw
from curator.presentation.text import one_line
from curator.tui.screens.base import CuratorScreen
from curator.tui.service.charts import APP_CHARTS
from curator.tui.widgets.chart_plot import ChartPlot
from curator.tui.widgets.header import TitleHeader
from store.sets import SetRow

TITLES = {
    "labels": "labels",
    "agreement": "agreement per week",
    "threshold": "threshold",
    "audit": "audit precision",
    "learning": "learning curve",
}


class ChartsScreen(CuratorScreen):
    help_title = "charts"
    BINDINGS: ClassVar[list[BindingType]] = [
        *(
            Binding(str(i), f"show('{n}')", TITLES[n], show=False)
            for i, n in enumerate(APP_CHARTS, 1)
        ),
        Binding("right,tab", "step(1)", "Next chart"),
        Binding("left,shift+tab", "step(-1)", "Previous", show=False),
        Binding("escape,q", "leave", "Back"),
    ]
    HELP_TEXT: ClassVar[dict[str, str]] = {
        "step": "the next (→) or previous (←) chart",
        "leave": "back to the home screen",
    }

    def __init__(self, set_row: SetRow, chart: str = "labels") -> None:
        super().__init__()
        self.set_row = set_row
        self.current = chart
        self.chart: Chart | None = None

    def compose(self) -> ComposeResult:
        yield TitleHeader()
        yield Static("", id="status", classes="status")
        yield ChartPlot(id="plot")
        yield Static(
            Text(
                " · ".join(f"{i} {TITLES[n]}" for i, n in enumerate(APP_CHARTS, 1))
                + " · ← → · esc back"
            ),
            classes="hint",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.action_show(self.current)

    def action_show(self, name: str) -> None:
        self.current = name
        self.query_one("#status", Static).update(
            Text.assemble(one_line(self.set_row.name, 40), f" · {TITLES[name]} · loading…")
        )
        self._load(name)

    def action_step(self, step: int) -> None:
        i = (APP_CHARTS.index(self.current) + step) % len(APP_CHARTS)
        self.action_show(APP_CHARTS[i])

    def action_leave(self) -> None:
        self.app.pop_screen()

    @work(thread=True, exclusive=True, group="chart")
    def _load(self, name: str) -> None:
        found = self.curation.chart(name, self.set_row)
        self.from_worker(self._show, name, found)

    def _show(self, name: str, found: Chart | str) -> None:
        if name != self.current:
            return
        plot = self.query_one(ChartPlot)
        status = self.query_one("#status", Static)
        if isinstance(found, str):
            self.chart = None
            plot.plt.clear_figure()
            plot.plt.title(found)
            status.update(
                Text.assemble(one_line(self.set_row.name, 40), " · ", one_line(found, 100))
            )
        else:
            self.chart = found
            draw(plot.plt, found)
            tail = f" · {found.note}" if found.note else ""
            status.update(
                Text.assemble(one_line(self.set_row.name, 40), f" · {TITLES[name]}{tail}")
            )
        plot.refresh()
