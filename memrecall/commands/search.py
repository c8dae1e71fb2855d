"""`memrecall search`: the hook's ranking, shown to a person (or as JSON)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ..errors import UsageError
from ..sanitize import clean

if TYPE_CHECKING:
    from rich.console import Console

    from ..search import Hit


def register(app: typer.Typer) -> None:
    app.command(name="search")(search_command)


def search_command(
    query: Annotated[
        str, typer.Argument(help="Words, ids or a whole prompt, Japanese or English.")
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON array, best first.")
    ] = False,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=200, help="How many hits.")
    ] = 10,
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
    outcome = search(keywords, settings, limit=limit, only=store, text=query)
    for warning in outcome.warnings[:5]:
        typer.echo(f"Warning: {clean(warning)}", err=True)  # warnings name files: stored text
    if as_json:
        from ..sanitize import dumps

        # Lossless for scripts, inert for a terminal: control and bidi characters are escaped.
        sys.stdout.buffer.write(
            (dumps([h.as_json() for h in outcome.hits], indent=1) + "\n").encode("utf-8")
        )
        sys.stdout.flush()
    if not outcome.hits:
        typer.echo(f"No results for: {' '.join(k.text for k in keywords)}", err=True)
        return
    if not as_json:
        from ._io import console

        show_hits(outcome.hits, console())


def show_hits(hits: list[Hit], terminal: Console) -> None:
    """One block per hit, made for an 80-column terminal and the same at any width:

        1. 決済タイムアウトの再試行 [open]
           beads · 2026-11-20 · score 3.21 · PAY-1234, 決済
           bd-a1b2 · ~/src/shop/.beads/issues.jsonl:791
           > PAY-1234: 決済 API が 10 秒でタイムアウトする

    Always blocks, never a table: a table keeps every column readable only from about 160
    columns on, and even there `path:line` competes with the snippet for room, so a narrower
    terminal would get a different layout at an arbitrary threshold. Title, metadata and
    snippet are cut to the width with an ellipsis (in terminal cells: a Japanese character
    takes two); `path:line` is never cut, it folds onto the next line instead. Every stored
    field goes through sanitize.clean and into a Text, so no escape, control or bidi
    character reaches the terminal and `[...]` in a title is shown, never read as markup."""
    from rich.cells import cell_len
    from rich.text import Text

    width = max(terminal.width, 20)
    number_width = len(str(len(hits)))
    indent = " " * (number_width + 2)
    room = width - len(indent)

    def emit(text: Text) -> None:
        # Each line was fitted to the width already; crop only guards a terminal narrower
        # than a status or a rank.
        terminal.print(text, no_wrap=True, overflow="crop", crop=True, soft_wrap=False)

    for rank, hit in enumerate(hits, start=1):
        if rank > 1:
            terminal.print()
        status = f" [{clean(hit.status)[:20]}]" if hit.status else ""
        head = Text(f"{rank:>{number_width}}. ")
        # The title gives way to the status: open or closed matters more than its last words.
        head.append(_cut(clean(hit.title) or "(untitled)", room - cell_len(status)), style="bold")
        head.append(status)
        emit(head)
        emit(Text(indent) + Text(_cut(_facts(hit), room), style="dim"))
        for part in _fold(_location(hit), room):
            emit(Text(indent) + Text(part, style="cyan"))
        snippet = clean(hit.snippet)
        if snippet:
            emit(Text(indent) + Text(_cut(f"> {snippet}", room)))


def _facts(hit: Hit) -> str:
    facts = [hit.store, hit.date_label(), f"score {hit.score:.2f}"]
    if hit.matched:
        facts.append(", ".join(clean(word) for word in hit.matched))
    return " · ".join(facts)


def _location(hit: Hit) -> str:
    """Markdown: the store-relative ref and line (--json has the absolute path). A beads
    issue: its id, and the export's path and line, under `~` when it lies in the home."""
    from ..stores.rules import rules_for

    if not rules_for(hit.store).by_id:
        return clean(f"{hit.ref}:{hit.line}")
    path = str(hit.path)
    home = str(Path.home())
    if home != os.sep and path.startswith(home + os.sep):
        path = "~" + path[len(home) :]
    return clean(f"{hit.ref} · {path}:{hit.line}")


def _cut(text: str, cells: int) -> str:
    """`text` in at most `cells` terminal cells, an ellipsis marking a cut."""
    from rich.cells import cell_len, set_cell_size

    if cell_len(text) <= cells:
        return text
    return set_cell_size(text, max(cells - 1, 0)).rstrip() + "…"


def _fold(text: str, width: int) -> list[str]:
    """`text` in pieces of at most `width` terminal cells, nothing left out."""
    from rich.cells import cell_len, chop_cells

    if cell_len(text) <= width:
        return [text]
    return chop_cells(text, max(width, 2))
