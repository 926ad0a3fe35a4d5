"""Charts: the figures behind them (agreement per week from the vote history, an audit's
running precision, precision/recall against a threshold), each chart pinned as text at
80x24 and 120x40, the SVG the datasheet embeds, ``curator chart`` and the app's screen."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from annotation.audit import wilson_interval
from annotation.trends import (
    agreement_by_week,
    audit_progress,
    label_distribution,
    threshold_curve,
)
from curator.charts import CHARTS, ChartError, build_chart, render_svg, render_text, threshold_chart
from curator.cli import app
from store import Store, open_store
from store.commits import insert_predictions
from store.items import ImportedItem, insert_imported_items
from store.models import register_model
from store.records import PredictionRow
from store.sets import NewSet, create_set
from store.votes import VoteRow, append_votes
from tests import raw_sql
from tests.al_data import store_fixed_simulation

SIZES = [(80, 24), (120, 40)]
# item -> (alice, bob in week 1; bob's change in week 2; keyword@1's P(perf))
PLAN = [
    ("perf", "perf", None, 0.9),
    ("perf", "perf", "non-perf", 0.8),
    ("non-perf", "non-perf", None, 0.3),
    ("non-perf", "non-perf", None, 0.6),
    ("perf", "non-perf", None, 0.7),
    ("non-perf", "non-perf", "perf", 0.1),
]


def _items(n: int) -> list[ImportedItem]:
    return [
        ImportedItem(
            "commit",
            f"c{i}",
            "repo",
            "python",
            None,
            {"message": f"m{i}", "model_input": f"m{i}"},
            {},
        )
        for i in range(n)
    ]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = open_store(tmp_path / "c.db")
    ids = [item_id for _, item_id in insert_imported_items(s, _items(len(PLAN) + 4))]
    audited, ids = ids[len(PLAN) :], ids[: len(PLAN)]
    gt = create_set(s, NewSet(name="gt", kind="commit", labels=["perf", "non-perf"]), ids)
    create_set(
        s,
        NewSet(
            name="aud",
            kind="commit",
            labels=["perf", "non-perf"],
            purpose="audit",
            params={
                "audit": {
                    "labeler": "keyword@1",
                    "label": "perf",
                    "confidence": 0.95,
                    "population": 4,
                    "stratify": [],
                }
            },
        ),
        audited,
    )
    week1 = [
        VoteRow(i, "alice", a, set_id=gt.id) for i, (a, _, _, _) in zip(ids, PLAN, strict=True)
    ]
    week1 += [
        VoteRow(i, "<b>ob", b, set_id=gt.id) for i, (_, b, _, _) in zip(ids, PLAN, strict=True)
    ]
    append_votes(s, week1)
    week2 = [
        VoteRow(i, "<b>ob", c, set_id=gt.id)
        for i, (_, _, c, _) in zip(ids, PLAN, strict=True)
        if c is not None
    ]
    append_votes(s, week2)
    conn = raw_sql.connection(s)
    conn.execute("UPDATE votes SET created_at = '2026-11-03T10:00:00+00:00' WHERE id <= 12")
    conn.execute("UPDATE votes SET created_at = '2026-11-11T10:00:00+00:00' WHERE id > 12")
    for i, (_, _, _, p) in zip(ids, PLAN, strict=True):
        label = "perf" if p >= 0.5 else "non-perf"
        score = p if label == "perf" else 1 - p
        insert_predictions(s, i, [PredictionRow("keyword@1", label, score)])
    return s


def test_agreement_per_week_replays_the_history(store: Store) -> None:
    from collections import Counter

    from annotation.agreement import fleiss_kappa

    weeks = agreement_by_week(store, _set(store, "gt"))
    assert [w.week.isoformat() for w in weeks] == ["2026-11-02", "2026-11-09"]
    first = [Counter([a, b]) for a, b, _, _ in PLAN]
    second = [Counter([a, c or b]) for a, b, c, _ in PLAN]
    assert weeks[0].kappa == pytest.approx(fleiss_kappa(first).kappa)
    assert weeks[1].kappa == pytest.approx(fleiss_kappa(second).kappa)
    assert weeks[1].kappa < weeks[0].kappa and weeks[0].votes == weeks[1].votes == 12


def test_audit_progress_and_threshold_curve(store: Store) -> None:
    assert audit_progress(store, "aud") == []
    distribution = label_distribution(store, _set(store, "gt"))
    assert distribution["alice"] == {"perf": 3, "non-perf": 3}
    assert distribution["keyword@1"] == {"perf": 4, "non-perf": 2}
    curve = threshold_curve(store, _set(store, "gt"), "keyword@1", chosen=0.5, steps=10)
    by_t = {round(t, 2): (p, r) for t, p, r in curve.points}
    # settled: item 0 perf, items 2 and 3 non-perf; 1, 4 and 5 end in a tie
    assert curve.items == 3
    assert by_t[0.5] == (pytest.approx(1 / 2), pytest.approx(1.0))
    assert by_t[0.9] == (pytest.approx(1.0), pytest.approx(1.0))


def _set(store: Store, name: str):  # type: ignore[no-untyped-def]
    from annotation.sets import require_set

    return require_set(store, name)


def test_audit_precision_as_votes_arrive(store: Store) -> None:
    aud = _set(store, "aud")
    ids = [int(r[0]) for r in raw_sql.query(store, "SELECT id FROM items ORDER BY id")][-4:]
    append_votes(
        store,
        [
            VoteRow(i, who, lab, set_id=aud.id)
            for i, lab in zip(ids[:4], ["perf", "non-perf", "perf", "perf"], strict=True)
            for who in ("x", "y")
        ],
    )
    points = audit_progress(store, "aud")
    assert [p.judged for p in points] == [1, 2, 3, 4]
    assert [p.correct for p in points] == [1, 1, 2, 3]
    assert (points[-1].low, points[-1].high) == pytest.approx(wilson_interval(3, 4, 0.95))


def _learning_model(store: Store, tmp_path: Path) -> None:
    staged = tmp_path / "staged"
    staged.mkdir()
    curve = {
        "from_model": "student@1",
        "eval": "gt",
        "start": {"n": 0, "order": "uncertain", "f1": 0.5},
        "points": [
            {"n": n, "order": order, "f1": f1}
            for n, order, f1 in [
                (50, "uncertain", 0.62),
                (100, "uncertain", 0.7),
                (200, "uncertain", 0.74),
                (50, "random", 0.55),
                (100, "random", 0.6),
                (200, "random", 0.68),
            ]
        ],
    }
    register_model(store, "student", "base", {"learning_curve": curve}, {}, staged)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", CHARTS)
def test_each_chart_is_pinned_as_text(
    snapshot, store: Store, tmp_path: Path, name: str, size: tuple[int, int]
) -> None:  # type: ignore[no-untyped-def]
    if name == "learning":
        _learning_model(store, tmp_path)
    if name == "active-learning":
        store_fixed_simulation(store)
    if name == "audit":
        test_audit_precision_as_votes_arrive(store)
    chart = build_chart(
        store,
        name,
        "aud" if name == "audit" else "gt",
        "keyword@1" if name == "threshold" else None,
    )
    text = render_text(chart, *size)
    lines = text.splitlines()
    assert size[1] - 2 <= len(lines) <= size[1] and max(len(line) for line in lines) <= size[0]
    assert text == snapshot


def test_svg_is_well_formed_and_escapes_names(store: Store) -> None:
    svg = render_svg(build_chart(store, "labels", "gt", None))
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "<b>ob" in texts  # escaped in the file, the name itself once parsed
    assert "<b>" not in svg
    lines = ET.fromstring(render_svg(build_chart(store, "threshold", "gt", "keyword@1")))
    assert len(list(lines.iter("{http://www.w3.org/2000/svg}polyline"))) == 2


def test_cli_chart_draws_writes_svg_and_explains_what_is_missing(
    store: Store, tmp_path: Path
) -> None:
    db = str(store.path)
    runner = CliRunner()
    result = runner.invoke(app, ["chart", "labels", "--set", "gt", "--db", db, "--width", "60"])
    assert result.exit_code == 0 and "alice" in result.output
    target = tmp_path / "out" / "agreement.svg"
    result = runner.invoke(
        app, ["chart", "agreement", "--set", "gt", "--svg", str(target), "--db", db]
    )
    assert result.exit_code == 0 and ET.parse(target).getroot().tag.endswith("svg")
    result = runner.invoke(app, ["chart", "threshold", "--set", "gt", "--db", db])
    assert result.exit_code == 1 and "needs --labeler" in result.output
    result = runner.invoke(app, ["chart", "learning", "--db", db])
    assert result.exit_code == 1 and "learning curve" in result.output
    result = runner.invoke(app, ["chart", "pie", "--db", db])
    assert result.exit_code == 2
    create_set(store, NewSet(name="quiet", kind="commit", labels=["perf", "non-perf"]), [])
    result = runner.invoke(app, ["chart", "agreement", "--set", "quiet", "--db", db])
    assert result.exit_code == 1
    assert result.output.startswith("error: the agreement chart of set 'quiet' has nothing")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_charts_screen_switches_charts_in_a_worker(store: Store) -> None:
    from curator.charts import Chart
    from curator.tui.app import CuratorApp
    from curator.tui.screens.charts import ChartsScreen
    from curator.tui.screens.home import HomeScreen
    from tests.tui_helpers import until

    db = store.path
    store.close()
    app_ = CuratorApp(db, "dave")
    async with app_.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app_.screen, HomeScreen), "home")
        await until(pilot, lambda: app_.screen.sets, "the sets")  # type: ignore[attr-defined]
        await pilot.press("down")  # "gt", after "aud"
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app_.screen, ChartsScreen), "charts")
        screen = app_.screen
        assert isinstance(screen, ChartsScreen)
        await until(pilot, lambda: isinstance(screen.chart, Chart), "the labels chart")
        assert screen.chart is not None and screen.chart.name == "labels"
        await pilot.press("2")
        await until(
            pilot,
            lambda: screen.chart is not None and screen.chart.name == "agreement",
            "agreement",
        )
        await pilot.press("4")  # gt is no audit: said on the status line, no chart
        await until(pilot, lambda: screen.chart is None, "the audit refusal")
        assert "not an audit set" in str(screen.query_one("#status").content)


def test_cli_chart_refuses_to_write_svg_over_the_database(store: Store, tmp_path: Path) -> None:
    """`--svg` naming the database (or a link to it) used to replace the store with a
    chart: every item and vote lost."""
    db = store.path
    before = db.read_bytes()
    link = tmp_path / "link.db"
    link.symlink_to(db)
    runner = CliRunner()
    for target in (str(db), str(tmp_path / "." / db.name), str(link)):
        result = runner.invoke(
            app, ["chart", "labels", "--set", "gt", "--svg", target, "--db", str(db)]
        )
        assert result.exit_code == 2, result.output
        assert result.output.startswith(f"error: --svg {target}: that is the database")
    assert db.read_bytes() == before
    assert raw_sql.query(store, "SELECT count(*) FROM items")[0][0] > 0


def test_a_threshold_chart_of_an_unknown_labeler_says_so(store: Store) -> None:
    """A mistyped name is not a labeler that predicted nothing on the set."""
    with pytest.raises(ChartError, match=r"no labeler of that name has .*did you mean keyword@1"):
        threshold_chart(store, "gt", "keywrod@1")
    with pytest.raises(ChartError, match="keyword@1 has no prediction on a settled item"):
        threshold_chart(store, "aud", "keyword@1")
