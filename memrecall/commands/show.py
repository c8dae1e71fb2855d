"""`memrecall show REF`: one memory, compressed to what matters or whole."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from ..errors import UsageError


def register(app: typer.Typer) -> None:
    app.command(name="show")(show_command)


def show_command(
    ref: Annotated[
        str,
        typer.Argument(
            help="A hit's `ref` from `memrecall search --json` (note path, summary "
            "path, beads id), or a file inside a configured store."
        ),
    ],
    outline: Annotated[
        bool, typer.Option("--outline", help="Headings and the lines that matter (the default).")
    ] = False,
    full: Annotated[
        bool, typer.Option("--full", help="The whole note (frontmatter included) or issue.")
    ] = False,
    query: Annotated[
        Optional[str],
        typer.Option("--query", "-q", help="Outline: keep the lines holding these words."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Read one memory: title, store, date, summary and tags, then its headings and key lines.

    Beads issues are rendered readably (status, priority, description, dependencies…);
    `[[wikilinks]]` are listed with the ref each resolves to. Secrets are shown redacted.

    Example: memrecall show notes/在庫同期バッチ.md --query 'リトライ'
    """
    from ..config import load_settings
    from ..memories import locate, show
    from ._io import out, show_settings_warnings, utf8_arg, utf8_stdio

    if outline and full:
        raise UsageError("--outline and --full exclude each other")
    utf8_stdio()
    settings = load_settings()
    show_settings_warnings(settings)
    memory = locate(utf8_arg(ref), settings)
    shown = show(memory, settings, full=full, query=utf8_arg(query) if query else None)
    if as_json:
        from ..sanitize import dumps

        sys.stdout.buffer.write((dumps(shown.as_json(), indent=1) + "\n").encode("utf-8"))
        sys.stdout.flush()
        return
    out(shown.render())
