"""A textual-plotext plot that never takes the app down: where plotext fails to build a
chart (a value outside the axis limits breaks its legend, for one), the widget shows
why in the chart's place. Imported only where a chart is drawn (plotext loads with it)."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual_plotext import PlotextPlot


class ChartPlot(PlotextPlot):
    """:class:`PlotextPlot` whose drawing errors are shown, not raised."""

    failure: str | None = None

    def render(self) -> RenderableType:
        try:
            shown = super().render()
        except Exception as exc:  # plotext's own bug: say so instead of crashing the app
            self.failure = f"plotext could not draw this chart: {type(exc).__name__}: {exc}"
            return Text(self.failure, style="red")
        self.failure = None
        return shown
