"""The Train screen as a team lead uses it day to day: a version promoted (or trained)
on the screen is at once one to warm-start the next run from, without f5."""

from __future__ import annotations

from pathlib import Path

import pytest

from curator.tui.app import CuratorApp
from curator.tui.screens.prompts import ChoicePrompt
from curator.tui.screens.train import TrainScreen
from store import open_store
from store.models import list_models, register_model
from tests.test_tui_train import back_on, edit, open_train, text_of_models, value_shown
from tests.tui_helpers import (  # noqa: F401 - fixtures
    asyncio_backend,
    store_copy,
    store_template,
    text_of,
    until,
)

pytestmark = pytest.mark.anyio

template = store_template("hunt3-train", with_engines=False)


async def test_a_version_promoted_on_the_screen_is_offered_as_a_warm_start(
    db: Path, tmp_path: Path
) -> None:
    with open_store(db) as s:
        staged = tmp_path / "staged"
        staged.mkdir()
        register_model(s, "student", "base", {}, {}, staged)
    app = CuratorApp(db, "lead")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_train(pilot, app)
        await until(pilot, lambda: "student@1" in text_of_models(screen), "models")
        assert screen.warm_starts == ["student@1"]
        status = text_of(screen.query_one("#status"))

        await pilot.press("p")  # before any training: pick a version to promote
        await until(pilot, lambda: isinstance(app.screen, ChoicePrompt), "versions")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TrainScreen), "promoted")
        await until(pilot, lambda: "current" in text_of_models(screen), "current marker")
        # What the warm start offers follows: student@current names the promoted one.
        await until(
            pilot, lambda: "student@current" in screen.warm_starts, "student@current offered"
        )
        await app.workers.wait_for_complete()
        assert screen.warm_starts == ["student@current", "student@1"]
        assert text_of(screen.query_one("#status")) == status


async def test_a_second_start_while_training_runs_says_why_it_did_nothing(db: Path) -> None:
    app = CuratorApp(db, "lead")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_train(pilot, app)
        await edit(pilot, screen, "kind")
        await pilot.press(*"tfidf-lr", "enter")
        await back_on(pilot, screen)
        await edit(pilot, screen, "votes")
        await pilot.press(*"] gt-sample", "enter")
        await back_on(pilot, screen)
        assert (value_shown(screen, "kind"), value_shown(screen, "votes")) == (
            "tfidf-lr",
            "gt-sample",
        )

        await pilot.press("s", "s", "p")  # the second s and p typed while the run goes on
        said = [n.message for n in app._notifications]
        assert said.count("training is running: esc cancels it first") == 2, said
        await until(pilot, lambda: screen.cancel is None, "the run over", tries=6000)
        assert screen.trained is not None, text_of(screen.query_one("#run"))
        await app.workers.wait_for_complete()
    with open_store(db) as s:
        assert [m.name for m in list_models(s, screen.trained.family)] == [screen.trained.name]
