"""`memrecall save`: a markdown note from stdin becomes a memory the next prompt can recall."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from ..errors import UsageError


def register(app: typer.Typer) -> None:
    app.command(name="save")(save_command)


def save_command(
    title: Annotated[
        Optional[str],
        typer.Option("--title", "-t", help="Title (default: the note's first # heading or line)."),
    ] = None,
    tags: Annotated[
        Optional[str],
        typer.Option("--tags", help="Comma-separated tags; `memory` is always added."),
    ] = None,
    project: Annotated[
        Optional[str],
        typer.Option(
            "--project",
            "-p",
            help="Folder under the memories folder "
            "(default: the git repository or folder you are in).",
        ),
    ] = None,
    summary: Annotated[
        Optional[str],
        typer.Option("--summary", help="One line for search hits (default: the first sentence)."),
    ] = None,
    alias: Annotated[
        Optional[list[str]],
        typer.Option("--alias", help="Another name the note is found by (repeatable)."),
    ] = None,
    append: Annotated[
        Optional[str],
        typer.Option("--append", help="Add the note, under a dated heading, to this saved memory."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Save even when a similar memory exists.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print what was written as JSON.")
    ] = False,
) -> None:
    """Save the markdown note on stdin as a memory: <memories>/<project>/<YYYY-MM-DD>-<slug>.md.

    Frontmatter (title, date, project, tags, summary) is added; secrets are redacted; a memory
    with the same title or nearly the same text is refused, naming it (--append REF extends it,
    --force saves anyway). The next prompt's recall can find the note.

    Example: printf '# 在庫同期のリトライ\\n冪等キーで直した。\\n' | memrecall save --tags inventory
    """
    from ..config import load_settings
    from ..memories import SaveRequest, read_note, save
    from ._io import err, out, print_json, show_settings_warnings, utf8_arg, utf8_stdio

    utf8_stdio()
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("pipe the note on stdin: echo '# Title' | memrecall save")
    settings = load_settings()
    show_settings_warnings(settings)
    body = read_note(sys.stdin.buffer)
    request = SaveRequest(
        body=body,
        title=utf8_arg(title) if title is not None else None,
        tags=[utf8_arg(tags)] if tags else [],
        project=utf8_arg(project) if project is not None else None,
        summary=utf8_arg(summary) if summary is not None else None,
        aliases=[utf8_arg(a) for a in alias or []],
        append=utf8_arg(append) if append else None,
        force=force,
    )
    if append and (title or tags or project or summary or alias):
        err(
            "Note: --title, --tags, --project, --summary and --alias are for new memories;"
            " ignored with --append"
        )
    result = save(request, settings)
    if result.redacted:
        plural = "s" if result.redacted != 1 else ""
        err(f"Note: redacted {result.redacted} secret{plural} before saving")
    if result.private_removed:
        err("Note: <private> text was left out")
    if result.index_note:
        err(f"Note: {result.index_note}")
    if as_json:
        print_json(result.as_json())
        return
    from ..sanitize import clean

    verb = "Appended to" if result.appended else "Saved"
    out(f"{verb} {clean(result.ref)} ({clean(str(result.path))})")
