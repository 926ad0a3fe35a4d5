"""A hostile sweep of the learning side: a dual-licensed project read as a choice (OR),
not as licenses that all apply (AND); esc on the Train screen once the model is already
registered; and the learning commands given values that pass typer's range checks (nan,
inf), a set of one class, mistyped labeler names, a model directory deleted after
registration, a model with no recorded metadata. Each refusal is one line naming what
was wrong, exits non-zero, and stores nothing."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from engines.ir.licenses import combine, detect_project_license, is_permissive
from engines.labelers.model_files import check_safetensors
from store import open_store
from store.models import register_model
from tests.cli_helpers import one_error as _error
from tests.ir_samples import LICENSE_TEXTS

# --- 1. dual licenses -----------------------------------------------------------------

ZSTD_README = """# Zstandard

Zstandard is a fast compression algorithm.

## License

Zstandard is dual-licensed under [BSD](LICENSE) OR [GPLv2](COPYING).
"""

RUST_README = """## License

Licensed under either of

 * Apache License, Version 2.0 ([LICENSE-APACHE](LICENSE-APACHE))
 * MIT license ([LICENSE-MIT](LICENSE-MIT))

at your option.
"""

GPL_README = """This program is free software; you can redistribute it and/or modify it under
the terms of the GNU General Public License as published by the Free Software
Foundation; either version 2 of the License, or (at your option) any later version.
Bundled third-party code under lib/ is MIT licensed (see LICENSE).
"""


def _tree(root: Path, files: dict[str, str], readme: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, stem in files.items():
        (root / name).write_text((LICENSE_TEXTS / f"spdx-{stem}.txt").read_text())
    if readme is not None:
        (root / "README.md").write_text(readme)
    return root


def test_zstd_declared_dual_license_is_a_choice(tmp_path: Path) -> None:
    # was: "BSD-3-Clause AND GPL-2.0", so `mine ir --permissive-only` dropped zstd
    root = _tree(tmp_path / "zstd", {"LICENSE": "BSD-3-Clause", "COPYING": "GPL-2.0"}, ZSTD_README)
    spdx, files = detect_project_license(root)
    assert (spdx, files) == ("BSD-3-Clause OR GPL-2.0", ["COPYING", "LICENSE"])
    assert is_permissive(spdx)


def test_the_same_files_without_a_declaration_all_apply(tmp_path: Path) -> None:
    root = _tree(tmp_path / "p", {"LICENSE": "BSD-3-Clause", "COPYING": "GPL-2.0"}, "# P\n")
    spdx, _ = detect_project_license(root)
    assert spdx == "BSD-3-Clause AND GPL-2.0" and not is_permissive(spdx)


def test_gpl_or_later_is_no_choice_between_the_projects_licenses(tmp_path: Path) -> None:
    root = _tree(tmp_path / "g", {"COPYING": "GPL-2.0", "LICENSE": "MIT"}, GPL_README)
    spdx, _ = detect_project_license(root)
    assert spdx == "GPL-2.0 AND MIT" and not is_permissive(spdx)


def test_licensed_under_either_at_your_option(tmp_path: Path) -> None:
    files = {"LICENSE-APACHE": "Apache-2.0", "LICENSE-MIT": "MIT"}
    root = _tree(tmp_path / "crate", files, RUST_README)
    assert detect_project_license(root)[0] == "Apache-2.0 OR MIT"


def test_an_spdx_or_line_declares_the_choice(tmp_path: Path) -> None:
    # in a license file: that file stands for the texts of its alternatives
    root = _tree(tmp_path / "a", {"COPYING": "GPL-2.0"})
    (root / "LICENSE").write_text("SPDX-License-Identifier: BSD-3-Clause OR GPL-2.0-only\n")
    assert detect_project_license(root)[0] == "BSD-3-Clause OR GPL-2.0-only"
    # in the README: for the whole project
    readme = "SPDX-License-Identifier: BSD-3-Clause OR GPL-2.0-only\n"
    root = _tree(tmp_path / "b", {"LICENSE": "BSD-3-Clause", "COPYING": "GPL-2.0"}, readme)
    assert detect_project_license(root)[0] == "BSD-3-Clause OR GPL-2.0"


def test_a_choice_in_one_file_does_not_spread_to_the_others() -> None:
    assert combine(["MIT OR Apache-2.0", "GPL-3.0"]) == "GPL-3.0 AND (MIT OR Apache-2.0)"
    assert not is_permissive(combine(["MIT OR Apache-2.0", "GPL-3.0"]))
    assert combine(["MIT OR Apache-2.0", "MIT", "Apache-2.0"]) == "MIT OR Apache-2.0"


# --- 2. esc on the Train screen after registration --------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_esc_after_the_model_is_registered_leaves_without_cancelling(
    tmp_path: Path,
) -> None:
    from curator.tui.app import CuratorApp
    from curator.tui.screens.home import HomeScreen
    from curator.tui.screens.train import TrainScreen
    from tests.tui_helpers import text_of, until
    from tests.tui_store import curator

    db = tmp_path / "t.db"
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a-1", "message": "speed up the loop"}) + "\n")
    curator(db, "import", "items", str(items), "--set", "one")
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, TrainScreen), "train screen")
        screen = app.screen
        assert isinstance(screen, TrainScreen)
        # the state a run is in between its two reports: registered, the previous
        # version still being scored (the worker reports through this very handler)
        cancel = threading.Event()
        screen.cancel = cancel
        screen._registered("tfidf-lr@1")
        status = text_of(screen.query_one("#status"))
        assert status.startswith("registered tfidf-lr@1")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "back home")
        said = [n.message for n in app._notifications]
        # was: "cancelling: training stops after the current step…", the screen kept
        assert not cancel.is_set()
        assert any("tfidf-lr@1 is registered" in m and "nothing to cancel" in m for m in said)
        assert not any("cancel" in m and "nothing to cancel" not in m for m in said)


# --- 3. the learning commands misused ---------------------------------------------------


def _models(db: Path) -> list[str]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return [name for (name,) in conn.execute("SELECT name FROM models ORDER BY id")]


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--lr", "nan", "nan is not a learning rate"),  # was: failed after loading the data
        ("--lr", "inf", "inf is not a learning rate"),  # was: 3 epochs of loss nan, then a crash
        ("--lr", "0", "is not a learning rate"),  # was: a model that learned nothing
        ("--tau", "nan", "nan is not a finite number"),  # was: accepted (nan passes 0..100)
        ("--replay", "inf", "inf is not a finite number"),
        ("--weak-weight", "nan", "nan is not a finite number"),
        ("--diff-dropout", "nan", "nan is not a finite number"),
    ],
)
def test_non_finite_numbers_are_refused_before_anything_runs(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, option: str, value: str, says: str
):
    line = _error(cli("train", "--votes", "tr", option, value), code=2)
    assert f"'{option}'" in line and says in line
    assert _models(tmp_path / "cli.db") == []


def test_votes_of_one_class_name_the_set(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / "one.jsonl"
    rows = [
        {"id": f"o-{i}", "repo": f"https://e.org/x/r{i}", "message": f"faster {i}"} for i in (1, 2)
    ]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert split("import", "items", str(items), "--set", "one").exit_code == 0
    for item in ("o-1", "o-2"):
        for who in ("ann", "bob"):
            assert split("vote", item, "perf", "--annotator", who).exit_code == 0
    line = _error(split("train", "--kind", "tfidf-lr", "--votes", "one"))
    # was: "all 2 training examples say 'perf'", naming no set
    assert "(--votes one) say 'perf'" in line and "non-perf" in line
    assert _models(tmp_path / "cli.db") == []


def test_mistyped_labelers_get_a_near_miss_or_the_registered_versions(split, tmp_path: Path):  # type: ignore[no-untyped-def]
    assert split("train", "--kind", "tfidf-lr", "--votes", "tr").exit_code == 0
    for command in ("predict", "eval"):
        # was: "'studnet@1' is not a trained labeler (...)" with no hint
        line = _error(split(command, "gt-eval", "--labeler", "studnet@1"))
        assert line.endswith("did you mean student@1?")
        line = _error(split(command, "gt-eval", "--labeler", "tfidf@1"))
        assert line.endswith("did you mean tfidf-lr@1?")
        # was (predict): "no model 'tfidf-lr@7': train one ..." without the registered ones
        line = _error(split(command, "gt-eval", "--labeler", "tfidf-lr@7"))
        assert line.endswith("(registered: tfidf-lr@1)")
    line = _error(split("chart", "learning", "--family", "studnt"), code=2)
    assert "--family studnt" in line and line.endswith("did you mean student?")


def test_a_model_whose_directory_was_deleted_is_named_and_nothing_is_stored(  # type: ignore[no-untyped-def]
    split, tmp_path: Path
):
    assert split("train", "--kind", "tfidf-lr", "--votes", "tr").exit_code == 0
    folder = tmp_path / "models" / "tfidf-lr@1"
    shutil.rmtree(folder)
    with sqlite3.connect(tmp_path / "cli.db") as conn:
        before = conn.execute("SELECT COUNT(*) FROM predictions").fetchone()
    line = _error(split("predict", "gt-eval", "--labeler", "tfidf-lr@1"))
    assert line == f"error: tfidf-lr@1: its directory '{folder}' is missing"
    # was: "... is missing (registered: tfidf-lr@1)", as though another name were meant;
    # then an error: what the store recorded of it is shown, with the warning
    shown = split("models", "show", "tfidf-lr@1")
    assert shown.exit_code == 0, shown.output
    assert shown.stderr.startswith(f"warning: tfidf-lr@1: its directory '{folder}' is missing")
    assert "registered:" not in shown.output and "decision: perf iff" in shown.stdout
    with sqlite3.connect(tmp_path / "cli.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM predictions").fetchone() == before


def test_models_show_of_a_model_with_no_recorded_metadata(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / "i.jsonl"
    items.write_text(json.dumps({"id": "a", "message": "x"}) + "\n")
    assert cli("import", "items", str(items), "--set", "s").exit_code == 0
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / "model.pkl").write_bytes(b"")
    with open_store(tmp_path / "cli.db") as store:
        register_model(store, "tfidf-lr", "tfidf", {}, {}, staged)
    shown = cli("models", "show", "tfidf-lr@1")
    assert shown.exit_code == 0, shown.output
    # was: "trained on None examples {} from nothing recorded"
    assert "trained on what was not recorded" in shown.output
    assert "None" not in shown.output


def test_a_model_row_whose_metadata_is_not_json_is_named(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / "i.jsonl"
    items.write_text(json.dumps({"id": "a", "message": "x"}) + "\n")
    assert cli("import", "items", str(items), "--set", "s").exit_code == 0
    staged = tmp_path / "staged"
    staged.mkdir()
    with open_store(tmp_path / "cli.db") as store:
        register_model(store, "tfidf-lr", "tfidf", {}, {}, staged)
    with sqlite3.connect(tmp_path / "cli.db") as conn:  # a hand edit gone wrong
        conn.execute("UPDATE models SET metrics = '{\"f1\": 0.8' WHERE name = 'tfidf-lr@1'")
    # was: "error: unexpected JSONDecodeError: ..." without the model's name
    for args in (("models", "list"), ("models", "show", "tfidf-lr@1")):
        line = _error(cli(*args))
        assert line.startswith("error: model tfidf-lr@1: its metrics are not JSON"), line


def test_a_safetensors_file_with_a_garbage_header_is_called_corrupt(tmp_path: Path) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"\xff" * 8 + b"{}" * 100)
    # was: "truncated: 208 bytes, the header alone says more" for a file of the right size
    with pytest.raises(ValueError, match="corrupt: it does not start with a safetensors header"):
        check_safetensors(weights)


def test_simulate_refuses_file_options_when_both_sources_are_sets(split, tmp_path: Path):  # type: ignore[no-untyped-def]
    # was: --map and --label-field silently ignored, and a simulation stored
    args = ("simulate", "active-learning", "tr", "--eval", "gt-eval", "--seeds", "1")
    line = _error(split(*args, "--map", "1=perf", "--text-field", "msg"), code=2)
    assert line.startswith("error: --map, --text-field: for labeled files only")
    assert "the pool tr and --eval gt-eval are sets" in line
    with sqlite3.connect(tmp_path / "cli.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM simulations").fetchone() == (0,)


def test_a_set_with_no_final_labels_is_named_by_eval_and_train(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / "i.jsonl"
    rows = [{"id": f"u-{i}", "repo": "https://e.org/x/r", "message": f"m {i}"} for i in (1, 2)]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert cli("import", "items", str(items), "--set", "unvoted").exit_code == 0
    assert cli("vote", "u-1", "perf", "--annotator", "ann").exit_code == 0
    assert cli("vote", "u-1", "non-perf", "--annotator", "bob").exit_code == 0  # a tie
    with sqlite3.connect(tmp_path / "cli.db") as conn:
        before = conn.execute("SELECT COUNT(*) FROM predictions").fetchone()
    line = _error(cli("eval", "unvoted", "--labeler", "keyword@5"))
    assert line.startswith("error: set 'unvoted' has no settled items yet")
    line = _error(cli("train", "--kind", "tfidf-lr", "--votes", "unvoted"))
    assert "--votes unvoted: 0 items with a settled perf/non-perf label" in line
    assert _models(tmp_path / "cli.db") == []
    with sqlite3.connect(tmp_path / "cli.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM predictions").fetchone() == before


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("learning",), "no student model has a learning curve"),
        (("learning", "--labeler", "student@3"), "no model 'student@3'"),
        (("active-learning",), "no active-learning simulation is stored"),
        (("labels", "--set", "empty"), "the labels chart of set 'empty' has nothing to draw"),
        (("agreement", "--set", "empty"), "the agreement chart of set 'empty' has nothing"),
        (("threshold", "--set", "empty", "--labeler", "keyword@5"), "keyword@5 has no predic"),
        (("audit", "--set", "empty"), "set 'empty' is not an audit"),
        (("labels", "--set", "nope"), "no set named 'nope'"),
    ],
)
def test_charts_of_an_empty_store_say_what_is_missing(cli, tmp_path: Path, args, says):  # type: ignore[no-untyped-def]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert cli("import", "items", str(empty), "--set", "empty").exit_code == 0
    svg = tmp_path / "c.svg"
    line = _error(cli("chart", *args, "--svg", str(svg)))
    assert says in line
    assert not svg.exists()


@pytest.mark.parametrize("typed", ["nan", "inf"])
def test_the_train_form_refuses_a_replay_ratio_that_is_no_number(typed: str) -> None:
    from curator.tui.train_form import FormError, TrainForm

    form = TrainForm()
    with pytest.raises(FormError, match="replay is a ratio"):  # was: nan and inf kept
        form.set_number("replay", typed)
    assert form.replay == TrainForm().replay


def test_mine_ir_permissive_only_keeps_a_dual_licensed_project(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # the real CLI on a zstd-shaped tree: was "filtered": {"license:BSD-3-Clause AND GPL-2.0": 1}
    from tests.ir_samples import SAMPLES

    root = _tree(tmp_path / "zstd", {"LICENSE": "BSD-3-Clause", "COPYING": "GPL-2.0"}, ZSTD_README)
    (root / "lib").mkdir()
    shutil.copy(SAMPLES / "mathlib" / "prebuilt" / "clamp.ll", root / "lib" / "clamp.ll")
    result = cli("mine", "ir", str(root), "--permissive-only", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["stored"], data["filtered"]) == (1, {})
    with sqlite3.connect(tmp_path / "cli.db") as conn:
        (prov,) = conn.execute("SELECT license FROM ir_modules").fetchone()
    assert prov == "BSD-3-Clause OR GPL-2.0"
