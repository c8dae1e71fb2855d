"""`memrecall index`: build, refresh, rebuild or inspect the search index."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

index_app = typer.Typer(
    help=(
        "The search index: a cache of the stores under $MEMRECALL_HOME/index (safe to delete).\n\n"
        "Example: memrecall index build"
    ),
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(index_app, name="index")


def _run(full: bool, as_json: bool, quiet: bool, wait: float) -> None:
    from ..atomic import LockTimeout
    from ..config import load_settings
    from ..errors import MemrecallError
    from ..index import refresh
    from ._io import console, err, print_json, show_settings_warnings, utf8_stdio

    utf8_stdio()
    settings = load_settings()
    if not quiet:
        show_settings_warnings(settings)
    progress_bar = None
    task = None
    if not quiet and not as_json and sys.stderr.isatty():
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        progress_bar = Progress(
            TextColumn("indexing"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console(stderr=True),
            transient=True,
        )
        progress_bar.start()
        task = progress_bar.add_task("index", total=None)

    def progress(done: int, total: int) -> None:
        if progress_bar is not None and task is not None:
            progress_bar.update(task, completed=done, total=total)

    try:
        report = refresh(settings, full=full, progress=progress, wait=wait)
    except LockTimeout:
        if quiet:
            return  # a refresh is already running: it will pick the changes up
        raise MemrecallError(
            "another index build or refresh is running; try again when it ends"
        ) from None
    finally:
        if progress_bar is not None:
            progress_bar.stop()
    if as_json:
        print_json(report.as_json())
        return
    if quiet:
        # The hook's detached refresh writes its errors to refresh.log (doctor shows the last
        # one); a refresh that succeeded clears what an earlier one reported.
        from ..index import index_home

        try:
            (index_home(settings) / "refresh.log").write_bytes(b"")
        except OSError:
            pass
        return
    for warning in report.warnings:
        err(f"Warning: {warning}")
    verb = "Built" if report.mode == "build" else "Refreshed"
    rate = report.files_scanned / report.seconds if report.seconds else 0
    err(
        f"{verb} the index in {report.seconds:.1f} s: {report.documents} documents "
        f"(+{report.added} new, {report.updated} updated, -{report.removed} removed, "
        f"{report.unchanged} unchanged; {report.files_scanned} files, {rate:.0f} files/s)."
    )


@index_app.command("build")
def build_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Build the index if there is none, else bring it up to date.

    Example: memrecall index build
    """
    _run(full=False, as_json=as_json, quiet=False, wait=600)


@index_app.command("refresh")
def refresh_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    background: Annotated[
        bool,
        typer.Option(
            "--background", help="Quiet; exit at once if another refresh runs (hooks use this)."
        ),
    ] = False,
) -> None:
    """Re-read only changed, added and removed files (a beads export: its changed issues).

    Example: memrecall index refresh
    """
    _run(full=False, as_json=as_json, quiet=background, wait=0 if background else 600)


@index_app.command("rebuild")
def rebuild_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    background: Annotated[
        bool,
        typer.Option(
            "--background", help="Quiet; exit at once if another build runs (hooks use this)."
        ),
    ] = False,
) -> None:
    """Build a new index from scratch; the old one serves until the new one is complete.

    Example: memrecall index rebuild
    """
    _run(full=True, as_json=as_json, quiet=background, wait=0 if background else 600)


@index_app.command("status")
def status_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Where the index is, how many documents, how old, and whether it is usable.

    Example: memrecall index status
    """
    from ..config import load_settings
    from ..index import status
    from ._io import err, out, print_json, utf8_stdio

    utf8_stdio()
    settings = load_settings()
    state = status(settings)
    if as_json:
        print_json({**state.as_json(), "enabled": settings.index.enabled})
        return
    if not settings.index.enabled:
        err(
            "The index is disabled ([index] enabled = false or MEMRECALL_INDEX=off): "
            "ripgrep answers."
        )
    if not state.exists:
        out(f"No index: {state.problem}. Searches use ripgrep until one is built.")
        raise typer.Exit(1)
    age = f"{state.age_seconds:.0f} s" if state.age_seconds is not None else "unknown"
    out(
        f"{state.path}\n  documents: {state.documents}\n  size: {state.bytes / 1e6:.1f} MB\n"
        f"  analyser: {state.backend}\n  built: {state.built_at}\n"
        f"  refreshed: {state.refreshed_at} ({age} ago)"
    )
    if state.problem:
        out(f"  problem: {state.problem}")
        raise typer.Exit(1)
