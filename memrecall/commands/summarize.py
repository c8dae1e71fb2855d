"""`memrecall summarize`: daily summaries of Claude Code sessions (run from a scheduled task)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

import typer

if TYPE_CHECKING:
    from ..summarize.pipeline import RunReport


def register(app: typer.Typer) -> None:
    app.command(name="summarize")(summarize_command)


def summarize_command(
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="List every session found, the decision and why; send nothing, write nothing.",
        ),
    ] = False,
    since: Annotated[
        Optional[str],
        typer.Option(
            "--since", help="Only sessions modified since: YYYY-MM-DD, an ISO time, or 7d / 12h."
        ),
    ] = None,
    limit: Annotated[
        Optional[int],
        typer.Option(
            "--limit", min=0, help="Look at no more than N new or grown sessions (oldest first)."
        ),
    ] = None,
    backend: Annotated[
        Optional[str],
        typer.Option("--backend", "-b", help="claude | command | extractive (no LLM)."),
    ] = None,
    max_sessions: Annotated[
        Optional[int],
        typer.Option("--max-sessions", min=0, help="Summarize at most N sessions in this run."),
    ] = None,
    max_input_chars: Annotated[
        Optional[int],
        typer.Option(
            "--max-input-chars",
            min=1000,
            help="Cap on the condensed characters one session may send.",
        ),
    ] = None,
) -> None:
    """Summarize new and grown Claude Code sessions into <summaries>/YYYY/MM/YYYY-MM-DD-<sid8>.md.

    Exits 1 when any session failed (one line per failure on stderr), or when the backend
    cannot run at all (one line naming the fix, e.g. --backend extractive).

    Example: memrecall summarize --dry-run --since 7d
    """
    from ..config import load_settings
    from ..errors import UsageError
    from ..summarize.backends import backend_names
    from ..summarize.pipeline import SummarizeOptions, run_summarize
    from ..times import parse_since

    settings = load_settings()
    for warning in settings.warnings:
        typer.echo(f"Warning: {warning}", err=True)
    cfg = settings.summarize
    if backend is not None:
        if backend not in backend_names():
            raise UsageError(
                f"unknown summarize backend {backend!r}; choose from {', '.join(backend_names())}"
            )
        cfg.backend = backend
    if max_sessions is not None:
        cfg.max_sessions = max_sessions
    if max_input_chars is not None:
        cfg.max_input_chars = max_input_chars
    options = SummarizeOptions(
        dry_run=dry_run,
        since=parse_since(since, settings.now) if since else None,
        limit=limit,
    )

    from rich.console import Console

    console = Console(stderr=True)
    if dry_run or not console.is_terminal:
        report = run_summarize(settings, options)
    else:
        report = _with_progress(console, settings, options)
    for note in report.notes:
        typer.echo(f"Note: {note}", err=True)
    if dry_run:
        _table(report)
    down = bool(report.backend_unavailable) and not dry_run
    if not down:
        _summary(report)  # a run whose backend could not run is said in one line below
    if not dry_run and (report.summarized or not down):
        _refresh_index(settings)
    for item in report.failed:
        typer.echo(f"failed {item['session']}: {item['reason']}", err=True)
    if down:
        from ..errors import BackendUnavailable
        from ..summarize.pipeline import fix_hint

        raise BackendUnavailable(f"{report.unavailable_line()}; {fix_hint(settings)}")
    if report.failed:
        from ..summarize.pipeline import SessionsFailed, run_record_path

        # An error, not typer.Exit: the scheduled task must see the non-zero status, and
        # MemrecallError is what the CLI maps to exit codes in one place.
        n = len(report.failed)
        raise SessionsFailed(
            f"{n} session{'s' if n != 1 else ''} failed (run record: {run_record_path(settings)})"
        )


def _refresh_index(settings) -> None:
    """New summaries are findable by the next prompt, not after the next background refresh."""
    from ..index import refresh_if_present

    refreshed, why = refresh_if_present(settings)
    if refreshed is not None and (refreshed.added or refreshed.updated or refreshed.removed):
        typer.echo(
            f"Index: +{refreshed.added} new, {refreshed.updated} updated, "
            f"-{refreshed.removed} removed.",
            err=True,
        )
    elif why and why not in ("no index yet", "index disabled"):
        typer.echo(f"Note: {why}", err=True)


def _with_progress(console, settings, options) -> "RunReport":
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..summarize.pipeline import run_summarize

    with Progress(
        TextColumn("summarize {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("", total=None)

        def tick(label: str, done: int, total: int) -> None:
            bar.update(task, description=label, completed=done, total=total)

        return run_summarize(settings, options, progress=tick)


def _table(report: "RunReport") -> None:
    """The dry-run table goes to stdout: it is the data a dry run asked for."""
    from rich.console import Console
    from rich.table import Table

    from ..summarize.discover import REASONS

    table = Table(header_style="bold", title=f"summarize --dry-run (backend {report.backend})")
    for column in (
        "session",
        "project",
        "modified",
        "raw bytes",
        "decision",
        "reason",
        "would send",
    ):
        table.add_column(
            column,
            overflow="fold",
            justify="right" if column in ("raw bytes", "would send") else "left",
        )
    order = {"would-summarize": 0, "failed": 1, "skipped": 2}
    used: list[str] = []
    for row in sorted(report.rows, key=lambda r: (order.get(r.decision, 3), r.modified)):
        if row.decision == "skipped" and row.reason in REASONS and row.reason not in used:
            used.append(row.reason)
        sid = row.session_id[:8] if len(row.session_id) == 36 else row.session_id[:24]
        table.add_row(
            sid,
            row.project[-32:],
            row.modified.astimezone().strftime("%Y-%m-%d %H:%M"),
            f"{row.raw_bytes:,}",
            "summarize" if row.decision == "would-summarize" else row.decision,
            row.reason,
            f"{row.sent_chars:,}" if row.decision == "would-summarize" else "",
        )
    console = Console(soft_wrap=False)
    if not console.is_terminal:
        console = Console(soft_wrap=False, width=160)  # piped: no terminal width to fit
    console.print(table)
    for reason in used:
        console.print(f"  {reason}: {REASONS[reason]}", highlight=False, markup=False)


def _summary(report: "RunReport") -> None:
    skipped = ", ".join(f"{k} {v}" for k, v in report.skipped.items()) or "none"
    if report.dry_run:
        would = sum(r.sent_chars for r in report.rows if r.decision == "would-summarize")
        head = f"dry run: would summarize {report.would_summarize}, would send {would:,} characters"
    else:
        ratio = ""
        if report.chars_sent and report.raw_bytes:
            ratio = (
                f" ({report.chars_sent / report.raw_bytes:.1%} of {report.raw_bytes:,} "
                "raw transcript bytes)"
            )
        head = (
            f"summarized {report.summarized}, failed {len(report.failed)}, "
            f"sent {report.chars_sent:,} characters{ratio}"
        )
    typer.echo(head, err=True)
    typer.echo(f"skipped: {skipped}", err=True)
    oldest = report.oldest_unsummarized
    if report.pending:
        when = oldest.astimezone().strftime("%Y-%m-%d") if oldest else "?"
        typer.echo(f"pending: {report.pending} (oldest {when})", err=True)
