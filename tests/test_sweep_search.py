"""Hostile but realistic use of search, sets, stats and settings: each mistake ends in one
``error:`` line that names the problem, never a silently empty answer or a set no one can
tell apart from another."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from annotation.sampling import SamplingError
from annotation.sets import DrawSpec, SetError, create_sampled_set, create_split
from curator.cli import app
from curator.search import SearchError, SearchRequest, run_search
from curator.settings import KEYS, SettingsError, load_settings
from store import Store, open_store
from store.commits import insert_predictions
from store.items import ImportedItem, insert_imported_items
from store.records import PredictionRow
from store.search import has_words
from store.sets import NewSet, SetExistsError, SetNameError, create_set

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def commit(key: str, message: str) -> ImportedItem:
    return ImportedItem(
        kind="commit",
        key=key,
        source="repo-a",
        language="python",
        path=f"src/{key}.py",
        payload={"message": message, "diff": "+x\n", "model_input": message},
        provenance={},
    )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    store = open_store(path)
    insert_imported_items(
        store,
        [
            commit("a", "Cache the parsed config -> faster start"),
            commit("b", "Fix typo in README"),
            commit("c", "Speed up the hot loop"),
        ],
    )
    store.close()
    return path


@pytest.fixture
def store(db: Path) -> Store:
    return open_store(db)


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    return result.exit_code, ANSI.sub("", result.output)


def error_line(out: str) -> str:
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), out
    return lines[0]


# --------------------------------------------------------------------------- queries


@pytest.mark.parametrize("query", ["_", "—", '"->"', "_ OR —", "message: ℃", "NEAR(_ —, 3)"])
def test_a_query_with_no_word_the_index_holds_is_an_error_not_zero_results(
    db: Path, query: str
) -> None:
    code, out = cli("search", query, "--db", str(db))
    assert code == 1
    assert "holds a letter or digit" in error_line(out)


def test_the_phrase_suggested_for_code_is_refused_when_it_holds_no_word(db: Path) -> None:
    code, out = cli("search", "<>", "--db", str(db))
    assert code == 1 and 'quote it: "<>"' in error_line(out)
    code, out = cli("search", '"<>"', "--db", str(db))
    assert code == 1 and "can match nothing" in error_line(out)


def test_words_beside_symbols_and_emoji_still_match(store: Store) -> None:
    assert has_words("cache _") and has_words("🙂") and has_words('"a ""b"""')
    assert not has_words("AND") and not has_words("{message diff}: —")
    found = run_search(store, SearchRequest("cache —")).hits
    assert [h.key for h in found] == ["a"]


def test_a_long_bad_query_keeps_the_reason_in_its_error_line(db: Path) -> None:
    for query, reason in (
        ("(" * 5000 + "fix" + ")" * 5000, "parser stack overflow"),
        ('"' + "a" * 10_000, "unterminated string"),
    ):
        code, out = cli("search", query, "--db", str(db))
        line = error_line(out)
        assert code == 1 and reason in line and len(line) < 400
        assert "characters)" in line


def test_a_lone_star_and_an_unknown_column_say_what_is_wrong(db: Path) -> None:
    code, out = cli("search", "*", "--db", str(db))
    assert code == 1 and "'*' must follow a word" in error_line(out)
    code, out = cli("search", "non-perf", "--db", str(db))
    assert code == 1 and "columns: key, path, message" in error_line(out)


def test_a_label_no_source_uses_is_named_and_final_without_settled_items_too(
    store: Store,
) -> None:
    ids = [int(r[0]) for r in store._conn.execute("SELECT id FROM items ORDER BY id")]
    for i in ids:
        insert_predictions(store, i, [PredictionRow(labeler="kw@1", label="non-perf", score=0.1)])
    with pytest.raises(SearchError, match="gave no item the label 'prf'"):
        run_search(store, SearchRequest("cache", label="prf", labeler="kw@1"))
    # a label that exists but was not given is a true empty answer
    assert run_search(store, SearchRequest("cache", label="perf", labeler="kw@1")).hits == []
    with pytest.raises(SearchError, match="no item in any set has a final label"):
        run_search(store, SearchRequest("", disagree=("kw@1", "final")))


# --------------------------------------------------------------------------- set names


def new_set(store: Store, name: str) -> None:
    create_set(store, NewSet(name=name, kind="commit", labels=["perf", "non-perf"]), [1])


def test_set_names_that_read_the_same_are_one_name(store: Store) -> None:
    new_set(store, "Gt-Eval")
    for variant in ("gt-eval", "ＧＴ-ＥＶＡＬ"):
        with pytest.raises(SetExistsError, match="'Gt-Eval' already exists"):
            new_set(store, variant)
    new_set(store, "caf\u00e9")
    with pytest.raises(SetExistsError, match="only in case or Unicode form"):
        new_set(store, "cafe\u0301")
    for name in (" gt", "gt ", "g\u200bt"):
        with pytest.raises(SetNameError):
            new_set(store, name)
    new_set(store, "with space/and [bold]markup")


def test_a_set_name_typed_in_another_case_is_pointed_to(store: Store, db: Path) -> None:
    new_set(store, "Gt")
    store.close()
    code, out = cli("set", "show", "gt", "--db", str(db))
    assert code == 1 and "did you mean 'Gt'?" in error_line(out)
    code, out = cli("search", "cache", "--set", "GT", "--db", str(db))
    assert code == 1 and "did you mean 'Gt'?" in error_line(out)
    code, out = cli("set", "create", "gt", "--sample", "1", "--db", str(db))
    assert code == 1 and "'Gt' already exists" in error_line(out)


def test_a_draw_or_split_with_nothing_to_draw_creates_no_empty_set(tmp_path: Path) -> None:
    store = open_store(tmp_path / "empty.db")
    with pytest.raises(SamplingError, match="the set would be empty"):
        create_sampled_set(store, "x", DrawSpec(kind="kernel"))
    with pytest.raises(SetError, match="every part would be empty"):
        create_split(store, "commit", [("a", 50.0), ("b", 50.0)], 0)
    assert store._conn.execute("SELECT COUNT(*) FROM sets").fetchone()[0] == 0


# --------------------------------------------------------------------------- stats


def test_stats_of_an_empty_store_says_so(tmp_path: Path) -> None:
    open_store(tmp_path / "e.db").close()
    code, out = cli("stats", "--db", str(tmp_path / "e.db"))
    assert code == 0 and "0 items" in out and "no items yet" in out
    assert "Items by kind" not in out
    code, out = cli("stats", "--json", "--db", str(tmp_path / "e.db"))
    assert code == 0 and json.loads(out)["items"] == 0
    code, out = cli("stats", "--kind", "kernel", "--db", str(tmp_path / "e.db"))
    assert code == 0 and "no kernels yet" in out and "Kernels by verdict" not in out
    code, out = cli("stats", "--kind", "ir", "--db", str(tmp_path / "e.db"))
    assert code == 0 and "no IR modules yet" in out


# --------------------------------------------------------------------------- settings


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for key in KEYS:
        monkeypatch.delenv(key.env, raising=False)
    return work


def test_a_dotted_key_and_an_unclosed_bracket_name_their_line(place: Path) -> None:
    config = place / "curator.toml"
    config.write_text('annotator = "x"\nannotation.lease_minutes = 0\n')
    with pytest.raises(SettingsError, match=r"curator\.toml:2: annotation\.lease_minutes"):
        load_settings(cwd=place)
    config.write_text('[kernels]\ndevice = "x"\n[annotation]\n"lease_minutes" = 0\n')
    with pytest.raises(SettingsError, match=r"curator\.toml:4: "):
        load_settings(cwd=place)
    config.write_text('annotator = "x"\ndb = [1\n')
    with pytest.raises(SettingsError, match=r"curator\.toml:2: invalid TOML"):
        load_settings(cwd=place)


def test_a_db_that_is_a_folder_is_named_wherever_it_is_set(
    place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (place / "data").mkdir()
    code, out = cli("stats", "--db", str(place / "data"))
    assert code == 2 and "is a folder" in error_line(out)
    monkeypatch.setenv("CURATOR_DB", str(place / "data"))
    code, out = cli("stats")
    assert code == 2 and "$CURATOR_DB: db" in error_line(out)
    monkeypatch.delenv("CURATOR_DB")
    (place / "curator.toml").write_text('db = "data"\n')
    code, out = cli("stats")
    assert code == 2 and "curator.toml:1: db" in error_line(out) and "is a folder" in out


def test_set_edit_refuses_blind_and_open_together(store: Store, db: Path) -> None:
    new_set(store, "gt")
    store.close()
    code, out = cli("set", "edit", "gt", "--open", "--blind", "--db", str(db))
    assert code == 2 and "contradict" in error_line(out)
    code, out = cli("set", "edit", "gt", "--open", "--json", "--db", str(db))
    assert code == 0 and json.loads(out)["blind"] is False


def test_a_column_of_another_kind_is_named_as_such(store: Store) -> None:
    with pytest.raises(SearchError, match="'kernel_name' holds kernel text: --kind commit"):
        run_search(store, SearchRequest("kernel_name: cache", kind="commit"))
    with pytest.raises(SearchError, match="no such column: zz"):
        run_search(store, SearchRequest("zz: cache", kind="commit"))


def test_a_draw_names_a_language_no_item_has_and_matches_any_case(store: Store) -> None:
    with pytest.raises(SetError, match=r"--language klingon: no commit item .*python"):
        create_sampled_set(store, "x", DrawSpec(kind="commit", languages=["klingon"]))
    row, allocation = create_sampled_set(store, "y", DrawSpec(kind="commit", languages=["PYTHON"]))
    assert sum(allocation.values()) == 3 and row.name == "y"


def test_a_draw_from_a_set_of_another_kind_says_so(store: Store) -> None:
    new_set(store, "commits")
    with pytest.raises(SetError, match="'commits' holds commit items, not kernel"):
        create_sampled_set(store, "k", DrawSpec(kind="kernel", within="commits"))


def test_a_balanced_draw_by_a_labeler_with_no_predictions_names_it(store: Store) -> None:
    with pytest.raises(SamplingError, match="--balanced nobody@1: it predicted none of the 3"):
        create_sampled_set(store, "b", DrawSpec(kind="commit", sample=2, balanced="nobody@1"))


def test_json_output_warns_on_stderr_when_the_ranking_is_windowed(store: Store, db: Path) -> None:
    insert_imported_items(store, [commit(f"w{i}", "tune the loop") for i in range(1001)])
    store.close()
    result = CliRunner().invoke(app, ["search", "tune", "--json", "--limit", "2", "--db", str(db)])
    assert result.exit_code == 0 and len(json.loads(result.stdout)) == 2
    assert "warning: more than 1,000 items match" in result.stderr


def test_a_set_of_another_kind_than_kind_is_an_error_not_zero_hits(store: Store) -> None:
    new_set(store, "commits")
    with pytest.raises(SearchError, match="'commits' holds commit items: --kind kernel"):
        run_search(store, SearchRequest("cache", kind="kernel", set_name="commits"))
    assert [h.key for h in run_search(store, SearchRequest("cache", set_name="commits")).hits]
