"""The CLI starts in a blink: commands load lazily, ``--help`` still lists each with the
help its own docstring gives, and no heavy library loads for help, stats or a vote."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import typer.main

from curator.cli import COMMANDS, app
from curator.lazy_group import load_command
from tests.test_layering import HEAVY

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "annotation"


def first_paragraph(help_text: str | None) -> str:
    return " ".join(inspect.cleandoc(help_text or "").split("\n\n")[0].split())


def test_each_listed_help_is_the_command_s_own() -> None:
    from curator.commands.mine import MineGroup

    for entry in (*COMMANDS, *MineGroup.LAZY):
        command = load_command(entry, "rich")
        assert command.name == entry.name
        assert first_paragraph(command.help) == " ".join(entry.help.split()), entry.name


def test_help_lists_every_command_without_loading_one(cli) -> None:  # type: ignore[no-untyped-def]
    group = typer.main.get_command(app)
    assert group.list_commands(None) == [entry.name for entry in COMMANDS]  # type: ignore[arg-type]
    result = cli("--help")
    assert result.exit_code == 0
    for entry in COMMANDS:
        assert entry.name in result.stdout
    assert "Prodigy or Label Studio" in result.stdout
    assert "Did you mean 'stats'" in cli("stat").output  # suggestions see every name


def loaded_after(runs: list[list[str]], cwd: Path, env: dict[str, str]) -> set[str]:
    """Which heavy libraries a fresh process holds after running ``curator ARGS`` for
    each of ``runs`` in turn (what one run loads, the next keeps: one process checks all)."""
    code = (
        "import sys\n"
        "from curator.cli import app\n"
        f"for args in {runs!r}:\n"
        "    try:\n"
        "        app(args, prog_name='curator')\n"
        "    except SystemExit as exc:\n"
        "        assert not exc.code, (args, exc.code)\n"
        f"print('LOADED', *[m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env
    )
    assert done.returncode == 0, done.stderr
    line = [x for x in done.stdout.splitlines() if x.startswith("LOADED")][-1]
    return set(line.split()[1:])


def test_help_stats_and_a_vote_load_no_heavy_library(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import os

    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt-sample").exit_code == 0
    env = {**os.environ, "CURATOR_DB": str(tmp_path / "cli.db"), "PYTHONPATH": str(ROOT)}
    vote = ["vote", "ex-001", "perf", "--set", "gt-sample", "--annotator", "zoe"]
    assert loaded_after([["--help"], ["stats"], vote], tmp_path, env) == set()
    assert cli("import", "votes", str(SAMPLE / "votes.csv")).exit_code == 0
    assert "numpy" in loaded_after([["agree", "gt-sample"]], tmp_path, env)  # the check sees


def test_root_help_is_drawn_without_typer_s_help_module(tmp_path: Path) -> None:
    """typer's rich help loads Markdown and traceback rendering; the root help, the one
    people run to find a command, does without it and still lists options and commands."""
    code = (
        "import sys\n"
        "from curator.cli import app\n"
        "try:\n"
        "    app(['--help'], prog_name='curator')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('RICH_UTILS', 'typer.rich_utils' in sys.modules, 'rich.markdown' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert "RICH_UTILS False False" in done.stdout
    assert "Usage: curator [OPTIONS] COMMAND [ARGS]..." in done.stdout
    for text in ("--version", "--db", "--help", *(entry.name for entry in COMMANDS)):
        assert text in done.stdout


def test_the_app_module_loads_no_heavy_library() -> None:
    """The app starts without numpy and the like: the Train screen's code reaches the
    student's modules, which load them only when a model runs (numpy alone was 0.15 s)."""
    heavy = [m for m in HEAVY if m not in ("textual", "tree_sitter")]  # the app needs these
    code = (
        "import sys\n"
        "import curator.tui.app\n"
        f"print('LOADED', *[m for m in {heavy!r} if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["LOADED"]


def test_help_shows_brackets_as_written(cli) -> None:  # type: ignore[no-untyped-def]
    """Rich reads ``[mpnet]`` in a help text as markup and drops it."""
    shown = cli("train", "--help")
    assert "'curator[mpnet]'" in "".join(shown.output.split())
