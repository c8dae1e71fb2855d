"""`memrecall search`: the hook's ranking, shown to a person (or as JSON)."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from ..errors import UsageError


def register(app: typer.Typer) -> None:
    app.command(name="search")(search_command)


def search_command(
    query: Annotated[str, typer.Argument(help="Words, ids or a whole prompt, Japanese or English.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON array, best first.")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=200, help="How many hits.")] = 10,
    store: Annotated[
        Optional[list[str]],
        typer.Option("--store", "-s", help="beads | obsidian | summaries (repeatable)."),
    ] = None,
    backend: Annotated[
        Optional[str], typer.Option("--backend", "-b", help="Tokenizer backend for the query.")
    ] = None,
) -> None:
    """Search every store with the same ranking the hook uses.

    Example: memrecall search 'PAY-1234 タイムアウト' --limit 5
    """
    from ..config import load_settings
    from ..search import STORE_NAMES, search
    from ..tokenize import tokenize_text

    for name in store or []:
        if name not in STORE_NAMES:
            raise UsageError(f"unknown store {name!r}; choose from {', '.join(STORE_NAMES)}")
    from ..sanitize import clean

    settings = load_settings()
    for warning in settings.warnings:
        typer.echo(f"Warning: {clean(warning)}", err=True)
    from ..redact import PLACEHOLDER, redact_fast, strip_private

    # The hook's rule for prompts holds for queries: a secret or a <private> span typed here
    # is never a keyword (not on rg's argv, not echoed back in "No results for: …").
    query = PLACEHOLDER.sub(" ", redact_fast(strip_private(query, " ")))
    keywords, notes = tokenize_text(query, backend or settings.tokenizer, settings)
    for note in notes:
        typer.echo(f"Note: {note}", err=True)
    if not keywords:
        typer.echo("No keywords in the query (only stopwords or punctuation).", err=True)
        if as_json:
            sys.stdout.write("[]\n")
        return
    outcome = search(keywords, settings, limit=limit, only=store)
    for warning in outcome.warnings[:5]:
        typer.echo(f"Warning: {clean(warning)}", err=True)  # warnings name files: stored text
    if as_json:
        from ..sanitize import dumps

        # Lossless for scripts, inert for a terminal: control and bidi characters are escaped.
        sys.stdout.buffer.write((dumps([h.as_json() for h in outcome.hits], indent=1) + "\n").encode("utf-8"))
        sys.stdout.flush()
    if not outcome.hits:
        typer.echo(f"No results for: {' '.join(k.text for k in keywords)}", err=True)
        return
    if not as_json:
        _table(outcome.hits)


def _table(hits: list) -> None:  # type: ignore[type-arg]
    from rich.table import Table
    from rich.text import Text

    from ..sanitize import clean
    from ._io import console

    def cell(value: object) -> Text:
        # Text, not str: Rich would read `[link=…]` in a title as its own markup and write
        # the hyperlink escape itself. clean(): no escape, control or bidi character.
        return Text(clean(value))

    table = Table(show_lines=False, header_style="bold", expand=False)
    table.add_column("store", no_wrap=True)
    table.add_column("title", max_width=32, overflow="fold")
    table.add_column("date", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("matched", max_width=24, overflow="fold")
    # Store-relative refs keep the table readable; --json has the absolute path.
    table.add_column("ref:line", max_width=40, overflow="ellipsis", no_wrap=True)
    table.add_column("snippet", min_width=20, overflow="fold")
    for hit in hits:
        where = hit.ref if hit.store == "beads" else f"{hit.ref}:{hit.line}"
        table.add_row(
            cell(hit.store),
            cell(hit.title + (f" [{hit.status}]" if hit.status else "")),
            hit.date.date().isoformat() if hit.date else "",
            f"{hit.score:.2f}",
            cell(", ".join(hit.matched)),
            cell(where),
            cell(clean(hit.snippet)[:100]),
        )
    console().print(table)
