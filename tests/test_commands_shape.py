"""The shape of ``curator/commands/``: short commands (the work lives in functions tests
call directly) and every parameter declared in typer's ``Annotated`` style."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ROOT / "curator" / "commands"
MAX_BODY_LINES = 60


def _modules() -> list[Path]:
    return [*sorted(COMMANDS.rglob("*.py")), ROOT / "curator" / "cli.py"]


def _functions(path: Path) -> list[ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]


def body_lines(fn: ast.FunctionDef) -> int:
    """Lines from the first statement after the docstring to the end: the signature (a
    declaration of options) and the docstring do not count."""
    body = fn.body
    if (
        len(body) > 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return (fn.end_lineno or fn.lineno) - body[0].lineno + 1


def long_functions(paths: list[Path]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{fn.lineno} {fn.name} ({body_lines(fn)} lines)"
        for path in paths
        for fn in _functions(path)
        if body_lines(fn) > MAX_BODY_LINES
    ]


def _is_typer_param(node: ast.expr | None) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("Option", "Argument")
    )


def old_style_params(paths: list[Path]) -> list[str]:
    """Parameters whose default is ``typer.Option(...)``/``typer.Argument(...)`` or an
    option object, rather than ``Annotated[T, typer.Option(...)] = default``."""
    found = []
    for path in paths:
        for fn in _functions(path):
            args = fn.args.args + fn.args.kwonlyargs
            defaults = [None] * (len(fn.args.args) - len(fn.args.defaults))
            defaults += list(fn.args.defaults) + list(fn.args.kw_defaults)
            for arg, default in zip(args, defaults, strict=True):
                aliased = isinstance(default, ast.Name) and default.id.endswith("Option")
                if _is_typer_param(default) or aliased:
                    found.append(f"{path.relative_to(ROOT)}:{arg.lineno} {fn.name}({arg.arg})")
    return found


def test_no_function_in_commands_is_long() -> None:
    assert long_functions(_modules()) == []


def test_every_command_parameter_uses_annotated() -> None:
    assert old_style_params(_modules()) == []


def test_the_checks_catch_a_planted_violation(tmp_path: Path) -> None:
    long_body = "\n".join(f"    x{i} = {i}" for i in range(MAX_BODY_LINES + 1))
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import typer\n\n"
        'def old(name: str = typer.Option("a", "--name")) -> None:\n'
        '    """Doc."""\n'
        f"{long_body}\n",
        encoding="utf-8",
    )
    fake_root_file = ROOT / "planted.py"  # relative_to(ROOT) needs a path under ROOT
    assert not fake_root_file.exists()
    fns = _functions(planted)
    assert [body_lines(f) for f in fns] == [MAX_BODY_LINES + 1]
    assert len([f for f in fns if body_lines(f) > MAX_BODY_LINES]) == 1
    args = fns[0].args
    assert _is_typer_param(args.defaults[0])


def _every_command() -> list[tuple[str, object]]:
    import typer.main
    from typer._click import core as click
    from typer.core import TyperGroup

    from curator.cli import app

    root = typer.main.get_command(app)
    ctx = click.Context(root)
    found: list[tuple[str, object]] = []

    def walk(command: click.Command, name: str) -> None:
        found.append((name, command))
        if isinstance(command, TyperGroup):
            for sub in command.list_commands(ctx):
                walk(command.get_command(ctx, sub), f"{name} {sub}")

    walk(root, "curator")
    return found


def test_help_paragraphs_flow_instead_of_breaking_mid_sentence() -> None:
    """typer's rich help keeps a docstring's line breaks; at 80 columns a hard-wrapped
    paragraph would break mid-sentence, so loading a command joins them."""
    commands = _every_command()
    broken = [
        name
        for name, command in commands[1:]  # the root draws its own help (root_help.py)
        if any("\n" in p for p in (getattr(command, "help", None) or "").split("\n\n"))
    ]
    assert len(commands) > 40
    assert broken == []
