"""Train: retrain the student (or a TF-IDF baseline) from the keyboard, watch it learn,
compare it with the version it would replace, and promote it. Below the models, the
newest stored active-learning simulation (``curator simulate active-learning``) is drawn
as a chart, F1 against votes with the queue re-ranked, in a fixed order and at random;
``c`` gives it the screen (the settings fold away).

Training runs in a child process (torch's import and its steps hold the interpreter
lock: in a thread they froze the screen), started by the service from a thread worker
that only relays the child's reports: epoch, step, loss and dev F1 go to a progress bar.
The child has a database connection of its own (the store is read before and written
after training, never during). esc tells the child to stop: it stops after the current
step with nothing registered; a failure in the child is one line on the screen. Once
the model is registered there is nothing left to cancel: esc then leaves the screen,
saying so. When a model is registered the child scores the previous version (the
family's current one, else the newest older one) on the same eval set, so the two can
be compared side by side before ``p`` promotes the new one.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Footer, ProgressBar, Static
from textual.worker import get_current_worker

from curator.charts import Chart, draw
from curator.presentation import tables
from curator.presentation.format import count, number, when
from curator.presentation.text import one_line
from curator.training import KINDS, TrainingRefused, perf_f1, train_total
from curator.tui import STYLES
from curator.tui.screens.base import CuratorScreen
from curator.tui.screens.prompts import ChoicePrompt, TextPrompt
from curator.tui.service import ChildFailed, Comparison, LearningCurve
from curator.tui.train_form import NONE, SETTINGS, FormError, Setting, TrainForm, initial_form
from curator.tui.widgets.header import TitleHeader
from engines.labelers.student import TrainProgress
from store.models import ModelRow
from store.sets import SetRow

GATHERING = "gathering training data…"


def scores_row(name: str, scores: dict[str, Any] | None) -> tuple[str, ...]:
    return (name, *tables.perf_scores(scores))


def curve_table(curve: LearningCurve) -> Table:
    """F1, precision and recall on the eval set per number of new votes and order."""
    title = Text(f"learning curve of {curve.model} (from {curve.from_model}, on ")
    title.append(curve.eval_set)
    title.append(")")
    table = Table(box=None, padding=(0, 1))
    for column in ("n", "order", "F1(perf)", "P(perf)", "R(perf)"):
        table.add_column(column, justify="left" if column == "order" else "right")
    for p in curve.points:
        table.add_row(
            str(p.n),
            Text(p.order),
            number(p.f1, 3),
            number(p.precision, 3),
            number(p.recall, 3),
        )
    grid = Table.grid()
    title.stylize("italic")
    grid.add_row(title)
    grid.add_row(table)
    return grid


def comparison_table(c: Comparison) -> Table:
    on = (c.new_scores or c.previous_scores or {}).get("set")
    title = Text(f"on {on}" if on else "not scored: no dev or eval set was chosen")
    table = Table(title=title, title_justify="left", box=None, padding=(0, 1))
    for column in ("model", *tables.SCORES_HEADER):
        table.add_column(column, justify="left" if column == "model" else "right")
    table.add_row(*scores_row(f"{c.new.name} (new)", c.new_scores))
    if c.previous is not None:
        table.add_row(*scores_row(f"{c.previous.name} (previous)", c.previous_scores))
    return table


class TrainScreen(CuratorScreen):
    help_title = "train"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "edit", "Change", show=False),
        Binding("s", "start", "Start training"),
        Binding("p", "promote", "Promote"),
        Binding("c", "curve", "AL curve"),
        Binding("f5,ctrl+r", "refresh", "Refresh"),
        Binding("escape,q", "leave", "Cancel/back"),
    ]
    HELP_TEXT: ClassVar[dict[str, str]] = {
        "edit": "change the highlighted setting (↑↓ move between settings)",
        "start": "start training with these settings (in the background)",
        "promote": "make the new model its family's current version (@current); before"
        " training, pick any registered version to promote",
        "curve": "show the active-learning curve on the whole screen (again: the settings"
        " come back)",
        "refresh": "reload the registered models and the active-learning curve",
        "leave": "cancel a running training (nothing is registered), else go back (once"
        " the model is registered there is nothing to cancel: it goes back)",
    }

    CSS_PATH = STYLES / "train.tcss"

    def __init__(self) -> None:
        super().__init__()
        self.form = TrainForm()
        self.teachers: list[str] = []
        self.warm_starts: list[str] = []
        self.sets: list[SetRow] = []
        self.cancel: threading.Event | None = None
        self.trained: ModelRow | None = None
        self.registered: str | None = None
        """The model the running training has registered (esc then cancels nothing)."""
        self.loaded = False
        self.al_chart: Chart | None = None

    def compose(self) -> ComposeResult:
        yield TitleHeader()
        yield Static(Text("Train · loading teachers and sets…"), id="status", classes="status")
        yield DataTable(id="settings", cursor_type="row", zebra_stripes=True)
        yield ProgressBar(id="train-progress", show_eta=True)
        yield Static("", id="run", classes="hint")
        with VerticalScroll(id="results"):
            yield Static("", id="compare", classes="box")
            yield Static("", id="models", classes="box")
            yield Static("", id="al-note", classes="hint")
            yield Vertical(id="al-curve")
        yield Static(
            Text("enter change · s start · esc cancel/back · p promote · c AL curve · ? keys"),
            classes="hint",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Train"
        table = self.query_one("#settings", DataTable)
        for column in ("setting", "value", "what it does"):
            table.add_column(column, key=column)
        self.query_one(ProgressBar).display = False
        self.load_choices()

    # Loading ------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="train-load")
    def load_choices(self) -> None:
        service = self.curation
        teachers = service.teachers()
        sets = [s for s in service.sets() if s.kind == "commit"]
        warm = service.warm_starts()
        self.from_worker(self._choices_loaded, teachers, sets, warm)
        self.load_models()

    def _choices_loaded(self, teachers: list[str], sets: list[SetRow], warm: list[str]) -> None:
        self.teachers, self.sets, self.warm_starts = teachers, sets, warm
        if not self.loaded:
            current = "student@current" if "student@current" in warm else None
            self.form = initial_form(teachers, [s.name for s in sets], current)
            self.loaded = True
        self._show_form()
        if self.cancel is None and self.trained is None:  # a run's own status stays
            self._set_status(
                f"{len(teachers)} teachers with answers · {len(sets)} commit sets · "
                "enter changes a setting, s starts"
            )

    @work(thread=True, exclusive=True, group="train-models")
    def load_models(self) -> None:
        family = self.form.kind
        service = self.curation
        models, current = service.models(family), service.current_model(family)
        curve = service.learning_curve(family)
        self.from_worker(self._show_models, family, models, current, curve)
        found = service.active_learning_chart()
        if isinstance(found, Chart):
            import textual_plotext  # noqa: F401 - loaded here, off the event loop

        self.from_worker(self._show_al_curve, found)

    def _show_al_curve(self, found: Chart | str) -> None:
        note = self.query_one("#al-note", Static)
        box = self.query_one("#al-curve", Vertical)
        if isinstance(found, str):
            self.al_chart = None
            box.display = False
            note.update(one_line(found, 300))
            return
        from curator.tui.widgets.chart_plot import ChartPlot  # plotext loaded by the worker

        self.al_chart = found
        note.update(one_line(found.note, 200))
        box.display = True
        plots = box.query(ChartPlot)
        plot = plots.first() if plots else ChartPlot(id="al-plot")
        if not plots:
            box.mount(plot)
        draw(plot.plt, found)
        plot.refresh()

    def action_curve(self) -> None:
        settings = self.query_one("#settings", DataTable)
        settings.display = not settings.display
        box = self.query_one("#al-curve", Vertical)
        if not settings.display:
            self.query_one("#results", VerticalScroll).scroll_to_widget(
                box if self.al_chart is not None else self.query_one("#al-note"), animate=False
            )

    def _show_models(
        self,
        family: str,
        models: list[ModelRow],
        current: ModelRow | None,
        curve: LearningCurve | None = None,
    ) -> None:
        box = self.query_one("#models", Static)
        if not models:
            box.update(Text(f"no {family} registered yet", style="dim"))
            return
        table = Table(
            title=f"registered {family} models", title_justify="left", box=None, padding=(0, 1)
        )
        for column in ("model", "created", "train", "dev F1", "eval F1", ""):
            table.add_column(column)
        for m in models[-8:]:
            table.add_row(
                m.name,
                when(m.created_at),
                count(train_total(m)),
                number(perf_f1(m.metrics.get("dev")), 3),
                number(perf_f1(m.metrics.get("eval")), 3),
                Text("current", style="bold") if current and current.name == m.name else "",
            )
        if curve is None:
            box.update(table)
            return
        grid = Table.grid()
        grid.add_row(table)
        grid.add_row(Text(""))
        grid.add_row(curve_table(curve))
        box.update(grid)

    # The form -----------------------------------------------------------------------

    def _show_form(self) -> None:
        table = self.query_one("#settings", DataTable)
        row = table.cursor_row
        table.clear()
        for s in SETTINGS:
            table.add_row(s.label, one_line(self.form.shown(s.key), 60), s.hint, key=s.key)
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1))

    def _selected(self) -> Setting | None:
        table = self.query_one("#settings", DataTable)
        if table.cursor_row is None or not 0 <= table.cursor_row < len(SETTINGS):
            return None
        return SETTINGS[table.cursor_row]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if self.is_active:  # enter twice opened the setting's prompt twice
            self.action_edit()

    def action_edit(self) -> None:
        setting = self._selected()
        if setting is None or self.cancel is not None:
            if self.cancel is not None:
                self._say_running()
            return
        set_names = [s.name for s in self.sets]
        if setting.kind == "toggle":
            setattr(self.form, setting.key, not getattr(self.form, setting.key))
            self._show_form()
        elif setting.kind == "choice":
            if setting.key == "kind":
                choices = list(KINDS)
            elif setting.key == "teacher":
                choices = [NONE, *self.teachers]
            elif setting.key == "from_model":
                choices = [NONE, *self.warm_starts]
            else:
                choices = [NONE, *set_names]
            self.app.push_screen(
                ChoicePrompt(setting.label, choices, self.form.shown(setting.key)),
                lambda v: self._chosen(setting, v),
            )
        elif setting.kind == "sets":
            if not set_names:
                self.curator_app.say("no commit sets yet: import or create one first")
                return
            marked = {f"{'[x]' if n in self.form.votes else '[ ]'} {n}": n for n in set_names}
            self.app.push_screen(
                ChoicePrompt("Toggle a set whose votes to learn from", list(marked)),
                lambda v: self._toggled(marked.get(v or "")),
            )
        else:
            current = getattr(self.form, setting.key)
            self.app.push_screen(
                TextPrompt(
                    f"{setting.label} ({setting.hint})", "" if current is None else str(current)
                ),
                lambda v: self._typed(setting, v),
            )

    def _chosen(self, setting: Setting, value: str | None) -> None:
        if value is None:
            return
        self.form.choose(setting.key, value)
        self._show_form()
        if setting.key == "kind":
            self.trained = None
            self.load_models()

    def _toggled(self, name: str | None) -> None:
        if name:
            self.form.toggle_set(name)
            self._show_form()

    def _typed(self, setting: Setting, text: str | None) -> None:
        if text is None:
            return
        try:
            if setting.kind == "number":
                self.form.set_number(setting.key, text)
            else:
                self.form.set_base(text)
        except FormError as exc:
            self.curator_app.say(f"{setting.label}: {exc}", error=True)
            return
        self._show_form()

    # Training -----------------------------------------------------------------------

    def action_start(self) -> None:
        if self.cancel is not None:
            self._say_running()
            return
        self.cancel = threading.Event()
        self.trained = self.registered = None
        bar = self.query_one(ProgressBar)
        bar.update(total=None, progress=0)
        bar.display = True
        self.query_one("#compare", Static).update("")
        self.query_one("#run", Static).update(Text(GATHERING))
        self._set_status(f"training {self.form.kind} · esc cancels")
        self._train(self.cancel)

    @work(thread=True, exclusive=True, group="train")
    def _train(self, cancel: threading.Event) -> None:
        request = self.form.request()
        call = self.from_worker

        def progress(report: TrainProgress) -> None:
            call(self._progress, report)

        def registered(model: ModelRow) -> None:
            call(self._registered, model.name)

        worker = get_current_worker()
        try:
            comparison = self.curation.train(
                request, progress, cancel, registered, lambda: worker.is_cancelled
            )
        except TrainingRefused as exc:
            call(self._stopped, str(exc), True)
            return
        except ChildFailed as exc:  # the child's error, or how it died, named already
            call(self._stopped, f"training failed: {exc}", True)
            return
        except Exception as exc:  # reported on screen, never fatal to the app
            call(self._stopped, f"training failed: {type(exc).__name__}: {exc}", True)
            return
        if comparison is None:
            call(self._stopped, "training cancelled: nothing was registered", False)
            return
        call(self._trained, comparison)

    def _progress(self, r: TrainProgress) -> None:
        self.query_one(ProgressBar).update(total=r.steps, progress=r.step)
        if r.step == r.steps and r.phase == "dev":
            self._set_status("last epoch done: saving the model, scoring it on dev and eval…")
        loss, f1 = number(r.loss, 4), number(r.dev_f1)
        phase = " · scoring dev" if r.phase == "dev" else ""
        self.query_one("#run", Static).update(
            Text(
                f"epoch {r.epoch}/{r.epochs} · step {r.step}/{r.steps} · loss {loss}"
                f" · dev F1 {f1}{phase}"
            )
        )

    def _registered(self, name: str) -> None:
        self.registered = name
        self.query_one(ProgressBar).update(total=None)
        self._set_status(f"registered {name}; scoring the previous version…")

    def _stopped(self, message: str, error: bool) -> None:
        self.cancel = self.registered = None
        self.query_one(ProgressBar).display = False
        self.query_one("#run", Static).update(one_line(message, 300))
        self._set_status("Train · enter changes a setting, s starts")
        self.curator_app.say(message, error=error)

    def _trained(self, c: Comparison) -> None:
        self.cancel = self.registered = None
        self.trained = c.new
        self.query_one(ProgressBar).display = False
        run = self.query_one("#run", Static)
        if str(run.content) == GATHERING:  # a TF-IDF baseline reports no steps
            run.update(Text(f"registered {c.new.name}"))
        parts: list[Any] = [comparison_table(c)]
        new_f1, old_f1 = perf_f1(c.new_scores), perf_f1(c.previous_scores)
        parts.extend(Text(f"warning: {w}", style="yellow") for w in c.warnings)
        if c.note:
            parts.append(Text(c.note, style="dim"))
        elif new_f1 is not None and old_f1 is not None:
            verdict = "better" if new_f1 > old_f1 else "not better"
            parts.append(
                Text(f"F1(perf) {new_f1:.3f} vs {old_f1:.3f}: {verdict}; p promotes {c.new.name}")
            )
        grid = Table.grid()
        for part in parts:
            grid.add_row(part)
        self.query_one("#compare", Static).update(grid)
        self._set_status(f"trained {c.new.name} · p promotes it to {c.new.family}@current")
        self.curator_app.say(f"registered {c.new.name}")
        self.load_choices()  # the new version is one to warm-start from

    def _say_running(self) -> None:
        """A key that needs the run over (s, p, enter) while it runs: say why it did
        nothing, rather than only ring the bell."""
        self.app.bell()
        if self.registered is not None:
            self.curator_app.say(f"{self.registered} is registered: wait for its comparison")
        elif self.cancel is not None and self.cancel.is_set():
            self.curator_app.say("training is stopping after the current step")
        else:
            self.curator_app.say("training is running: esc cancels it first")

    # Promotion and leaving ----------------------------------------------------------

    def action_promote(self) -> None:
        if self.cancel is not None:
            self._say_running()
            return
        if self.trained is not None:
            self._promote(self.trained.name)
            return
        self._pick_to_promote()

    @work(thread=True, exclusive=True, group="train-models")
    def _pick_to_promote(self) -> None:
        family = self.form.kind
        names = [m.name for m in self.curation.models(family)]
        self.from_worker(self._ask_promote, family, names[::-1])

    def _ask_promote(self, family: str, names: list[str]) -> None:
        if not names:
            self.curator_app.say(f"no {family} registered yet: train one with s")
            return

        def picked(name: str | None) -> None:
            if name:
                self._promote(name)

        self.app.push_screen(ChoicePrompt(f"Promote which {family}?", names), picked)

    @work(thread=True, exclusive=True, group="train-promote")
    def _promote(self, name: str) -> None:
        family = name.rsplit("@", 1)[0]
        done = self.curation.promote(name, note="promoted on the Train screen")
        if done is None:
            said = f"{name} is already {family}@current"
        else:
            said = f"{name} is now {family}@current" + (
                f" (was {done.replaced})" if done.replaced else ""
            )
        self.from_worker(self.curator_app.say, said)
        # student@current may be new among the warm starts, and the models' marker moved.
        self.from_worker(self.load_choices)

    def action_refresh(self) -> None:
        self.load_choices()

    def on_unmount(self) -> None:
        # Quitting the app mid-run: stop training instead of waiting for it to finish
        # (once the model is registered, only the comparison is left: nothing to stop).
        if self.cancel is not None and self.registered is None:
            self.cancel.set()

    def action_leave(self) -> None:
        if self.cancel is not None and self.registered is not None:
            # Too late to cancel: the model is stored, only the comparison is left.
            self.curator_app.say(
                f"training is done: {self.registered} is registered (nothing to cancel;"
                " the Train screen shows it)"
            )
            self.app.pop_screen()
            return
        if self.cancel is not None:
            self.cancel.set()
            self._set_status("cancelling: training stops after the current step…")
            return
        self.app.pop_screen()

    def _set_status(self, text: str) -> None:
        self.query_one("#status", Static).update(one_line(text, 200))
