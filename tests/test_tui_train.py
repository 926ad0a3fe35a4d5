"""The Train screen driven by keys: settings checked as typed, a real student trained in a
worker with progress, compared with the previous version, promoted; cancel and refusal
leave the store as it was."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from textual.widgets import DataTable, ProgressBar, Static

from curator.training_child import ChildFailed, Report, run_in_child
from curator.tui.app import CuratorApp
from curator.tui.screens.home import HomeScreen
from curator.tui.screens.prompts import ChoicePrompt, TextPrompt
from curator.tui.screens.train import TrainScreen
from curator.tui.train_form import SETTINGS, FormError, TrainForm
from store import open_store
from store.models import current_model, list_models, promote_model, promotions, register_model
from tests.tui_helpers import (  # noqa: F401 - fixtures
    asyncio_backend,
    screen_text,
    store_copy,
    store_template,
    text_of,
    until,
)
from tests.tui_store import ROOT
from tests.tui_store import curator as curator_cli

pytestmark = pytest.mark.anyio
ROW = {s.key: i for i, s in enumerate(SETTINGS)}


def split_sample(db: Path) -> None:
    curator_cli(
        db, "set", "split", "--from-set", "gt-sample", "--into", "tr:60,gt-dev:20,gt-eval:20"
    )


template = store_template("train", with_engines=False, then=split_sample)


async def open_train(pilot, app: CuratorApp) -> TrainScreen:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
    await pilot.press("m")
    await until(
        pilot,
        lambda: isinstance(app.screen, TrainScreen) and app.screen.loaded,
        "train screen with its choices",
    )
    screen = app.screen
    assert isinstance(screen, TrainScreen)
    return screen


async def edit(pilot, screen: TrainScreen, key: str) -> None:  # type: ignore[no-untyped-def]
    screen.query_one("#settings", DataTable).move_cursor(row=ROW[key])
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(screen.app.screen, (ChoicePrompt, TextPrompt)), key)


async def back_on(pilot, screen: TrainScreen) -> None:  # type: ignore[no-untyped-def]
    """Wait until a prompt has closed and the settings have the focus again, so the
    next key reaches the screen and not the prompt being taken down."""
    table = screen.query_one("#settings", DataTable)
    await until(
        pilot, lambda: screen.app.screen is screen and screen.app.focused is table, "prompt closed"
    )


async def type_value(pilot, screen: TrainScreen, key: str, text: str) -> None:  # type: ignore[no-untyped-def]
    await edit(pilot, screen, key)
    await pilot.press("ctrl+a", "ctrl+k", *text, "enter")  # clear the field, type, confirm
    await back_on(pilot, screen)


def value_shown(screen: TrainScreen, key: str) -> str:
    return str(screen.query_one("#settings", DataTable).get_row_at(ROW[key])[1])


async def small_run(pilot, screen: TrainScreen) -> None:  # type: ignore[no-untyped-def]
    """Votes of ``tr``, one short epoch: seconds on a CPU."""
    await edit(pilot, screen, "votes")
    await pilot.press(*"] tr", "enter")
    await back_on(pilot, screen)
    await until(pilot, lambda: value_shown(screen, "votes") == "tr", "votes from tr")
    await type_value(pilot, screen, "epochs", "1")
    await type_value(pilot, screen, "max_length", "32")
    await type_value(pilot, screen, "batch", "8")
    await type_value(pilot, screen, "lr", "0.0001")


async def test_train_compare_and_promote_from_the_keyboard(db: Path) -> None:
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_train(pilot, app)
        # the docs' set names are picked for dev and eval without asking
        assert value_shown(screen, "dev") == "gt-dev" and value_shown(screen, "eval") == "gt-eval"
        await small_run(pilot, screen)
        assert (screen.form.epochs, screen.form.max_length, screen.form.lr) == (1, 32, 1e-4)

        run = screen.query_one("#run", Static)
        await pilot.press("s")
        await until(pilot, lambda: text_of(run) != "", "training started")
        await until(pilot, lambda: screen.cancel is None, "first run over", tries=6000)
        run_line = text_of(run)
        assert screen.trained is not None and screen.trained.name == "student@1", run_line
        assert "epoch 1/1 · step 3/3 · loss" in run_line  # the last progress report
        bar = screen.query_one(ProgressBar)
        assert bar.progress == 3 and not bar.display
        await until(pilot, lambda: "student@1 (new)" in screen_text(app), "comparison")
        assert "the first student" in screen_text(app)

        await pilot.press("s")
        await until(
            pilot,
            lambda: screen.trained is not None and screen.trained.name == "student@2",
            "second student",
            tries=6000,
        )
        await until(pilot, lambda: "student@1 (previous)" in screen_text(app), "previous")
        shown = screen_text(app)
        assert "student@2 (new)" in shown and "F1(perf)" in shown and "gt-eval" in shown

        await pilot.press("p")
        await until(pilot, lambda: "current" in text_of_models(screen), "current marker")
    with open_store(db) as s:
        current = current_model(s, "student")
        history = promotions(s, "student")
        models = [m.name for m in list_models(s, "student")]
    assert models == ["student@1", "student@2"]
    assert current is not None and current.name == "student@2"
    assert [(p.model, p.promoted_by) for p in history] == [("student@2", "dave")]


def text_of_models(screen: TrainScreen) -> str:
    from rich.console import Console

    console = Console(width=120, record=True)
    console.print(screen.query_one("#models", Static).content)
    return console.export_text()


async def test_esc_cancels_training_and_registers_nothing(db: Path) -> None:
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_train(pilot, app)
        await small_run(pilot, screen)
        # no dev set, so no early stop: a student that learns fast (one started from the
        # perf prior reaches dev F1 1.0 in an epoch) cannot finish before esc lands
        await edit(pilot, screen, "dev")
        await pilot.press(*"none", "enter")
        await back_on(pilot, screen)
        assert value_shown(screen, "dev") == "none"
        await type_value(pilot, screen, "epochs", "20")
        await pilot.press("s", "escape")
        await until(pilot, lambda: screen.cancel is None, "training stopped", tries=6000)
        assert "cancelled" in text_of(screen.query_one("#run", Static))
        assert app.screen is screen  # esc stopped training; a second esc leaves
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "back home")
    with open_store(db) as s:
        assert list_models(s) == []
    assert [p.name for p in (db.parent / "models").iterdir()] == []  # no staging left


async def test_quitting_mid_training_stops_it_and_registers_nothing(db: Path) -> None:
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_train(pilot, app)
        await small_run(pilot, screen)
        await edit(pilot, screen, "dev")  # no dev set: no early stopping either
        await pilot.press(*"none", "enter")
        await back_on(pilot, screen)
        assert value_shown(screen, "dev") == "none"
        await type_value(pilot, screen, "epochs", "50")
        await pilot.press("s")
        await until(
            pilot,
            lambda: "/50 · step" in text_of(screen.query_one("#run", Static)),
            "training under way",
            tries=3000,
        )
        cancel = screen.cancel
        await pilot.press("ctrl+q")
    # The app's exit waits for its worker threads: the run must be told to stop.
    assert cancel is not None and cancel.is_set()
    with open_store(db) as s:
        assert list_models(s) == []


async def test_bad_values_and_a_run_with_nothing_to_learn_are_refused(db: Path) -> None:
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_train(pilot, app)
        await type_value(pilot, screen, "tau", "150")
        assert screen.form.tau == 85.0 and value_shown(screen, "tau") == "85"
        await type_value(pilot, screen, "base", "/nowhere/model")
        assert screen.form.base is None
        await pilot.press("s")
        await until(
            pilot,
            lambda: (
                screen.cancel is None
                and "nothing to learn" in text_of(screen.query_one("#run", Static))
            ),
            "refusal",
        )
    with open_store(db) as s:
        assert list_models(s) == []


def test_form_checks_each_value_and_builds_the_request() -> None:
    form = TrainForm()
    with pytest.raises(FormError, match="0 to 100"):
        form.set_number("tau", "101")
    with pytest.raises(FormError, match="not a number"):
        form.set_number("epochs", "three")
    with pytest.raises(FormError, match="at least 1"):
        form.set_number("batch", "0")
    form.set_number("layers", "3")
    form.toggle_set("tr")
    form.toggle_set("more")
    form.toggle_set("tr")
    form.choose("teacher", "teacher:m")
    form.choose("kind", "tfidf-lr")
    with pytest.raises(FormError):
        form.choose("kind", "bert")
    request = form.request()
    assert request.vote_sets == ("more",) and request.teacher == "teacher:m"
    assert request.kind == "tfidf-lr" and request.config.layers == 3
    with pytest.raises(FormError, match="0 or more"):
        form.set_number("replay", "-1")
    form.set_number("replay", "2")
    form.choose("from_model", "student@current")
    assert form.request().from_model is None  # a TF-IDF baseline does not warm-start
    form.choose("kind", "student")
    assert (form.request().from_model, form.request().replay) == ("student@current", 2.0)
    form.set_number("layers", "")
    form.choose("teacher", "none")
    assert form.request().config.layers is None and form.request().teacher is None


CURVE = {
    "from_model": "student@1",
    "eval": "[red]gt-eval",  # shown literally, never as markup
    "start": {"n": 0, "order": "start", "f1": 0.5, "precision": 0.4, "recall": 0.6},
    "points": [
        {"n": 50, "order": "random", "f1": 0.7, "precision": 0.65, "recall": 0.75},
        {"n": 50, "order": "uncertainty", "f1": 0.812, "precision": 0.8, "recall": 0.825},
    ],
}


async def test_a_models_learning_curve_shows_and_warm_start_defaults_to_current(
    db: Path, tmp_path: Path
) -> None:
    with open_store(db) as s:
        for params in ({}, {"learning_curve": CURVE, "warm_start": "student@1"}):
            staged = tmp_path / f"staged-{len(params)}"
            staged.mkdir()
            register_model(s, "student", "base", params, {}, staged)
        promote_model(s, "student@1", "dave")
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_train(pilot, app)
        assert value_shown(screen, "from_model") == "student@current"
        assert screen.form.request().from_model == "student@current"
        await until(pilot, lambda: "learning curve of" in text_of_models(screen), "curve")
        shown = text_of_models(screen)
        assert "learning curve of student@2 (from student@1, on [red]gt-eval)" in shown
        assert "uncertainty" in shown and "0.812" in shown and "random" in shown
        await edit(pilot, screen, "from_model")  # the choices: none, @current, versions
        prompt = app.screen
        assert isinstance(prompt, ChoicePrompt)
        assert prompt.choices == ["none", "student@current", "student@2", "student@1"]
        await pilot.press(*"none", "enter")
        await back_on(pilot, screen)
        assert screen.form.from_model is None and value_shown(screen, "from_model") == "none"


def test_the_form_starts_from_the_perf_prior_unless_turned_off() -> None:
    keys = [s.key for s in SETTINGS]
    assert "prior" in keys and "same_repos" in keys
    form = TrainForm(votes=["gt-train"])
    request = form.request()
    assert request.config.prior == "perf" and request.same_repos is False
    assert form.shown("prior") == "yes"
    form.prior, form.same_repos = False, True
    request = form.request()
    assert request.config.prior == "none" and request.same_repos is True
    assert request.config.prior_examples == "skip" and form.shown("skip_learned") == "yes"
    assert request.config.lr is None and form.shown("lr") == "auto"
    form.skip_learned = False
    form.set_number("lr", "2e-5")
    assert form.request().config.prior_examples == "train" and form.request().config.lr == 2e-5
    form.set_number("lr", "")
    assert form.request().config.lr is None


# Training in a child process ------------------------------------------------------------


def training_children() -> list[int]:
    """Training child processes this process started that are still running."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if int(parent) == os.getpid() and "curator.training_child" in cmd and state != "Z":
            found.append(int(proc.name))
    return found


async def long_run(pilot, screen: TrainScreen, epochs: str) -> None:  # type: ignore[no-untyped-def]
    """A small run without a dev set (no early stop): it lasts until cancelled."""
    await small_run(pilot, screen)
    await edit(pilot, screen, "dev")
    await pilot.press(*"none", "enter")
    await back_on(pilot, screen)
    assert value_shown(screen, "dev") == "none"
    await type_value(pilot, screen, "epochs", epochs)


async def watch_the_loop_while_training(db: Path) -> dict[str, object]:
    """Run in a fresh interpreter by the test below: train, and see the app's timer tick
    and a key answered while the child trains; then esc. What it saw, as a dict."""
    app = CuratorApp(db, "dave")
    seen: dict[str, object] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_train(pilot, app)
        await long_run(pilot, screen, "40")
        ticks = [0]
        app.set_interval(0.01, lambda: ticks.__setitem__(0, ticks[0] + 1))
        run, table = screen.query_one("#run", Static), screen.query_one("#settings", DataTable)
        await pilot.press("s")
        await until(pilot, lambda: "/40 · step" in text_of(run), "first report", tries=6000)
        first_report, ticks_then = text_of(run), ticks[0]
        row = table.cursor_row
        await pilot.press("up")
        training = screen.cancel is not None
        seen["key answered while training"] = table.cursor_row == row - 1 and training
        await until(pilot, lambda: text_of(run) != first_report, "a later report", tries=6000)
        seen["ticks between two reports"] = ticks[0] - ticks_then
        seen["training children"] = len(training_children())
        await pilot.press("escape")
        await until(pilot, lambda: screen.cancel is None, "training stopped", tries=6000)
        seen["run line"] = text_of(run)
    seen["torch in the app's process"] = "torch" in sys.modules
    with open_store(db) as s:
        seen["models"] = [m.name for m in list_models(s)]
    seen["models dir"] = sorted(p.name for p in (db.parent / "models").iterdir())
    return seen


def test_training_runs_in_a_child_and_the_app_keeps_answering(db: Path) -> None:
    # torch's import (and each training step) holds the interpreter lock: in the app's
    # own process, training froze the screen. A fresh interpreter, so that no other
    # test's import of torch hides one by the app.
    probe = (
        "import asyncio, json, sys\n"
        "from pathlib import Path\n"
        "from tests.test_tui_train import watch_the_loop_while_training as watch\n"
        "print(json.dumps(asyncio.run(watch(Path(sys.argv[1])))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(db)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["torch in the app's process"] is False
    assert seen["training children"] == 1
    assert seen["key answered while training"] is True
    assert isinstance(seen["ticks between two reports"], int)
    assert seen["ticks between two reports"] > 0
    assert "cancelled" in str(seen["run line"])
    assert seen["models"] == [] and seen["models dir"] == []  # esc: nothing half-written


async def test_a_training_child_that_dies_is_one_line_and_the_app_goes_on(db: Path) -> None:
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_train(pilot, app)
        await long_run(pilot, screen, "40")
        await pilot.press("s")
        await until(
            pilot,
            lambda: "/40 · step" in text_of(screen.query_one("#run", Static)),
            "training under way",
            tries=6000,
        )
        [child] = training_children()
        os.kill(child, signal.SIGKILL)  # as the kernel's out-of-memory killer would
        await until(pilot, lambda: screen.cancel is None, "failure shown", tries=3000)
        line = text_of(screen.query_one("#run", Static))
        assert line.startswith("training failed: the training process was killed by signal 9")
        assert "\n" not in line
        assert app.is_running and app.screen is screen
        assert training_children() == []
        await pilot.press("escape")  # the screen works on: esc leaves
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
    with open_store(db) as s:
        assert list_models(s) == []


async def test_an_error_in_the_training_child_is_one_line(db: Path) -> None:
    (db.parent / "models").write_text("a file where the models directory belongs")
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_train(pilot, app)
        await small_run(pilot, screen)
        await pilot.press("s")
        await until(pilot, lambda: screen.cancel is None, "failure shown", tries=6000)
        line = text_of(screen.query_one("#run", Static))
        assert line.startswith("training failed: FileExistsError:"), line
        assert "models" in line and "\n" not in line
        assert training_children() == []
    with open_store(db) as s:
        assert list_models(s) == []


def report_then_fail(report: Report, cancel: threading.Event, how: str) -> None:
    """A job for :func:`run_in_child` (imported by the child by name)."""
    report("progress", "halfway")
    if how == "raise":
        raise ValueError("bad row 7\nsecond line")
    print("the last words of the child", file=sys.stderr, flush=True)
    os._exit(3)


def echo_until_cancelled(report: Report, cancel: threading.Event, value: int) -> int:
    report("progress", value)
    cancel.wait()
    return value + 1


def test_the_child_runner_relays_reports_and_says_how_the_child_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)  # the child imports this module as tests.test_tui_train
    heard: list[tuple[str, object]] = []

    def hear(kind: str, value: object) -> None:
        heard.append((kind, value))

    with pytest.raises(ChildFailed) as failed:
        run_in_child(report_then_fail, ("raise",), hear, threading.Event())
    assert str(failed.value) == "ValueError: bad row 7 second line"
    assert heard == [("progress", "halfway")]
    with pytest.raises(ChildFailed) as died:
        run_in_child(report_then_fail, ("exit",), hear, threading.Event())
    assert str(died.value) == (
        "the training process exited (3) without an answer: the last words of the child"
    )
    cancel = threading.Event()

    def cancel_once_heard(kind: str, value: object) -> None:
        hear(kind, value)
        cancel.set()

    # cancelling closes the child's stdin: the job sees its cancel flag and returns
    assert run_in_child(echo_until_cancelled, (41,), cancel_once_heard, cancel) == 42
    assert heard[-1] == ("progress", 41)
