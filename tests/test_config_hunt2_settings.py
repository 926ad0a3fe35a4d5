"""Setting Curator up on a shared machine: config files an editor or a colleague got
wrong, the XDG variables, a working folder deleted under the shell, and the CLI's shell
with a narrow or zero ``COLUMNS``, a closed stream and a reader that goes away."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curator.cli import app
from curator.settings import KEYS, SettingsError, load_settings, user_config_path

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder as the current directory, an empty user config, no CURATOR_*."""
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    for key in KEYS:
        monkeypatch.delenv(key.env, raising=False)
    return folder


def refusal(folder: Path, data: bytes) -> str:
    (folder / "curator.toml").write_bytes(data)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    return str(caught.value)


def test_a_byte_that_is_not_utf8_is_named_with_its_line(work: Path) -> None:
    message = refusal(work, b'# the team\'s settings\ndb = "x.db"\nannotator = "ren\xe9"\n')
    assert message == (
        f"{work / 'curator.toml'}:3: byte 0xe9 is not UTF-8 text; save the file as UTF-8"
        " (TOML files are UTF-8)"
    )


def test_a_utf16_file_is_named_as_such(work: Path) -> None:
    message = refusal(work, '\ufeffdb = "x.db"\n'.encode("utf-16"))
    assert message == f"{work / 'curator.toml'}: the file is UTF-16 text; save it as UTF-8" + (
        " (TOML files are UTF-8)"
    )


def test_a_folder_named_curator_toml_is_one_plain_line(work: Path) -> None:
    (work / "curator.toml").mkdir()
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert str(caught.value) == f"{work / 'curator.toml'}: is a folder, not a config file"


def test_an_unknown_key_in_an_inline_table_or_an_array_of_tables_has_its_line(
    work: Path,
) -> None:
    inline = refusal(work, b'db = "x.db"\n\nkernels = {device = "pthread", memroy_mb = 3}\n')
    assert inline.startswith(f"{work / 'curator.toml'}:3: unknown key 'kernels.memroy_mb'")
    array = refusal(work, b'db = "x.db"\n[[kernels]]\ndevice = "pthread"\n')
    assert array.startswith(f"{work / 'curator.toml'}:2: unknown key 'kernels'")


def test_a_relative_xdg_folder_is_ignored(
    work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``XDG_CONFIG_HOME="~/.config"`` quoted in an env file is relative: the XDG spec
    says to ignore it, not to read ./~/.config/curator/config.toml in whatever folder."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", "~/.config")
    monkeypatch.setenv("XDG_CACHE_HOME", "cache")
    stray = work / "~" / ".config" / "curator" / "config.toml"
    stray.parent.mkdir(parents=True)
    stray.write_text('annotator = "stray"\n')
    assert user_config_path() == home / ".config" / "curator" / "config.toml"
    s = load_settings()
    assert s.annotator is None and s.cache == home / ".cache" / "curator"


def test_a_working_folder_deleted_under_the_shell_is_named(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = work / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    result = CliRunner().invoke(app, ["config", "show"])
    assert result.exit_code == 2
    assert "the current folder cannot be read" in result.stderr
    assert "deleted or moved" in result.stderr


def test_a_group_run_bare_prints_its_help_and_no_empty_error(work: Path) -> None:
    """``curator config`` printed its help, then ``error: (see: curator config --help)``."""
    result = CliRunner().invoke(app, ["config"], env={"COLUMNS": "100"})
    assert result.exit_code == 2
    assert "Usage: curator config" in result.stdout
    assert "error" not in result.stderr


def clean_env(env: dict[str, str]) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), **env}


def curator(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m curator ARGS`` in a fresh process (the consoles read COLUMNS once)."""
    return subprocess.run(
        [sys.executable, "-m", "curator", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=clean_env(env),
    )


def in_shell(command: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m curator`` with the shell redirections in ``command`` (``<&-``)."""
    return subprocess.run(
        ["sh", "-c", f'exec "{sys.executable}" -m curator {command}'],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=clean_env(env),
    )


def test_config_show_cuts_no_path_and_no_variable_name_at_80_columns(
    work: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "a-rather-long-shared-disk" / "team-caches" / "curator-cache"
    env = {"COLUMNS": "80", "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "CURATOR_CACHE": str(cache)}
    done = curator("config", "show", env=env, cwd=work)
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    assert f"cache = {cache} (env CURATOR_CACHE; $CURATOR_CACHE)" in done.stdout
    assert "$CURATOR_TEACHER_API_KEY" in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()[:1]) <= 80
    wide = curator("config", "show", env={**env, "COLUMNS": "300"}, cwd=work)
    assert str(cache) in wide.stdout and "┃ key" in wide.stdout  # the table where it fits


@pytest.mark.parametrize("columns", ["0", "3"])
def test_a_zero_or_tiny_columns_still_prints_everything(
    work: Path, tmp_path: Path, columns: str
) -> None:
    """``COLUMNS=0`` printed nothing at all (exit 0); ``COLUMNS=3`` ended config show
    in ``unexpected AssertionError: Sum of ratios must be > 0``."""
    env = {"COLUMNS": columns, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    done = curator("config", "show", env=env, cwd=work)
    assert done.returncode == 0, done.stderr
    assert "unexpected" not in done.stderr
    assert "db = curator.db (default; $CURATOR_DB)" in done.stdout


def test_a_reader_that_went_away_is_no_error(work: Path, tmp_path: Path) -> None:
    """``curator config show --json | head -0`` said ``error: Broken pipe``."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the command writes a byte
    try:
        done = subprocess.run(
            [sys.executable, "-m", "curator", "config", "show", "--json"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=work,
            env=clean_env({"XDG_CONFIG_HOME": str(tmp_path / "xdg")}),
        )
    finally:
        os.close(write)
    assert done.returncode == 1
    assert done.stderr == ""


def test_closed_standard_streams(work: Path, tmp_path: Path) -> None:
    """``curator <&-`` ended in ``unexpected AttributeError: 'NoneType' object has no
    attribute 'isatty'``; ``curator config show >&-`` lost its output without a word."""
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    closed_in = in_shell("<&-", env, work)
    assert closed_in.returncode == 0, closed_in.stderr
    assert "Usage: " in closed_in.stdout and "unexpected" not in closed_in.stderr
    label = in_shell("label some-set <&-", env, work)  # the app's own terminal check
    assert label.returncode != 0 and "needs a terminal" in label.stderr, label.stderr
    assert "unexpected" not in label.stderr
    closed_out = in_shell("config show --json >&-", env, work)
    assert closed_out.returncode == 0
    assert closed_out.stderr.startswith("warning: standard output is closed")
    assert len(closed_out.stderr.splitlines()) == 1


def test_precedence_is_told_for_every_setting(work: Path, tmp_path: Path) -> None:
    """--db > env > ./curator.toml > user config > default, and ``config show`` names
    the winner of each; the local file's relative db is relative to its folder."""
    user = tmp_path / "xdg" / "curator" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('db = "user.db"\nannotator = "uma"\ntheme = "nord"\n[kernels]\nmemory_mb = 1\n')
    (work / "curator.toml").write_text('db = "local.db"\nannotator = "lou"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "CURATOR_ANNOTATOR": "eve"}
    done = curator("--db", "flag.db", "config", "show", "--json", env=env, cwd=work)
    assert done.returncode == 0, done.stderr
    rows = {r["key"]: (r["value"], r["source"]) for r in json.loads(done.stdout)["settings"]}
    assert rows["db"] == ("flag.db", "flag --db")
    assert rows["annotator"] == ("eve", "env CURATOR_ANNOTATOR")
    assert rows["theme"] == ("nord", str(user))
    assert rows["kernels.memory_mb"] == ("1", str(user))
    assert rows["annotation.lease_minutes"] == ("10", "default")
    local = curator("config", "show", "--json", env={**env, "CURATOR_ANNOTATOR": ""}, cwd=work)
    rows = {r["key"]: (r["value"], r["source"]) for r in json.loads(local.stdout)["settings"]}
    assert rows["db"] == (str(work / "local.db"), "curator.toml")
    assert rows["annotator"] == ("lou", "curator.toml")


def test_help_names_option_types_not_python_functions(work: Path) -> None:
    """``--db <_db_path>``, ``--out <given_path>``, ``SOURCE <given_source>``."""
    runner = CliRunner()
    for args in (["stats"], ["mine", "commits"], ["export", "prodigy"], ["audit", "draw"]):
        shown = runner.invoke(app, [*args, "--help"], env={"COLUMNS": "200"}).stdout
        assert "--db" in shown and "<path>" in shown, args
        assert "<_" not in shown and "<given_" not in shown, args


def test_a_cache_that_is_a_file_is_refused_where_it_is_set(work: Path) -> None:
    (work / "notes.txt").write_text("x\n")
    (work / "curator.toml").write_text('db = "c.db"\ncache = "notes.txt"\n')
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert str(caught.value).startswith(
        f"{work / 'curator.toml'}:2: cache '{work / 'notes.txt'}' is a file: name a folder"
    )


@pytest.mark.parametrize(("value", "wanted"), [("false", False), ("off", False), ("yes", True)])
def test_curator_debug_false_means_off(
    monkeypatch: pytest.MonkeyPatch, value: str, wanted: bool
) -> None:
    from curator.cli_guard import debug_wanted, set_debug

    set_debug(False)
    monkeypatch.setenv("CURATOR_DEBUG", value)
    assert debug_wanted() is wanted


def test_stats_keeps_long_sources_apart(work: Path, tmp_path: Path) -> None:
    """Two sources alike in their first 80 characters read as one ``https://…/…`` row."""
    stem = "https://git.example.org/" + "a-very-long-group-name/" * 3
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"it-{n}",
                    "repo": f"{stem}{name}",
                    "sha": f"{n}" * 40,
                    "language": "cpp",
                    "message": "Avoid a copy",
                    "diff": "@@ -1 +1 @@\n-a\n+b\n",
                }
            )
            + "\n"
            for n, name in enumerate(("fast-parser", "fast-printer"), 1)
        )
    )
    db = str(tmp_path / "s.db")
    runner = CliRunner()
    assert runner.invoke(app, ["import", "items", str(items), "--db", db]).exit_code == 0
    for columns in ("200", "60"):
        shown = runner.invoke(app, ["stats", "--db", db], env={"COLUMNS": columns}).stdout
        joined = "".join(  # the source column's pieces, folded over lines where narrow
            line.split("│")[1].strip() for line in shown.splitlines() if line.count("│") == 3
        )
        assert f"{stem}fast-parser" in joined and f"{stem}fast-printer" in joined, columns


def test_a_pipe_named_curator_toml_is_refused_not_waited_on(work: Path, tmp_path: Path) -> None:
    """Reading a FIFO waits for a writer: ``curator config show`` hung for ever."""
    os.mkfifo(work / "curator.toml")
    done = subprocess.run(
        [sys.executable, "-m", "curator", "config", "show"],
        capture_output=True,
        text=True,
        cwd=work,
        env=clean_env({"XDG_CONFIG_HOME": str(tmp_path / "xdg")}),
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"error: {work / 'curator.toml'}: is not a regular file (a pipe, a device or a"
        " socket), not a config file\n"
    )


def test_a_dangling_link_as_config_is_named_not_taken_for_no_config(work: Path) -> None:
    (work / "curator.toml").symlink_to("shared/team.toml")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert str(caught.value) == (
        f"{work / 'curator.toml'}: is a link to shared/team.toml, which does not exist"
    )


def test_a_vote_without_a_name_points_at_this_user_s_config_file(
    work: Path, tmp_path: Path
) -> None:
    """It named ~/.config/curator/config.toml, which XDG_CONFIG_HOME had moved."""
    result = CliRunner().invoke(app, ["vote", "x-1", "positive", "--db", str(tmp_path / "v.db")])
    assert result.exit_code == 2
    assert f"or {tmp_path / 'xdg' / 'curator' / 'config.toml'}" in result.stderr


def test_a_misspelt_curator_variable_is_told_not_ignored_silently(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CURATOR_ANOTATOR", "bob")
    monkeypatch.setenv("CURATOR_DATABASE", "team.db")
    result = CliRunner().invoke(app, ["config", "show", "--json"])
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "warning: $CURATOR_ANOTATOR is not a variable Curator reads, and is ignored;"
        " did you mean $CURATOR_ANNOTATOR?",
        "warning: $CURATOR_DATABASE is not a variable Curator reads, and is ignored",
    ]


def test_every_curator_variable_the_code_reads_is_known() -> None:
    """The list behind that warning names each ``CURATOR_*`` the code mentions, so a
    variable added later is not reported as unknown."""
    import re

    from curator.settings import OTHER_VARIABLES

    known = {k.env for k in KEYS} | set(OTHER_VARIABLES)
    mentioned = {
        name
        for folder in ("curator", "engines", "store", "annotation", "tests")
        for path in (ROOT / folder).rglob("*.py")
        if path.name != Path(__file__).name  # this file spells unknown ones on purpose
        for name in re.findall(r"\bCURATOR_[A-Z][A-Z_]*[A-Z]\b", path.read_text())
    }
    assert mentioned - known == set()
