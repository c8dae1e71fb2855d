"""`memrecall prune`: summaries past the retention window move to `.archive/` (or go)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer


def register(app: typer.Typer) -> None:
    app.command(name="prune")(prune_command)


def prune_command(
    older_than: Annotated[
        Optional[str],
        typer.Option(
            "--older-than", help="Age limit: 90d, 12w, 3m or 1y (default: retention_days, 90)."
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would happen; change nothing.")
    ] = False,
    delete: Annotated[
        bool,
        typer.Option("--delete", help="Delete old summaries for good instead of archiving them."),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the plan (and outcome) as JSON.")
    ] = False,
) -> None:
    """Archive summaries older than the retention window; trim old recall logs and session state.

    Summaries move to <summaries>/.archive/ keeping their path (search never reads it);
    files that are not memrecall summaries are never touched.

    Example: memrecall prune --older-than 3m --dry-run
    """
    from ..config import load_settings
    from ..prune import apply_prune, plan_prune
    from ..times import parse_age
    from ._io import err, print_json, show_settings_warnings, utf8_stdio

    utf8_stdio()
    settings = load_settings()
    show_settings_warnings(settings)
    cutoff = parse_age(older_than or f"{settings.retention_days}d", settings.now)
    plan = plan_prune(settings, cutoff, delete=delete)
    summaries = plan.count("summary")
    verb = "delete" if delete else "archive"
    if dry_run:
        if as_json:
            print_json({**plan.as_json(), "dry_run": True})
        elif plan.items:
            _table(plan)
        err(
            f"Dry run: would {verb} {summaries} summaries older than {cutoff.date().isoformat()} "
            f"and delete {plan.count('recall-log')} recall logs, "
            f"{plan.count('session-state')} session states; "
            f"{plan.kept_summaries} summaries stay. Nothing was changed."
        )
        return
    if not plan.items:
        if as_json:
            print_json({**plan.as_json(), "archived": 0, "deleted": 0, "errors": []})
        err(
            f"Nothing older than {cutoff.date().isoformat()}; {plan.kept_summaries} summaries stay."
        )
        return
    result = apply_prune(plan, settings)
    if as_json:
        print_json(
            {
                **plan.as_json(),
                "archived": result.archived,
                "deleted": result.deleted,
                "errors": result.errors,
                "kept_live": [str(p) for p in result.kept_live],
            }
        )
    moved = result.done.get("summary", 0)
    first = (
        f"Deleted {moved} summaries"
        if delete
        else f"Archived {moved} summaries into {plan.summaries_root / '.archive'}"
    )
    err(
        f"{first}; deleted {result.done.get('recall-log', 0)} recall logs and "
        f"{result.done.get('session-state', 0)} session states older than "
        f"{cutoff.date().isoformat()}. "
        f"{plan.kept_summaries} summaries stay."
    )
    if result.kept_live:
        err(f"Kept {len(result.kept_live)} session states that a session used while prune ran.")
    for problem in result.errors[:10]:
        err(f"Warning: could not prune {problem}")
    from ..index import refresh_if_present

    # Retention already hides old summaries at query time; the refresh drops them from the
    # index's files so it does not grow with the archive.
    _, why = refresh_if_present(settings)
    if why and why not in ("no index yet", "index disabled"):
        err(f"Note: {why}")
    if result.errors:
        from ..errors import MemrecallError

        raise MemrecallError(f"{len(result.errors)} files could not be pruned; the rest were")


def _table(plan) -> None:
    from rich.table import Table

    from ._io import console

    table = Table(header_style="bold")
    for column in ("action", "kind", "date", "from", "path"):
        table.add_column(column, overflow="fold")
    for item in plan.items:
        where = item.rel
        if item.target is not None:
            where += f" → .archive/{item.rel}"
        table.add_row(item.action, item.kind, item.date.date().isoformat(), item.date_source, where)
    console().print(table)
