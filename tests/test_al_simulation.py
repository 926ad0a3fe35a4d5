"""The active-learning simulation: its result kept in the ``simulations`` table and read
back, ``curator simulate active-learning`` on the sample data (a set and a file), the
chart it feeds, and the Train screen drawing the newest one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curator.al_simulation import (
    KIND,
    STRATEGIES,
    SimulationRequest,
    SimulationResult,
    latest_curves,
    seed_order,
    store_result,
    stored_curves,
)
from curator.charts import build_chart
from curator.cli import app
from store import open_store
from store.simulations import list_simulations, record_simulation
from tests.al_data import CURVES, VOTES, store_fixed_simulation
from tests.tui_store import ANNOTATION
from tests.tui_store import curator as curator_cli


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample ground-truth set, split into a pool and a held-out set."""
    db = tmp_path_factory.mktemp("al") / "s.db"
    curator_cli(db, "import", "items", str(ANNOTATION / "items.jsonl"), "--set", "gt-sample")
    curator_cli(db, "import", "votes", str(ANNOTATION / "votes.csv"))
    curator_cli(db, "set", "split", "--from-set", "gt-sample", "--into", "pool:75,held:25")
    return db


def test_a_result_is_stored_and_read_back(tmp_path: Path) -> None:
    with open_store(tmp_path / "c.db") as store:
        assert latest_curves(store) is None
        first = store_fixed_simulation(store)
        request = SimulationRequest([("a", "perf")] * 3, [("b", "non-perf")], every=5, seeds=2)
        result = SimulationResult({s: [(10, 0.5), (15, 0.625)] for s in STRATEGIES}, 0.01, 1.5)
        second = store_result(store, "pool", "held", request, result)
        assert [r.id for r in list_simulations(store, KIND)] == [first.id, second.id]
        newest = latest_curves(store)
        assert newest is not None and newest.id == second.id
        assert (newest.pool, newest.eval) == ("pool", "held")
        assert newest.params["every"] == 5 and newest.params["pool_items"] == 3
        assert stored_curves(newest) == result.curves
        assert stored_curves(first) == {
            k: list(zip(VOTES, v, strict=True)) for k, v in CURVES.items()
        }
        broken = record_simulation(
            store, KIND, "p", "e", {}, {"curves": {"rerank": [[1, "x"]], "random": [[2, 0.5]]}}
        )
        assert stored_curves(broken) == {"random": [(2, 0.5)]}


def test_seed_votes_always_hold_both_labels() -> None:
    pool = [("t", "non-perf")] * 30 + [("p", "perf")]
    for seed in range(5):
        order = seed_order(pool, "perf", 4, seed)
        assert sorted(order) == list(range(31))
        assert {pool[i][1] for i in order[:4]} == {"perf", "non-perf"}


def test_simulate_on_the_sample_stores_a_curve_the_chart_draws(sample: Path) -> None:
    runner = CliRunner()
    db = str(sample)
    result = runner.invoke(app, ["chart", "active-learning", "--db", db])
    assert result.exit_code == 1 and "curator simulate active-learning" in result.output
    args = ["simulate", "active-learning", "pool", "--eval", "held", "--db", db]
    result = runner.invoke(app, [*args, "--every", "5", "--seed-votes", "4", "--seeds", "1"])
    assert result.exit_code == 0, result.output
    assert "stored as simulation #1" in result.output and "rerank" in result.output
    with open_store(sample) as store:
        row = latest_curves(store)
        assert row is not None and (row.pool, row.eval) == ("pool", "held")
        curves = stored_curves(row)
        chart = build_chart(store, "active-learning", None, None)
    assert set(curves) == set(STRATEGIES)
    assert [n for n, _ in curves["rerank"]][:3] == [4, 9, 14]
    assert all(0.0 <= f1 <= 1.0 for points in curves.values() for _, f1 in points)
    assert [s.name for s in chart.series] == ["re-ranking", "fixed order", "random"]
    result = runner.invoke(app, ["chart", "active-learning", "--db", db, "--width", "60"])
    assert result.exit_code == 0 and "re-ranking" in result.output


def test_simulate_reads_a_labeled_file_and_names_a_bad_line(sample: Path, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (ANNOTATION / "items.jsonl").read_text().splitlines()]
    texts = [r["message"] for r in rows]
    labeled = tmp_path / "labeled.jsonl"
    labeled.write_text(
        "".join(
            json.dumps({"commit_message": t, "target": int("speed" in t.lower() or i % 3 == 0)})
            + "\n"
            for i, t in enumerate(texts)
        )
    )
    runner = CliRunner()
    base = ["simulate", "active-learning", str(labeled), "--eval", str(labeled), "--db"]
    opts = ["--label-field", "target", "--map", "1=perf,0=non-perf", "--seeds", "1"]
    result = runner.invoke(
        app, [*base, str(sample), *opts, "--votes", "20", "--no-store", "--json"]
    )
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["stored"] is None and [n for n, _ in found["curves"]["random"]] == [10, 20]
    with labeled.open("a") as f:
        f.write(json.dumps({"commit_message": "x", "target": 7}) + "\n")
    result = runner.invoke(app, [*base, str(sample), *opts, "--votes", "20", "--no-store"])
    assert result.exit_code == 0, result.output  # the bad row is named and left out
    assert f"labeled.jsonl:{len(texts) + 1}: label '7' is not in --map; row skipped" in (
        result.output
    )
    assert f"{len(texts)} of the {len(texts)} eval items are also in the pool" in result.output
    result = runner.invoke(app, [*base[:2], str(tmp_path / "gone.jsonl"), *base[3:], str(sample)])
    assert result.exit_code == 1 and "gone.jsonl: no such file" in result.output
    gz = tmp_path / "gone.jsonl.gz"
    result = runner.invoke(app, [*base[:2], str(gz), *base[3:], str(sample)])
    assert result.exit_code == 1 and "gone.jsonl.gz: no such file" in result.output


def test_a_pool_or_eval_that_cannot_give_a_curve_is_named(sample: Path, tmp_path: Path) -> None:
    one_label = tmp_path / "perf-only.jsonl"
    one_label.write_text(
        "".join(json.dumps({"commit_message": f"faster {i}", "target": 1}) + "\n" for i in range(9))
    )
    runner = CliRunner()
    args = ["simulate", "active-learning", "pool", "--eval", str(one_label), "--db", str(sample)]
    result = runner.invoke(app, [*args, "--label-field", "target", "--map", "1=perf,0=non-perf"])
    assert result.exit_code == 1, result.output
    # was: "the eval needs settled items of 'perf' and of another label", naming neither
    assert f"the eval {one_label} needs settled items of 'perf' and of another" in result.output
    result = runner.invoke(app, [*args[:4], "held", *args[5:], "--seed-votes", "40"])
    assert result.exit_code == 1, result.output
    assert "the pool pool has" in result.output and "more than --seed-votes (40)" in result.output


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_train_screen_draws_the_newest_simulation(tmp_path: Path) -> None:
    from textual.widgets import DataTable, Static

    from curator.tui.app import CuratorApp
    from curator.tui.screens.home import HomeScreen
    from curator.tui.screens.train import TrainScreen
    from tests.tui_helpers import text_of, until

    db = tmp_path / "t.db"
    with open_store(db):
        pass
    app_ = CuratorApp(db, "dave")
    async with app_.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app_.screen, HomeScreen), "home")
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app_.screen, TrainScreen), "train")
        screen = app_.screen
        assert isinstance(screen, TrainScreen)
        note = screen.query_one("#al-note", Static)
        await until(pilot, lambda: "simulate active-learning" in text_of(note), "how to make one")
        assert screen.al_chart is None and not screen.query_one("#al-curve").display
        with open_store(db) as store:
            store_fixed_simulation(store)
        await pilot.press("f5")
        await until(pilot, lambda: screen.al_chart is not None, "the curve")
        assert screen.al_chart is not None
        assert [s.name for s in screen.al_chart.series] == ["re-ranking", "fixed order", "random"]
        assert screen.al_chart.series[0].ys[-1] == pytest.approx(0.847)
        assert "re-ranked every 20 votes" in text_of(note)
        assert screen.query_one("#al-curve").display
        settings = screen.query_one("#settings", DataTable)
        await pilot.press("c")
        assert not settings.display
        await pilot.press("c")
        assert settings.display
