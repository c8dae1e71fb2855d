"""`memrecall team`: share summaries and saved notes with a team through one git repository."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

team_app = typer.Typer(
    help=(
        "Team memory: each person's summaries and saved notes in one git repository, recalled "
        "by everyone (README \"Team memory\").\n\n"
        "Example: memrecall team init git@github.com:acme/team-memory.git"
    ),
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(team_app, name="team")


@team_app.command("init")
def init_command(
    repo: Annotated[str, typer.Argument(help="The team repository: a git URL or a path.")],
    name: Annotated[
        Optional[str],
        typer.Option(
            "--name", help="Your folder in it (default: your git user.email before the @)."
        ),
    ] = None,
) -> None:
    """Clone the team repository into $MEMRECALL_HOME/team and record [team] in config.toml.

    Safe to run again. Your folder and branch (memrecall/<name>) appear with the first sync.

    Example: memrecall team init git@github.com:acme/team-memory.git --name alice
    """
    from ..config import load_settings
    from ..team import init
    from ._io import err, show_settings_warnings, utf8_arg, utf8_stdio

    utf8_stdio()
    settings = load_settings()
    show_settings_warnings(settings)
    result = init(settings, utf8_arg(repo), utf8_arg(name) if name else None)
    if name and result.person != name:
        err(f"Note: your folder is named {result.person!r} (letters, digits, . _ - only)")
    if result.backup is not None:
        err(f"Note: config.toml backed up to {result.backup}")
    cloned = "cloned into" if result.cloned else "already cloned in"
    config = "recorded in" if result.config_changed else "already in"
    err(f"Team repository {result.repo} {cloned} {result.clone}; "
        f"[team] {config} {settings.config_path}.")
    err(f"You are {result.person!r}: your memories go to {result.person}/ on branch "
        f"{result.branch}, merged into {result.main} by pull request.")
    err("Next: memrecall team sync (and the Stop hook in README \"Team memory\").")


@team_app.command("sync")
def sync_command(
    background: Annotated[
        bool,
        typer.Option(
            "--background", help="Return at once; sync in a detached process (for a Stop hook)."
        ),
    ] = False,
    detached: Annotated[bool, typer.Option("--detached", hidden=True)] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Pull main (fast-forward only), commit your new and changed summaries and saved notes
    (redacted, checked for secrets) to your branch, push it, and open or update its pull
    request with gh or glab; otherwise say which branch to merge. Never merges into main.

    Failures the next sync can repair (offline, a refused push) are one line on stderr and
    in $MEMRECALL_HOME/logs/team-sync.log, and exit 1; with --background, only in the log.

    Example: memrecall team sync --background
    """
    from ..config import load_settings

    settings = load_settings()
    if background:
        from ..team import start_background

        start_background(settings)  # a Stop hook: exit 0, print nothing, whatever happens
        return
    if detached:
        _run_detached(settings)
        return
    from ..errors import MemrecallError
    from ..team import sync
    from ._io import err, out, print_json, show_settings_warnings, utf8_stdio

    utf8_stdio()
    show_settings_warnings(settings)
    report = sync(settings)
    for note in report.notes:
        err(f"Note: {note}")
    if as_json:
        print_json(report.as_json())
    elif report.ok:
        out(report.line())
    if not report.ok:
        raise MemrecallError(report.problem)


def _run_detached(settings: Any) -> None:
    """The background sync: its outcome is the log line `sync` writes; nothing may escape."""
    from ..errors import MemrecallError
    from ..team import log_line, sync

    try:
        sync(settings)  # writes its own log line
    except MemrecallError as exc:
        log_line(settings, f"team sync skipped: {exc}")
    except Exception as exc:  # a detached process has no one to tell but the log
        log_line(settings, f"team sync failed: {exc.__class__.__name__}: {str(exc)[:300]}")


@team_app.command("status")
def status_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """What is configured, how the last sync went, and what the next one would send.

    Example: memrecall team status
    """
    from ..config import load_settings
    from ..team import status
    from ._io import out, print_json, show_settings_warnings, utf8_stdio

    utf8_stdio()
    settings = load_settings()
    show_settings_warnings(settings)
    found = status(settings)
    if as_json:
        print_json(found)
        return
    if not found["configured"]:
        out("Team memory is not set up: memrecall team init <git-url-or-path>")
        return
    out(f"repository  {found['repo']}")
    missing = "" if found["cloned"] else " (missing: run memrecall team init)"
    out(f"clone       {found['clone']}{missing}")
    if not found["cloned"]:
        return
    out(f"you         {found['person']} → branch {found['branch']}, merged into {found['main']}")
    teammates = found["teammates"]
    out(f"teammates   {', '.join(teammates) if teammates else '(none yet)'}")
    last = found.get("last_sync") or {}
    if not last:
        out("last sync   never")
    elif last.get("ok"):
        where = f", pull request {last['pr']}" if last.get("pr") else ""
        out(f"last sync   {last.get('finished')}: ok{where}")
    else:
        out(f"last sync   {last.get('finished')}: {last.get('problem')}")
    pending = found["pending"]
    waiting = f"{pending['changed']} new or changed, {pending['gone']} gone"
    out(f"pending     {waiting}" + (", commits not pushed yet" if found["unpushed"] else ""))
