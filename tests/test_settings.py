"""One settings object: precedence (flag > env > ./curator.toml > user config > default),
the source of each value, bad files, and the one annotator rule."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from curator.cli import app
from curator.settings import (
    DEFAULT_KERNEL_MEMORY_MB,
    KEYS,
    SettingsError,
    load_settings,
    user_config_path,
)
from store import open_store

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A project folder as the current directory, a user config home, no CURATOR_* env."""
    work, home = tmp_path / "work", tmp_path / "xdg"
    work.mkdir()
    (home / "curator").mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    for key in KEYS:
        monkeypatch.delenv(key.env, raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    return {"work": work, "project": work / "curator.toml", "user": home / "curator/config.toml"}


def config_show(*args: str) -> dict[str, dict[str, str]]:
    result = CliRunner().invoke(app, [*args, "config", "show", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return {row["key"]: row for row in json.loads(result.stdout)["settings"]}


def test_defaults_with_no_files_and_no_environment(place: dict[str, Path], tmp_path: Path) -> None:
    s = load_settings()
    assert s.db == Path("curator.db") and s.source("db") == "default"
    assert s.annotator is None and s.theme is None and s.teacher_api_key is None
    assert s.cache == tmp_path / "xdg-cache" / "curator"
    assert s.clone_dir == tmp_path / "xdg-cache" / "curator" / "repos"
    assert s.kernel_memory_mb == DEFAULT_KERNEL_MEMORY_MB
    assert user_config_path() == place["user"]


def test_default_memory_cap_is_the_checkers() -> None:
    from engines.kernels.checker import DEFAULT_MEMORY_MB

    assert DEFAULT_KERNEL_MEMORY_MB == DEFAULT_MEMORY_MB


def test_each_layer_beats_the_one_below(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    place["user"].write_text(
        'db = "user.db"\nannotator = "uma"\ntheme = "nord"\ncache = "/c/user"\n'
        '[kernels]\ndevice = "user-gpu"\nmemory_mb = 100\n[teacher]\napi_key = "user-key"\n',
        encoding="utf-8",
    )
    s = load_settings()
    assert s.db == place["user"].parent / "user.db"  # relative to the file's folder
    assert (s.annotator, s.theme, s.opencl_device, s.kernel_memory_mb) == (
        "uma",
        "nord",
        "user-gpu",
        100,
    )
    assert s.source("db") == str(place["user"])

    place["project"].write_text('db = "project.db"\nannotator = "pat"\n', encoding="utf-8")
    s = load_settings()
    assert s.db == place["work"] / "project.db" and s.annotator == "pat"
    assert s.source("annotator") == "curator.toml"
    assert s.theme == "nord" and s.source("theme") == str(place["user"])  # not overridden

    monkeypatch.setenv("CURATOR_DB", str(tmp_path / "env.db"))
    monkeypatch.setenv("CURATOR_ANNOTATOR", "eve")
    monkeypatch.setenv("CURATOR_WORKER_MEMORY_MB", "300")
    s = load_settings()
    assert (s.db, s.annotator, s.kernel_memory_mb) == (tmp_path / "env.db", "eve", 300)
    assert s.source("db") == "env CURATOR_DB"

    s = load_settings({"db": tmp_path / "flag.db", "annotator": "fay"})
    assert (s.db, s.annotator) == (tmp_path / "flag.db", "fay")
    assert s.source("db") == "flag --db" and s.source("annotator") == "flag --annotator"

    monkeypatch.setenv("CURATOR_ANNOTATOR", "")  # empty counts as unset
    assert load_settings().annotator == "pat"


def test_config_show_json_reports_each_source_and_masks_the_key(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    place["user"].write_text('theme = "nord"\n[teacher]\napi_key = "sk-abcdefgh12345678"\n')
    place["project"].write_text('annotator = "pat"\n')
    monkeypatch.setenv("CURATOR_CACHE", str(tmp_path / "cache"))
    rows = config_show("--db", str(tmp_path / "flag.db"))
    assert rows["db"]["source"] == "flag --db" and rows["db"]["value"] == str(tmp_path / "flag.db")
    assert rows["cache"]["source"] == "env CURATOR_CACHE"
    assert rows["annotator"] == {
        "key": "annotator",
        "env": "CURATOR_ANNOTATOR",
        "value": "pat",
        "source": "curator.toml",
    }
    assert rows["theme"]["source"] == str(place["user"])
    assert rows["kernels.memory_mb"]["source"] == "default"
    key = rows["teacher.api_key"]
    assert key["value"] == "****5678" and "abcdefgh" not in json.dumps(rows)

    table = CliRunner().invoke(app, ["config", "show"], catch_exceptions=False)
    assert table.exit_code == 0 and "sk-abcdefgh" not in table.stdout
    assert "CURATOR_ANNOTATOR" in table.stdout and "curator.toml" in table.stdout


def test_a_bad_toml_line_is_one_error_line_naming_file_and_line(place: dict[str, Path]) -> None:
    place["project"].write_text('annotator = "pat"\ndb = \n', encoding="utf-8")
    with pytest.raises(SettingsError, match=r"curator\.toml:2: invalid TOML"):
        load_settings()
    result = CliRunner().invoke(app, ["stats"], catch_exceptions=False)
    assert result.exit_code == 2
    lines = [line for line in ANSI.sub("", result.output).splitlines() if line.strip()]
    assert len(lines) == 1 and "curator.toml:2" in lines[0] and "invalid TOML" in lines[0]


def test_unknown_keys_and_bad_types_name_the_line(place: dict[str, Path]) -> None:
    place["user"].write_text('annotator = "x"\ndatabase = "a.db"\n', encoding="utf-8")
    with pytest.raises(SettingsError, match=r"config\.toml:2: unknown key 'database'"):
        load_settings()
    place["user"].write_text('[kernels]\nmemory_mb = "lots"\n', encoding="utf-8")
    with pytest.raises(SettingsError, match=r"config\.toml:2: kernels\.memory_mb must be"):
        load_settings()


# --------------------------------------------------------------------------- annotator rule


def test_vote_requires_an_annotator_and_says_how_to_set_one(
    place: dict[str, Path],
) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["vote", "x-1", "perf"], catch_exceptions=False)
    assert result.exit_code == 2
    line = ANSI.sub("", result.output)
    assert "--annotator" in line and "CURATOR_ANNOTATOR" in line and "curator.toml" in line


def test_vote_takes_the_annotator_from_curator_toml(place: dict[str, Path]) -> None:
    place["project"].write_text('annotator = "pat"\n', encoding="utf-8")
    open_store(place["project"].parent / "curator.db").close()
    # No such item: the vote gets past the annotator check and fails on the item (exit 1).
    result = CliRunner().invoke(app, ["vote", "x-1", "perf"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert "say who" not in result.output


class FakeApp:
    runs: list[dict[str, Any]] = []  # noqa: RUF012

    def __init__(
        self,
        path: Path,
        who: str,
        open_set: str | None = None,
        theme: Any = None,
        kernel_memory_mb: int | None = None,
        opencl_device: str | None = None,
        lease_minutes: int = 10,
        cache: Path | None = None,
    ):
        self.seen = {
            "lease_minutes": lease_minutes,
            "cache": cache,
            "path": path,
            "who": who,
            "open_set": open_set,
            "theme": theme,
            "kernel_memory_mb": kernel_memory_mb,
            "opencl_device": opencl_device,
        }

    def run(self) -> None:
        FakeApp.runs.append(self.seen)


def open_app(monkeypatch: pytest.MonkeyPatch, *args: str) -> dict[str, Any]:
    import curator.tui.app

    FakeApp.runs.clear()
    monkeypatch.setattr(curator.tui.app, "CuratorApp", FakeApp)
    monkeypatch.setattr("curator.cli.interactive", lambda: True)
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert len(FakeApp.runs) == 1
    return FakeApp.runs[0]


def test_the_app_falls_back_to_the_login_name(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("getpass.getuser", lambda: "login-lee")
    seen = open_app(monkeypatch)
    assert seen["who"] == "login-lee" and seen["theme"] is None
    assert seen["kernel_memory_mb"] == 4096 and seen["opencl_device"] is None
    assert Path(seen["path"]).resolve() == place["work"] / "curator.db"
    assert seen["cache"] == load_settings().cache  # where --base mpnet is unpacked


def test_the_app_takes_annotator_and_theme_from_settings(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("getpass.getuser", lambda: "login-lee")
    place["user"].write_text(
        'annotator = "uma"\ntheme = "nord"\n[kernels]\nmemory_mb = 512\ndevice = "pthread"\n',
        encoding="utf-8",
    )
    assert open_app(monkeypatch) == {
        "path": open_app(monkeypatch)["path"],
        "who": "uma",
        "open_set": None,
        "theme": "nord",
        "kernel_memory_mb": 512,
        "opencl_device": "pthread",
        "lease_minutes": 10,
        "cache": open_app(monkeypatch)["cache"],
    }
    monkeypatch.setenv("CURATOR_ANNOTATOR", "eve")
    assert open_app(monkeypatch)["who"] == "eve"
    assert open_app(monkeypatch, "--annotator", "fay")["who"] == "fay"


def test_a_theme_the_app_does_not_know_is_named_before_it_starts(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import curator.tui.app

    FakeApp.runs.clear()
    monkeypatch.setattr(curator.tui.app, "CuratorApp", FakeApp)
    monkeypatch.setattr("curator.cli.interactive", lambda: True)
    place["user"].write_text('theme = "nosuch"\n', encoding="utf-8")
    result = CliRunner().invoke(app, [], catch_exceptions=False)
    assert result.exit_code == 2 and FakeApp.runs == []
    line = result.output.strip()
    assert line.startswith(f"error: {place['user']}: theme 'nosuch' is not one the app knows")
    assert "nord" in line and "\n" not in line
