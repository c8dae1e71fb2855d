"""`memrecall stopwords suggest|add|remove|list`: tune the stopword list from the recall log."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

stopwords_app = typer.Typer(
    name="stopwords",
    help="Tune the stopword list from what the recall log shows.\n\n"
    "Example: memrecall stopwords suggest",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    app.add_typer(stopwords_app, name="stopwords")


@stopwords_app.command(name="suggest")
def suggest_command(
    since: Annotated[
        Optional[str],
        typer.Option("--since", help="Only log entries newer than this: 30d, 2w, 3m or a date."),
    ] = None,
    min_count: Annotated[
        int,
        typer.Option(
            "--min-count", min=1, help="Only keywords extracted from at least this many prompts."
        ),
    ] = 3,
    min_share: Annotated[
        Optional[float],
        typer.Option(
            "--min-share",
            min=0.0,
            max=1.0,
            help="Only keywords found in at least this share of documents "
            "[default: 0.1, 0 with --never-used].",
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many candidates.")] = 20,
    never_used: Annotated[
        bool,
        typer.Option(
            "--never-used",
            help="Keywords whose injected memories Claude never used: at least "
            "--min-count of them ignored and none used or mentioned, most ignored first.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Keywords that are extracted often and match a large share of the stores, with the evidence.

    Columns: prompts it was extracted from, average document frequency, share of all
    documents it matches, injected memories it matched / carried (main) / was the only
    reason for, prompts it appeared in that injected nothing, and of the memories it
    matched, how many Claude used or mentioned / ignored (`memrecall usage`; the
    transcripts are read first). --never-used ranks the keywords that keep firing memories
    Claude never uses.

    Example: memrecall stopwords suggest --since 30d
    """
    from ..config import load_settings
    from ..times import parse_since
    from ..stopwords import suggest
    from ..usage import refresh
    from ._io import err, print_json, show_settings_warnings, utf8_stdio

    utf8_stdio()
    settings = load_settings()
    show_settings_warnings(settings)
    cutoff = parse_since(since, settings.now) if since else None
    if refresh(settings).busy:
        err("Another memrecall process is judging injections; using the verdicts stored so far.")
    share = min_share if min_share is not None else (0.0 if never_used else 0.1)
    report = suggest(
        settings, cutoff, min_count=min_count, min_share=share, limit=limit, never_used=never_used
    )
    if as_json:
        print_json(
            {
                "prompts": report.prompts,
                "prompts_with_keywords": report.with_keywords,
                "keywords_seen": report.considered,
                "suggestions": [s.as_json() for s in report.suggestions],
            }
        )
        return
    if report.prompts == 0:
        err(f"No recall log entries{' since ' + since if since else ''} in {settings.logs_dir}.")
        return
    if not report.suggestions:
        what = "ignored memories" if never_used else "min count"
        err(
            f"No candidates among {report.considered} keywords from {report.prompts} prompts "
            f"({what} {min_count}, min share {share:.0%}{', none used' if never_used else ''})."
        )
        return
    from rich.table import Table

    from ._io import console

    table = Table(header_style="bold")
    for column in (
        "keyword",
        "prompts",
        "avg df",
        "doc share",
        "injected",
        "main",
        "only",
        "quiet",
        "used",
        "ignored",
    ):
        table.add_column(
            column, justify="left" if column == "keyword" else "right", overflow="fold"
        )
    for s in report.suggestions:
        table.add_row(
            s.keyword,
            str(s.extracted),
            f"{s.avg_df:.1f}",
            f"{s.doc_share:.0%}",
            str(s.injections),
            str(s.main),
            str(s.only),
            str(s.quiet),
            str(s.used),
            str(s.ignored),
        )
    console().print(table)
    err(
        f"{len(report.suggestions)} candidates from {report.prompts} prompts. "
        f"Add the ones that bring nothing: memrecall stopwords add WORD…"
    )


@stopwords_app.command(name="add")
def add_command(
    words: Annotated[list[str], typer.Argument(help="Words to add.")],
) -> None:
    """Append words to $MEMRECALL_HOME/stopwords.txt under a dated comment.

    Example: memrecall stopwords add 実装 修正
    """
    from ..config import load_settings
    from ..stopwords import add_words
    from ._io import err, utf8_arg, utf8_stdio

    utf8_stdio()
    settings = load_settings()
    result = add_words(settings, [utf8_arg(w) for w in words], settings.now)
    for word, where in result.already.items():
        err(f"Already a stopword ({where}): {word}")
    if result.added:
        err(f"Added {len(result.added)} stopwords to {result.path}: {', '.join(result.added)}")


@stopwords_app.command(name="remove")
def remove_command(
    words: Annotated[list[str], typer.Argument(help="Words to remove from your own list.")],
) -> None:
    """Remove words from $MEMRECALL_HOME/stopwords.txt (shipped words stay).

    Example: memrecall stopwords remove 実装
    """
    from ..config import load_settings
    from ..stopwords import remove_words
    from ._io import err, utf8_arg, utf8_stdio

    utf8_stdio()
    path, removed = remove_words(load_settings(), [utf8_arg(w) for w in words])
    err(f"Removed {len(removed)} stopwords from {path}: {', '.join(removed)}")


@stopwords_app.command(name="list")
def list_command(
    source: Annotated[
        Optional[str], typer.Option("--source", help="Only shipped or only user words.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON array.")] = False,
) -> None:
    """Print the effective stopword list, one word a line, each marked shipped or user.

    Example: memrecall stopwords list --source user
    """
    from ..config import load_settings
    from ..errors import UsageError
    from ..stopwords import effective_list
    from ._io import out, print_json, utf8_stdio

    utf8_stdio()
    if source not in (None, "shipped", "user"):
        raise UsageError(f"unknown --source {source!r}; choose shipped or user")
    entries = effective_list(load_settings())
    if source:
        entries = [e for e in entries if source in e.source.split("+")]
    if as_json:
        print_json([{"word": e.word, "source": e.source} for e in entries])
        return
    out("".join(f"{e.word}\t{e.source}\n" for e in entries))
