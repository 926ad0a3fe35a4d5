"""Careless and hostile arguments, settings and files found by a sweep of every command:
each ends in one ``error:`` line naming what is wrong (or a usage error naming the
option), never in a traceback or an ``unexpected`` error, and nothing stored is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curator.cli import app
from store import open_store
from tests import raw_sql

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "annotation"
INTEROP = ROOT / "sample_data" / "interop"
HUGE = "99999999999999999999"  # more than SQLite's (and C's) 64-bit integers hold


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """gt-sample imported with its three annotators' votes."""
    path = tmp_path / "sweep.db"
    runner = CliRunner()
    made = runner.invoke(
        app, ["--db", str(path), "import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt"]
    )
    assert made.exit_code == 0, made.output
    voted = runner.invoke(app, ["--db", str(path), "import", "votes", str(SAMPLE / "votes.csv")])
    assert voted.exit_code == 0, voted.output
    return path


def run(db: Path, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(
        app, ["--db", str(db), *args], env={"COLUMNS": "200", **(env or {})}
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}"
    )
    assert "Traceback" not in result.output and "unexpected" not in result.output, result.output
    return result


def error_line(result, code: int = 1) -> str:  # type: ignore[no-untyped-def]
    """The one ``error:`` line of a refused command."""
    assert result.exit_code == code, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def usage_error(result, option: str) -> None:  # type: ignore[no-untyped-def]
    """click's usage error (exit 2) naming the option."""
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}'" in result.output, result.output


def counts(db: Path) -> tuple[int, ...]:
    with open_store(db) as store:
        return tuple(
            int(raw_sql.scalar(store, f"SELECT COUNT(*) FROM {table}"))  # type: ignore[arg-type]
            for table in ("items", "votes", "sets", "predictions", "releases")
        )


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("CURATOR_LEASE_MINUTES", HUGE),
        ("CURATOR_LEASE_MINUTES", "0"),
        ("CURATOR_WORKER_MEMORY_MB", "-1"),
        ("CURATOR_WORKER_MEMORY_MB", HUGE),
    ],
)
def test_integer_settings_out_of_range_are_named(db: Path, variable: str, value: str) -> None:
    line = error_line(run(db, "next", "gt", "-a", "zoe", env={variable: value}), 2)
    assert line.startswith(f"error: ${variable}: ") and f"not {value}" in line


def test_infinite_lease_in_toml_is_named(db: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "curator.toml").write_text("[annotation]\nlease_minutes = 1e400\n")
    line = error_line(run(db, "next", "gt", "-a", "zoe"), 2)
    assert line.startswith(f"error: {tmp_path / 'curator.toml'}:2: annotation.lease_minutes")


def test_huge_lease_flag_is_a_usage_error(db: Path) -> None:
    before = counts(db)
    usage_error(run(db, "next", "gt", "-a", "zoe", "--lease", HUGE), "--lease")
    assert counts(db) == before


@pytest.mark.parametrize("ref", [f"#{HUGE}", HUGE, "#²", "²"])
def test_vote_on_an_id_no_item_can_have_is_no_such_item(db: Path, ref: str) -> None:
    before = counts(db)
    line = error_line(run(db, "vote", ref, "perf", "-a", "zoe"))
    assert line.startswith("error: no item ") and ref in line
    assert counts(db) == before


@pytest.mark.parametrize(
    "args",
    [
        ("train", "--curve", "²", "--votes", "gt", "--from-model", "student@1"),
        ("models", "show", "student@²"),
        ("predict", "--labeler", "keyword@²", "gt"),
    ],
)
def test_superscript_digits_are_not_numbers(db: Path, args: tuple[str, ...]) -> None:
    # str.isdigit() is true of '²', which int() refuses
    assert "²" in error_line(run(db, *args), 2 if args[0] in ("train", "models") else 1)


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("search", "x", "--limit", HUGE), "--limit"),
        (("train", "--kind", "tfidf-lr", "--votes", "gt", "--seed", str(2**32)), "--seed"),
        (("train", "--kind", "tfidf-lr", "--votes", "gt", "--seed", "-1"), "--seed"),
        (("set", "create", "more", "--votes-per-item", HUGE), "--votes-per-item"),
        (("set", "edit", "gt", "--votes-per-item", HUGE), "--votes-per-item"),
        (("chart", "labels", "--set", "gt", "--width", HUGE), "--width"),
        (("chart", "labels", "--set", "gt", "--height", "100000"), "--height"),
        (("teach", "gt", "--model", "m", "--retries", HUGE), "--retries"),
        (("teach", "gt", "--model", "m", "--timeout", "inf"), "--timeout"),
        (("check", "kernels", "--unchecked", "--timeout", HUGE), "--timeout"),
        (("check", "kernels", "--unchecked", "--global-size", HUGE), "--global-size"),
        (("simulate", "active-learning", "gt", "--eval", "gt", "--every", HUGE), "--every"),
        (("simulate", "active-learning", "gt", "--eval", "gt", "--seeds", HUGE), "--seeds"),
    ],
)
def test_numbers_past_any_use_are_usage_errors(
    db: Path, args: tuple[str, ...], option: str
) -> None:
    before = counts(db)
    usage_error(run(db, *args), option)
    assert counts(db) == before


def test_too_many_local_workers_are_refused_before_starting(db: Path) -> None:
    # a LocalCluster of 10**20 processes exhausted memory before the first started
    before = counts(db)
    result = run(db, "predict", "--labeler", "heuristics@1", "gt", "--workers", HUGE)
    assert result.exit_code == 1, result.output
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: {HUGE} local workers are too many for ")
    assert counts(db) == before


def test_student_max_length_past_the_base_is_named(db: Path) -> None:
    line = error_line(
        run(db, "train", "--votes", "gt", "--layers", "1", "--max-steps", "1", "--max-length", HUGE)
    )
    assert "--max-length must be at most 512 for this base" in line


@pytest.mark.parametrize("weight", ["nan", "inf"])
def test_split_weights_that_are_no_numbers_are_refused(
    db: Path, tmp_path: Path, weight: str
) -> None:
    before = counts(db)
    line = error_line(run(db, "set", "split", "--from-set", "gt", "--into", f"a:{weight},b:1"), 2)
    assert f"'a:{weight}' needs a name and a positive weight" in line
    line = error_line(
        run(db, "export", "v1", "--out", str(tmp_path), "--split", f"repo:{weight}/10/10"), 2
    )
    assert f"split 'repo:{weight}/10/10'" in line
    assert counts(db) == before and not (tmp_path / "v1").exists()


def test_huge_split_weights_still_share(db: Path) -> None:
    made = run(db, "set", "split", "--from-set", "gt", "--into", "a:1e308,b:1e308")
    assert made.exit_code == 0 and "50.0%" in made.output, made.output


def test_release_record_with_a_huge_integer_is_named_by_line(db: Path, tmp_path: Path) -> None:
    import hashlib

    assert run(db, "export", "v1", "--out", str(tmp_path)).exit_code == 0
    release = tmp_path / "v1"
    data = release / "commit.jsonl"
    lines = data.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[2])
    record["added"] = 10**30
    lines[2] = json.dumps(record)
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = json.loads((release / "manifest.json").read_text())
    entry = manifest["files"]["commit.jsonl"]
    entry["sha256"] = hashlib.sha256(data.read_bytes()).hexdigest()
    entry["bytes"] = data.stat().st_size
    (release / "manifest.json").write_text(json.dumps(manifest))
    other = tmp_path / "other.db"
    result = run(other, "import", "release", str(release))
    assert result.exit_code == 1, result.output
    assert f"error: {data}:3: cannot be stored (Python int too large" in result.stderr
    assert counts(other) == (0, 0, 0, 0, 0)


def test_csv_field_past_the_csv_modules_default_limit_imports(db: Path, tmp_path: Path) -> None:
    # a diff of more than 128 KiB was an unexpected csv.Error
    path = tmp_path / "big.csv"
    path.write_text(f'id,message,diff\nbig-1,a big change,"{"+x" * 70_000}"\n')
    before = counts(db)
    result = run(db, "import", "items", str(path), "--set", "big")
    assert result.exit_code == 0, result.output
    assert counts(db)[0] == before[0] + 1


@pytest.mark.parametrize(
    "args",
    [
        ("set", "create", " "),
        ("set", "create", "", "--from-search", "fix"),
        ("audit", "draw", "", "--from-labeler", "keyword@1"),
        ("import", "prodigy", str(INTEROP / "prodigy.jsonl"), "--set", ""),
        ("import", "label-studio", str(INTEROP / "label-studio.json"), "--set", " "),
        ("import", "items", str(SAMPLE / "items.jsonl"), "--set", ""),
        ("import", "items", str(SAMPLE / "items.jsonl"), "--set", " ", "--label-field", "x"),
    ],
)
def test_blank_set_names_are_refused(db: Path, args: tuple[str, ...]) -> None:
    name = args[args.index("--set") + 1] if "--set" in args else args[2]
    before = counts(db)
    line = error_line(run(db, *args), 2)
    assert line == f"error: set name {name!r} is blank: give the set a name"
    assert counts(db) == before


def test_the_store_refuses_a_blank_set_name(db: Path) -> None:
    from store.sets import NewSet, SetNameError, create_set

    with open_store(db) as store, pytest.raises(SetNameError, match="is blank"):
        create_set(store, NewSet(name=" \t", kind="commit", labels=["perf", "non-perf"]))
    assert counts(db)[2] == 1


@pytest.fixture
def registered(db: Path, tmp_path: Path) -> Path:
    """The sweep's store with tfidf-lr@1 registered (and nothing predicted by it)."""
    from store.models import register_model

    staged = tmp_path / "staged"
    staged.mkdir()
    with open_store(db) as store:
        register_model(store, "tfidf-lr", "tfidf", {}, {}, staged)
    return db


@pytest.mark.parametrize(
    ("labeler", "named"),
    [
        ("keyword@x", "keyword@x: a version is a number or 'latest'"),
        ("student@99", "no model 'student@99'"),
        (
            "tfidf-lr@99",
            "no model 'tfidf-lr@99': train one with `curator train --kind tfidf-lr`"
            " (registered: tfidf-lr@1)",
        ),
        ("foo@1", "'foo@1' is not a trained labeler"),
    ],
)
def test_unknown_labelers_are_named_before_eval_or_export_writes(
    registered: Path, tmp_path: Path, labeler: str, named: str
) -> None:
    before = counts(registered)
    scores = tmp_path / "scores.json"
    line = error_line(run(registered, "eval", "gt", "--labeler", labeler, "--out", str(scores)))
    assert named in line and not scores.exists()
    out = tmp_path / "releases"
    args = ("export", "v1", "--out", str(out), "--labels", "predicted", "--labeler", labeler)
    refused = run(registered, *args)
    line = error_line(refused)
    assert named in line and not out.exists()
    assert refused.stderr.startswith("error: ")  # no blank line left by the progress bar
    assert counts(registered) == before


def test_labelers_known_but_not_run_still_score_as_missing(registered: Path) -> None:
    # a registered model or rule labeler that predicted nothing yet is no unknown name
    result = run(registered, "eval", "gt", "--labeler", "tfidf-lr@1", "--labeler", "keyword@1")
    assert result.exit_code == 0, result.output
    assert "tfidf-lr@1" in result.output and "keyword@1" in result.output


def test_tsv_files_are_read_with_tabs(db: Path, tmp_path: Path) -> None:
    # a .tsv file went to the comma reader and was refused for missing columns
    items = tmp_path / "items.tsv"
    items.write_text("id\tmessage\ttarget\nt-1\tspeed up the parser, 2x\t1\nt-2\tfix a typo\t0\n")
    made = run(db, "import", "items", str(items), "--set", "tabs")
    assert made.exit_code == 0 and "2 new" in made.output, made.output
    votes = tmp_path / "votes.tsv"
    votes.write_text("item\tannotator\tlabel\tnote\nt-1\tzoe\tperf\tfaster, says the message\n")
    voted = run(db, "import", "votes", str(votes))
    assert voted.exit_code == 0 and "1 votes" in voted.output, voted.output
    labeled = run(
        db, "import", "items", str(items), "--set", "tabs-gold",
        "--label-field", "target", "--map", "1=perf,0=non-perf",
    )  # fmt: skip
    assert labeled.exit_code == 0 and "2 labels recorded" in labeled.output, labeled.output
    with open_store(db) as store:
        note = raw_sql.scalar(store, "SELECT note FROM votes WHERE annotator = 'zoe'")
    assert note == "faster, says the message"


def user_config(tmp_path: Path, text: bytes) -> dict[str, str]:
    """The environment of a run whose user config file holds ``text``."""
    folder = tmp_path / "xdg" / "curator"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_bytes(text)
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}


@pytest.mark.parametrize(
    ("text", "named"),
    [
        # tomllib's "(at line 1, column 6)" came out as "Invalid value (, column 6"
        (b"annotator = \n", ":1: invalid TOML: Invalid value (column 13)"),
        (b'annotator = "zoe', ": invalid TOML: Unterminated string"),
        # int() cut 1.5 to 1 without a word
        (b"[kernels]\nmemory_mb = 1.5\n", ":2: kernels.memory_mb must be a whole number, not 1.5"),
        # an unexpected ValueError (embedded null byte) when the path was used
        (b'cache = "a\\u0000b"\n', ":1: cache holds a NUL character: 'a\\x00b'"),
        # an unexpected RuntimeError (Could not determine home directory)
        (b'cache = "~no-such-user-here/c"\n', "home folder this machine does not know"),
    ],
)
def test_bad_user_config_values_are_named(
    db: Path, tmp_path: Path, monkeypatch, text: bytes, named: str
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    env = user_config(tmp_path, text)
    line = error_line(run(db, "vote", "ex-001", "perf", "-a", "zoe", env=env), 2)
    assert line.startswith(f"error: {tmp_path / 'xdg' / 'curator' / 'config.toml'}")
    assert line.endswith(named), line


def test_a_user_config_saved_with_a_bom_is_read(db: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Notepad's byte order mark was "invalid TOML: Invalid statement"
    monkeypatch.chdir(tmp_path)
    env = user_config(tmp_path, '\ufeffannotator = "zoe"\n'.encode())
    voted = run(db, "vote", "ex-001", "perf", env=env)
    assert voted.exit_code == 0 and "zoe -> perf" in voted.output, voted.output


@pytest.mark.parametrize("variable", ["CURATOR_DB", "CURATOR_CACHE"])
def test_a_home_folder_of_no_known_user_is_named(
    db: Path, tmp_path: Path, monkeypatch, variable: str
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        app, ["config", "show"], env={variable: "~no-such-user-here/x", "COLUMNS": "200"}
    )
    line = error_line(result, 2)
    assert line.startswith(f"error: ${variable}: ") and "home folder" in line
    flagged = error_line(run(Path("~no-such-user-here/x.db"), "stats"), 2)
    assert flagged.startswith("error: --db: db '~no-such-user-here/x.db' starts with a home")


def test_item_fields_that_are_lists_or_objects_are_named_by_line(db: Path, tmp_path: Path) -> None:
    # a diff given as a list was "error: database error: Error binding parameter 6"
    path = tmp_path / "items.jsonl"
    path.write_text(
        '{"id": "n-1", "message": "m", "diff": ["+x"]}\n'
        '{"id": "n-2", "message": "m", "file": {"name": "a.py"}}\n'
        '{"id": "n-3", "message": "m", "sha": true}\n'
        '{"id": "n-4", "message": "m", "sha": 1234567}\n'
    )
    before = counts(db)
    result = run(db, "import", "items", str(path), "--set", "typed")
    assert result.exit_code == 1, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: {path}:1: 'diff' must be a string, not a list",
        f"error: {path}:2: 'file' must be a string, not an object",
        f"error: {path}:3: 'sha' must be a string, not true",
    ]
    assert counts(db) == before


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--exclude-repos-of", "gt"), "--exclude-repos-of"),
        (("--stratify", "language", "--seed", "7"), "--stratify, --seed"),
        (("--language", "python", "--balanced", "keyword@1"), "--balanced, --language"),
    ],
)
def test_a_search_set_refuses_the_draw_options_it_would_drop(
    db: Path, args: tuple[str, ...], named: str
) -> None:
    # --exclude-repos-of was dropped without a word: the set shared gt's repositories
    before = counts(db)
    line = error_line(run(db, "set", "create", "hunt", "--from-search", "loop", *args), 2)
    assert line.startswith(f"error: --from-search does not take {named}: ")
    assert counts(db) == before


@pytest.mark.parametrize(
    ("stratum", "named"),
    [
        ("pred:nope@1", "error: stratum 'pred:nope@1': nope@1 predicted none of the "),
        ("pred:", "error: stratum 'pred:' names no labeler"),
    ],
)
def test_a_stratum_of_a_labeler_with_no_predictions_is_named(
    db: Path, stratum: str, named: str
) -> None:
    # every item fell in the stratum "none": an unstratified draw that said it was one
    before = counts(db)
    drawn = run(db, "set", "create", "strat", "--sample", "5", "--stratify", f"language,{stratum}")
    assert error_line(drawn).startswith(named)
    audit = ("audit", "draw", "au", "--from-labeler", "keyword@latest", "--positive")
    assert error_line(run(db, *audit, "--stratify", stratum)).startswith(named)
    assert counts(db) == before


def test_an_audit_stratified_by_another_labeler_reads_its_predictions(db: Path) -> None:
    # the draw and the report loaded only the audited labeler: every item was in "none"
    assert run(db, "predict", "--labeler", "heuristics@1", "gt").exit_code == 0
    drawn = run(
        db, "audit", "draw", "au", "--from-labeler", "heuristics@1", "--positive",
        "--stratify", "keyword", "--json",
    )  # fmt: skip
    assert drawn.exit_code == 0, drawn.output
    allocation = json.loads(drawn.stdout)["allocation"]
    assert "none" not in allocation and set(allocation) <= {"perf", "non-perf"}
    reported = run(db, "audit", "report", "au", "--json")
    assert reported.exit_code == 0, reported.output
    assert set(json.loads(reported.stdout)["strata"]) == set(allocation)  # judged by gt's votes


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_confidence_floor_that_is_no_number_is_refused(
    db: Path, tmp_path: Path, value: str
) -> None:
    # nan wrote "min_confidence": NaN, which is no JSON, into manifest.json
    args = ("export", "v1", "--out", str(tmp_path / "out"), "--labels", "predicted")
    refused = run(db, *args, "--labeler", "keyword@latest", "--min-confidence", value)
    assert error_line(refused, 2).startswith(f"error: --min-confidence {float(value)}: ")
    assert not (tmp_path / "out").exists()


def test_an_svg_chart_written_over_a_folder_names_it_and_leaves_nothing(
    db: Path, tmp_path: Path
) -> None:
    # "error: .charts.PID.part: Is a directory", and the .part file stayed behind
    folder = tmp_path / "charts"
    folder.mkdir()
    line = error_line(run(db, "chart", "labels", "--set", "gt", "--svg", str(folder)))
    assert line.startswith(f"error: {folder}: ")
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_an_svg_chart_with_an_empty_name_is_a_usage_error(db: Path) -> None:
    line = error_line(run(db, "chart", "labels", "--set", "gt", "--svg", ""), 2)
    assert line == "error: --svg '.': give the name of the file to write"


def newer_version(db: Path, labeler: str, label: str) -> None:
    """``labeler`` (e.g. keyword@6) predicts ``label`` for every item: a newer version
    than the one an earlier draw read."""
    from store.commits import insert_predictions
    from store.records import PredictionRow

    with open_store(db) as store:
        ids = [int(r[0]) for r in raw_sql.query(store, "SELECT id FROM items")]
        for item_id in ids:
            insert_predictions(store, item_id, [PredictionRow(labeler, label, 1.0)])


@pytest.mark.parametrize(
    ("stratum", "asked", "newer"),
    [
        ("keyword", "keyword@latest", "keyword@6"),
        ("pred:keyword@latest", "keyword@latest", "keyword@6"),
    ],
)
def test_an_audit_report_keeps_the_strata_it_was_drawn_with(
    db: Path, stratum: str, asked: str, newer: str
) -> None:
    # the report read the strata's labelers as they resolved at report time: a newer
    # keyword@6 moved every item into its stratum, unlike the draw's allocation
    assert run(db, "predict", "--labeler", "heuristics@1", "gt").exit_code == 0
    drawn = run(
        db, "audit", "draw", "au", "--from-labeler", "heuristics@1", "--label", "non-perf",
        "--stratify", stratum, "--json",
    )  # fmt: skip
    assert drawn.exit_code == 0, drawn.output
    allocation = json.loads(drawn.stdout)["allocation"]
    assert len(allocation) > 1, allocation
    with open_store(db) as store:
        params = json.loads(str(raw_sql.scalar(store, "SELECT params FROM sets WHERE name='au'")))
    drawn_with = params["audit"]["strata_labelers"][asked]
    assert drawn_with != newer and drawn_with.split("@")[0] == newer.split("@")[0]
    newer_version(db, newer, "perf")
    reported = run(db, "audit", "report", "au", "--json")
    assert reported.exit_code == 0, reported.output
    strata = json.loads(reported.stdout)["strata"]
    assert set(strata) == set(allocation)
    assert all(strata[s]["judged"] <= allocation[s] for s in strata)


def test_an_audit_drawn_before_the_versions_were_recorded_reads_them_as_now(db: Path) -> None:
    assert run(db, "predict", "--labeler", "heuristics@1", "gt").exit_code == 0
    audit = ("audit", "draw", "au", "--from-labeler", "heuristics@1", "--positive")
    assert run(db, *audit, "--stratify", "keyword").exit_code == 0
    with open_store(db) as store:
        params = json.loads(str(raw_sql.scalar(store, "SELECT params FROM sets WHERE name='au'")))
        params["audit"].pop("strata_labelers", None)
        with store.transaction():
            raw_sql.connection(store).execute(
                "UPDATE sets SET params = ? WHERE name = 'au'", (json.dumps(params),)
            )
    newer_version(db, "keyword@6", "non-perf")
    reported = run(db, "audit", "report", "au", "--json")
    assert reported.exit_code == 0, reported.output
    assert set(json.loads(reported.stdout)["strata"]) == {"non-perf"}


@pytest.mark.parametrize("stratify", ["language,language", "repo,source,language,repo"])
def test_repeated_strata_are_counted_once(db: Path, stratify: str) -> None:
    # language,language drew strata such as "python|python"
    made = run(db, "set", "create", "twice", "--sample", "6", "--stratify", stratify, "--json")
    assert made.exit_code == 0, made.output
    once = "language" if stratify.startswith("language") else "repo,language"
    again = run(db, "set", "create", "once", "--sample", "6", "--stratify", once, "--json")
    assert json.loads(made.stdout)["allocation"] == json.loads(again.stdout)["allocation"]
    with open_store(db) as store:
        stored = raw_sql.scalar(store, "SELECT params FROM sets WHERE name = 'twice'")
    assert json.loads(str(stored))["draw"]["stratify"] == once.split(",")
    audit = ("audit", "draw", "--from-labeler", "keyword@latest", "--positive", "--json")
    drawn = run(db, *audit, "au", "--stratify", stratify)
    assert drawn.exit_code == 0, drawn.output
    plain = run(db, *audit, "au-once", "--stratify", once)
    assert json.loads(drawn.stdout)["allocation"] == json.loads(plain.stdout)["allocation"]
    with open_store(db) as store:
        stored = raw_sql.scalar(store, "SELECT params FROM sets WHERE name = 'au'")
    assert json.loads(str(stored))["audit"]["stratify"] == once.split(",")


def test_labeled_item_fields_that_are_lists_or_objects_are_named_by_line(
    db: Path, tmp_path: Path
) -> None:
    # --label-field stored them as JSON text: an object id became the key '{"a": 1}'
    path = tmp_path / "labeled.jsonl"
    path.write_text(
        '{"id": "n-1", "message": "m", "diff": ["+x"], "target": 1}\n'
        '{"id": {"a": 1}, "message": "m2", "target": 0}\n'
        '{"id": "n-3", "message": "m3", "sha": true, "target": 0}\n'
        '{"id": "n-4", "message": "m4", "sha": 1234567, "target": 1}\n'
    )
    before = counts(db)
    result = run(
        db, "import", "items", str(path), "--set", "typed",
        "--label-field", "target", "--map", "1=perf,0=non-perf",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: {path}:1: 'diff' must be a string, not a list",
        f"error: {path}:2: 'id' must be a string, not an object",
        f"error: {path}:3: 'sha' must be a string, not true",
    ]
    with open_store(db) as store:
        keys = [r[0] for r in raw_sql.query(store, "SELECT key FROM items WHERE key LIKE 'n-%'")]
        keys += [r[0] for r in raw_sql.query(store, "SELECT key FROM items WHERE key LIKE '{%'")]
    assert keys == ["n-4"]
    assert counts(db)[:2] == (before[0] + 1, before[1] + 1)


@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_db_option_is_named(db: Path, tmp_path: Path, monkeypatch, value: str) -> None:  # type: ignore[no-untyped-def]
    # it was the path '.': "error: .: cannot be opened (does its folder exist, ...)"
    monkeypatch.chdir(tmp_path)
    for args in (["--db", value, "stats"], ["stats", "--db", value]):
        result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
        line = error_line(result, 2)
        assert line.startswith(f"error: --db {value!r} is empty: "), line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.db"]


@pytest.mark.parametrize("key", ["db", "cache"])
def test_an_empty_path_in_a_config_file_is_named(
    db: Path, tmp_path: Path, monkeypatch, key: str
) -> None:  # type: ignore[no-untyped-def]
    # db = "" was the config file's own folder, which "cannot be opened"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "curator.toml").write_text(f'annotator = "zoe"\n{key} = ""\n')
    result = CliRunner().invoke(app, ["config", "show"], env={"COLUMNS": "200"})
    line = error_line(result, 2)
    assert (
        line
        == f"error: {tmp_path / 'curator.toml'}:2: {key} is empty: give a path, or leave it out"
    )


def test_an_empty_curator_db_still_counts_as_unset(db: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    env = {"CURATOR_DB": "", "COLUMNS": "200"}
    read = CliRunner().invoke(app, ["stats"], env=env)
    assert read.exit_code == 2 and read.output.startswith("error: curator.db: no such database")
    items = str(SAMPLE / "items.jsonl")
    made = CliRunner().invoke(app, ["import", "items", items, "--set", "gt"], env=env)
    assert made.exit_code == 0, made.output
    assert (tmp_path / "curator.db").exists()


BAD_NAMES = ["zo\ne", "zo\te", "zo\x1b[31me", "zo\u202ee", "zo\u2066e", "zo\x85e", "zo\u2028e"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_annotator_names_with_control_characters_are_refused_at_entry(
    db: Path, tmp_path: Path, monkeypatch, name: str
) -> None:  # type: ignore[no-untyped-def]
    # they were stored as given: a newline or U+202E garbled every report they appeared in
    monkeypatch.chdir(tmp_path)
    before = counts(db)
    code = f"U+{ord(name[2]):04X}"
    for args, where in (
        (("vote", "ex-001", "perf", "-a", name), "--annotator"),
        (("--annotator", name, "next", "gt"), "--annotator"),
        (("vote", "ex-001", "perf"), "$CURATOR_ANNOTATOR"),
    ):
        env = {"CURATOR_ANNOTATOR": name} if where.startswith("$") else {}
        line = error_line(run(db, *args, env=env), 2)
        assert line.startswith(f"error: {where}: annotator name {name!a} holds"), line
        assert code in line
    (tmp_path / "curator.toml").write_text(f"theme = 'x'\nannotator = {json.dumps(name)}\n")
    line = error_line(run(db, "vote", "ex-001", "perf"), 2)
    assert line.startswith(f"error: {tmp_path / 'curator.toml'}:2: annotator name {name!a}")
    (tmp_path / "curator.toml").unlink()
    votes = tmp_path / "votes.jsonl"
    votes.write_text(
        json.dumps({"item": "ex-001", "annotator": "zoe", "label": "perf"})
        + "\n"
        + json.dumps({"item": "ex-002", "annotator": name, "label": "perf"})
        + "\n"
    )
    imported = run(db, "import", "votes", str(votes))
    assert imported.exit_code == 1, imported.output
    (line,) = [line for line in imported.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: {votes}:2: annotator name {name!a} holds the control")
    labeled = tmp_path / "labeled.jsonl"
    labeled.write_text('{"id": "l-1", "message": "m", "target": 1}\n')
    args = ("--set", "lab", "--label-field", "target", "--map", "1=perf")
    line = error_line(run(db, "import", "items", str(labeled), *args, "--annotator", name), 2)
    assert line.startswith(f"error: --annotator: annotator name {name!a} holds")
    assert counts(db) == before


@pytest.mark.parametrize("name", ["Zoë ☕ (QA)", "👩\u200d💻 dev", "名前", "o'neil <x@y>"])
def test_odd_but_printable_annotator_names_stay_allowed(db: Path, name: str) -> None:
    voted = run(db, "vote", "ex-001", "perf", "-a", name)
    assert voted.exit_code == 0, voted.output
    with open_store(db) as store:
        stored = raw_sql.scalar(store, "SELECT annotator FROM votes ORDER BY id DESC LIMIT 1")
    assert stored == name


@pytest.mark.parametrize(
    "args",
    [
        ("set", "list"),
        ("set", "show", "gt"),
        ("stats",),
        ("adjudicate", "gt"),
        ("audit", "report", "a1"),
        ("next", "gt", "--annotator", "ann"),
        ("vote", "x", "perf", "--annotator", "ann"),
        ("predict", "gt", "--labeler", "keyword@1"),
        ("export", "prodigy", "gt", "--out", "p.jsonl"),
    ],
)
def test_a_mistyped_database_path_is_named_and_not_created(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    typo = tmp_path / "nodir" / "typo.db"
    result = CliRunner().invoke(app, ["--db", str(typo), *args], env={"COLUMNS": "200"})
    assert result.exit_code == 2 and "no such database" in result.output
    assert not typo.exists() and not typo.parent.exists()


@pytest.mark.parametrize("name", BAD_NAMES)
def test_set_names_with_control_characters_are_refused(db: Path, name: str) -> None:
    before = counts(db)
    line = error_line(run(db, "import", "items", str(SAMPLE / "items.jsonl"), "--set", name), 2)
    assert line.startswith(f"error: set name {name!a} holds the control character"), line
    assert f"U+{ord(name[2]):04X}" in line
    assert counts(db) == before


def test_skip_does_not_count_as_one_of_a_set_s_two_labels(db: Path) -> None:
    before = counts(db)
    args = ("import", "items", str(SAMPLE / "items.jsonl"), "--set", "s", "--labels", "skip,perf")
    line = error_line(run(db, *args), 2)
    assert "a set needs at least two labels" in line
    assert counts(db) == before


def _labeled(tmp_path: Path, name: str = "labeled") -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_text(
        f'{{"id": "{name}-1", "message": "Speed up parser", "t": 1}}\n'
        f'{{"id": "{name}-2", "message": "Fix typo", "t": 0}}\n'
    )
    return path


def test_a_map_never_gives_skip(db: Path, tmp_path: Path) -> None:
    # 1=skip made a set whose labels held the reserved skip, and its items sat in conflict
    before = counts(db)
    args = ("import", "items", str(_labeled(tmp_path)), "--set", "m", "--label-field", "t")
    line = error_line(run(db, *args, "--map", "1=skip,0=non-perf"), 2)
    assert line.startswith("error: --map '1=skip,0=non-perf': skip is not a label a map may give")
    assert counts(db) == before
    raw = tmp_path / "raw.jsonl"
    raw.write_text('{"id": "r-1", "message": "m", "t": "skip"}\n')
    result = run(db, "import", "items", str(raw), "--set", "gt", "--label-field", "t")
    assert result.exit_code == 1
    assert f"error: {raw}:1: label 'skip' settles nothing" in result.stderr
    assert counts(db) == before


def test_map_values_are_labels_only_of_a_set_created_here(db: Path, tmp_path: Path) -> None:
    args = ("--label-field", "t", "--map", "1=fast,0=non-perf")
    created = run(db, "import", "items", str(_labeled(tmp_path)), "--set", "new", *args)
    assert created.exit_code == 0, created.output
    shown = json.loads(run(db, "set", "show", "new", "--json").stdout)
    assert shown["labels"] == ["fast", "non-perf"]
    before = counts(db)
    path = _labeled(tmp_path, "more")  # gt has perf, non-perf: 'fast' is a bad row there
    existing = run(db, "import", "items", str(path), "--set", "gt", *args)
    assert existing.exit_code == 1
    errors = [line for line in existing.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: {path}:1: label 'fast' is not one of the set's labels (perf, non-perf):"
        " --map must give one of them"
    ]
    assert json.loads(run(db, "set", "show", "gt", "--json").stdout)["labels"] == [
        "perf",
        "non-perf",
    ]
    assert counts(db)[1] == before[1] + 1  # the other row's vote went in


@pytest.mark.parametrize("option", ["--id-field", "--text-field", "--label-field"])
def test_a_field_option_naming_no_field_of_the_file_is_a_usage_error(
    db: Path, tmp_path: Path, option: str
) -> None:
    # --id-field nope fell back to a hash of the message, --text-field nope to 'message'
    path = _labeled(tmp_path)
    before = counts(db)
    args = ["import", "items", str(path), "--set", "f", "--label-field", "t"]
    args += ["--map", "1=perf,0=non-perf", option, "nope"]
    line = error_line(run(db, *args), 2)
    assert line == (
        f"error: {path}: {option} 'nope': no row of the file has a value there (the rows"
        " have 'id', 'message', 't')"
    )
    assert counts(db) == before


@pytest.mark.parametrize(
    "option", [("--text-field", "nope"), ("--id-field", "id"), ("--map", "1=perf,0=non-perf")]
)
def test_labeled_file_options_without_label_field_are_refused(
    db: Path, tmp_path: Path, option: tuple[str, str]
) -> None:
    # --text-field nope without --label-field was ignored without a word
    before = counts(db)
    line = error_line(run(db, "import", "items", str(_labeled(tmp_path)), *option), 2)
    assert line.startswith(f"error: {option[0]} reads a labeled file: give --label-field")
    assert counts(db) == before


def test_a_vote_for_an_unknown_kind_names_the_kind_not_the_item(db: Path) -> None:
    line = error_line(run(db, "vote", "ex-001", "perf", "-a", "ann", "--kind", "nosuch"), 2)
    assert line == "error: --kind 'nosuch': use commit, kernel, ir"


@pytest.mark.parametrize(
    ("fmt", "what"),
    [("prodigy", "Prodigy JSONL file"), ("label-studio", "Label Studio JSON export")],
)
def test_a_folder_given_as_a_tool_s_file_is_named_as_a_folder(
    db: Path, tmp_path: Path, fmt: str, what: str
) -> None:
    result = run(db, "import", fmt, str(tmp_path), "--set", "t")
    assert result.exit_code == 1
    assert f"error: {tmp_path}: a folder, not a {what}" in result.output


def test_a_votes_csv_with_a_ragged_row_a_repeated_column_or_a_repeated_vote_is_named(
    db: Path, tmp_path: Path
) -> None:
    before = counts(db)
    cases = {
        "ragged.csv": ("item,annotator,label\nex-001,ann,perf,extra\n", "ragged.csv:2: 4 fields"),
        "twice.csv": ("item,annotator,annotator,label\nex-001,a,b,perf\n", "'annotator' twice"),
        "again.csv": (
            "item,annotator,label\nex-001,ann,perf\nex-001,ann,non-perf\n",
            "again.csv:3: ann votes on 'ex-001' again (line 2: another vote)",
        ),
    }
    for name, (text, says) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        result = run(db, "import", "votes", str(path))
        assert result.exit_code == 1 and says in result.output, result.output
    assert counts(db) == before


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ("models", "list", "--family", "bogus"),
            "error: Invalid value for '--family': 'bogus' is not a family; use student,"
            " tfidf-lr, tfidf-svm, ensemble",
        ),
        (
            ("audit", "draw", "gt", "--from-labeler", "keyword@5", "--kind", "bogus"),
            "error: Invalid value for '--kind': 'bogus' is not a kind; use commit, kernel or ir",
        ),
        (
            ("adjudicate", "gt", "--rule", "bogus"),
            "error: Invalid value for '--rule': 'bogus': use majority or unanimous",
        ),
        (("search", "x", "--limit", "many"), "error: Invalid value for '--limit': 'many'"),
        (
            ("vote", "ex-001", "perf", "--bogus"),
            "error: No such option: --bogus (see: curator vote --help)",
        ),
        (("bogus",), "error: No such command 'bogus'. (see: curator --help)"),
        (("set", "bogus"), "error: No such command 'bogus'. (see: curator set --help)"),
        (("vote",), "error: Missing argument 'item'."),
    ],
)
def test_a_value_that_is_not_a_choice_is_one_error_line_not_a_box(
    db: Path, args: tuple[str, ...], line: str
) -> None:
    before = counts(db)
    result = run(db, *args)
    assert error_line(result, 2).startswith(line)
    assert "╭" not in result.output and "Usage:" not in result.output
    assert counts(db) == before
