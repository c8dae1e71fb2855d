"""`memrecall doctor`: is everything in place? Exit 1 when a check fails."""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command(name="doctor")(doctor_command)


def doctor_command(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON array of checks.")
    ] = False,
    project: Annotated[
        bool,
        typer.Option(
            "--project", help="Also check ./.claude/settings.json and settings.local.json."
        ),
    ] = False,
) -> None:
    """Check the config, MEMRECALL_HOME, ripgrep, tokenizers (start-up time), stores, the hook,
    the claude CLI, the last summarize run and its backlog, and disk use. Exits 1 when anything
    fails. Never runs a command from a settings file; reads a project's settings only with
    --project.

    Example: memrecall doctor
    """
    from ..config import load_settings
    from ..doctor import FAIL, WARN, failed, run_checks
    from ..errors import MemrecallError
    from ._io import err, print_json, utf8_stdio

    utf8_stdio()
    checks = run_checks(load_settings(), project=project)
    if as_json:
        print_json([c.as_json() for c in checks])
    else:
        from rich.table import Table
        from rich.text import Text

        from ._io import console

        table = Table(header_style="bold")
        for column in ("check", "status", "detail", "fix", "ms"):
            table.add_column(column, overflow="fold", justify="right" if column == "ms" else "left")
        colours = {"ok": "green", WARN: "yellow", FAIL: "red"}
        for check in checks:
            table.add_row(
                check.name,
                Text(check.status, style=colours.get(check.status, "")),
                Text(check.detail),
                Text(check.fix),
                f"{check.ms:.0f}",
            )
        console().print(table)
    fails = sum(1 for c in checks if c.status == FAIL)
    warns = sum(1 for c in checks if c.status == WARN)
    if failed(checks):
        # An error, not typer.Exit: the exit status must survive every way the app is run.
        raise MemrecallError(
            f"{fails} of {len(checks)} checks failed ({warns} warnings); see the fix column"
        )
    err(f"{len(checks)} checks: {warns} warnings." if warns else f"{len(checks)} checks: all ok.")
