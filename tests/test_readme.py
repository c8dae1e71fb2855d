"""The README documents every command, and every command's --help carries an example.

Names come from the Typer app itself, so a new command without README text fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

REPO = Path(__file__).resolve().parent.parent


def registered_commands() -> list[tuple[str, object]]:
    """(full name, click command) for every command and sub-command of the app."""
    from memrecall.cli import _register_commands, app

    _register_commands()
    group = typer.main.get_command(app)
    found: list[tuple[str, object]] = []

    def walk(prefix: str, command: object) -> None:
        children = getattr(command, "commands", None)
        for name, child in sorted((children or {}).items()):
            if getattr(child, "hidden", False):
                continue
            full = f"{prefix} {name}".strip()
            found.append((full, child))
            walk(full, child)

    walk("", group)
    return found


COMMANDS = registered_commands()


def test_the_app_has_the_documented_commands() -> None:
    names = {name for name, _ in COMMANDS}
    assert {
        "recall",
        "tokenize",
        "search",
        "prune",
        "stopwords",
        "stats",
        "init",
        "doctor",
    } <= names


@pytest.mark.parametrize("name", [name for name, _ in COMMANDS])
def test_every_command_is_in_the_readme(name: str) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"memrecall {name}" in readme, f"README.md never mentions `memrecall {name}`"


@pytest.mark.parametrize("name", [name for name, _ in COMMANDS])
def test_every_command_has_an_example_in_its_help(name: str) -> None:
    from typer.testing import CliRunner

    from memrecall.cli import app

    result = CliRunner().invoke(app, [*name.split(), "--help"])
    assert result.exit_code == 0, result.output
    assert "Example:" in result.output, f"`memrecall {name} --help` has no example"
